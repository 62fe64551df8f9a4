"""Rank intervals and P(first) of a phase's systems from one paired bootstrap over claims.

The claims are resampled B times with replacement, and every system of the phase is
scored on the SAME B resamples (paired: a claim that is hard for one system in a resample
is in it for all). The resamples are drawn as

    ``idx = numpy.random.default_rng(seed).integers(0, n_claims, size=(B, n_claims))``

so anyone can reproduce them. On each resample a system's score is the mean of its
per-claim values over ``idx[b]`` (rounded to 12 digits, as the board compares scores) and
its rank is its **min rank** (competition ranking, as on the board): 1 + the number of
systems with a strictly higher score, so tied systems share the best of their ranks.

* ``rank_interval`` = ``[best, worst]``: the central ``level`` (95 %) interval of a
  system's B ranks, as the empirical quantiles (``inverted_cdf``: the smallest rank ``r``
  with ``#{rank ≤ r} ≥ q·B``) at ``q = (1 − level)/2`` and ``(1 + level)/2``.
* ``p_first``: the share of resamples in which the system is first. A tie for first
  among ``k`` systems credits each with ``1/k`` of that resample, so P(first) sums to 1
  over the phase.

Example:
    >>> values = np.array([[1, 1, 1, 0], [1, 0, 1, 0], [0, 0, 0, 0]], dtype=float)
    >>> r = rank_intervals(values=values, n_resamples=200, seed=0)
    >>> r.best.tolist(), r.worst.tolist(), round(float(r.p_first.sum()), 9)
    ([1, 1, 2], [1, 2, 3], 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: Ties on a resample: systems whose resampled scores agree to this many digits tie.
TIE_DIGITS = 12
#: How ties are ranked (named in the board's signature).
TIE_RULE = "min"
#: Bounds memory: resamples per batch × claims.
_BATCH_ELEMENTS = 2_000_000


@dataclass(frozen=True)
class RankIntervals:
    """Per system (in the order given): the interval's best and worst rank, P(first).

    Attributes:
        best: Best (smallest) rank of the central interval, per system.
        worst: Worst (largest) rank of the central interval, per system.
        p_first: Probability of being first (ties split), per system.
        n_resamples: B.
        seed: The seed of the resamples.
        level: The interval's coverage, e.g. 0.95.
    """

    best: npt.NDArray[np.int64]
    worst: npt.NDArray[np.int64]
    p_first: npt.NDArray[np.float64]
    n_resamples: int
    seed: int
    level: float


def resample_indices(*, n_claims: int, n_resamples: int, seed: int) -> npt.NDArray[np.int64]:
    """The B × n claim indices shared by every system (see the module docstring).

    Example:
        >>> resample_indices(n_claims=3, n_resamples=2, seed=0).shape
        (2, 3)
    """
    return np.random.default_rng(seed).integers(0, n_claims, size=(n_resamples, n_claims))


def resampled_means(values: npt.NDArray[np.float64], idx: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """B × S scores: each system's mean over each resample (claim counts × values, batched).

    Example:
        >>> resampled_means(np.array([[0.0, 1.0]]), np.array([[1, 1], [0, 1]])).tolist()
        [[1.0], [0.5]]
    """
    n_res, n = idx.shape
    out = np.empty((n_res, values.shape[0]), dtype=np.float64)
    step = max(1, _BATCH_ELEMENTS // max(n, 1))
    for start in range(0, n_res, step):
        block = idx[start : start + step]
        rows = block.shape[0]
        counts = np.bincount((block + (np.arange(rows) * n)[:, None]).ravel(), minlength=rows * n).reshape(rows, n)
        out[start : start + rows] = counts @ values.T / n
    return out


def min_ranks(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """B × S min ranks: 1 + the number of systems with a strictly higher (rounded) score.

    Example:
        >>> min_ranks(np.array([[0.5, 0.5, 0.2], [0.1, 0.3, 0.2]])).tolist()
        [[1, 1, 3], [3, 1, 2]]
    """
    rounded = np.round(scores, TIE_DIGITS)
    return (1 + (rounded[:, None, :] > rounded[:, :, None]).sum(axis=2)).astype(np.int64)


def rank_intervals(*, values: npt.ArrayLike, n_resamples: int, seed: int, level: float = 0.95) -> RankIntervals:
    """Rank intervals and P(first) of S systems from their S × n per-claim values.

    Args:
        values: One row of per-claim values per system, all on the same claims.
        n_resamples: B, the number of bootstrap resamples of the claims.
        seed: Seed of the resamples (the same seed: the same intervals).
        level: Coverage of the rank interval.

    Returns:
        A :class:`RankIntervals` (see the module docstring for the definitions).

    Example:
        >>> r = rank_intervals(values=[[1.0, 1.0], [0.0, 0.0]], n_resamples=50, seed=3)
        >>> r.best.tolist(), r.worst.tolist(), r.p_first.tolist()
        ([1, 2], [1, 2], [1.0, 0.0])
    """
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError(f"values must be systems × claims with at least one claim, got shape {matrix.shape}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    idx = resample_indices(n_claims=matrix.shape[1], n_resamples=n_resamples, seed=seed)
    return intervals_from_scores(resampled_means(matrix, idx), seed=seed, level=level)


def intervals_from_scores(scores: npt.NDArray[np.float64], *, seed: int, level: float = 0.95) -> RankIntervals:
    """:class:`RankIntervals` from B × S resampled scores (as :func:`resampled_means` gives).

    Example:
        >>> intervals_from_scores(np.array([[0.5, 0.5], [0.2, 0.4]]), seed=0).p_first.tolist()
        [0.25, 0.75]
    """
    n_resamples = scores.shape[0]
    ranks = min_ranks(scores)
    ordered = np.sort(ranks, axis=0)
    lo_q, hi_q = (1.0 - level) / 2.0, (1.0 + level) / 2.0
    # round first: (1 - 0.95) / 2 * 1000 is 25.000000000000025 in floating point, not 25
    best = ordered[max(0, int(np.ceil(round(lo_q * n_resamples, 9))) - 1)]
    worst = ordered[max(0, int(np.ceil(round(hi_q * n_resamples, 9))) - 1)]
    first = ranks == 1
    p_first = (first / first.sum(axis=1, keepdims=True)).mean(axis=0)
    return RankIntervals(best=best.astype(np.int64), worst=worst.astype(np.int64), p_first=p_first,
                         n_resamples=n_resamples, seed=seed, level=level)


__all__ = ["TIE_RULE", "intervals_from_scores", "min_ranks", "rank_intervals", "resample_indices", "resampled_means"]
