"""METEOR of many pairs at once: the exact and stem stages and the chunk count vectorised with numpy.

:func:`score_pairs` takes every (hypothesis, reference) pair of a batch. For all strings
together it computes each position's key (stem id, and how many later positions hold the
same stem: one sort), then for all pairs together it looks every hypothesis key up among
the reference's keys (one sorted search): a hit is a match of NLTK's exact or stem stage
(:mod:`averitec_tools.metrics.meteor_align` explains why), and a hit whose predecessor's
key equals the reference predecessor's key continues a chunk. The match and chunk counts
of all pairs come out of two ``bincount`` calls.

A pair is then finished in Python only when it needs more than counts: when it shares a
stem one of its strings spells two ways, or when a free hypothesis stem has a WordNet
synonym among the reference's stems (:func:`~averitec_tools.metrics.meteor_align.score_pair`
runs the whole alignment for it). Strings too long for the packed codes (65,536 tokens or
more) go that way too. Every score is computed with NLTK's float operations in NLTK's
order (:func:`~averitec_tools.metrics.meteor_align.meteor_formula`), so the results are
those of scoring each pair alone (``tests/test_meteor_align.py``).

Example:
    >>> from averitec_tools.metrics.meteor_align import PreparedText
    >>> a = PreparedText.build(("the", "cat", "sat"), ("the", "cat", "sat"), (0, 1, 2))
    >>> b = PreparedText.build(("a", "cat", "sat", "down"), ("a", "cat", "sat", "down"), (3, 1, 2, 4))
    >>> [round(s, 4) for s in score_pairs([(a, b), (b, a), (a, a)], synonyms=None)]
    [0.4808, 0.6048, 0.9815]
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from averitec_tools.metrics.meteor_align import (
    SHIFT,
    PreparedText,
    Synonyms,
    continuations,
    general_matches,
    meteor_formula,
    score_matches,
    score_pair,
    wordnet_matches,
)

# Packed key code: text index (20 bits) | stem id (27 bits) | 16 bits of position or repeat rank.
_POS_BITS, _SID_BITS, _TEXT_BITS = 16, 27, 20
_MAX_LEN, _MAX_SID, _MAX_TEXTS = 1 << _POS_BITS, 1 << _SID_BITS, 1 << _TEXT_BITS
_KEY_MASK = (1 << (_POS_BITS + _SID_BITS)) - 1


def _keys(lengths: np.ndarray, sids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each token's key (stem id and repeat rank, without the text) and the sorted packed
    codes of all tokens with the token index of each; one sort over every token."""
    n = sids.size
    starts = np.zeros(lengths.size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    text = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    pos = np.arange(n, dtype=np.int64) - starts[text]
    code = (text << (_SID_BITS + _POS_BITS)) | (sids << _POS_BITS) | (_MAX_LEN - 1 - pos)
    order = np.argsort(code, kind="stable")
    group = code[order] >> _POS_BITS  # text and stem: equal stems of a text sit together, last position first
    first = np.ones(n, dtype=bool)
    first[1:] = group[1:] != group[:-1]
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    packed = (group << _POS_BITS) | (np.arange(n, dtype=np.int64) - group_start)
    key = np.empty(n, dtype=np.int64)
    key[order] = packed & _KEY_MASK
    return key, packed, order


class _Batch:
    """Every string's tokens of a batch, their keys, and the pairs' match and continuation counts."""

    def __init__(self, texts: list[PreparedText], pairs: list[tuple[int, int]]) -> None:
        self.texts = texts
        self.lengths = np.fromiter(map(len, (t.sids for t in texts)), dtype=np.int64, count=len(texts))
        self.starts = np.zeros(len(texts), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=self.starts[1:])
        self.sids = np.fromiter(chain.from_iterable(t.sids for t in texts), dtype=np.int64, count=int(self.lengths.sum()))
        #: each token's repeat rank (how many later tokens of its string hold its stem)
        self.rank = np.zeros(self.sids.size, dtype=np.int64)
        self.matches, self.continuing = _counts(self, pairs)

    def give_keys(self, i: int) -> None:
        """Hand text ``i`` its keys (in :class:`PreparedText`'s encoding: the WordNet stage's
        chunk continuations compare them)."""
        text = self.texts[i]
        if text.keys is None:
            start = int(self.starts[i])
            stop = start + int(self.lengths[i])
            text.keys = (self.sids[start:stop] + (self.rank[start:stop] * SHIFT)).tolist()


def _counts(batch: _Batch, pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Matches of the exact and stem stages, and chunk continuations among them, of every pair
    (by text index) as if no stem were mixed."""
    lengths, sids, starts = batch.lengths, batch.sids, batch.starts
    if sids.size == 0:
        return np.zeros(len(pairs), dtype=np.int64), np.zeros(len(pairs), dtype=np.int64)
    key, packed, order = _keys(lengths, sids)
    batch.rank = key & (_MAX_LEN - 1)
    hyp = np.fromiter((h for h, _ in pairs), dtype=np.int64, count=len(pairs))
    ref = np.fromiter((r for _, r in pairs), dtype=np.int64, count=len(pairs))
    per_pair = lengths[hyp]
    pair = np.repeat(np.arange(len(pairs), dtype=np.int64), per_pair)
    offsets = np.zeros(len(pairs), dtype=np.int64)
    np.cumsum(per_pair[:-1], out=offsets[1:])
    token = starts[hyp][pair] + (np.arange(pair.size, dtype=np.int64) - offsets[pair])  # hypothesis tokens, pair by pair
    query = (ref[pair] << (_SID_BITS + _POS_BITS)) | key[token]
    at = np.minimum(np.searchsorted(packed, query), packed.size - 1)
    hit = packed[at] == query
    matched = order[at]  # the reference token holding the same key
    hyp_pos = token - starts[hyp][pair]
    ref_pos = matched - starts[ref][pair]
    inner = hit & (hyp_pos > 0) & (ref_pos > 0)
    before_h, before_r = np.where(inner, token - 1, 0), np.where(inner, matched - 1, 0)
    continues = inner & (key[before_h] == key[before_r])
    size = len(pairs)
    return (np.bincount(pair, weights=hit, minlength=size).astype(np.int64),
            np.bincount(pair, weights=continues, minlength=size).astype(np.int64))


def _packable(text: PreparedText) -> bool:
    return len(text.sids) < _MAX_LEN and (not text.sids or max(text.sids) < _MAX_SID)


def _pack(pairs: Sequence[tuple[PreparedText, PreparedText]]) -> tuple[dict[int, int], list[PreparedText]]:
    """Each packable string of the pairs once: its index (by identity) and the strings in order."""
    index: dict[int, int] = {}
    texts: list[PreparedText] = []
    for pair in pairs:
        for text in pair:
            if id(text) not in index and _packable(text):
                index[id(text)] = len(texts)
                texts.append(text)
    return index, texts


def _finish(h: PreparedText, r: PreparedText, m: int, c: int, batch: _Batch, index: dict[int, int],
            synonyms: Synonyms | None) -> tuple[int, int] | float:
    """A pair's final (matches, continuations) from the batch counts, or its score when the
    explicit path had to compute it (a stem spelt two ways)."""
    hl, rl = len(h.sids), len(r.sids)
    if (h.mixed and not h.mixed.isdisjoint(r.stem_set)) or (r.mixed and not r.mixed.isdisjoint(h.stem_set)):
        return score_matches(general_matches(h, r, synonyms), hl, rl)  # all explicit
    if synonyms is not None and m < hl and m < rl:
        items, union = synonyms(h)
        if not union.isdisjoint(r.stem_set):
            extra = wordnet_matches(h, r, items)
            if extra:
                batch.give_keys(index[id(h)])
                batch.give_keys(index[id(r)])
                return m + len(extra), c + continuations(h, r, extra, frozenset())
    return m, c


def score_pairs(pairs: Sequence[tuple[PreparedText, PreparedText]], *, synonyms: Synonyms | None) -> list[float]:
    """METEOR of each (hypothesis, reference) pair, equal to :func:`score_pair` of each."""
    index, texts = _pack(pairs)
    packed = [(index[id(h)], index[id(r)]) for h, r in pairs if id(h) in index and id(r) in index]
    if not packed or len(texts) >= _MAX_TEXTS:
        return [score_pair(h, r, synonyms=synonyms) for h, r in pairs]
    batch = _Batch(texts, packed)
    counts = iter(zip(batch.matches.tolist(), batch.continuing.tolist(), strict=True))
    formula: dict[tuple[int, int, int, int], float] = {}
    out = []
    for h, r in pairs:
        if id(h) not in index or id(r) not in index:
            out.append(score_pair(h, r, synonyms=synonyms))
            continue
        m, c = next(counts)
        if h is r:  # a string with itself: one chunk (score_pair's shortcut)
            out.append(score_pair(h, r, synonyms=synonyms))
            continue
        finished = _finish(h, r, m, c, batch, index, synonyms)
        if isinstance(finished, float):
            out.append(finished)
            continue
        m, c = finished
        key = (m, len(h.sids), len(r.sids), c)
        value = formula.get(key)
        if value is None:
            value = formula[key] = meteor_formula(m, key[1], key[2], m - c) if m else 0.0
        out.append(value)
    return out


__all__ = ["score_pairs"]
