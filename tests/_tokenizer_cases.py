"""A generated adversarial tokenizer set, and ``word_tokenize`` of a real NLTK 3.9.1 run live.

The set is deterministic (seeded): hand-picked hard cases (Unicode quotes, contractions,
ellipses, URLs, emoji, odd whitespace, 100,000-character tokens, empty strings) and
random sentences assembled from fragments of those kinds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from _score_fixtures import reference_process

QUOTES = ["\"", "'", "''", "``", "`", "“", "”", "‘", "’", "«", "»", "„", "‹", "›"]
CONTRACTIONS = ["don't", "can't", "cannot", "won't", "I'm", "we'll", "they're", "you've", "he'd", "it's", "'tis", "'twas",
                "gonna", "gotta", "wanna", "gimme", "lemme", "d'ye", "more'n", "y'all", "o'clock", "rock'n'roll",
                "DON'T", "Can't", "WANNA", "'s", "s'", "n't", "'ll", "'Destroying", "'a", "'re"]
PUNCT = [".", "..", "...", ". . .", "…", ",", ":", ";", "?", "!", "?!", "!!!", "-", "--", "---", "—", "–", "‒", "(", ")", "[",
         "]", "{", "}", "<", ">", "*", "@", "#", "$", "%", "&", "/", "\\", "|", "~", "^", "+", "="]
WORDS = ["The", "claim", "Mr.", "Dr.", "U.S.", "e.g.", "i.e.", "St.", "No.", "Jan.", "vs.", "a", "I", "A.", "B.", "Inc.",
         "3.5", "1,000", "$10", "10%", "2019–2020", "9/11", "COVID-19", "end.", "end?", "said:", "It", "It's", "café",
         "naïve", "İstanbul", "Straße", "ﬁre", "ΣΑ", "Дом", "中文", "العربية", "x"]
URLS = ["https://example.com/a_b?x=1&y=2.", "http://t.co/AbC", "www.bbc.co.uk/news.", "foo@bar.com", "(https://x.org/)",
        "https://en.wikipedia.org/wiki/Foo_(bar)", "<http://a.b/c>", "\"http://q.com\""]
EMOJI = ["😀", "👍🏽", "👩‍👩‍👧", "🇺🇸", "❤️", "☕", "🤦‍♂️."]
SPACES = [" ", " ", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\u00a0", "\u2009", "\u3000", "\x0b", "\x0c", "\u2028", "\u200b"]


def hand_cases() -> list[str]:
    """Hard cases written out, among them the empty and whitespace-only strings and 100k-character tokens."""
    long_word = "a" * 100_000
    return [
        "", " ", "\n", "\t \n", "\u00a0", ".", "?", "'", "\"", "''", "``",
        "He said, \"It's 'fake' news.\" Then he left.", "“Fake,” he said. ‘Really?’ «Non.» „Ja“",
        "'Destroying our country', she said.", "I can't, won't and cannot go; gonna wanna gimme lemme gotta.",
        "'Tis true. 'Twas brillig. D'ye know? More'n enough.", "Wait... what?! Really?!? Yes!!! No. . . maybe…",
        "See https://example.com/a_b?x=1&y=2. And www.bbc.co.uk/news. Mail foo@bar.com.",
        "Emoji 😀 👍🏽 👩‍👩‍👧 🇺🇸! ❤️.", "Mr. Smith met Dr. Jones at 3 p.m. on Jan. 5. U.S. officials said so.",
        "The 2019–2020 season — and the 2021‒2022 one – ended.", "Prices rose 10% ($10) [source: BBC] {ok} <tag>.",
        "line one\nline two\n\nnew paragraph.\r\nwindows line.", "tab\tseparated\tvalues.", "  leading and trailing  ",
        "no\u00a0break\u2009thin\u3000ideographic space.", "a.b.c. d.e. f.g.h.", "(Sent one.) Sent two.", "\"Quoted.\" Next.",
        long_word, long_word + ".", "." * 100_000, "'" + long_word, "https://x.org/" + "y" * 100_000,
        "😀" * 30_000, ("word " * 20_000).strip(), "'" * 1000, "-" * 5000, ". " * 2000,
        "It's 'abc' and ''def'' and ``ghi''.", "x'y 'z 'a 'ab 're 'Re 'll 'LL 'm 'M 's 'S 'd 'D 'n 'N 't 'T",
        "end with comma,", "end with colon:", "3,000 and 3, 000 and a,b and a:b and 1:2.", "A?B!C.D", "?!?!",
    ]


def _fragment(rng: random.Random) -> str:
    pool = rng.choice([QUOTES, CONTRACTIONS, PUNCT, WORDS, WORDS, WORDS, URLS, EMOJI])
    piece = rng.choice(pool)
    if rng.random() < 0.3:  # glue to a neighbour: quotes and punctuation attached to words
        piece = rng.choice([QUOTES, PUNCT, WORDS])[rng.randrange(3)] + piece if rng.random() < 0.5 else piece + rng.choice(PUNCT + QUOTES)
    return piece


def random_cases(n: int = 600, *, seed: int = 20260101) -> list[str]:
    """``n`` random sentences of 0-40 fragments joined by random whitespace (seeded)."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [_fragment(rng) for _ in range(rng.randrange(41))]
        text = ""
        for part in parts:
            text += part + (rng.choice(SPACES) if rng.random() < 0.85 else "")
        out.append(text)
    return out


def adversarial_strings() -> list[str]:
    """The whole adversarial set (hand cases, then random sentences)."""
    return hand_cases() + random_cases()


def nltk391_word_tokenize(strings: list[str], tmp_path: Path) -> list[list[str]]:
    """``nltk.word_tokenize`` of each string by a real NLTK 3.9.1 (the session's reference-scorer process)."""
    path = tmp_path / "strings.json"
    path.write_text(json.dumps(strings), encoding="utf-8")
    result = reference_process().run(["--tokenize", str(path)])
    assert result["tokenizer"] == "nltk-3.9.1", result["tokenizer"]
    tokens: list[list[str]] = result["tokens"]
    return tokens
