"""The optional C accelerator of METEOR's alignment, and what it reads.

``averitec_tools.metrics._meteor_c`` is a small C extension built at install when a C
compiler is there (``setup.py``: an optional extension, so ``pip install .`` without one
installs the pure-Python package, which scores identically). It aligns many
(hypothesis, reference) pairs in one call, transcribing NLTK 3.9.1's greedy
``_enum_align_words`` -- exact stage on words, stem stage, WordNet stage, chunks -- on
interned integer ids, and returns each pair's match and chunk counts (``counts``) or its
score (``scores``: :func:`~averitec_tools.metrics.meteor_align.meteor_formula` transcribed,
the same IEEE double operations in the same order, so the same floats). NLTK's scans are
replaced by per-word and per-stem chains of the reference positions left (each stage
takes a word's or stem's positions from the last one down), so a pair costs time linear
in its two lengths.

What it reads:

* each prepared string packed as bytes (:func:`pack`): per position its stem id and its
  word id (int32, native order), 8 bytes a position;
* the WordNet synonym ids of every stem id as a range of one ascending array
  (:class:`SynonymRanges`), grown as the engine interns stems.

``tests/test_meteor_accel.py`` checks it against the pure-Python path on every shared
pair and on random batches (repeated and twice-spelt stems, synonyms, long strings), and
that the pure-Python path runs when the extension is absent or turned off
(``AVERITEC_PURE_PYTHON=1``).

Example:
    >>> ranges = SynonymRanges()
    >>> ranges.add_many([7], [(3, 9)])
    >>> hyp, ref = pack([7, 1], [70, 10]), pack([9, 1], [90, 10])   # "car is" vs "auto is", say
    >>> counts([hyp], [ref], ranges) if native is not None else [(2, 1)]
    [(2, 1)]
"""

from __future__ import annotations

import importlib
import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain
from typing import Any

from averitec_tools.metrics.meteor_align import PreparedText, Synonyms, score_pair

#: The packed layout this module writes and the functions it calls (the extension's ``LAYOUT``
#: must equal it; 3: layout 2 with ``scores``).
LAYOUT = 3


def usable(module: Any) -> bool:
    """Whether ``module`` is a build of the extension that reads :data:`LAYOUT` (a build left in
    place from an older source, e.g. by an editable install not re-run, is not used)."""
    return getattr(module, "LAYOUT", None) == LAYOUT


native: Any
try:
    native = importlib.import_module("averitec_tools.metrics._meteor_c")
except ImportError:  # built without a C compiler: the pure-Python path
    native = None
#: why the accelerator is not loaded ("" when it is)
missing = "" if native is not None else "not built"
if native is not None and not usable(native):
    native, missing = None, "stale build (rebuild: pip install -e . or python setup.py build_ext --inplace)"

#: Set to 1 to score without the accelerator (the same figures, slower).
PURE_PYTHON_ENV = "AVERITEC_PURE_PYTHON"


def enabled() -> bool:
    """Whether the C accelerator is installed and not turned off by ``AVERITEC_PURE_PYTHON=1``."""
    return native is not None and os.environ.get(PURE_PYTHON_ENV, "").strip() in ("", "0")


def describe() -> str:
    """Which alignment path a new engine takes, and why (``averitec doctor`` prints it)."""
    if enabled():
        return "C accelerator"
    return f"pure Python ({PURE_PYTHON_ENV}=1)" if native is not None else f"pure Python (accelerator {missing})"


def word_code(sid: int, wid: int) -> bytes:
    """One position as the accelerator reads it: the int32 stem id and the int32 word id (a prepared
    string is its words' codes joined, so an engine keeps one code per word)."""
    return array("i", (sid, wid)).tobytes()


def pack(sids: Sequence[int], wids: Sequence[int]) -> bytes:
    """One prepared string as the accelerator reads it (:func:`word_code` of each position)."""
    return b"".join(map(word_code, sids, wids))


class SynonymRanges:
    """The synonym ids of each stem id as a range of one ascending array (what the C code reads):
    stem ``s``'s synonyms are ``values[lo[s]:hi[s]]`` (empty for a stem without any)."""

    def __init__(self) -> None:
        self.lo = array("i")
        self.hi = array("i")
        self.values = array("i")

    def add_many(self, sids: Iterable[int], synonyms: Iterable[Sequence[int]]) -> None:
        """Record the synonym ids of stems ``sids`` (a stem recorded before keeps its range)."""
        lo, hi, values = self.lo, self.hi, self.values
        for sid, ids in zip(sids, synonyms, strict=True):
            if not ids:
                continue
            if sid >= len(lo):
                grow = max(sid + 1, 2 * len(lo)) - len(lo)
                lo.frombytes(bytes(4 * grow))
                hi.frombytes(bytes(4 * grow))
            if hi[sid] > lo[sid]:
                continue
            lo[sid] = len(values)
            values.extend(sorted(ids))
            hi[sid] = len(values)

    def __len__(self) -> int:
        return len(self.values)


class Interned:
    """What an engine keeps for the accelerator: the synonym ranges of its stem ids and each
    word's code (:func:`word_code`: its stem id, and a word id counting on from 0)."""

    def __init__(self) -> None:
        self.ranges = SynonymRanges()
        self.codes: dict[str, bytes] = {}
        #: each word with a code: its stem, the stem's id and the code (what a batch of strings is read with)
        self.info: dict[str, tuple[str, int, bytes]] = {}
        self._next_wid = 0

    def add_words(self, words: Iterable[str], stems: Mapping[str, str], stem_ids: Mapping[str, int]) -> None:
        """Give every new word of ``words`` its code (its stem ``stems[w]``, interned as ``stem_ids``)."""
        new = list(set(words).difference(self.codes))
        if new:
            first = self._next_wid
            word_stems = [stems[w] for w in new]
            sids = [stem_ids[stem] for stem in word_stems]
            # every code at once: (stem id, word id) int32 pairs, cut into 8-byte words (word_code of each)
            blob = array("i", chain.from_iterable(zip(sids, range(first, first + len(new)), strict=True))).tobytes()
            codes = [blob[8 * k: 8 * k + 8] for k in range(len(new))]
            self.codes.update(zip(new, codes, strict=True))
            self.info.update(zip(new, zip(word_stems, sids, codes, strict=True), strict=True))
            self._next_wid += len(new)

    def pack(self, words: Sequence[str]) -> bytes:
        """A prepared string's packed form (its words' codes, every word added before)."""
        return b"".join(map(self.codes.__getitem__, words))

    def keep(self, prepared: Iterable[PreparedText]) -> None:
        """Forget the codes of words outside ``prepared`` (word ids never change)."""
        self.info = {w: (stem, sid, p.packed[8 * i: 8 * i + 8]) for p in prepared if p.packed is not None
                     for i, (w, stem, sid) in enumerate(zip(p.words, p.stems, p.sids, strict=True))}
        self.codes = {w: code for w, (_, _, code) in self.info.items()}

    def score_pairs(self, pairs: Sequence[tuple[PreparedText, PreparedText]], synonyms: Synonyms | None) -> list[float]:
        """:func:`score_pairs` with these ranges."""
        return score_pairs(pairs, ranges=self.ranges, synonyms=synonyms)


def counts(hyps: list[bytes], refs: list[bytes], ranges: SynonymRanges) -> list[tuple[int, int]]:
    """NLTK's (matches, chunks) of each pair ``(hyps[i], refs[i])`` of packed strings."""
    raw = array("i", native.counts(hyps, refs, ranges.lo, ranges.hi, ranges.values)).tolist()
    return list(zip(raw[0::2], raw[1::2], strict=True))


def scores(hyps: list[bytes], refs: list[bytes], ranges: SynonymRanges) -> list[float]:
    """NLTK's METEOR of each pair ``(hyps[i], refs[i])`` of packed strings (the counts and the
    formula in C: the same floats as :func:`~averitec_tools.metrics.meteor_align.meteor_formula`)."""
    return array("d", native.scores(hyps, refs, ranges.lo, ranges.hi, ranges.values)).tolist()


def score_pairs(pairs: Sequence[tuple[PreparedText, PreparedText]], *, ranges: SynonymRanges,
                synonyms: Synonyms | None) -> list[float]:
    """METEOR of each (hypothesis, reference) pair of prepared strings, aligned in C (strings
    prepared without the accelerator by :func:`~averitec_tools.metrics.meteor_align.score_pair`);
    the same values as the pure-Python path."""
    hyps = [h.packed for h, _ in pairs]
    refs = [r.packed for _, r in pairs]
    if None in hyps or None in refs:  # strings prepared by an engine without the accelerator
        return [score_pair(h, r, synonyms=synonyms) for h, r in pairs]
    return scores(hyps, refs, ranges)  # type: ignore[arg-type]


__all__ = ["LAYOUT", "PURE_PYTHON_ENV", "Interned", "SynonymRanges", "counts", "describe", "enabled", "native", "pack", "score_pairs", "scores",
           "usable", "word_code"]
