"""NLTK 3.9.1's Punkt sentence splitter (English), independent of the installed NLTK, and fast.

``nltk.word_tokenize`` first splits a text into sentences with Punkt. NLTK 3.10 changed
Punkt's language variables (curly quotes and guillemets count as closing punctuation,
which moves sentence boundaries) and runs its regular expressions through the slower
``regex`` engine with timeouts. This module pins 3.9.1: its language variables and token
regular expressions on the standard ``re`` module, the ``punkt_tab`` English parameters
read from their tab files, and 3.9.1's span logic (``_match_potential_end_contexts``,
``_slices_from_text``, ``_realign_boundaries``) written out here.

Punkt decides each candidate break from one short *context* string (the word before
the punctuation, the punctuation, what follows): :func:`contains_sentbreak` is Punkt's
``text_contains_sentbreak`` -- its word tokens, the type-based first pass (sentence-ending
characters, ellipses, known abbreviations), the pairwise second pass (collocations, the
orthographic heuristic, frequent sentence starters, initials and ordinals) -- written out
here so that tokenising never imports NLTK (whose Punkt module pulls in much of the
package). :class:`SentenceSplitter` remembers the decision per context. A ``?`` or ``!``
candidate is always a break: the word tokenizer makes it a token of its own, the first
pass marks it (a token equal to a sentence-ending character), the second pass looks only
at tokens ending in a period, and the context always has a token after it.
``tests/test_tokenize.py`` checks the decisions against NLTK's own Punkt (3.9.1 language
variables) on every context of the shared strings and on random ones, and the splitter
against NLTK 3.9.1 on every shared string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
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


#: ``PunktSentenceTokenizer.PUNCTUATION``: tokens the orthographic heuristic never takes for a sentence start.
_PUNCTUATION = frozenset(";:,.!?")
_ORTHO_BEG_UC, _ORTHO_MID_UC, _ORTHO_UNK_UC = 1 << 1, 1 << 2, 1 << 3
_ORTHO_BEG_LC, _ORTHO_MID_LC, _ORTHO_UNK_LC = 1 << 4, 1 << 5, 1 << 6
_ORTHO_UC = _ORTHO_BEG_UC + _ORTHO_MID_UC + _ORTHO_UNK_UC
_ORTHO_LC = _ORTHO_BEG_LC + _ORTHO_MID_LC + _ORTHO_UNK_LC
# NLTK 3.9.1's PunktToken patterns
_RE_ELLIPSIS = re.compile(r"\.\.+$")
_RE_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
_RE_INITIAL = re.compile(r"[^\W\d]\.$", re.UNICODE)


@dataclass(frozen=True)
class PunktParameters:
    """The trained English Punkt parameters (``punkt_tab/english``)."""

    abbrev_types: frozenset[str]
    collocations: frozenset[tuple[str, ...]]
    sent_starters: frozenset[str]
    ortho_context: dict[str, int]


def _read_lines(pointer: Any, name: str) -> list[str]:
    """The file's lines without their line ends, as iterating over it gives them."""
    with pointer.join(name).open(encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines[-1] == "":  # the text ends with a line end (or is empty): no line after it
        lines.pop()
    return lines


def load_punkt_params(pointer: Any) -> PunktParameters:
    """Read the parameters from a ``punkt_tab/english`` folder (as NLTK 3.9.1 does)."""
    lines = _read_lines(pointer, "ortho_context.tab")  # "word<TAB>flags", ~20,000 of them: split at C speed
    if not set(map(str.count, lines, repeat("\t"))) <= {1}:
        raise ValueError("ortho_context.tab: a line without exactly one tab")
    fields = "\t".join(lines).split("\t")
    ortho = dict(zip(fields[0::2], map(int, fields[1::2]), strict=True))
    return PunktParameters(
        abbrev_types=frozenset(_read_lines(pointer, "abbrev_types.txt")),
        collocations=frozenset(tuple(line.split("\t")) for line in _read_lines(pointer, "collocations.tab")),
        sent_starters=frozenset(_read_lines(pointer, "sent_starters.txt")),
        ortho_context=ortho,
    )


class _Token:
    """A Punkt token and its annotations (``PunktToken``)."""

    __slots__ = ("tok", "type", "period_final", "sentbreak", "abbr", "ellipsis")

    def __init__(self, tok: str) -> None:
        self.tok = tok
        self.type = _RE_NUMERIC.sub("##number##", tok.lower())
        self.period_final = tok.endswith(".")
        self.sentbreak = self.abbr = self.ellipsis = False

    def type_no_period(self) -> str:
        return self.type[:-1] if len(self.type) > 1 and self.type[-1] == "." else self.type

    def type_no_sentperiod(self) -> str:
        return self.type_no_period() if self.sentbreak else self.type


def _first_pass(token: _Token, params: PunktParameters) -> None:
    tok = token.tok
    if tok in SENT_END_CHARS:
        token.sentbreak = True
    elif _RE_ELLIPSIS.match(tok):
        token.ellipsis = True
    elif token.period_final and not tok.endswith(".."):
        body = tok[:-1].lower()
        if body in params.abbrev_types or body.split("-")[-1] in params.abbrev_types:
            token.abbr = True
        else:
            token.sentbreak = True


def _ortho_heuristic(token: _Token, params: PunktParameters) -> bool | None:
    """Whether ``token`` starts a sentence by its capitalisation elsewhere (``None``: unknown)."""
    if token.tok in _PUNCTUATION:
        return False
    context = params.ortho_context.get(token.type_no_sentperiod(), 0)
    if token.tok[0].isupper() and (context & _ORTHO_LC) and not (context & _ORTHO_MID_UC):
        return True
    if token.tok[0].islower() and ((context & _ORTHO_UC) or not (context & _ORTHO_BEG_LC)):
        return False
    return None


def _second_pass(token: _Token, following: _Token, params: PunktParameters) -> None:
    if not token.period_final:
        return
    typ, next_typ = token.type_no_period(), following.type_no_sentperiod()
    initial = _RE_INITIAL.match(token.tok) is not None
    if (typ, next_typ) in params.collocations:
        token.sentbreak, token.abbr = False, True
        return
    if (token.abbr or token.ellipsis) and not initial:
        if _ortho_heuristic(following, params) is True:
            token.sentbreak = True
            return
        if following.tok[0].isupper() and next_typ in params.sent_starters:
            token.sentbreak = True
            return
    if initial or typ == "##number##":
        starts = _ortho_heuristic(following, params)
        if starts is False or (starts is None and initial and following.tok[0].isupper()
                               and not (params.ortho_context.get(next_typ, 0) & _ORTHO_LC)):
            token.sentbreak, token.abbr = False, True


def contains_sentbreak(context: str, params: PunktParameters) -> bool:
    """Punkt's ``text_contains_sentbreak``: whether a token other than the last one ends a sentence.

    Example:
        >>> from averitec_tools.resources import find_resource
        >>> params = load_punkt_params(find_resource("punkt_tab", allow_download=False))
        >>> contains_sentbreak("said. The", params), contains_sentbreak("Mr. Smith", params)
        (True, False)
    """
    tokens = [_Token(tok) for line in context.split("\n") for tok in WORD_TOKENIZER.findall(line)]
    for token in tokens:
        _first_pass(token, params)
    for token, following in zip(tokens, tokens[1:], strict=False):
        _second_pass(token, following, params)
    return any(token.sentbreak for token in tokens[:-1])


_OTHER_ASCII_WHITESPACE = re.compile(r"[\t\n\r\x0b\x0c]")


def _last_whitespace(text: str, *, spaces_only: bool = False) -> int:
    """Punkt's ``_get_last_whitespace_index``: the last ASCII whitespace index, 0 when none (or at 0);
    ``spaces_only``: the text holds no other ASCII whitespace than spaces."""
    if spaces_only:
        return max(0, text.rfind(" "))
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
    def params(self) -> PunktParameters:
        """The English parameters (read from ``punkt_tab`` on first use)."""
        return load_punkt_params(self._pointer)

    def decide(self, context: str) -> bool:
        """Whether a period candidate with this ``context`` breaks (:func:`contains_sentbreak`, remembered)."""
        known = self._breaks.get(context)
        if known is None:
            if len(self._breaks) >= self.max_contexts:
                self._breaks.clear()
            known = self._breaks[context] = contains_sentbreak(context, self.params)
        return known

    def _is_break(self, match: re.Match[str], context: str) -> bool:
        return match.group() in _ALWAYS_BREAKS or self.decide(context)

    def _end_contexts(self, text: str) -> list[tuple[re.Match[str], str]]:
        """NLTK 3.9.1's ``_match_potential_end_contexts``: candidates with the word before each."""
        out = []
        prev_start = prev_stop = 0
        previous: re.Match[str] | None = None
        spaces_only = _OTHER_ASCII_WHITESPACE.search(text) is None
        for match in PERIOD_CONTEXT.finditer(text):
            start = match.start()
            last = _last_whitespace(text[prev_stop:start], spaces_only=spaces_only)
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


__all__ = ["PunktParameters", "SentenceSplitter", "contains_sentbreak", "load_punkt_params", "one_sentence"]
