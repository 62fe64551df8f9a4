r"""NLTK 3.9.1's Treebank word tokenizer (``NLTKWordTokenizer.tokenize``), reproduced and made fast.

:func:`treebank_tokenize` applies 3.9.1's rules in 3.9.1's order (one rewritten to an
equivalent linear-time pattern, see ``_PUNCTUATION``) with the standard ``re`` module. NLTK
3.10 changed two of them in ways that move scores: a leading single quote stays attached in
3.9.1 (``'Destroying``), and Unicode dashes (U+2012..U+2015) are not split off.

:class:`ChunkTokenizer` gives the same tokens much faster. Every rule either matches
inside one whitespace-separated chunk, looking at most one character beyond it (the
whitespace on either side: a literal space or another whitespace character), or is
anchored at the start (``^"``) or the end of the sentence (the two final-period rules and
``[:,]$``). So a sentence's tokens are its chunks' tokens, each computed once in its
context -- the chunk between two neutral sentinel chunks, with the real kind of
whitespace on each side -- except for the first chunk (start of text) and the *tail*:
the last chunk, with any chunks of closing quotes and brackets after it, which the
end-anchored rules can reach (run through the full pipeline with its real left context).
Chunks never merge or split across whitespace: every substitution keeps the characters
it matched and only inserts spaces (or turns quotes into quote tokens), and ``\s`` is
``str.isspace`` (tested for every code point).

Remembered chunks (``the``, ``claim,``) cost a dictionary lookup; chunks without any
character a rule looks at are tokens as they are; the rest of a batch's new chunks run
through the rules together in one string, separated by sentinel chunks.
``tests/test_tokenize.py`` checks the whole word tokenizer token for token against NLTK
3.9.1 on every shared string and on a generated adversarial set, and the chunk
decomposition against :func:`treebank_tokenize` on random sentences.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain

from averitec_tools.metrics import text_accel

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


# --- the chunk decomposition (module docstring) -------------------------------------------
#: Characters some rule looks at, and ``--``: a chunk with none of them (and no contraction)
#: is one token in any context.
_SPECIAL = re.compile(r"[«“‘„`\"'»”’.:,;@#$%&?!*()\[\]{}<>]|--")
_ANY_CONTRACTION = re.compile("|".join(p.pattern.removeprefix("(?i)") for p in _CONTRACTIONS), re.IGNORECASE)
#: Chunks the end-anchored rules can look across: closing quotes and brackets only.
_CLOSING_ONLY = re.compile(r"[\]\)}>\"'»”’]+")
_WHITESPACE_RUNS = re.compile(r"(\s+)")
_OTHER_WHITESPACE = re.compile(r"[^\S ]")
#: A neutral chunk (no rule looks at it) that stands for the text around a chunk.
SENTINEL = "\x00"
#: A chunk's left context: start of text, a space, other whitespace; right context: a space, other whitespace.
START, SPACE, OTHER = 0, 1, 2
_WHITESPACE = {SPACE: " ", OTHER: "\n"}  # every non-space whitespace character is alike to the rules
_TAIL_PUNCTUATION = frozenset(".?!,:;")

Tokens = tuple[str, ...]
#: Remembered tokens: of chunks, by (left, right) context, and of tails, by (left, tail).
Memos = tuple[dict[tuple[int, int], dict[str, Tokens]], dict[tuple[int, str], Tokens]]

#: The contractions a chunk without quotes can hold (the others need an apostrophe, a special character).
_LETTER_CONTRACTIONS = re.compile("cannot|gimme|gonna|gotta|lemme|wanna")


def is_inert(chunk: str) -> bool:
    """Whether no rule can touch ``chunk`` wherever it stands in a sentence (it is then one token).

    Example:
        >>> is_inert("claims"), is_inert("claims,"), is_inert("Gonna"), is_inert("x--y")
        (True, False, False, False)
    """
    if _SPECIAL.search(chunk) is not None:
        return False
    # ASCII case-insensitivity is str.lower (re's (?i) extras are all non-ASCII)
    if chunk.isascii() and _LETTER_CONTRACTIONS.search(chunk.lower()) is None:
        return True
    return _ANY_CONTRACTION.search(f" {chunk} ") is None


def _kind(char: str) -> int:
    return SPACE if char == " " else OTHER


def _strip_sentinels(tokens: list[str], *, left: bool, right: bool) -> Tokens | None:
    """``tokens`` without the sentinel tokens at the ends (``None``: not where expected)."""
    if (left and (not tokens or tokens[0] != SENTINEL)) or (right and (not tokens or tokens[-1] != SENTINEL)):
        return None
    return tuple(tokens[int(left): len(tokens) - int(right)])


def chunk_tokens(chunk: str, left: int, right: int) -> Tokens:
    """Tokens of ``chunk`` with ``left`` (``START``/``SPACE``/``OTHER``) and ``right`` context
    (``SPACE``/``OTHER``), by the full pipeline between sentinels.

    Example:
        >>> chunk_tokens('"claims,', SPACE, SPACE), chunk_tokens('"claims,', START, SPACE)
        (('``', 'claims', ','), ('``', 'claims', ','))
    """
    text = ("" if left == START else SENTINEL + _WHITESPACE[left]) + chunk + _WHITESPACE[right] + SENTINEL
    tokens = _strip_sentinels(treebank_tokenize(text), left=left != START, right=True)
    if tokens is None:  # pragma: no cover - a sentinel is one token wherever it stands
        raise AssertionError(f"sentinel lost around {chunk!r}")
    return tokens


def tail_tokens(tail: str, left: int, *, one_chunk: bool = False) -> Tokens:
    """Tokens of a sentence's ``tail`` (it ends the sentence) after ``left`` context (``START``: the
    tail is the whole sentence); ``one_chunk``: the tail holds no whitespace.

    Example:
        >>> tail_tokens("said.", SPACE, one_chunk=True), tail_tokens("(said.) ”", SPACE)
        (('said', '.'), ('(', 'said', '.', ')', '”'))
    """
    if left == START:
        return tuple(treebank_tokenize(tail))
    if one_chunk and len(tail) > 1 and tail[-1] in _TAIL_PUNCTUATION and is_inert(tail[:-1]):
        return (tail[:-1], tail[-1])  # "claims." "now?" "Yes,": only the final-punctuation rules apply
    if one_chunk and is_inert(tail):
        return (tail,)  # "2019" "Biden": no rule touches it, last in its sentence either
    tokens = _strip_sentinels(treebank_tokenize(SENTINEL + _WHITESPACE[left] + tail), left=True, right=False)
    if tokens is None:  # pragma: no cover
        raise AssertionError(f"sentinel lost before {tail!r}")
    return tokens


def batch_chunk_tokens(chunks: Sequence[str], left: int, right: int) -> list[Tokens]:
    """:func:`chunk_tokens` of many chunks (no sentinel in them, ``left`` not ``START``) in one pass
    of the rules over one string: each chunk stands between sentinels, as alone.

    Example:
        >>> batch_chunk_tokens(["claims,", "(it)", "U.S."], SPACE, SPACE)
        [('claims', ','), ('(', 'it', ')'), ('U.S.',)]
    """
    wl, wr = _WHITESPACE[left], _WHITESPACE[right]
    tokens = treebank_tokenize(SENTINEL + "".join(f"{wl}{c}{wr}{SENTINEL}" for c in chunks))
    groups: list[Tokens] = []
    start = 1
    for i in range(1, len(tokens)):
        if tokens[i] == SENTINEL:
            groups.append(tuple(tokens[start:i]))
            start = i + 1
    if len(groups) != len(chunks) or tokens[0] != SENTINEL:  # pragma: no cover - defensive
        return [chunk_tokens(c, left, right) for c in chunks]
    return groups


class ChunkTokenizer:
    """:func:`treebank_tokenize` of many sentences from remembered chunks (see the module docstring).

    Args:
        max_chunks: Forget the remembered chunks once more than this many are held
            (memory bound for a long-lived scorer; tokens never depend on it).

    Example:
        >>> ChunkTokenizer().tokenize_many(["He said: \\"no.\\"", "It is (not) true."])
        [['He', 'said', ':', '``', 'no', '.', "''"], ['It', 'is', '(', 'not', ')', 'true', '.']]
    """

    def __init__(self, *, max_chunks: int = 1_000_000) -> None:
        self.max_chunks = max_chunks
        self._chunks: dict[tuple[int, int], dict[str, Tokens]] = {}
        self._tails: dict[tuple[int, str], Tokens] = {}
        #: both lower-cased (:func:`lower_all`), learnt with them: lower-cased sentences come from them
        self._lower: Memos = ({}, {})

    def clear(self) -> None:
        """Forget every remembered chunk."""
        for memo in (self._chunks, self._tails, *self._lower):
            memo.clear()

    def _memos(self, lower: bool) -> Memos:
        return self._lower if lower else (self._chunks, self._tails)

    def _memo(self, left: int, right: int) -> dict[str, Tokens]:
        return self._chunks.setdefault((left, right), {})

    def tokenize_many(self, sentences: Sequence[str], *, lower: bool = False) -> list[list[str]]:
        """Treebank tokens of each sentence (equal to :func:`treebank_tokenize` of each; ``lower``:
        lower-cased, equal to :func:`lower_all` of them)."""
        if sum(map(len, self._chunks.values())) + len(self._tails) > self.max_chunks:
            self.clear()
        native = text_accel.active()
        if native is None:
            return self._tokenize_many(sentences, lower)
        # planned and assembled in C (_chunks_c.c) from the remembered chunks; the new ones learnt here
        sentences = sentences if isinstance(sentences, list) else list(sentences)
        chunk_memo, tail_memo = self._memos(lower)
        out, chunks, tails = native.plan_sentences(sentences, chunk_memo, tail_memo, True)
        if chunks or tails:
            wanted: dict[tuple[int, int], set[str]] = {}
            for left, right, chunk in chunks:
                wanted.setdefault((left, right), set()).add(chunk)
            self._learn(wanted, tails)
            # a sentence with a piece missing came back as its pieces (a tuple): now filled in
            holed = [i for i, tokens in enumerate(out) if type(tokens) is tuple]
            for i, tokens in zip(holed, native.fill_plans([out[i] for i in holed], chunk_memo, tail_memo), strict=True):
                out[i] = tokens
        rest = [i for i, tokens in enumerate(out) if tokens is None or tokens is False]  # False: its tail is all of it
        for i, tokens in zip(rest, self._tokenize_many([sentences[i] for i in rest], lower), strict=True):
            out[i] = tokens
        return out  # type: ignore[no-any-return]

    def _tokenize_many(self, sentences: Sequence[str], lower: bool = False) -> list[list[str]]:
        firsts: list[str] = []
        middles: list[str] = []  # every chunk between single spaces, hashed once below
        wanted: dict[tuple[int, int], set[str]] = {}
        tails: set[tuple[int, str, bool]] = set()
        plans = []
        for sentence in sentences:
            if sentence and _OTHER_WHITESPACE.search(sentence) is None and "  " not in sentence \
                    and sentence[0] != " " != sentence[-1]:
                parts = sentence.split(" ")  # single spaces only: the common case, mostly in C
                t = len(parts) - 1
                while t > 0 and _CLOSING_ONLY.fullmatch(parts[t]):
                    t -= 1
                if t > 0:
                    tail = (SPACE, parts[t] if t == len(parts) - 1 else " ".join(parts[t:]), t == len(parts) - 1)
                    firsts.append(parts[0])
                    middle = parts[1:t]
                    middles.extend(middle)
                    tails.add(tail)
                    plans.append((parts[0], middle, tail))
                    continue
            plans.append(self._plan_general(sentence, wanted, tails))
        wanted.setdefault((START, SPACE), set()).update(firsts)
        wanted.setdefault((SPACE, SPACE), set()).update(middles)
        self._learn(wanted, tails)
        return [self._assemble(plan, lower) for plan in plans]

    def _plan_general(self, sentence: str, wanted: dict[tuple[int, int], set[str]],
                      tails: set[tuple[int, str, bool]]) -> tuple:
        pieces = _WHITESPACE_RUNS.split(sentence)  # chunk, whitespace, chunk, ..., chunk (first/last may be "")
        items: list[tuple[str, int, int, int]] = []  # chunk, left, right, offset
        offset = 0
        for i in range(0, len(pieces), 2):
            chunk = pieces[i]
            if chunk:
                left = START if i == 0 else _kind(pieces[i - 1][-1])
                right = _kind(pieces[i + 1][0]) if i + 1 < len(pieces) else -1
                items.append((chunk, left, right, offset))
            offset += len(chunk) + (len(pieces[i + 1]) if i + 1 < len(pieces) else 0)
        t = len(items) - 1
        while t > 0 and _CLOSING_ONLY.fullmatch(items[t][0]):
            t -= 1
        if t <= 0:  # the whole sentence is its tail (or empty)
            whole = (START, sentence, False)
            tails.add(whole)
            return ((), whole)
        for chunk, left, right, _ in items[:t]:
            wanted.setdefault((left, right), set()).add(chunk)
        tail = (items[t][1], sentence[items[t][3]:], False)
        tails.add(tail)
        return (tuple((chunk, left, right) for chunk, left, right, _ in items[:t]), tail)

    def _learn(self, wanted: dict[tuple[int, int], set[str]], tails: set[tuple[int, str, bool]]) -> None:
        for (left, right), chunks in wanted.items():
            memo = self._memo(left, right)
            batch = []
            new = list(chunks.difference(memo))
            for chunk, inert in zip(new, text_accel.inert_many(new), strict=True):
                if inert if inert is not None else is_inert(chunk):
                    memo[chunk] = (chunk,)
                elif left == START or SENTINEL in chunk:
                    memo[chunk] = chunk_tokens(chunk, left, right)
                elif len(chunk) > 1 and chunk[-1] in _TAIL_PUNCTUATION and is_inert(chunk[:-1]):  # "said," "U.S"
                    memo[chunk] = (chunk,) if chunk[-1] == "." else (chunk[:-1], chunk[-1])  # one rule, or none
                else:
                    batch.append(chunk)
            if batch:
                memo.update(zip(batch, batch_chunk_tokens(batch, left, right), strict=True))
            lowered = self._lower[0].setdefault((left, right), {})
            lowered.update((chunk, _lowered(memo[chunk], chunk)) for chunk in new)
        known = self._tails
        for left, tail, one_chunk in tails:
            if (left, tail) not in known:
                tokens = known[(left, tail)] = tail_tokens(tail, left, one_chunk=one_chunk)
                self._lower[1][(left, tail)] = _lowered(tokens, tail)

    def _assemble(self, plan: tuple, lower: bool) -> list[str]:
        chunks, tails = self._memos(lower)
        if len(plan) == 3:  # single spaces: first chunk, middle chunks, tail
            first, middle, (left, tail, _) = plan
            out = list(chunks[(START, SPACE)][first])
            mid = chunks[(SPACE, SPACE)]
            out.extend(chain.from_iterable(map(mid.__getitem__, middle)))
            out.extend(tails[(left, tail)])
            return out
        head, (left, tail, _) = plan
        out = [token for chunk, cl, cr in head for token in chunks[(cl, cr)][chunk]]
        out.extend(tails[(left, tail)])
        return out


def lower_all(tokens: Sequence[str]) -> list[str]:
    """``[t.lower() for t in tokens]`` in one call (tokens never hold whitespace, and lower-casing adds none).

    Example:
        >>> lower_all(["The", "İstanbul", "U.S."])
        ['the', 'i̇stanbul', 'u.s.']
    """
    return " ".join(tokens).lower().split(" ") if tokens else []


def _lowered(tokens: Tokens, text: str) -> Tokens:
    # text's tokens are its pieces and letterless quote tokens: a lower-case text's are lower-case; same tuple then
    return tokens if text.lower() == text or (low := tuple(lower_all(tokens))) == tokens else low


__all__ = ["OTHER", "SENTINEL", "SPACE", "START", "ChunkTokenizer", "batch_chunk_tokens", "chunk_tokens", "is_inert",
           "lower_all", "tail_tokens", "treebank_tokenize"]
