"""The pseudo-test split: training claims held out from the start, for both offline baselines.

Dev chose the offline configurations, so a figure that holds on dev may be tuned to dev.
The pseudo-test is :data:`PSEUDO_TEST_CLAIMS` AVeriTeC *training* claims drawn with
:data:`PSEUDO_TEST_SEED` before anything is trained or fitted, and excluded from every
training and fitting set (R2VC's verifier and calibration slice, the AVeriTeC baseline's
reranker, verdict and justification models) — so no choice, fit or training saw them.
They are drawn by normalised claim text (:func:`group_sample`): a claim and its
normalised twins are all in or all out. The split is defined on AVeriTeC's ``train.json``
(:func:`pseudo_test_size`: another training file holds nothing out).

* :func:`group_sample` — a seeded sample of whole normalised-text groups, at least ``n``
  claims (R2VC's calibration slice uses the same rule);
* :func:`pseudo_test_mask` — the pseudo-test mask over the training claims' texts;
* :func:`pseudo_test_records` — the pseudo-test claims as an AVeriTeC claims file (the
  training records, their order kept), to run and score like dev; held-out claims that
  are dev claims' normalised twins are held out but not scored (3 on the shared data).

Example:
    >>> texts = ["a", "b", "A.", "c", "d"]
    >>> m = group_sample(texts, n=2, seed=0)
    >>> bool(m[0]) == bool(m[2]), int(m.sum()) >= 2
    (True, True)
    >>> pseudo_test_mask(texts, n=0).any()
    np.False_
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.leakage.duplicates import normalise_claim

#: Training claims in the pseudo-test (0 in a configuration turns it off).
PSEUDO_TEST_CLAIMS = 500
#: Seed of the pseudo-test draw (fixed: the split must not move between runs).
PSEUDO_TEST_SEED = 2027
#: sha256 of AVeriTeC's ``train.json``, the one training file the pseudo-test is drawn from:
#: any other training file (a fixture, a custom split) trains on all of its claims.
AVERITEC_TRAIN_SHA256 = "ae5eda7c42ddf1695ef185a7ba1bc716928f5adf57103e4f78aae5f9afe00f9c"


def pseudo_test_size(n: int, *, train_sha256: str) -> int:
    """How many pseudo-test claims a run holds out: ``n`` for AVeriTeC's ``train.json``
    (matched by its sha256, or a prefix of it), else 0.

    Example:
        >>> pseudo_test_size(500, train_sha256=AVERITEC_TRAIN_SHA256[:16]), pseudo_test_size(500, train_sha256="ab12")
        (500, 0)
    """
    return n if len(train_sha256) >= 16 and AVERITEC_TRAIN_SHA256.startswith(train_sha256) else 0


def group_sample(texts: Sequence[str], *, n: int, seed: int) -> np.ndarray:
    """Boolean mask of a seeded sample of whole normalised-text groups holding at least ``n`` claims.

    Distinct normalised texts are shuffled with ``seed``; groups are taken in that order
    until ``n`` claims are in, so duplicates never sit on both sides.

    Example:
        >>> group_sample(["x", "X!", "y"], n=1, seed=1).tolist() in ([True, True, False], [False, False, True])
        True
    """
    keys = [normalise_claim(t) for t in texts]
    unique = list(dict.fromkeys(keys))
    count = Counter(keys)
    chosen: set[str] = set()
    total = 0
    for j in np.random.default_rng(seed).permutation(len(unique)):
        if total >= n:
            break
        chosen.add(unique[j])
        total += count[unique[j]]
    return np.array([k in chosen for k in keys], dtype=bool)


def pseudo_test_mask(texts: Sequence[str], *, n: int = PSEUDO_TEST_CLAIMS,
                     seed: int = PSEUDO_TEST_SEED) -> np.ndarray:
    """The pseudo-test claims among the training claims ``texts`` (all False when ``n`` is 0;
    empty claims are never drawn).

    Example:
        >>> int(pseudo_test_mask([f"claim {i}" for i in range(10)], n=3).sum())
        3
    """
    mask = np.zeros(len(texts), dtype=bool)
    usable = np.flatnonzero([bool(t.strip()) for t in texts])  # an empty claim is no test claim
    if n > 0:
        mask[usable] = group_sample([texts[int(i)] for i in usable], n=n, seed=seed)
    return mask


def pseudo_test_records(records: Sequence[dict[str, Any]], *, n: int = PSEUDO_TEST_CLAIMS,
                        seed: int = PSEUDO_TEST_SEED, avoid: Sequence[str] = ()
                        ) -> tuple[list[dict[str, Any]], list[int], list[int]]:
    """The pseudo-test claims to score, their indices in the training file, and the held-out
    indices left unscored because their normalised text is among ``avoid`` (the dev claims:
    dev chose the configuration, so a dev twin is no unseen claim; it is held out anyway).

    Example:
        >>> recs = [{"claim": f"c{i}", "label": "Refuted"} for i in range(6)]
        >>> scored, idx, left = pseudo_test_records(recs, n=2)
        >>> len(scored), idx == sorted(idx), scored[0]["claim"] == f"c{idx[0]}", left
        (2, True, True, [])
        >>> pseudo_test_records(recs, n=2, avoid=[f"C{idx[0]}."])[1:] == ([idx[1]], [idx[0]])
        True
    """
    from averitec_tools.leakage.duplicates import train_duplicates

    texts = [str(r.get("claim") or "") for r in records]
    held = np.flatnonzero(pseudo_test_mask(texts, n=n, seed=seed)).tolist()
    twins = set(train_duplicates(train=texts, scored=avoid))
    idx = [i for i in held if i not in twins]
    return [records[i] for i in idx], idx, [i for i in held if i in twins]


__all__ = ["AVERITEC_TRAIN_SHA256", "PSEUDO_TEST_CLAIMS", "PSEUDO_TEST_SEED", "pseudo_test_size", "group_sample", "pseudo_test_mask", "pseudo_test_records"]
