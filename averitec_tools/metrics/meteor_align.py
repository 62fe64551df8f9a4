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

from collections.abc import Callable, Sequence
from typing import Any

from averitec_tools.metrics.meteor_matching import match_stem_class, match_synonyms

ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5
#: Keys of repeated stems: ``stem id + repeats after * _SHIFT`` (stem ids stay far below it).
_SHIFT = 1 << 40

#: ``synonyms(hyp)``: ``(per distinct stem with synonyms: (stem id, synonym ids)), union of them)``.
Synonyms = Callable[["PreparedText"], tuple[Sequence[tuple[int, frozenset[int]]], frozenset[int]]]


class PreparedText:
    """A string tokenised, lower-cased, stemmed and interned once, ready to be scored many times.

    Equality and hashing use ``words`` and ``stems`` (the hash is computed once: a prepared
    text is a dictionary key of the leaderboard's pair-score memo).
    """

    __slots__ = ("words", "stems", "sids", "keys", "key_set", "bigrams", "stem_set", "counts", "mixed", "_hash",
                 "_positions", "synonym_cache")

    words: tuple[str, ...]
    stems: tuple[str, ...]
    sids: tuple[int, ...]
    keys: Sequence[int]
    key_set: frozenset[int]
    bigrams: frozenset[tuple[int, int]]
    stem_set: frozenset[int]
    counts: dict[int, int] | None
    mixed: frozenset[int]

    @classmethod
    def build(cls, words: Sequence[str], stems: Sequence[str], sids: Sequence[int]) -> PreparedText:
        """Prepare from lower-cased words, their stems and the stems' ids."""
        self = cls.__new__(cls)
        self.words, self.stems, self.sids = tuple(words), tuple(stems), tuple(sids)
        n = len(self.sids)
        self.stem_set = frozenset(self.sids)
        if len(self.stem_set) == n:  # no stem repeats: the keys are the stem ids
            self.keys, self.counts = self.sids, None
        else:
            seen: dict[int, int] = {}
            keys = [0] * n
            sids_ = self.sids
            for i in range(n - 1, -1, -1):
                s = sids_[i]
                r = seen.get(s, 0)
                seen[s] = r + 1
                keys[i] = s + r * _SHIFT
            self.keys, self.counts = keys, seen
        self.key_set = frozenset(self.keys)
        self.bigrams = frozenset(zip(self.keys, self.keys[1:], strict=False))
        if len(set(self.words)) == len(self.stem_set):  # as many word forms as stems: none mixed
            self.mixed = frozenset()
        else:
            first: dict[int, str] = {}
            self.mixed = frozenset(s for w, s in zip(self.words, self.sids, strict=True) if first.setdefault(s, w) != w)
        self._hash: int | None = None
        self._positions: dict[int, list[int]] | None = None
        self.synonym_cache: Any = None
        return self

    def count(self, sid: int) -> int:
        """How many positions hold stem ``sid``."""
        if self.counts is not None:
            return self.counts.get(sid, 0)
        return 1 if sid in self.stem_set else 0

    @property
    def positions(self) -> dict[int, list[int]]:
        """Stem id -> its positions, ascending (built on first use)."""
        if self._positions is None:
            grown: dict[int, list[int]] = {}
            for i, s in enumerate(self.sids):
                seen = grown.get(s)
                if seen is None:
                    grown[s] = [i]
                else:
                    seen.append(i)
            self._positions = grown
        return self._positions

    def __len__(self) -> int:
        return len(self.sids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreparedText):
            return NotImplemented
        return self is other or (hash(self) == hash(other) and self.words == other.words and self.stems == other.stems)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self.words, self.stems))
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
        free = hyp.count(sid) - ref.count(sid)
        if free > 0 and not syn.isdisjoint(ref_stems):
            wanting.append((sid, syn, free))
    if not wanting:
        return []
    free_at: dict[int, list[int]] = {}
    for _, syn, _ in wanting:
        for r in syn & ref_stems:
            if r not in free_at:
                k = ref.count(r) - hyp.count(r)
                if k > 0:
                    free_at[r] = ref.positions[r][:k]
    if not free_at:
        return []
    candidates = []
    for sid, syn, free in wanting:
        takes = syn.intersection(free_at)
        if takes:
            candidates.extend((i, takes) for i in hyp.positions[sid][:free])
    candidates.sort(key=lambda c: c[0], reverse=True)
    found = []
    for i, takes in candidates:
        takes = takes.intersection(free_at)
        if not takes:
            continue
        best = max(takes, key=lambda r: free_at[r][-1]) if len(takes) > 1 else next(iter(takes))
        spots = free_at[best]
        found.append((i, spots.pop()))
        if not spots:
            del free_at[best]
    return found


def _continuations(hyp: PreparedText, ref: PreparedText, extra: list[tuple[int, int]]) -> int:
    """Chunk continuations that involve the ``extra`` (WordNet) matches."""
    hk, rk, hl, rl = hyp.keys, ref.keys, len(hyp.keys), len(ref.keys)
    by_hyp = dict(extra)
    n = 0
    for h, r in extra:
        if h and r and (hk[h - 1] == rk[r - 1] or by_hyp.get(h - 1) == r - 1):
            n += 1  # equal keys: a key match (keys are unique within a string)
        if h + 1 < hl and r + 1 < rl and hk[h + 1] == rk[r + 1]:
            n += 1
    return n


def general_matches(hyp: PreparedText, ref: PreparedText, synonyms: Synonyms | None) -> list[tuple[int, int]]:
    """Every match of the pair, explicitly: per shared stem class the exact then the stem stage,
    then NLTK's WordNet stage (any pair; used when a shared stem is mixed)."""
    matches: list[tuple[int, int]] = []
    hp, rp = hyp.positions, ref.positions
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


def score_pair(hyp: PreparedText, ref: PreparedText, *, synonyms: Synonyms | None) -> float:
    """METEOR of hypothesis ``hyp`` against reference ``ref`` (NLTK ``single_meteor_score``).

    ``synonyms`` gives a hypothesis' WordNet synonym ids (``None``: no WordNet stage).
    """
    hl, rl = len(hyp.sids), len(ref.sids)
    if not hl or not rl:
        return 0.0
    if (hyp.mixed and not hyp.mixed.isdisjoint(ref.stem_set)) or (ref.mixed and not ref.mixed.isdisjoint(hyp.stem_set)):
        matches = general_matches(hyp, ref, synonyms)
        if not matches:
            return 0.0
        reference_of = dict(matches)
        chunks = sum(1 for h, r in matches if reference_of.get(h - 1) != r - 1)
        return meteor_formula(len(matches), hl, rl, chunks)
    m = len(hyp.key_set & ref.key_set)
    extra: list[tuple[int, int]] = []
    if synonyms is not None and m < hl and m < rl:
        items, union = synonyms(hyp)
        if not union.isdisjoint(ref.stem_set):
            extra = wordnet_matches(hyp, ref, items)
    if m == 0 and not extra:
        return 0.0
    continuing = len(hyp.bigrams & ref.bigrams)
    if extra:
        continuing += _continuations(hyp, ref, extra)
        m += len(extra)
    return meteor_formula(m, hl, rl, m - continuing)


__all__ = ["ALPHA", "BETA", "GAMMA", "PreparedText", "Synonyms", "general_matches", "meteor_formula", "score_pair",
           "wordnet_matches"]
