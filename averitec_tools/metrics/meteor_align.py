"""METEOR's alignment on interned token ids, exact to NLTK's greedy order, mostly in C set operations.

A string is prepared once (:class:`PreparedText`): its lower-cased words, their Porter
stems and the stems' integer ids (interned by the engine), and two sets derived from
them. Let the *key* of a position be its stem id together with how many positions after
it hold the same stem.

* **Exact and stem stages.** NLTK scans the hypothesis from last to first, each word
  taking the last still-free equal reference word, then does the same on stems. Within one
  stem class the two stages together pair the k-th last hypothesis position with the k-th
  last reference position -- whenever each side spells the stem one way (the stem is not
  *mixed*: ``run``/``running`` in one string). Then position ``h`` is matched to ``r``
  exactly when their keys are equal: the matches are the intersection of the two key
  sets, and their number is its size.
* **Chunks.** NLTK counts a new chunk at every match whose predecessor is not the match
  ``(h - 1, r - 1)``. With keys unique within a string, ``(h - 1, h)`` continues a chunk
  exactly when the key bigram ``(key[h-1], key[h])`` also occurs in the reference: the
  continuations are the intersection of the two bigram sets.
* **WordNet stage.** NLTK then visits the still-free hypothesis positions from last to
  first, each taking the last free reference position whose stem is among its synonyms
  (the WordNet synonym names of its *stem*, NLTK's quirk). Only positions whose stem has a
  synonym present in the reference can take part; they are found from the per-text union
  of synonym ids, and the stage runs on them alone (:func:`wordnet_matches`), adding its
  matches and their chunk continuations.
* A pair sharing a mixed stem goes through :func:`general_matches` (explicit positions,
  exact then stem stage per class, NLTK's WordNet stage), as does one that has both.

The score formula uses NLTK's operations in NLTK's order (:func:`meteor_formula`), so
results are bit-identical to ``single_meteor_score``; ``tests/test_meteor.py`` checks
them against NLTK 3.9.1 and the installed NLTK. Every step is linear in the two lengths.

Example:
    >>> hyp = PreparedText.build(("the", "cat", "sat"), ("the", "cat", "sat"), (0, 1, 2))
    >>> ref = PreparedText.build(("a", "cat", "sat", "down"), ("a", "cat", "sat", "down"), (3, 1, 2, 4))
    >>> round(score_pair(hyp, ref, synonyms=None), 4)
    0.4808
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from averitec_tools.metrics.meteor_matching import match_stem_class, match_synonyms, take_last

ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5
#: Up to this many stem lookups in a string scan it; more build its position index (linear either way).
_FEW = 4
#: Keys of repeated stems: ``stem id + repeats after * SHIFT`` (stem ids stay far below it).
SHIFT = 1 << 40

#: ``synonyms(hyp)``: ``(per distinct stem with synonyms: (stem id, synonym ids)), union of them)``.
Synonyms = Callable[["PreparedText"], tuple[Sequence[tuple[int, frozenset[int]]], frozenset[int]]]


class PreparedText:
    """A string tokenised, lower-cased, stemmed and interned once, ready to be scored many times.

    Equality and hashing use ``words`` and ``stems`` (the hash is computed once: a prepared
    text is a dictionary key of the leaderboard's pair-score memo).
    """

    __slots__ = ("words", "stems", "sids", "keys", "key_set", "bigrams", "_stem_set", "counts", "_mixed", "_hash",
                 "_positions", "synonym_cache", "packed")

    words: Sequence[str]
    stems: Sequence[str]
    sids: Sequence[int]
    #: built by :meth:`index` on first use: keys, their set, key bigrams, counts of repeated stems
    keys: Sequence[int] | None
    key_set: frozenset[int] | None
    bigrams: frozenset[tuple[int, int]] | None
    counts: dict[int, int] | None
    _stem_set: frozenset[int] | None
    _mixed: frozenset[int] | None
    synonym_cache: Any
    #: per position the stem id and the word id as int32, for the C accelerator (``None``: not accelerated)
    packed: bytes | None
    _hash: int | None
    _positions: dict[int, list[int]] | None

    @classmethod
    def build(cls, words: Sequence[str], stems: Sequence[str], sids: Sequence[int], *, packed: bytes | None = None) -> PreparedText:
        """Prepare from lower-cased words, their stems and the stems' ids (the sequences are kept, not copied);
        ``packed``: the same for the C accelerator (:func:`~averitec_tools.metrics.meteor_accel.pack`)."""
        self = cls.__new__(cls)
        self.words, self.stems, self.sids = words, stems, sids  # type: ignore[assignment]
        self.packed = packed
        self.keys = self.key_set = self.bigrams = self.counts = self._stem_set = self._mixed = None
        self._hash = None
        self._positions = None
        self.synonym_cache = None
        return self

    @property
    def stem_set(self) -> frozenset[int]:
        """The distinct stem ids (computed on first use: the C accelerator does not need them)."""
        found = self._stem_set
        if found is None:
            found = self._stem_set = frozenset(self.sids)
        return found

    @property
    def mixed(self) -> frozenset[int]:
        """The stems this string spells more than one way (``run``/``running``)."""
        found = self._mixed
        if found is None:
            if len(set(self.words)) == len(self.stem_set):  # as many word forms as stems: none mixed
                found = frozenset()
            else:
                first: dict[int, str] = {}
                found = frozenset(s for w, s in zip(self.words, self.sids, strict=True) if first.setdefault(s, w) != w)
            self._mixed = found
        return found

    def index(self, keys: Sequence[int] | None = None) -> None:
        """Build the keys (stem id, and how many positions after hold the same stem), their set and
        the key bigrams (once; the per-pair path needs them); ``keys``: computed already (a batch's)."""
        if self.key_set is not None:
            return
        sids = self.sids
        n = len(sids)
        if keys is not None:
            self.keys, self.key_set = keys, frozenset(keys)
        elif len(self.stem_set) == n:  # no stem repeats: the keys are the stem ids
            self.keys, self.key_set = sids, self.stem_set
        else:
            seen: dict[int, int] = {}
            built = [0] * n
            for i in range(n - 1, -1, -1):
                s = sids[i]
                r = seen.get(s, 0)
                seen[s] = r + 1
                built[i] = s + r * SHIFT
            self.keys, self.counts, self.key_set = built, seen, frozenset(built)
        self.bigrams = frozenset(zip(self.keys, self.keys[1:], strict=False))

    def count(self, sid: int) -> int:
        """How many positions hold stem ``sid``."""
        if self._positions is not None:
            return len(self._positions.get(sid, ()))
        if len(self.stem_set) == len(self.sids):
            return 1 if sid in self.stem_set else 0
        if self.counts is None:
            self.counts = dict(Counter(self.sids))
        return self.counts.get(sid, 0)

    def first_positions(self, sid: int, k: int) -> list[int]:
        """The first ``k`` positions of stem ``sid``: from the position index if built, else by the
        list's own scan (in C; a few lookups per string need no index)."""
        if self._positions is not None:
            return self._positions[sid][:k]
        out = []
        at = -1
        index = self.sids.index
        for _ in range(k):
            at = index(sid, at + 1)
            out.append(at)
        return out

    def positions_of(self, sid: int) -> list[int]:
        """Every position of stem ``sid``, ascending."""
        return self.first_positions(sid, self.count(sid))

    def index_positions(self) -> None:
        """Build the stem -> positions index (before many lookups: linear once, not per lookup)."""
        if self._positions is None:
            grown: dict[int, list[int]] = {}
            for i, s in enumerate(self.sids):
                seen = grown.get(s)
                if seen is None:
                    grown[s] = [i]
                else:
                    seen.append(i)
            self._positions = grown

    def word_ids(self) -> list[int]:
        """The word ids in :attr:`packed` (the accelerator's exact stage compares them)."""
        from array import array

        if self.packed is None:
            raise ValueError("a string prepared without the accelerator has no word ids")
        return array("i", self.packed)[1::2].tolist()

    def __len__(self) -> int:
        return len(self.sids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreparedText):
            return NotImplemented
        return self is other or (hash(self) == hash(other) and list(self.words) == list(other.words)
                                 and list(self.stems) == list(other.stems))

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((tuple(self.words), tuple(self.stems)))
        return self._hash

    def __repr__(self) -> str:
        return f"PreparedText({' '.join(self.words)[:60]!r})"


def meteor_formula(matches: int, hyp_len: int, ref_len: int, chunks: int) -> float:
    """NLTK's score from the counts, with NLTK's float operations in NLTK's order."""
    precision = float(matches) / hyp_len
    recall = float(matches) / ref_len
    fmean = (precision * recall) / (ALPHA * precision + (1 - ALPHA) * recall)
    frag_frac = float(chunks) / matches
    penalty = GAMMA * frag_frac**BETA
    return (1 - penalty) * fmean


def wordnet_matches(hyp: PreparedText, ref: PreparedText, items: Sequence[tuple[int, frozenset[int]]]) -> list[tuple[int, int]]:
    """NLTK's WordNet stage after the key-matched exact and stem stages (no mixed stem shared).

    ``items``: the hypothesis' stems with synonyms. A stem class left with free positions
    keeps its *first* ones (the last ones were matched); a hypothesis stem that is free has
    no free reference position of its own stem, so only other stems can take it.
    """
    ref_stems = ref.stem_set
    wanting = []
    for sid, syn in items:
        if syn.isdisjoint(ref_stems):  # most stems: no synonym in this reference
            continue
        free = hyp.count(sid) - ref.count(sid)
        if free > 0:
            wanting.append((sid, syn, free))
    if not wanting:
        return []
    if len(wanting) > _FEW:
        hyp.index_positions()
    targets = frozenset().union(*(syn & ref_stems for _, syn, _ in wanting))
    if len(targets) > _FEW:
        ref.index_positions()
    free_at: dict[int, list[int]] = {}
    for r in targets:
        k = ref.count(r) - hyp.count(r)
        if k > 0:
            free_at[r] = ref.first_positions(r, k)
    if not free_at:
        return []
    candidates: list[tuple[int, frozenset[int]]] = []
    for sid, syn, free in wanting:
        takes = syn.intersection(free_at)
        if takes:
            candidates.extend((i, takes) for i in hyp.first_positions(sid, free))
    candidates.sort(key=lambda c: c[0], reverse=True)
    found = []
    for i, takes in candidates:
        takes = takes.intersection(free_at)
        if takes:
            best, spot = take_last(takes, free_at)
            found.append((i, spot))
            if not free_at[best]:
                del free_at[best]
    return found


def continuations(hyp: PreparedText, ref: PreparedText, extra: list[tuple[int, int]], excluded: frozenset[int]) -> int:
    """Chunk continuations that involve the ``extra`` (explicit) matches; key matches are equal
    keys (unique within a string) of a stem not in ``excluded``."""
    hk, rk = hyp.keys, ref.keys
    assert hk is not None and rk is not None
    hl, rl = len(hk), len(rk)
    by_hyp = dict(extra)
    n = 0
    for h, r in extra:
        if h and r and ((hk[h - 1] == rk[r - 1] and hk[h - 1] % SHIFT not in excluded) or by_hyp.get(h - 1) == r - 1):
            n += 1
        if h + 1 < hl and r + 1 < rl and hk[h + 1] == rk[r + 1] and hk[h + 1] % SHIFT not in excluded:
            n += 1
    return n


def _mixed_shared(hyp: PreparedText, ref: PreparedText) -> frozenset[int]:
    """Stems both strings hold that one of them spells more than one way."""
    shared: frozenset[int] = frozenset()
    if hyp.mixed:
        shared = hyp.mixed & ref.stem_set
    if ref.mixed:
        shared = shared | (ref.mixed & hyp.stem_set)
    return shared


def general_matches(hyp: PreparedText, ref: PreparedText, synonyms: Synonyms | None) -> list[tuple[int, int]]:
    """Every match of the pair, explicitly: per shared stem class the exact then the stem stage,
    then NLTK's WordNet stage (any pair; used when a shared stem is mixed)."""
    matches: list[tuple[int, int]] = []
    hyp.index_positions()
    ref.index_positions()
    hp, rp = hyp._positions, ref._positions
    assert hp is not None and rp is not None
    for s in hyp.stem_set & ref.stem_set:
        a, b = hp[s], rp[s]
        if s in hyp.mixed or s in ref.mixed:
            match_stem_class(tuple(a), tuple(b), hyp.words, ref.words, matches)
        else:
            k = min(len(a), len(b))
            matches.extend(zip(a[len(a) - k:], b[len(b) - k:], strict=True))
    m = len(matches)
    if synonyms is not None and m < len(hyp) and m < len(ref):
        items, union = synonyms(hyp)
        if not union.isdisjoint(ref.stem_set):
            by_stem = dict(items)
            empty: frozenset[int] = frozenset()
            match_synonyms([by_stem.get(s, empty) for s in hyp.sids] + [union], ref.sids, matches)
    return matches


def _key_and_mixed(hyp: PreparedText, ref: PreparedText, mixed: frozenset[int]) -> tuple[frozenset[int], list[tuple[int, int]]]:
    """Key matches of the classes not in ``mixed``, and the explicit exact-then-stem matches of those in it."""
    assert hyp.key_set is not None and ref.key_set is not None
    common = hyp.key_set & ref.key_set
    extra: list[tuple[int, int]] = []
    if mixed:
        common = frozenset(k for k in common if k % SHIFT not in mixed)
        if len(mixed) > _FEW:
            hyp.index_positions()
            ref.index_positions()
        for s in mixed:
            match_stem_class(tuple(hyp.positions_of(s)), tuple(ref.positions_of(s)), hyp.words, ref.words, extra)
    return common, extra


def _key_continuations(hyp: PreparedText, ref: PreparedText, common: frozenset[int], mixed: frozenset[int]) -> int:
    """Chunk continuations between two key matches (their key bigram is in both strings)."""
    if len(common) < 2:  # a key continuation needs two key matches
        return 0
    assert hyp.bigrams is not None and ref.bigrams is not None
    together = hyp.bigrams & ref.bigrams
    if mixed:
        return sum(1 for a, b in together if a % SHIFT not in mixed and b % SHIFT not in mixed)
    return len(together)


def score_pair(hyp: PreparedText, ref: PreparedText, *, synonyms: Synonyms | None) -> float:
    """METEOR of hypothesis ``hyp`` against reference ``ref`` (NLTK ``single_meteor_score``).

    ``synonyms`` gives a hypothesis' WordNet synonym ids (``None``: no WordNet stage).
    """
    hl, rl = len(hyp.sids), len(ref.sids)
    if not hl or not rl:
        return 0.0
    if hyp is ref:  # NLTK pairs a string with itself position by position: one chunk
        return meteor_formula(hl, hl, hl, 1)
    hyp.index()
    ref.index()
    mixed = _mixed_shared(hyp, ref) if hyp.mixed or ref.mixed else frozenset()
    common, extra = _key_and_mixed(hyp, ref, mixed)
    m = len(common) + len(extra)
    if synonyms is not None and m < hl and m < rl:
        items, union = synonyms(hyp)
        if not union.isdisjoint(ref.stem_set):
            if mixed:  # free positions of a mixed class are not its first ones: all explicit
                return score_matches(general_matches(hyp, ref, synonyms), hl, rl)
            extra = wordnet_matches(hyp, ref, items)
            m += len(extra)
    if m == 0:
        return 0.0
    continuing = _key_continuations(hyp, ref, common, mixed)
    if extra:
        continuing += continuations(hyp, ref, extra, mixed)
    return meteor_formula(m, hl, rl, m - continuing)


def score_matches(matches: list[tuple[int, int]], hl: int, rl: int) -> float:
    if not matches:
        return 0.0
    reference_of = dict(matches)
    chunks = sum(1 for h, r in matches if reference_of.get(h - 1) != r - 1)
    return meteor_formula(len(matches), hl, rl, chunks)


__all__ = ["ALPHA", "BETA", "GAMMA", "SHIFT", "PreparedText", "Synonyms", "continuations", "general_matches", "meteor_formula",
           "score_matches", "score_pair",
           "wordnet_matches"]
