"""Uncertainty for headline numbers: bootstrap intervals and paired significance tests.

* :func:`bootstrap_ci` — a confidence interval for any statistic of per-claim data, from
  ``scipy.stats.bootstrap`` (claims resampled with replacement, all arrays of a claim
  together; ``"percentile"``, ``"basic"`` or ``"BCa"``; seedable).
* :func:`paired_test` — two systems scored on the same claims. ``test="bootstrap"`` is the
  paired bootstrap test (Koehn 2004; Berg-Kirkpatrick et al. 2012): claims are resampled
  jointly for both systems, ``δ* = S(A*) − S(B*)``, and the two-sided p-value is
  ``(1 + #{|δ* − δ| ≥ |δ|}) / (B + 1)`` (the bootstrap distribution shifted to the null
  ``δ = 0``). ``test="randomization"`` is approximate randomisation (Noreen 1989; Riezler &
  Maxwell 2005): in each of R rounds every claim's two outputs are swapped with
  probability ½, and ``p = (1 + #{|δ_r| ≥ |δ|}) / (R + 1)``. Both report the paired
  bootstrap CI of ``δ`` and an effect size:

  - for a metric that is a mean of per-claim values: Cohen's ``d_z = mean(a − b) / sd(a − b)``
    (sample SD, ``ddof=1``);
  - otherwise (macro-F1, ...): ``δ / (√N · SE*)``, with ``SE*`` the SD of the paired bootstrap
    distribution of ``δ*`` — the same quantity as ``d_z`` for a mean, estimated by bootstrap.

Label metrics are resampled through joint codes ``gold · (K + 1) + pred`` (see
:func:`encode_label_pairs`), so that accuracy and macro-F1 are recomputed exactly on every
resample, vectorised.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import ArrayLike, MetricInputError

CIMethod = Literal["percentile", "basic", "BCa"]
CI_METHODS: tuple[str, ...] = ("percentile", "basic", "BCa")

#: A vectorised statistic: reduces the last axis, ``f(x, axis=-1) -> array``.
VectorStatistic = Callable[..., Any]

BATCH_ELEMENTS = 4_000_000  # bounds memory: resamples per batch × claims


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval.

    Attributes:
        estimate: The statistic on the original data.
        low: Lower bound.
        high: Upper bound.
        confidence_level: e.g. 0.95.
        method: ``"percentile"``, ``"basic"`` or ``"BCa"`` (as used; BCa falls back to
            percentile, and says so here, when the bootstrap distribution is degenerate).
        n_resamples: Number of bootstrap resamples.
        standard_error: SD of the bootstrap distribution.
    """

    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str
    n_resamples: int
    standard_error: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_resampling(n_resamples: int, confidence_level: float, method: str) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise MetricInputError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence_level < 1.0:
        raise MetricInputError(f"confidence_level must be in (0, 1), got {confidence_level}")
    if method not in CI_METHODS:
        raise MetricInputError(f"unknown CI method {method!r} (use one of: {', '.join(CI_METHODS)})")


def as_data(data: Sequence[ArrayLike]) -> tuple[npt.NDArray[Any], ...]:
    if not data:
        raise MetricInputError("bootstrap needs at least one data array")
    arrays = tuple(np.asarray(d) for d in data)
    for i, arr in enumerate(arrays):
        if arr.ndim != 1:
            raise MetricInputError(f"data[{i}] must be one-dimensional, got shape {arr.shape}")
    n = arrays[0].size
    if n == 0:
        raise MetricInputError("bootstrap data is empty: need at least one claim")
    for i, arr in enumerate(arrays[1:], start=1):
        if arr.size != n:
            raise MetricInputError(f"data[{i}] has {arr.size} items, data[0] has {n}: arrays must be paired")
    return arrays


def run_scipy_bootstrap(
    arrays: tuple[npt.NDArray[Any], ...],
    statistic: Callable[..., Any],
    *,
    vectorized: bool,
    n_resamples: int,
    confidence_level: float,
    method: str,
    seed: int | np.random.Generator | None,
) -> tuple[float, float, str, npt.NDArray[np.float64]]:
    from scipy import stats

    n = arrays[0].size
    if n == 1:
        # Every resample of one claim is that claim: the distribution is a point mass
        # (scipy refuses samples of size 1).
        value = float(np.asarray(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays)))
        return value, value, f"percentile (fallback: {method} with a single claim)", np.full(n_resamples, value)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    use_method = method
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=RuntimeWarning)
        warnings.simplefilter("ignore", category=getattr(stats, "DegenerateDataWarning", RuntimeWarning))
        res = stats.bootstrap(
            arrays,
            statistic,
            n_resamples=n_resamples,
            batch=max(1, BATCH_ELEMENTS // max(n, 1)),
            vectorized=vectorized,
            paired=True,
            confidence_level=confidence_level,
            method=use_method,
            rng=rng,
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    low, high, used = _finite_interval(low, high, dist, confidence_level=confidence_level, method=use_method)
    return low, high, used, dist


def _finite_interval(
    low: float, high: float, dist: npt.NDArray[np.float64], *, confidence_level: float, method: str,
) -> tuple[float, float, str]:
    """``(low, high, method)`` as found, or, where a bound is not finite (a degenerate
    distribution, e.g. all resamples equal: BCa is undefined there), the percentile
    interval of ``dist`` and the method saying so."""
    if math.isfinite(low) and math.isfinite(high):
        return low, high, method
    alpha = (1.0 - confidence_level) / 2.0
    low, high = (float(v) for v in np.quantile(dist, [alpha, 1.0 - alpha]))
    return low, high, f"percentile (fallback: {method} undefined for a degenerate distribution)"


def bootstrap_ci(
    *,
    data: Sequence[ArrayLike],
    statistic: Callable[..., Any],
    vectorized: bool = False,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    method: CIMethod = "percentile",
    seed: int | np.random.Generator | None = 0,
) -> ConfidenceInterval:
    """Bootstrap confidence interval of ``statistic(*data)`` over claims.

    Claims are resampled with replacement, the arrays in ``data`` together (paired), by
    ``scipy.stats.bootstrap``.

    Args:
        data: Per-claim arrays of equal length (e.g. ``(confidences, correct)``).
        statistic: ``statistic(*arrays) -> float``; with ``vectorized=True`` it must accept
            ``axis`` and reduce that axis (``numpy.mean`` does).
        vectorized: Whether ``statistic`` takes ``axis``.
        n_resamples: Number of resamples B.
        confidence_level: Two-sided level, e.g. 0.95.
        method: ``"percentile"`` (default), ``"basic"`` or ``"BCa"``.
        seed: Seed or generator; the same seed gives the same interval.

    Returns:
        A :class:`ConfidenceInterval`.

    Example:
        >>> ci = bootstrap_ci(data=[[0, 1, 1, 1, 0, 1, 1, 1]], statistic=np.mean, vectorized=True,
        ...                   n_resamples=500, seed=1)
        >>> ci.estimate, ci.low <= 0.75 <= ci.high
        (0.75, True)
    """
    check_resampling(n_resamples, confidence_level, method)
    arrays = as_data(data)
    estimate = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
    low, high, used, dist = run_scipy_bootstrap(
        arrays,
        statistic,
        vectorized=vectorized,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method=method,
        seed=seed,
    )
    return ConfidenceInterval(
        estimate=estimate,
        low=low,
        high=high,
        confidence_level=confidence_level,
        method=used,
        n_resamples=n_resamples,
        standard_error=float(np.std(dist, ddof=1)) if dist.size > 1 else 0.0,
    )


def mean_ci(
    *,
    values: ArrayLike,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    method: CIMethod = "percentile",
    seed: int | np.random.Generator | None = 0,
) -> ConfidenceInterval:
    """Bootstrap CI of the mean of per-claim ``values`` (see :func:`bootstrap_ci`).

    Example:
        >>> mean_ci(values=[1.0, 1.0, 1.0]).low
        1.0
    """
    return bootstrap_ci(
        data=[np.asarray(values, dtype=np.float64)],
        statistic=np.mean,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method=method,
        seed=seed,
    )


def mean_cis(
    *,
    columns: Mapping[str, ArrayLike],
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict[str, ConfidenceInterval]:
    """Percentile bootstrap CIs of the means of several per-claim columns, each equal to
    ``mean_ci(values=column, ...)`` with the same arguments, in one resampling per length.

    Separate :func:`mean_ci` calls with one integer ``seed`` draw the same resample indices
    for every column of one length; here they are drawn once and every column of that
    length is resampled with them (the steps of ``scipy.stats.bootstrap``, see
    :func:`_stacked_percentile`), so the intervals, estimates and standard errors are
    identical (``tests/test_bootstrap.py`` pins them against :func:`mean_ci`); the draws,
    ~40 % of a call, are made once. Memory: the stacked columns plus one :func:`mean_ci`
    call's (batches of :data:`BATCH_ELEMENTS`).

    Example:
        >>> cis = mean_cis(columns={"a": [0.0, 1.0, 1.0, 1.0], "b": [1.0, 0.5]}, n_resamples=200, seed=3)
        >>> cis["a"] == mean_ci(values=[0.0, 1.0, 1.0, 1.0], n_resamples=200, seed=3)
        True
    """
    check_resampling(n_resamples, confidence_level, "percentile")
    arrays = {name: as_data([np.asarray(values, dtype=np.float64)])[0] for name, values in columns.items()}
    by_length: dict[int, list[str]] = {}
    for name, arr in arrays.items():
        by_length.setdefault(arr.size, []).append(name)
    out: dict[str, ConfidenceInterval] = {}
    for n, names in by_length.items():
        if n == 1:  # a point mass, as mean_ci says it
            out.update((name, mean_ci(values=arrays[name], n_resamples=n_resamples, confidence_level=confidence_level,
                                      seed=seed)) for name in names)
            continue
        stacked = np.stack([arrays[name] for name in names])
        estimates = np.mean(stacked, axis=-1)
        lows, highs, used, dists = _stacked_percentile(stacked, n_resamples=n_resamples, confidence_level=confidence_level,
                                                       seed=seed)
        for row, name in enumerate(names):
            dist = dists[row]
            out[name] = ConfidenceInterval(
                estimate=float(estimates[row]), low=lows[row], high=highs[row], confidence_level=confidence_level,
                method=used[row], n_resamples=n_resamples,
                standard_error=float(np.std(dist, ddof=1)) if dist.size > 1 else 0.0,
            )
    return {name: out[name] for name in columns}


def _stacked_percentile(
    stacked: npt.NDArray[np.float64], *, n_resamples: int, confidence_level: float, seed: int,
) -> tuple[list[float], list[float], list[str], npt.NDArray[np.float64]]:
    """What :func:`run_scipy_bootstrap` finds for ``np.mean`` (percentile) of each row of
    ``stacked``: the rows' lows, highs, methods as used and bootstrap distributions.

    ``scipy.stats.bootstrap``'s percentile path with ``paired=True``, the index draws made
    once for all rows: the same batches of ``rng.integers(0, n, (batch, n))``, each row
    gathered as a C-ordered ``(batch, n)`` array and averaged along its last axis (a
    gather of all rows at once is laid out otherwise and sums in another order), the
    interval by ``scipy.stats.quantile``."""
    from scipy import stats

    rows, n = stacked.shape
    rng = np.random.default_rng(seed)
    batch = max(1, BATCH_ELEMENTS // n)  # mean_ci's batches: memory of one row at a time
    parts: list[list[npt.NDArray[np.float64]]] = [[] for _ in range(rows)]
    for start in range(0, n_resamples, batch):
        index = rng.integers(0, n, size=(min(batch, n_resamples - start), n), dtype=np.int64)
        for row in range(rows):
            parts[row].append(np.mean(stacked[row][index], axis=-1))
    dists = np.stack([np.concatenate(p) for p in parts])
    alpha = np.asarray((1.0 - confidence_level) / 2.0, dtype=np.float64)
    interval = np.stack((alpha, 1 - alpha), axis=-1)
    out_low, out_high, used = [], [], []
    for row in range(rows):
        ci = stats.quantile(dists[row], interval, axis=-1)
        low, high, method = _finite_interval(float(ci[0]), float(ci[1]), dists[row], confidence_level=confidence_level,
                                             method="percentile")
        out_low.append(low)
        out_high.append(high)
        used.append(method)
    return out_low, out_high, used, dists


__all__ = [
    "BATCH_ELEMENTS", "CIMethod", "ConfidenceInterval", "VectorStatistic", "as_data", "bootstrap_ci",
    "check_resampling", "mean_ci", "mean_cis", "run_scipy_bootstrap",
]
