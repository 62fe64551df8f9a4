"""Rank and linear correlations, and their claim-clustered bootstrap intervals.

Spearman's ρ (Pearson on average ranks), Pearson's r and Kendall's τ-b are computed here
with NumPy (``tests/test_meta_eval.py`` checks them against ``scipy.stats``). Intervals
resample *claims*, not rows: every rating of a resampled claim enters together, so two
ratings of one claim never pretend to be independent evidence.

    >>> round(spearman(x=[1, 2, 3, 4], y=[1, 3, 2, 4]), 4), round(kendall(x=[1, 2, 3], y=[1, 3, 2]), 4)
    (0.8, 0.3333)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Statistic name → function(x=, y=) → float (nan when undefined).
STATISTICS: dict[str, Callable[..., float]] = {}


def _statistic(name: str) -> Callable[[Callable[..., float]], Callable[..., float]]:
    def deco(fn: Callable[..., float]) -> Callable[..., float]:
        STATISTICS[name] = fn
        return fn

    return deco


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n with ties given their average rank.

    Example:
        >>> average_ranks([10, 20, 20, 5]).tolist()
        [2.0, 3.5, 3.5, 1.0]
    """
    a = np.asarray(values, dtype=float)
    order = np.argsort(a, kind="mergesort")
    ranks = np.empty(len(a))
    sorted_a = a[order]
    start = 0
    while start < len(a):
        end = start
        while end + 1 < len(a) and sorted_a[end + 1] == sorted_a[start]:
            end += 1
        ranks[order[start:end + 1]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


@_statistic("pearson")
def pearson(*, x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r; nan when either side is constant or there are fewer than two pairs.

    Example:
        >>> pearson(x=[1, 2, 3], y=[2, 4, 6]), bool(np.isnan(pearson(x=[1, 1], y=[1, 2])))
        (1.0, True)
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 2:
        return float("nan")
    a, b = a - a.mean(), b - b.mean()
    denom = float(np.sqrt((a * a).sum() * (b * b).sum()))
    if denom == 0.0:
        return float("nan")
    return float(np.clip((a * b).sum() / denom, -1.0, 1.0))


@_statistic("spearman")
def spearman(*, x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's ρ: Pearson's r of the average ranks.

    Example:
        >>> spearman(x=[1, 2, 3], y=[30, 20, 10])
        -1.0
    """
    return pearson(x=average_ranks(x), y=average_ranks(y))


@_statistic("kendall")
def kendall(*, x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's τ-b (ties on either side corrected), O(n²) over pairs.

    Example:
        >>> kendall(x=[1, 2, 3, 4], y=[1, 2, 4, 3])
        0.6666666666666666
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(a) < 2:
        return float("nan")
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    iu = np.triu_indices(len(a), k=1)
    sa, sb = da[iu], db[iu]
    n_a, n_b = float((sa != 0).sum()), float((sb != 0).sum())
    if n_a == 0 or n_b == 0:
        return float("nan")
    return float((sa * sb).sum() / np.sqrt(n_a * n_b))


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval of one statistic.

    Example:
        >>> Interval(low=0.1, high=0.3, level=0.95, resamples=100).as_dict()["level"]
        0.95
    """

    low: float
    high: float
    level: float
    resamples: int

    def as_dict(self) -> dict[str, float]:
        return {"low": self.low, "high": self.high, "level": self.level, "resamples": self.resamples}


def percentile_interval(values: Sequence[float], *, level: float, resamples: int) -> Interval:
    """The percentile interval of bootstrap ``values`` (the defined ones); (nan, nan) when there are none.

    Example:
        >>> percentile_interval([0.0, 1.0, 2.0, 3.0, 4.0], level=0.5, resamples=5).as_dict()
        {'low': 1.0, 'high': 3.0, 'level': 0.5, 'resamples': 5}
    """
    if not len(values):
        return Interval(float("nan"), float("nan"), level, resamples)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return Interval(float(low), float(high), level, resamples)


def clustered_bootstrap(
    *, x: Sequence[float], y: Sequence[float], clusters: Sequence[object], statistic: str,
    resamples: int = 1000, level: float = 0.95, seed: int = 0,
) -> Interval:
    """Percentile interval of ``statistic`` when whole clusters (claims) are resampled.

    Resamples on which the statistic is undefined (a constant side) are dropped; with
    none left the interval is (nan, nan).

    Example:
        >>> ci = clustered_bootstrap(x=[1, 2, 3, 4, 5, 6], y=[1, 2, 3, 5, 4, 6],
        ...                          clusters=["a", "a", "b", "b", "c", "c"], statistic="spearman",
        ...                          resamples=200)
        >>> ci.low <= spearman(x=[1, 2, 3, 4, 5, 6], y=[1, 2, 3, 5, 4, 6]) <= ci.high
        True
    """
    fn = STATISTICS[statistic]
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keys = list(dict.fromkeys(clusters))
    index = {k: i for i, k in enumerate(keys)}
    members: list[list[int]] = [[] for _ in keys]
    for row, c in enumerate(clusters):
        members[index[c]].append(row)
    groups = [np.asarray(m) for m in members]
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(resamples):
        pick = rng.integers(0, len(groups), size=len(groups))
        rows = np.concatenate([groups[i] for i in pick])
        v = fn(x=a[rows], y=b[rows])
        if not np.isnan(v):
            values.append(v)
    return percentile_interval(values, level=level, resamples=resamples)


__all__ = [
    "STATISTICS", "average_ranks", "clustered_bootstrap", "kendall", "pearson", "percentile_interval", "spearman",
]
