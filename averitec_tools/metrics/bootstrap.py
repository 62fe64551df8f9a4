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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import ArrayLike, MetricInputError

CIMethod = Literal["percentile", "basic", "BCa"]
CI_METHODS: tuple[str, ...] = ("percentile", "basic", "BCa")
PairedTestKind = Literal["bootstrap", "randomization"]
PAIRED_TESTS: tuple[str, ...] = ("bootstrap", "randomization")

#: A vectorised statistic: reduces the last axis, ``f(x, axis=-1) -> array``.
VectorStatistic = Callable[..., Any]

_TOL = 1e-12
_BATCH_ELEMENTS = 4_000_000  # bounds memory: resamples per batch × claims


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
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "confidence_level": self.confidence_level,
            "method": self.method,
            "n_resamples": self.n_resamples,
            "standard_error": self.standard_error,
        }


def _check_common(n_resamples: int, confidence_level: float, method: str) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise MetricInputError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence_level < 1.0:
        raise MetricInputError(f"confidence_level must be in (0, 1), got {confidence_level}")
    if method not in CI_METHODS:
        raise MetricInputError(f"unknown CI method {method!r} (use one of: {', '.join(CI_METHODS)})")


def _as_data(data: Sequence[ArrayLike]) -> tuple[npt.NDArray[Any], ...]:
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


def _run_scipy_bootstrap(
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
            batch=max(1, _BATCH_ELEMENTS // max(n, 1)),
            vectorized=vectorized,
            paired=True,
            confidence_level=confidence_level,
            method=use_method,
            rng=rng,
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    used = use_method
    if not (math.isfinite(low) and math.isfinite(high)):
        # Degenerate distribution (e.g. all resamples equal): BCa is undefined.
        alpha = (1.0 - confidence_level) / 2.0
        low, high = (float(v) for v in np.quantile(dist, [alpha, 1.0 - alpha]))
        used = f"percentile (fallback: {use_method} undefined for a degenerate distribution)"
    return low, high, used, dist


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
    _check_common(n_resamples, confidence_level, method)
    arrays = _as_data(data)
    estimate = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
    low, high, used, dist = _run_scipy_bootstrap(
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
    batch = max(1, _BATCH_ELEMENTS // n)
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
    _check_common(n_resamples, confidence_level, method)
    if test not in PAIRED_TESTS:
        raise MetricInputError(f"unknown paired test {test!r} (use one of: {', '.join(PAIRED_TESTS)})")
    if not 0.0 < alpha < 1.0:
        raise MetricInputError(f"alpha must be in (0, 1), got {alpha}")
    arr_a, arr_b = _as_data([a, b])
    is_mean = statistic is None
    stat: VectorStatistic = np.mean if statistic is None else statistic
    if is_mean:
        arr_a = arr_a.astype(np.float64)
        arr_b = arr_b.astype(np.float64)
    value_a = float(stat(arr_a, axis=-1))
    value_b = float(stat(arr_b, axis=-1))
    observed = value_a - value_b

    def diff(x: npt.NDArray[Any], y: npt.NDArray[Any], axis: int = -1) -> Any:
        return np.asarray(stat(x, axis=axis)) - np.asarray(stat(y, axis=axis))

    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    low, high, used, dist = _run_scipy_bootstrap(
        (arr_a, arr_b),
        diff,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        method=method,
        seed=rng,
    )
    se = float(np.std(dist, ddof=1)) if dist.size > 1 else 0.0
    ci = ConfidenceInterval(
        estimate=observed,
        low=low,
        high=high,
        confidence_level=confidence_level,
        method=used,
        n_resamples=n_resamples,
        standard_error=se,
    )
    if test == "bootstrap":
        hits = int(np.sum(np.abs(dist - observed) >= abs(observed) - _TOL))
        p_value = (1 + hits) / (dist.size + 1)
    else:
        p_value = _randomization_p(arr_a, arr_b, stat, observed, n_resamples, rng)

    n = arr_a.size
    effect: float | None
    if is_mean:
        kind = "cohens_dz"
        d = arr_a - arr_b
        sd = float(np.std(d, ddof=1)) if n > 1 else 0.0
        effect = float(np.mean(d)) / sd if sd > 0 else (0.0 if observed == 0 else None)
    else:
        kind = "bootstrap_standardized"
        effect = observed / (math.sqrt(n) * se) if se > 0 else (0.0 if observed == 0 else None)
    return PairedTestResult(
        test=test,
        n=n,
        value_a=value_a,
        value_b=value_b,
        difference=observed,
        ci=ci,
        p_value=float(p_value),
        effect_size=effect,
        effect_size_kind=kind,
        n_resamples=n_resamples,
        alpha=alpha,
    )


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


def encode_label_pairs(
    *, gold: Sequence[str], predictions: Sequence[str | None], labels: Sequence[str]
) -> npt.NDArray[np.int64]:
    """Encode each claim's (gold, prediction) as ``gold_index · (K + 1) + pred_index``.

    ``labels`` are the K classes (every gold label must be one of them); a prediction
    outside them (or ``None``) gets index K ("other"): always wrong, a false negative for
    its gold class and nobody's false positive, as in scikit-learn with ``labels=``.

    Example:
        >>> encode_label_pairs(gold=["a", "b"], predictions=["a", "zzz"], labels=["a", "b"]).tolist()
        [0, 5]
    """
    if len(gold) != len(predictions):
        raise MetricInputError(f"gold and predictions differ in length ({len(gold)} vs {len(predictions)})")
    k = len(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    codes = np.empty(len(gold), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, predictions, strict=True)):
        if g not in index:
            raise MetricInputError(f"gold label {g!r} of claim {i} is not one of labels {list(labels)}")
        pred_index = k if p is None else index.get(p, k)
        codes[i] = index[g] * (k + 1) + pred_index
    return codes


def accuracy_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> Any:
    """Accuracy from :func:`encode_label_pairs` codes, reducing ``axis`` (vectorised).

    Example:
        >>> float(accuracy_of_codes(np.array([0, 5]), n_labels=2))
        0.5
    """
    codes = np.asarray(codes)
    return np.mean(codes // (n_labels + 1) == codes % (n_labels + 1), axis=axis)


def per_class_f1_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> npt.NDArray[np.float64]:
    """Per-class F1 of the K labels from joint codes; the class axis is last (vectorised).

    ``F1_k = 2·TP_k / (2·TP_k + FP_k + FN_k)``, 0 when the denominator is 0 (scikit-learn's
    ``zero_division=0``).

    Example:
        >>> codes = encode_label_pairs(gold=["a", "a", "b"], predictions=["a", "b", "b"], labels=["a", "b"])
        >>> np.round(per_class_f1_of_codes(codes, n_labels=2), 4).tolist()
        [0.6667, 0.6667]
    """
    codes = np.moveaxis(np.asarray(codes, dtype=np.int64), axis, -1)
    batch_shape = codes.shape[:-1]
    flat = codes.reshape(-1, codes.shape[-1])
    width = n_labels + 1
    cells = width * width
    offsets = np.arange(flat.shape[0], dtype=np.int64)[:, None] * cells
    counts = np.bincount((flat + offsets).ravel(), minlength=flat.shape[0] * cells)
    conf = counts.reshape(flat.shape[0], width, width)[:, :n_labels, :]  # rows: gold classes
    tp = conf[:, np.arange(n_labels), np.arange(n_labels)].astype(np.float64)
    gold_tot = conf.sum(axis=2)
    pred_tot = conf[:, :, :n_labels].sum(axis=1)
    denom = (gold_tot + pred_tot).astype(np.float64)  # = 2TP + FP + FN
    f1 = np.divide(2.0 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return f1.reshape(*batch_shape, n_labels)


def macro_f1_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> Any:
    """Macro-F1 over the K labels from joint codes, reducing ``axis`` (vectorised).

    The unweighted mean of :func:`per_class_f1_of_codes` over all K labels — equal to
    ``sklearn.metrics.f1_score(gold, pred, labels=labels, average="macro", zero_division=0)``.

    Example:
        >>> codes = encode_label_pairs(gold=["a", "a", "b"], predictions=["a", "b", "b"], labels=["a", "b"])
        >>> round(float(macro_f1_of_codes(codes, n_labels=2)), 4)
        0.6667
    """
    per_class = per_class_f1_of_codes(codes, n_labels=n_labels, axis=axis)
    macro = per_class.mean(axis=-1)
    return float(macro) if macro.ndim == 0 else macro


__all__ = [
    "CI_METHODS",
    "PAIRED_TESTS",
    "CIMethod",
    "ConfidenceInterval",
    "PairedTestKind",
    "PairedTestResult",
    "accuracy_of_codes",
    "approximate_randomization_test",
    "bootstrap_ci",
    "encode_label_pairs",
    "macro_f1_of_codes",
    "mean_ci",
    "paired_bootstrap_test",
    "paired_test",
    "per_class_f1_of_codes",
]
