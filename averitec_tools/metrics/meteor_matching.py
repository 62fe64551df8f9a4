"""METEOR's matching stages on prepared texts, in time linear in the two lengths: a string
tokenised and stemmed once (:class:`PreparedText`), the exact and stem stages one stem
class at a time, and NLTK's WordNet stage (see :mod:`averitec_tools.metrics.meteor`).

Example:
    >>> hyp, ref = PreparedText.build(["cats", "sat"], ["cat", "sat"]), PreparedText.build(["cat", "sat"], ["cat", "sat"])
    >>> matches = []
    >>> for stem in sorted(hyp.stem_set & ref.stem_set):
    ...     match_stem_class(hyp.stem_positions[stem], ref.stem_positions[stem], hyp.words, ref.words, matches)
    >>> sorted(matches)
    [(0, 0), (1, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, eq=False)
class PreparedText:
    """A string tokenised, lower-cased and stemmed once, ready to be scored many times.

    Equality and hashing use ``words`` and ``stems`` only (the hash is computed once: a
    prepared text is a dictionary key of the leaderboard's pair-score memo).
    """

    words: tuple[str, ...]
    stems: tuple[str, ...]
    #: stem -> ascending positions (the words of one stem class)
    stem_positions: dict[str, tuple[int, ...]] = field(repr=False)
    stem_set: frozenset[str] = field(repr=False)
    #: stems that stand for more than one distinct word here (e.g. "run" and "running")
    mixed_stems: frozenset[str] = field(repr=False)
    _hash: int = field(repr=False)

    @classmethod
    def build(cls, words: Sequence[str], stems: Sequence[str]) -> PreparedText:
        words, stems = tuple(words), tuple(stems)
        # lists grown in place, then frozen: linear in the text's length however often a word repeats
        growing: dict[str, list[int]] = {}
        for i, s in enumerate(stems):
            seen = growing.get(s)
            if seen is None:
                growing[s] = [i]
            else:
                seen.append(i)
        positions = {s: tuple(p) for s, p in growing.items()}
        if len(set(words)) == len(positions):  # as many word forms as stems: none mixed
            mixed: frozenset[str] = frozenset()
        else:
            mixed = frozenset(s for s, p in positions.items() if len(p) > 1 and any(words[i] != words[p[0]] for i in p))
        return cls(words, stems, positions, frozenset(positions), mixed, hash((words, stems)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PreparedText):
            return NotImplemented
        return self is other or (self._hash == other._hash and self.words == other.words and self.stems == other.stems)

    def __hash__(self) -> int:
        return self._hash


def match_stem_class(
    hyp_pos: tuple[int, ...], ref_pos: tuple[int, ...], hyp_words: tuple[str, ...], ref_words: tuple[str, ...],
    matches: list[tuple[int, int]],
) -> None:
    """Exact then stem matches among the positions of one shared stem (see module docs).

    Equal words have equal stems, so NLTK's exact and stem stages never cross stem
    classes: each class is matched on its own. Exact stage: for every word, the k-th last
    hypothesis occurrence pairs with the k-th last reference occurrence. Stem stage: the
    class's leftovers pair the same way, from the end.
    """
    hyp_by_word: dict[str, list[int]] = {}
    for i in hyp_pos:
        hyp_by_word.setdefault(hyp_words[i], []).append(i)
    ref_by_word: dict[str, list[int]] = {}
    for j in ref_pos:
        ref_by_word.setdefault(ref_words[j], []).append(j)
    used_h: set[int] = set()
    used_r: set[int] = set()
    for word, hp in hyp_by_word.items():
        rp = ref_by_word.get(word)
        if rp is None:
            continue
        k = min(len(hp), len(rp))
        for h, r in zip(hp[len(hp) - k :], rp[len(rp) - k :], strict=True):
            matches.append((h, r))
            used_h.add(h)
            used_r.add(r)
    hyp_left = [i for i in hyp_pos if i not in used_h]
    ref_left = [j for j in ref_pos if j not in used_r]
    k = min(len(hyp_left), len(ref_left))
    if k:
        matches.extend(zip(hyp_left[len(hyp_left) - k :], ref_left[len(ref_left) - k :], strict=True))


def match_synonyms(syn_sets: list[frozenset[str]], ref_stems: tuple[str, ...], matches: list[tuple[int, int]]) -> None:
    """NLTK's WordNet stage, appended to ``matches``, in time linear in the two lengths.

    NLTK visits the unmatched hypothesis words from last to first; each takes the last
    unmatched reference word whose stem is among its synonyms. Scanning the free reference
    words for each hypothesis word is quadratic (an answer repeating a word whose synonym
    occurs once in the gold scans the whole gold side for every repeat); instead the free
    reference positions are kept per stem, and the last one of a hypothesis word's
    candidate stems is the largest of their last free positions.

    Args:
        syn_sets: Per hypothesis position, the synonyms of its stem, then their union.
        ref_stems: The reference's stems.
        matches: The exact and stem matches so far (extended in place).
    """
    matched_h = {h for h, _ in matches}
    matched_r = {r for _, r in matches}
    wanted = syn_sets[-1]
    free: dict[str, list[int]] = {}  # stem -> its unmatched reference positions, ascending
    for j, stem in enumerate(ref_stems):
        if stem in wanted and j not in matched_r:
            positions = free.get(stem)
            if positions is None:
                free[stem] = [j]
            else:
                positions.append(j)
    free_stems = set(free)
    for i in range(len(syn_sets) - 2, -1, -1):
        if not free_stems:
            break
        if i in matched_h:
            continue
        candidates = syn_sets[i] & free_stems  # iterates over the smaller set
        if not candidates:
            continue
        best = max(candidates, key=lambda stem: free[stem][-1]) if len(candidates) > 1 else next(iter(candidates))
        positions = free[best]
        matches.append((i, positions.pop()))
        if not positions:
            free_stems.discard(best)


__all__ = ["PreparedText", "match_stem_class", "match_synonyms"]
