"""The NLTK 3.9.1 word tokenizer, independent of the installed NLTK."""

from __future__ import annotations

import json
from pathlib import Path

import nltk
import pytest
from _score_corpus import corpus_strings, digest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics.tokenize import WordTokenizer, treebank_tokenize

REFERENCE = json.loads((Path(__file__).parent / "data" / "nltk391_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tokenizer() -> WordTokenizer:
    return WordTokenizer(allow_download=False)


def test_leading_single_quote_stays_attached() -> None:
    # NLTK 3.9.1 keeps 'Destroying whole; 3.10 splits it into ' + Destroying.
    assert treebank_tokenize("accused Billie Eilish of 'Destroying our country'") == [
        "accused", "Billie", "Eilish", "of", "'Destroying", "our", "country", "'",
    ]


def test_single_letter_after_quote_is_split() -> None:
    # 3.9.1 splits a quote from a one-letter word ('a), but not from contractions ('s).
    assert treebank_tokenize("'a house's roof") == ["'", "a", "house", "'s", "roof"]


def test_unicode_dash_is_not_split() -> None:
    # 3.10 added U+2012..U+2015 as punctuation; 3.9.1 leaves them inside tokens.
    assert treebank_tokenize("2019\u20132020 season") == ["2019\u20132020", "season"]


def test_word_tokenize_splits_sentences_first(tokenizer: WordTokenizer) -> None:
    # The period of a non-final sentence is only split off because Punkt ends a sentence there.
    assert tokenizer.tokenize("He said so. She did not.") == ["He", "said", "so", ".", "She", "did", "not", "."]
    assert treebank_tokenize("He said so. She did not.") == ["He", "said", "so.", "She", "did", "not", "."]


def test_curly_quote_sentence_boundary_is_391(tokenizer: WordTokenizer) -> None:
    # 3.10's Punkt realigns a closing curly quote onto the previous sentence; 3.9.1 does not.
    text = "He called it \u201cfake.\u201d Then he left."
    assert tokenizer.sentences(text) == ["He called it \u201cfake.\u201d Then he left."]


def test_empty_and_whitespace(tokenizer: WordTokenizer) -> None:
    assert tokenizer.tokenize("") == []
    assert tokenizer.tokenize("   \n ") == []


@pytest.mark.parametrize("case", REFERENCE["tokenizer_differs_from_3_10"][:100], ids=lambda c: c["text"][:30])
def test_recorded_391_cases(tokenizer: WordTokenizer, case: dict) -> None:
    assert tokenizer.tokenize(case["text"]) == case["tokens"]


def test_installed_nltk_differs_on_recorded_cases() -> None:
    """The recorded cases are exactly those where NLTK 3.10 deviates (guards the fixture)."""
    if nltk.__version__ in ("3.8.1", "3.9.1"):
        pytest.skip(f"installed NLTK {nltk.__version__} is the reference itself")
    case = REFERENCE["tokenizer_differs_from_3_10"][0]
    assert nltk.word_tokenize(case["text"]) != case["tokens"]


@pytest.mark.shared_data
def test_corpus_wide_equality_with_nltk_391(shared_data: Path, tokenizer: WordTokenizer) -> None:
    """Every string of the shared AVeriTeC files tokenises exactly as NLTK 3.9.1 did."""
    strings = corpus_strings(shared_data)
    assert len(strings) == REFERENCE["n_strings"]
    assert digest([tokenizer.tokenize(s) for s in strings]) == REFERENCE["tokens_sha256"]


_ALPHABET = st.sampled_from(list("ab .?!,;:'\"()-\n\t”“") + ["Mr.", "U.S.", "e.g.", "3.5", "No", "The"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=25).map("".join))
def test_sentence_splitter_equals_punkt(tokenizer: WordTokenizer, text: str) -> None:
    """The no-boundary shortcut, the span logic written out and the remembered decisions give
    what NLTK's own Punkt (with the 3.9.1 language variables) gives."""
    from _punkt_reference import nltk_punkt_391

    assert tokenizer.sentences(text) == nltk_punkt_391().tokenize(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(_ALPHABET | st.sampled_from(["J.", "A.", "No.", "Inc.", "1.", "a.m.", "Dr", "Smith", "smith", "--", ".."]),
                max_size=8).map("".join))
def test_punkt_decisions_equal_nltk(tokenizer: WordTokenizer, context: str) -> None:
    """Punkt's decision per candidate, written out, is NLTK's ``text_contains_sentbreak``."""
    from _punkt_reference import nltk_punkt_391

    from averitec_tools.metrics.punkt import contains_sentbreak

    assert contains_sentbreak(context, tokenizer.splitter.params) == nltk_punkt_391().text_contains_sentbreak(context)


@pytest.mark.shared_data
def test_punkt_decisions_equal_nltk_on_every_shared_context(shared_data: Path, tokenizer: WordTokenizer) -> None:
    from _punkt_reference import nltk_punkt_391

    from averitec_tools.metrics.punkt import contains_sentbreak

    reference = nltk_punkt_391()
    contexts = {c for s in corpus_strings(shared_data) for _, c in tokenizer.splitter._end_contexts(s)}
    assert len(contexts) > 3000
    params = tokenizer.splitter.params
    assert [c for c in sorted(contexts) if contains_sentbreak(c, params) != reference.text_contains_sentbreak(c)] == []


# NLTK 3.9.1's first punctuation rule as NLTK writes it (quadratic on a period followed by a
# long run of spaces); treebank.py uses an equivalent linear form.
_NLTK_PERIOD_RULE = r'([^\.])(\.)([\]\)}>"\'' "»”’ " r"]*)\s*$"


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(list(". .. \t\n)]}>\"'’»”ax") + [" " * 7]), max_size=30).map("".join))
def test_linear_period_rule_equals_nltk_pattern(text: str) -> None:
    import re

    from averitec_tools.metrics.treebank import _PUNCTUATION

    ours, substitution = _PUNCTUATION[0]
    assert ours.sub(substitution, text) == re.compile(_NLTK_PERIOD_RULE, re.U).sub(r"\1 \2 \3 ", text)


def test_period_before_long_run_of_spaces(tokenizer: WordTokenizer) -> None:
    # Punkt keeps "Mr." and what follows in one sentence; NLTK's own rule then backtracks
    # over every split of the spaces (about 10^10 steps here)
    assert tokenizer.tokenize("The site is run by Mr." + " " * 100_000 + "x )")[-3:] == ["Mr.", "x", ")"]


# --- parity with NLTK 3.9.1 beyond the scored strings, and the fast paths' equivalences ---------

@pytest.mark.shared_data
def test_every_training_string_tokenises_as_nltk_391(shared_data: Path, tokenizer: WordTokenizer) -> None:
    from _score_corpus import train_strings

    strings = train_strings(shared_data)
    assert len(strings) == REFERENCE["n_train_strings"]
    assert digest(tokenizer.tokenize_many(strings)) == REFERENCE["train_tokens_sha256"]


def test_adversarial_set_tokenises_as_nltk_391_live(tmp_path: Path) -> None:
    """Unicode quotes, contractions, ellipses, URLs, emoji, odd whitespace, 100k-character tokens,
    empty strings, and random sentences of them: token for token what a real NLTK 3.9.1 gives."""
    from _tokenizer_cases import adversarial_strings, nltk391_word_tokenize

    strings = adversarial_strings()
    expected = nltk391_word_tokenize(strings, tmp_path)
    together = WordTokenizer(allow_download=False).tokenize_many(strings)
    for text, ours, theirs in zip(strings, together, expected, strict=True):
        assert ours == theirs, text[:200]
    one_by_one = WordTokenizer(allow_download=False)
    assert [one_by_one.tokenize(s) for s in strings] == expected


def test_regex_whitespace_is_str_whitespace() -> None:
    """The chunk decomposition splits where the rules' ``\\s`` does: the same characters."""
    import re
    import sys

    pattern = re.compile(r"\s")
    assert [c for c in map(chr, range(sys.maxunicode + 1)) if bool(pattern.match(c)) != c.isspace()] == []


_CHUNK_ALPHABET = st.sampled_from(
    list("ab .?!,;:'\"`()[]{}<>*@#$%&-\t\n\u00a0«»“”‘’„…") + ["--", "...", "''", "``", "Mr.", "U.S.", "can", "not", "gon",
                                                              "na", "wan", "'t", "is", "'s", "n't", "'ll", "d'ye", "3.5", "x\x00"]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(_CHUNK_ALPHABET, max_size=30).map("".join))
def test_chunk_tokenizer_equals_the_rules(text: str) -> None:
    """Sentences assembled from remembered chunks give the full pipeline's tokens."""
    from averitec_tools.metrics.treebank import ChunkTokenizer

    chunks = ChunkTokenizer()
    assert chunks.tokenize_many([text, text + " " + text]) == [treebank_tokenize(text), treebank_tokenize(text + " " + text)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_CHUNK_ALPHABET, min_size=1, max_size=6).map("".join), min_size=1, max_size=8),
       st.sampled_from([1, 2]), st.sampled_from([1, 2]))
def test_batched_chunks_equal_chunks_alone(chunks: list[str], left: int, right: int) -> None:
    from averitec_tools.metrics.treebank import SENTINEL, batch_chunk_tokens, chunk_tokens

    chunks = [c for c in chunks if c.strip() and SENTINEL not in c and not any(ch.isspace() for ch in c)]
    assert batch_chunk_tokens(chunks, left, right) == [chunk_tokens(c, left, right) for c in chunks]
