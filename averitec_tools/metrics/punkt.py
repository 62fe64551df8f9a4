"""NLTK 3.9.1's Punkt sentence splitter (English), independent of the installed NLTK, and fast.

``nltk.word_tokenize`` first splits a text into sentences with Punkt. NLTK 3.10 changed
Punkt's language variables (curly quotes and guillemets count as closing punctuation,
which moves sentence boundaries) and runs its regular expressions through the slower
``regex`` engine with timeouts. This module pins 3.9.1: its language variables and token
regular expressions on the standard ``re`` module, the ``punkt_tab`` English parameters
read from their tab files, and 3.9.1's span logic (``_match_potential_end_contexts``,
``_slices_from_text``, ``_realign_boundaries``) written out here.

Punkt decides each candidate break from one short *context* string (the word before
the punctuation, the punctuation, what follows). :class:`SentenceSplitter` remembers the
decision per context, so each distinct context is decided once, by the installed NLTK's
``text_contains_sentbreak`` (its decision algorithm is unchanged from 3.8.1 to 3.10). A
``?`` or ``!`` candidate is always a break: Punkt's word tokenizer makes it a token of its
own, marks it a sentence break in its first pass (a token equal to a sentence-ending
character), never revisits it (the second pass looks only at tokens ending in a period),
and the context always has a token after it. ``tests/test_tokenize.py`` checks the
splitter against NLTK 3.9.1 on every shared string.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any

SENT_END_CHARS = (".", "?", "!")
_NON_WORD = r"(?:[)\";}\]\*:@\'\({\[" + re.escape("".join(sorted(set(SENT_END_CHARS) - {"."}))) + "])"
_WORD_START = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
_MULTI_CHAR = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
WORD_TOKENIZER = re.compile(
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
    )""".replace("%(NonWord)s", _NON_WORD).replace("%(MultiChar)s", _MULTI_CHAR).replace("%(WordStart)s", _WORD_START),
    re.UNICODE | re.VERBOSE,
)
PERIOD_CONTEXT = re.compile(
    r"""
        %(SentEndChars)s             # a potential sentence ending
        (?=(?P<after_tok>
            %(NonWord)s              # either other punctuation
            |
            \s+(?P<next_tok>\S+)     # or whitespace and some other token
        ))""".replace("%(NonWord)s", _NON_WORD).replace("%(SentEndChars)s", "[" + re.escape("".join(SENT_END_CHARS)) + "]"),
    re.UNICODE | re.VERBOSE,
)
BOUNDARY_REALIGNMENT = re.compile(r'["\')\]}]+?(?:\s+|(?=--)|$)', re.MULTILINE)
#: Punkt's ``string.whitespace``: the only characters its previous-word search stops at.
_ASCII_WHITESPACE = " \t\n\r\x0b\x0c"
_ALWAYS_BREAKS = frozenset("?!")


def _punkt() -> Any:
    """``nltk.tokenize.punkt`` (loaded without NLTK's package ``__init__``: start-up time)."""
    from averitec_tools.metrics._lean import import_lean

    return import_lean("nltk.tokenize.punkt")


def _punkt_language_vars_391() -> Any:
    """NLTK 3.9.1's ``PunktLanguageVars`` (3.10 added curly quotes/guillemets)."""
    PunktLanguageVars = _punkt().PunktLanguageVars  # noqa: N806 - NLTK's class name

    class Punkt391LanguageVars(PunktLanguageVars):  # type: ignore[misc,valid-type]
        __slots__ = ()
        re_boundary_realignment = BOUNDARY_REALIGNMENT
        internal_punctuation = ",:;"

        def word_tokenize(self, s: str) -> list[str]:
            return WORD_TOKENIZER.findall(s)

        def period_context_re(self) -> re.Pattern[str]:
            return PERIOD_CONTEXT

        def _word_tokenizer_re(self) -> re.Pattern[str]:
            return WORD_TOKENIZER

    Punkt391LanguageVars.sent_end_chars = SENT_END_CHARS
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


def _last_whitespace(text: str) -> int:
    """Punkt's ``_get_last_whitespace_index``: the last ASCII whitespace index, 0 when none (or at 0)."""
    return max(0, *(text.rfind(c) for c in _ASCII_WHITESPACE))


class SentenceSplitter:
    """``PunktSentenceTokenizer.tokenize`` (English, NLTK 3.9.1) with its decisions remembered.

    Args:
        pointer: An ``nltk.data`` path pointer to a ``punkt_tab/english`` folder.
        max_contexts: Forget the remembered decisions once more than this many are held.
    """

    def __init__(self, pointer: Any, *, max_contexts: int = 200_000) -> None:
        self._pointer = pointer
        self.max_contexts = max_contexts
        self._breaks: dict[str, bool] = {}

    @cached_property
    def punkt(self) -> Any:
        """NLTK's ``PunktSentenceTokenizer`` with 3.9.1's language variables and token class."""
        splitter = _punkt().PunktSentenceTokenizer(lang_vars=_punkt_language_vars_391(), token_cls=_punkt_token_class_391())
        splitter._params = load_punkt_params(self._pointer)
        return splitter

    def _is_break(self, match: re.Match[str], context: str) -> bool:
        if match.group() in _ALWAYS_BREAKS:
            return True
        known = self._breaks.get(context)
        if known is None:
            if len(self._breaks) >= self.max_contexts:
                self._breaks.clear()
            known = self._breaks[context] = bool(self.punkt.text_contains_sentbreak(context))
        return known

    def _end_contexts(self, text: str) -> list[tuple[re.Match[str], str]]:
        """NLTK 3.9.1's ``_match_potential_end_contexts``: candidates with the word before each."""
        out = []
        prev_start = prev_stop = 0
        previous: re.Match[str] | None = None
        for match in PERIOD_CONTEXT.finditer(text):
            start = match.start()
            last = _last_whitespace(text[prev_stop:start])
            word_start = last + prev_stop + 1 if last else prev_start
            if previous is not None and prev_stop <= word_start:
                out.append((previous, text[prev_start:prev_stop] + previous.group() + previous.group("after_tok")))
            previous, prev_start, prev_stop = match, word_start, start
        if previous is not None:
            out.append((previous, text[prev_start:prev_stop] + previous.group() + previous.group("after_tok")))
        return out

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``span_tokenize(text)``: NLTK 3.9.1's slices, then its boundary realignment."""
        slices = []
        last_break = 0
        for match, context in self._end_contexts(text):
            if self._is_break(match, context):
                slices.append((last_break, match.end()))
                last_break = match.start("next_tok") if match.group("next_tok") else match.end()
        slices.append((last_break, len(text.rstrip())))
        out = []
        realign = 0
        for k, (start, stop) in enumerate(slices):
            start += realign
            if k + 1 == len(slices):
                if start < stop:
                    out.append((start, stop))
                continue
            following = slices[k + 1]
            m = BOUNDARY_REALIGNMENT.match(text[following[0]:following[1]])
            if m:
                out.append((start, following[0] + len(m.group(0).rstrip())))
                realign = m.end()
            else:
                realign = 0
                if start < stop:
                    out.append((start, stop))
        return out

    def sentences(self, text: str) -> list[str]:
        """Split ``text`` into sentences exactly as NLTK 3.9.1's ``sent_tokenize`` (English)."""
        single = one_sentence(text)
        return single if single is not None else [text[a:b] for a, b in self.spans(text)]


def one_sentence(text: str) -> list[str] | None:
    """Punkt's answer for a text without a candidate break (``None``: it has one).

    Punkt only breaks after ``.``, ``?`` or ``!`` followed by punctuation or by whitespace
    and a token; without one it returns the text minus trailing whitespace.

    Example:
        >>> one_sentence("No break here  "), one_sentence("   "), one_sentence("One. Two")
        (['No break here'], [], None)
    """
    stripped = text.rstrip()
    body = stripped[:-1]
    if "." in body or "?" in body or "!" in body:
        return None
    return [stripped] if stripped else []


__all__ = ["SentenceSplitter", "load_punkt_params", "one_sentence"]
