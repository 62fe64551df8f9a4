"""METEOR's matching stages with explicit positions, in time linear in the two lengths: the exact
and stem stages of one stem class, and NLTK's WordNet stage -- the general path of
:mod:`averitec_tools.metrics.meteor_align` (pairs that share a stem spelt two ways).

Example:
    >>> matches = []
    >>> match_stem_class((0, 1), (0,), ("run", "running"), ("run",), matches)  # exact stage first
    >>> matches
    [(0, 0)]
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def match_stem_class(
    hyp_pos: Sequence[int], ref_pos: Sequence[int], hyp_words: Sequence[str], ref_words: Sequence[str],
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


def take_last(candidates: frozenset[K] | set[K], free: dict[K, list[int]]) -> tuple[K, int]:
    """NLTK's WordNet choice: of the candidate stems' free reference positions (ascending lists),
    the last one; it is taken (popped). Returns the stem and the position.

    Example:
        >>> free = {"a": [0, 4], "b": [2]}
        >>> take_last({"a", "b"}, free), free
        (('a', 4), {'a': [0], 'b': [2]})
    """
    best = max(candidates, key=lambda stem: free[stem][-1]) if len(candidates) > 1 else next(iter(candidates))
    return best, free[best].pop()


def match_synonyms(syn_sets: Sequence[frozenset[K]], ref_stems: Sequence[K], matches: list[tuple[int, int]]) -> None:
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
    free: dict[K, list[int]] = {}  # stem -> its unmatched reference positions, ascending
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
        if candidates:
            best, spot = take_last(candidates, free)
            matches.append((i, spot))
            if not free[best]:
                free_stems.discard(best)


__all__ = ["match_stem_class", "match_synonyms", "take_last"]
