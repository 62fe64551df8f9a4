"""NLTK 3.9.1's ``word_tokenize``, reproduced so scores do not depend on the installed NLTK.

The official AVeriTeC scorers call ``nltk.word_tokenize`` and were run with NLTK 3.8.1 /
3.9.1. NLTK 3.10 changed three things that move scores:

* the Treebank rule for a leading single quote (``'Destroying`` stays one token in 3.9.1,
  becomes ``'``, ``Destroying`` in 3.10);
* Unicode dashes (U+2012..U+2015) are split off as punctuation in 3.10;
* Punkt treats curly quotes and guillemets as closing punctuation in 3.10, which moves
  sentence boundaries (and with them which periods are split off).

This module pins the 3.9.1 behaviour: the Treebank rules are 3.9.1's (one rewritten to an
equivalent linear-time pattern, see ``_PUNCTUATION``), compiled with the
standard ``re`` module, and the Punkt sentence splitter runs with 3.9.1's language
variables and token regular expressions (standard ``re`` again: NLTK 3.10's ``regex``
engine with timeouts is an order of magnitude slower) and the ``punkt_tab`` English
parameters read directly from their tab files.
Only Punkt's decision algorithm comes from the installed NLTK (unchanged 3.8.1 → 3.10);
``tests/test_tokenize.py`` checks the whole pipeline against recorded 3.9.1 output on
every string of the shared AVeriTeC files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cached_property
from typing import Any

#: Name recorded in score signatures.
TOKENIZER_NAME = "nltk-3.9.1-word_tokenize"

# --- NLTK 3.9.1 NLTKWordTokenizer rules (nltk/tokenize/destructive.py) -------------------
_STARTING_QUOTES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("([«“‘„]|[`]+)", re.U), r" \1 "),
    (re.compile(r"^\""), r"``"),
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
    # 3.9.1: a quote is split from a *single* following word character only.
    (re.compile(r"(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b", re.U), r"\1 \2"),
)
_ENDING_QUOTES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("([»”’])", re.U), r" \1 "),
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"\s+"), " "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
)
_PUNCTUATION: tuple[tuple[re.Pattern[str], str], ...] = (
    # NLTK's pattern is ([^\.])(\.)([\]\)}>"\'»”’ ]*)\s*$: its bracket class holds the space, so
    # on a period followed by k spaces and then anything but the end of the text, the two
    # stars split the spaces every way before failing (O(k^2) per period). Taking the
    # class run whole, (?=(...))\3, the atomic-group idiom, gives the same matches and
    # groups: a shorter run only hands spaces to \s*, which cannot then reach the end
    # unless the whole run could. Linear; ``tests/test_tokenize.py`` compares the two.
    (re.compile(r'([^\.])(\.)(?=([\]\)}>"\'' "»”’ " r"]*))\3\s*$", re.U), r"\1 \2 \3 "),
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}", re.U), r" \g<0> "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"[*]", re.U), r" \g<0> "),
)
_PARENS_BRACKETS = (re.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")
_DOUBLE_DASHES = (re.compile(r"--"), r" -- ")
_CONTRACTIONS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"(?i)\b(can)(?#X)(not)\b",
        r"(?i)\b(d)(?#X)('ye)\b",
        r"(?i)\b(gim)(?#X)(me)\b",
        r"(?i)\b(gon)(?#X)(na)\b",
        r"(?i)\b(got)(?#X)(ta)\b",
        r"(?i)\b(lem)(?#X)(me)\b",
        r"(?i)\b(more)(?#X)('n)\b",
        r"(?i)\b(wan)(?#X)(na)(?=\s)",
        r"(?i) ('t)(?#X)(is)\b",
        r"(?i) ('t)(?#X)(was)\b",
    )
)


# A substitution can only change the text where its pattern matches, and every pattern
# below needs at least one of these characters; skipping the others is a pure speed-up.


def _needs(table: tuple[tuple[re.Pattern[str], str], ...], chars: tuple[str | None, ...]) -> list[tuple[re.Pattern[str], str, str | None]]:
    return [(rx, sub, need) for (rx, sub), need in zip(table, chars, strict=True)]


_STARTING = _needs(_STARTING_QUOTES, ("«“‘„`", '"', "`", "\"'", "'"))
_PUNCT = _needs(_PUNCTUATION, (".", ":,", ":,", ".", ";@#$%&", ".", "?!", "'", "*"))
_ENDING = _needs(_ENDING_QUOTES, ("»”’", "'", '"', None, "'", "'"))
# Same (?i) semantics as the contraction patterns themselves (str.lower() would differ on
# characters such as U+0130).
_CONTRACTION_HINT = re.compile(r"(?i)can|d'|gim|gon|got|lem|more|wan|'t")


def _apply(text: str, table: list[tuple[re.Pattern[str], str, str | None]]) -> str:
    for regexp, substitution, need in table:
        if need is None or any(c in text for c in need):
            text = regexp.sub(substitution, text)
    return text


def treebank_tokenize(sentence: str) -> list[str]:
    """Tokenize one sentence exactly as NLTK 3.9.1's ``NLTKWordTokenizer.tokenize``.

    Example:
        >>> treebank_tokenize("'Destroying our country', she said.")
        ["'Destroying", 'our', 'country', "'", ',', 'she', 'said', '.']
    """
    text = _apply(sentence, _STARTING)
    text = _apply(text, _PUNCT)
    if any(c in text for c in "[](){}<>"):
        text = _PARENS_BRACKETS[0].sub(_PARENS_BRACKETS[1], text)
    if "--" in text:
        text = _DOUBLE_DASHES[0].sub(_DOUBLE_DASHES[1], text)
    text = _apply(" " + text + " ", _ENDING)
    if _CONTRACTION_HINT.search(text):
        for regexp in _CONTRACTIONS:
            text = regexp.sub(r" \1 \2 ", text)
    return text.split()


def _punkt() -> Any:
    """``nltk.tokenize.punkt`` (loaded without NLTK's package ``__init__``: start-up time)."""
    from averitec_tools.metrics._lean import import_lean

    return import_lean("nltk.tokenize.punkt")


def _punkt_language_vars_391() -> Any:
    """NLTK 3.9.1's ``PunktLanguageVars`` (3.10 added curly quotes/guillemets)."""
    PunktLanguageVars = _punkt().PunktLanguageVars  # noqa: N806 - NLTK's class name

    sent_end_chars = (".", "?", "!")
    non_word_chars = r"(?:[)\";}\]\*:@\'\({\[" + re.escape("".join(sorted(set(sent_end_chars) - {"."}))) + "])"
    word_start = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
    multi_char = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
    word_tokenizer = re.compile(
        r"""(
        %(MultiChar)s
        |
        (?=%(WordStart)s)\S+?  # Accept word characters until end is found
        (?= # Sequences marking a word's end
            \s|                                 # White-space
            $|                                  # End-of-string
            %(NonWord)s|%(MultiChar)s|          # Punctuation
            ,(?=$|\s|%(NonWord)s|%(MultiChar)s) # Comma if at end of word
        )
        |
        \S
    )"""
        .replace("%(NonWord)s", non_word_chars)
        .replace("%(MultiChar)s", multi_char)
        .replace("%(WordStart)s", word_start),
        re.UNICODE | re.VERBOSE,
    )
    period_context = re.compile(
        r"""
        %(SentEndChars)s             # a potential sentence ending
        (?=(?P<after_tok>
            %(NonWord)s              # either other punctuation
            |
            \s+(?P<next_tok>\S+)     # or whitespace and some other token
        ))"""
        .replace("%(NonWord)s", non_word_chars)
        .replace("%(SentEndChars)s", "[" + re.escape("".join(sent_end_chars)) + "]"),
        re.UNICODE | re.VERBOSE,
    )

    class Punkt391LanguageVars(PunktLanguageVars):  # type: ignore[misc,valid-type]
        __slots__ = ()
        re_boundary_realignment = re.compile(r'["\')\]}]+?(?:\s+|(?=--)|$)', re.MULTILINE)
        internal_punctuation = ",:;"

        def word_tokenize(self, s: str) -> list[str]:
            return word_tokenizer.findall(s)

        def period_context_re(self) -> re.Pattern[str]:
            return period_context

        def _word_tokenizer_re(self) -> re.Pattern[str]:
            return word_tokenizer

    Punkt391LanguageVars.sent_end_chars = sent_end_chars
    return Punkt391LanguageVars()


def _punkt_token_class_391() -> Any:
    """``PunktToken`` with NLTK 3.9.1's regular expressions on the standard ``re`` module.

    NLTK 3.10 runs these through its ``redos`` wrapper (the ``regex`` engine plus a
    timeout), which made sentence splitting ~10x slower; the patterns are unchanged.
    """
    PunktToken = _punkt().PunktToken  # noqa: N806 - NLTK's class name

    non_punct = re.compile(r"[^\W\d]", re.UNICODE)

    class Punkt391Token(PunktToken):  # type: ignore[misc,valid-type]
        __slots__ = ()
        _RE_ELLIPSIS = re.compile(r"\.\.+$")
        _RE_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
        _RE_INITIAL = re.compile(r"[^\W\d]\.$", re.UNICODE)
        _RE_ALPHA = re.compile(r"[^\W\d]+$", re.UNICODE)

        def _get_type(self, tok: str) -> str:
            return self._RE_NUMERIC.sub("##number##", tok.lower())

        @property
        def is_non_punct(self) -> Any:
            return non_punct.search(self.type)

    return Punkt391Token


def _read_lines(pointer: Any, name: str) -> list[str]:
    with pointer.join(name).open(encoding="utf-8") as fh:
        return [line[:-1] if line.endswith("\n") else line for line in fh]


def load_punkt_params(pointer: Any) -> Any:
    """Build ``PunktParameters`` from a ``punkt_tab/english`` folder (as NLTK 3.9.1 does)."""
    params = _punkt().PunktParameters()
    params.collocations = {tuple(line.split("\t")) for line in _read_lines(pointer, "collocations.tab")}
    params.sent_starters = set(_read_lines(pointer, "sent_starters.txt"))
    params.abbrev_types = set(_read_lines(pointer, "abbrev_types.txt"))
    for line in _read_lines(pointer, "ortho_context.tab"):
        word, value = line.split("\t")
        params.ortho_context[word] = int(value)
    return params


class WordTokenizer:
    """``nltk.word_tokenize`` with NLTK 3.9.1 behaviour, whatever NLTK is installed.

    Punkt parameters are resolved lazily through :mod:`averitec_tools.resources`.

    Args:
        allow_download: Whether a missing ``punkt_tab`` may be fetched (announced on stderr).

    Example:
        >>> WordTokenizer().tokenize("The 'Destroying' claim. It was false.")
        ['The', "'Destroying", "'", 'claim', '.', 'It', 'was', 'false', '.']
    """

    name = TOKENIZER_NAME

    def __init__(self, *, allow_download: bool = True) -> None:
        self.allow_download = allow_download
        self._sentence_tokens: dict[str, tuple[str, ...]] = {}

    @cached_property
    def _sentence_splitter(self) -> Any:
        from averitec_tools.resources import find_resource

        pointer = find_resource("punkt_tab", allow_download=self.allow_download)
        splitter = _punkt().PunktSentenceTokenizer(lang_vars=_punkt_language_vars_391(), token_cls=_punkt_token_class_391())
        splitter._params = load_punkt_params(pointer)
        return splitter

    def load(self) -> None:
        """Resolve and read ``punkt_tab`` now (otherwise on the first multi-sentence text)."""
        _ = self._sentence_splitter

    def sentences(self, text: str) -> list[str]:
        """Split ``text`` into sentences (Punkt, English, 3.9.1 language variables)."""
        stripped = text.rstrip()
        if not any(c in stripped[:-1] for c in ".?!"):
            # Punkt only breaks after [.?!] followed by punctuation or by space and a
            # token; without one it returns the text minus trailing whitespace.
            return [stripped] if stripped else []
        result: list[str] = self._sentence_splitter.tokenize(text)
        return result

    def clear_cache(self) -> None:
        """Forget the tokens remembered per sentence."""
        self._sentence_tokens.clear()

    def tokenize(self, text: str) -> list[str]:
        """Tokenize ``text`` exactly as ``nltk.word_tokenize`` under NLTK 3.9.1."""
        cache = self._sentence_tokens
        out: list[str] = []
        for sent in self.sentences(text):
            # Q+A strings repeat their question and answer sentences: tokenise each once.
            tokens = cache.get(sent)
            if tokens is None:
                tokens = cache[sent] = tuple(treebank_tokenize(sent))
            out.extend(tokens)
        return out

    def tokenize_many(self, texts: Iterable[str]) -> list[list[str]]:
        """Tokenize several texts (same result as calling :meth:`tokenize` on each)."""
        return [self.tokenize(t) for t in texts]


__all__ = ["TOKENIZER_NAME", "WordTokenizer", "treebank_tokenize"]
