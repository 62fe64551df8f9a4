"""Paired significance tests of two systems on the same claims: the paired bootstrap and
approximate randomisation, with the confidence interval of the difference and an effect
size (definitions in :mod:`averitec_tools.metrics.bootstrap`'s module docstring)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import ArrayLike, MetricInputError
from averitec_tools.metrics.bootstrap import (
    BATCH_ELEMENTS,
    CIMethod,
    ConfidenceInterval,
    VectorStatistic,
    as_data,
    check_resampling,
    run_scipy_bootstrap,
)

_TOL = 1e-12


PairedTestKind = Literal["bootstrap", "randomization"]


PAIRED_TESTS: tuple[str, ...] = ("bootstrap", "randomization")


@dataclass(frozen=True)
class PairedTestResult:
    """Outcome of a paired comparison of systems A and B on the same claims.

    Attributes:
        test: ``"bootstrap"`` or ``"randomization"``.
        n: Number of claims.
        value_a: Statistic of A.
        value_b: Statistic of B.
        difference: ``value_a − value_b``.
        ci: Paired bootstrap CI of the difference.
        p_value: Two-sided p-value for "no difference".
        effect_size: Cohen's d_z (mean metrics) or ``δ/(√N·SE*)``; ``None`` if undefined.
        effect_size_kind: ``"cohens_dz"`` or ``"bootstrap_standardized"``.
        n_resamples: Resamples (bootstrap) or rounds (randomisation) behind the p-value.
        alpha: Significance level.
    """

    test: str
    n: int
    value_a: float
    value_b: float
    difference: float
    ci: ConfidenceInterval
    p_value: float
    effect_size: float | None
    effect_size_kind: str
    n_resamples: int
    alpha: float

    @property
    def significant(self) -> bool:
        """``p_value < alpha``."""
        return self.p_value < self.alpha

    def to_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "n": self.n,
            "a": self.value_a,
            "b": self.value_b,
            "difference": self.difference,
            "ci_low": self.ci.low,
            "ci_high": self.ci.high,
            "confidence_level": self.ci.confidence_level,
            "ci_method": self.ci.method,
            "p_value": self.p_value,
            "effect_size": self.effect_size,
            "effect_size_kind": self.effect_size_kind,
            "n_resamples": self.n_resamples,
            "alpha": self.alpha,
            "significant": self.significant,
        }


def _randomization_p(
    a: npt.NDArray[Any],
    b: npt.NDArray[Any],
    statistic: VectorStatistic,
    observed: float,
    n_rounds: int,
    rng: np.random.Generator,
) -> float:
    n = a.size
    batch = max(1, BATCH_ELEMENTS // n)
    hits = 0
    done = 0
    while done < n_rounds:
        size = min(batch, n_rounds - done)
        swap = rng.random((size, n)) < 0.5
        a_perm = np.where(swap, b, a)
        b_perm = np.where(swap, a, b)
        delta = np.asarray(statistic(a_perm, axis=-1)) - np.asarray(statistic(b_perm, axis=-1))
        hits += int(np.sum(np.abs(delta) >= abs(observed) - _TOL))
        done += size
    return (1 + hits) / (n_rounds + 1)


def _effect_size(
    arr_a: npt.NDArray[Any], arr_b: npt.NDArray[Any], *, observed: float, se: float, is_mean: bool
) -> tuple[str, float | None]:
    """Cohen's d_z for a mean, else the difference over its bootstrap standard error (× √n)."""
    n = arr_a.size
    if is_mean:
        d = arr_a - arr_b
        sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
        return "cohens_dz", float(np.mean(d)) / sd if sd > 0 else (0.0 if observed == 0 else None)
    return "bootstrap_standardized", observed / (math.sqrt(n) * se) if se > 0 else (0.0 if observed == 0 else None)


def paired_test(
    *,
    a: ArrayLike,
    b: ArrayLike,
    statistic: VectorStatistic | None = None,
    test: PairedTestKind = "bootstrap",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    method: CIMethod = "percentile",
    alpha: float = 0.05,
    seed: int | np.random.Generator | None = 0,
) -> PairedTestResult:
    """Paired significance test of ``statistic(a) − statistic(b)`` over the same claims.

    See the module docstring for the exact p-value and effect-size definitions.

    Args:
        a: Per-claim outcomes of system A (values, correctness, or joint label codes).
        b: The same for system B, aligned claim by claim with ``a``.
        statistic: Vectorised reducer ``f(x, axis=-1)``; ``None`` means the mean (then the
            effect size is Cohen's d_z).
        test: ``"bootstrap"`` (paired bootstrap) or ``"randomization"`` (approximate
            randomisation).
        n_resamples: Bootstrap resamples / randomisation rounds.
        confidence_level: Level of the CI of the difference.
        method: CI method (``"percentile"``, ``"basic"``, ``"BCa"``).
        alpha: Significance level for :attr:`PairedTestResult.significant`.
        seed: Seed or generator.

    Returns:
        A :class:`PairedTestResult`.

    Example:
        >>> a = [1] * 40 + [0] * 10
        >>> b = [1] * 25 + [0] * 25
        >>> r = paired_test(a=a, b=b, n_resamples=1000, seed=0)
        >>> round(r.difference, 2), r.significant
        (0.3, True)
    """
    check_resampling(n_resamples, confidence_level, method)
    _check_test(test, alpha)
    arr_a, arr_b, stat = _paired_data(a, b, statistic)
    value_a = float(stat(arr_a, axis=-1))
    value_b = float(stat(arr_b, axis=-1))
    observed = value_a - value_b
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    ci, dist = _difference_ci(arr_a, arr_b, stat, observed=observed, n_resamples=n_resamples,
                              confidence_level=confidence_level, method=method, rng=rng)
    if test == "bootstrap":
        hits = int(np.sum(np.abs(dist - observed) >= abs(observed) - _TOL))
        p_value = (1 + hits) / (dist.size + 1)
    else:
        p_value = _randomization_p(arr_a, arr_b, stat, observed, n_resamples, rng)
    kind, effect = _effect_size(arr_a, arr_b, observed=observed, se=ci.standard_error,
                                is_mean=statistic is None)
    return PairedTestResult(
        test=test, n=arr_a.size, value_a=value_a, value_b=value_b, difference=observed, ci=ci,
        p_value=float(p_value), effect_size=effect, effect_size_kind=kind, n_resamples=n_resamples, alpha=alpha,
    )


def _check_test(test: str, alpha: float) -> None:
    """Refuse an unknown test kind or a significance level outside (0, 1)."""
    if test not in PAIRED_TESTS:
        raise MetricInputError(f"unknown paired test {test!r} (use one of: {', '.join(PAIRED_TESTS)})")
    if not 0.0 < alpha < 1.0:
        raise MetricInputError(f"alpha must be in (0, 1), got {alpha}")


def _paired_data(a: ArrayLike, b: ArrayLike,
                 statistic: VectorStatistic | None) -> tuple[npt.NDArray[Any], npt.NDArray[Any], VectorStatistic]:
    """The paired arrays and the statistic (``None``: the mean, over float64 copies)."""
    arr_a, arr_b = as_data([a, b])
    if statistic is None:
        return arr_a.astype(np.float64), arr_b.astype(np.float64), np.mean
    return arr_a, arr_b, statistic


def _difference_ci(arr_a: npt.NDArray[Any], arr_b: npt.NDArray[Any], stat: VectorStatistic, *, observed: float,
                   n_resamples: int, confidence_level: float, method: CIMethod,
                   rng: np.random.Generator) -> tuple[ConfidenceInterval, npt.NDArray[Any]]:
    """The paired bootstrap CI of ``stat(a) − stat(b)`` and the resampled differences."""

    def diff(x: npt.NDArray[Any], y: npt.NDArray[Any], axis: int = -1) -> Any:
        return np.asarray(stat(x, axis=axis)) - np.asarray(stat(y, axis=axis))

    low, high, used, dist = run_scipy_bootstrap(
        (arr_a, arr_b),
        diff,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method=method,
        seed=rng,
    )
    se = float(np.std(dist, ddof=1)) if dist.size > 1 else 0.0
    ci = ConfidenceInterval(estimate=observed, low=low, high=high, confidence_level=confidence_level, method=used,
                            n_resamples=n_resamples, standard_error=se)
    return ci, dist


def paired_bootstrap_test(**kwargs: Any) -> PairedTestResult:
    """:func:`paired_test` with ``test="bootstrap"`` (same keyword arguments).

    Example:
        >>> paired_bootstrap_test(a=[1, 1, 0], b=[1, 1, 0]).p_value
        1.0
    """
    return paired_test(test="bootstrap", **kwargs)


def approximate_randomization_test(**kwargs: Any) -> PairedTestResult:
    """:func:`paired_test` with ``test="randomization"`` (same keyword arguments).

    Example:
        >>> approximate_randomization_test(a=[1, 1, 0], b=[1, 1, 0]).p_value
        1.0
    """
    return paired_test(test="randomization", **kwargs)


__all__ = ["PairedTestResult", "approximate_randomization_test", "paired_bootstrap_test", "paired_test"]
