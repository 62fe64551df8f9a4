"""Selective prediction: risk–coverage curve, AURC, E-AURC and operating points.

Default definition — the R2VC paper's Eq. 1. For a threshold ``τ`` the covered set is
``C(τ) = {n : π_n ≥ τ}``, ``Cov(τ) = |C(τ)| / N`` and
``Risk(τ) = 1 − (1/|C(τ)|) Σ_{n ∈ C(τ)} 1[ŷ_n = y_n]``.

* The **risk–coverage curve** has one point per distinct confidence value ``τ`` (taken from
  the highest down). Predictions with equal confidence enter the covered set together, so
  the curve never depends on the order of tied items.
* ``AURC = Σ_j (Cov(τ_j) − Cov(τ_{j−1})) · Risk(τ_j)`` over those points from the highest
  ``τ`` down, with ``Cov(τ_0) = 0`` (a right-endpoint Riemann sum over coverage).
* ``AURC* = (1/N) Σ_{k=1..N} max(0, k − n_correct) / k``: the AURC of a perfect ranking
  (all correct predictions first), taken one prediction at a time.
* ``E-AURC = AURC − AURC*`` (Geifman et al. 2019); it is ≥ 0 for every confidence
  assignment, including ties.

Relation to other definitions: with all confidences distinct, AURC equals Geifman et al.'s
``(1/N) Σ_{k=1..N} Risk(top-k)`` exactly. Implementations that sort with ``argsort`` and
step one item at a time break ties by input order, so their AURC changes when tied items
are permuted; ours does not. Other libraries integrate the curve with the trapezoidal rule
(over ``[1/N, 1]``, sometimes rescaled by ``1/(1 − 1/N)`` so that the integration range has
length 1), or report AURC without subtracting the oracle. Those values differ from ours by
O(1/N) terms or by AURC*, so compare numbers only under one definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import (
    ArrayLike,
    MetricInputError,
    as_confidences_correct,
    as_correct,
)
from averitec_tools.metrics.base import ConfidenceMetric, Metric, register_metric

#: R2VC's calibration threshold τ_cal (Table G.1): predictions below it become Uncertain.
R2VC_CALIBRATION_THRESHOLD = 0.60

GEIFMAN_CITATION = (
    "Geifman, Y., Uziel, G., El-Yaniv, R. (2019). Bias-reduced uncertainty estimation for "
    "deep neural classifiers. ICLR."
)
R2VC_CITATION = (
    "R2VC: Modular Fact-Checking with Retrieval, Verification, and Confidence Calibration, "
    "Eq. 1 (covered set by confidence threshold, risk = 1 − accuracy on it)."
)

_TOL = 1e-12


@dataclass(frozen=True)
class SelectivePoint:
    """One operating point: the covered set ``{confidence ≥ threshold}``.

    Attributes:
        threshold: The confidence threshold τ.
        n_covered: ``|C(τ)|``.
        coverage: ``|C(τ)| / N``.
        risk: ``1 − accuracy`` on the covered set.
    """

    threshold: float
    n_covered: int
    coverage: float
    risk: float


@dataclass(frozen=True)
class RiskCoverageCurve:
    """The risk–coverage curve: one point per distinct confidence, highest first.

    Attributes:
        n: Number of predictions N.
        n_correct: Number of correct predictions.
        thresholds: Distinct confidences, strictly decreasing.
        n_covered: ``|C(τ_j)|``, strictly increasing, ending at N.
        coverages: ``|C(τ_j)| / N``.
        risks: ``Risk(τ_j)``.
    """

    n: int
    n_correct: int
    thresholds: tuple[float, ...]
    n_covered: tuple[int, ...]
    coverages: tuple[float, ...]
    risks: tuple[float, ...]

    @property
    def aurc(self) -> float:
        """``Σ_j (Cov_j − Cov_{j−1})·Risk_j`` with ``Cov_0 = 0``."""
        cov = np.asarray(self.coverages)
        increments = np.diff(cov, prepend=0.0)
        return float(np.sum(increments * np.asarray(self.risks)))

    @property
    def oracle_aurc(self) -> float:
        """``AURC* = (1/N) Σ_k max(0, k − n_correct)/k``."""
        return oracle_aurc(n=self.n, n_correct=self.n_correct)

    @property
    def e_aurc(self) -> float:
        """``AURC − AURC*``."""
        return self.aurc - self.oracle_aurc

    def points(self) -> tuple[SelectivePoint, ...]:
        """The curve as :class:`SelectivePoint` objects."""
        return tuple(
            SelectivePoint(threshold=t, n_covered=k, coverage=c, risk=r)
            for t, k, c, r in zip(self.thresholds, self.n_covered, self.coverages, self.risks, strict=True)
        )

    def point_for_risk(self, max_risk: float) -> SelectivePoint | None:
        """The point of largest coverage whose risk is ≤ ``max_risk`` (``None`` if none is)."""
        best = None
        for point in self.points():
            if point.risk <= max_risk + _TOL:
                best = point
        return best

    def point_for_coverage(self, min_coverage: float) -> SelectivePoint:
        """The point with the highest threshold whose coverage is ≥ ``min_coverage``."""
        for point in self.points():
            if point.coverage >= min_coverage - _TOL:
                return point
        return self.points()[-1]  # coverage 1 always qualifies; unreachable for valid input

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (used by ``averitec calibration --json``)."""
        return {
            "n": self.n,
            "n_correct": self.n_correct,
            "thresholds": list(self.thresholds),
            "n_covered": list(self.n_covered),
            "coverages": list(self.coverages),
            "risks": list(self.risks),
        }


def risk_coverage_curve(*, confidences: ArrayLike, correct: ArrayLike) -> RiskCoverageCurve:
    """The risk–coverage curve of R2VC Eq. 1, one point per distinct confidence value.

    For each distinct confidence ``τ`` (highest first) the covered set is
    ``{n : confidence_n ≥ τ}`` — tied predictions enter together — with coverage
    ``|C(τ)|/N`` and risk ``1 − accuracy on C(τ)``.

    Args:
        confidences: Confidence of each prediction, in [0, 1].
        correct: Whether each prediction is correct.

    Returns:
        A :class:`RiskCoverageCurve`.

    Example:
        >>> c = risk_coverage_curve(confidences=[0.9, 0.8, 0.8, 0.3], correct=[1, 1, 0, 0])
        >>> c.thresholds, c.coverages, c.risks
        ((0.9, 0.8, 0.3), (0.25, 0.75, 1.0), (0.0, 0.3333333333333333, 0.5))
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    order = np.argsort(-conf, kind="stable")
    conf_sorted = conf[order]
    cum_correct = np.cumsum(ok[order])
    # Last index of each run of equal confidences: ties are admitted together.
    ends = np.flatnonzero(np.append(conf_sorted[1:] != conf_sorted[:-1], True))
    n_cov = ends + 1
    n = int(conf.size)
    risks = (n_cov - cum_correct[ends]) / n_cov  # errors / covered: exact for small counts
    return RiskCoverageCurve(
        n=n,
        n_correct=int(ok.sum()),
        thresholds=tuple(float(t) for t in conf_sorted[ends]),
        n_covered=tuple(int(k) for k in n_cov),
        coverages=tuple(float(k) / n for k in n_cov),
        risks=tuple(float(r) for r in risks),
    )


def aurc_batched(
    confidences: npt.NDArray[np.float64], correct: npt.NDArray[Any]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """AURC and E-AURC of many samples at once (rows of ``(..., N)`` arrays), for the bootstrap.

    Uses the identity ``AURC = (1/N) Σ_i Risk(end of i's tie group)`` — each prediction adds
    a coverage increment of 1/N at the risk of the point where its tie group enters — and
    ``AURC* = ((N − c) − c·(H_N − H_c)) / N`` with ``H`` the harmonic numbers and ``c`` the
    number correct, which equals ``(1/N) Σ_k max(0, k − c)/k``. Inputs are not validated.

    Example:
        >>> a, e = aurc_batched(np.array([0.9, 0.8, 0.8, 0.3]), np.array([1, 1, 0, 0]))
        >>> round(float(a), 6), round(float(e), 6)
        (0.291667, 0.083333)
    """
    conf = np.asarray(confidences, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    batch_shape = conf.shape[:-1]
    n = conf.shape[-1]
    conf2 = conf.reshape(-1, n)
    ok2 = ok.reshape(-1, n)
    order = np.argsort(-conf2, axis=1, kind="stable")
    conf_sorted = np.take_along_axis(conf2, order, axis=1)
    cum_correct = np.cumsum(np.take_along_axis(ok2, order, axis=1), axis=1)
    positions = np.arange(n)
    is_end = np.ones(conf2.shape, dtype=bool)
    is_end[:, :-1] = conf_sorted[:, 1:] != conf_sorted[:, :-1]
    end_at = np.where(is_end, positions, n)
    group_end = np.minimum.accumulate(end_at[:, ::-1], axis=1)[:, ::-1]
    covered = group_end + 1.0
    risk_at_end = (covered - np.take_along_axis(cum_correct, group_end, axis=1)) / covered
    area = risk_at_end.mean(axis=1)
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, n + 1))])
    c = cum_correct[:, -1].round().astype(np.intp)
    oracle = ((n - c) - c * (harmonic[n] - harmonic[c])) / n
    return area.reshape(batch_shape), (area - oracle).reshape(batch_shape)


def aurc(*, confidences: ArrayLike, correct: ArrayLike) -> float:
    """Area under the risk–coverage curve.

    Definition: ``AURC = Σ_j (Cov(τ_j) − Cov(τ_{j−1}))·Risk(τ_j)`` over the distinct
    confidences ``τ_j`` from the highest down (``Cov(τ_0) = 0``), covered set
    ``{confidence ≥ τ}`` (R2VC Eq. 1). Range [0, 1], lower is better. Equals Geifman et
    al.'s ``(1/N) Σ_k Risk(top-k)`` when confidences are distinct.

    Example:
        >>> round(aurc(confidences=[0.9, 0.8, 0.8, 0.3], correct=[1, 1, 0, 0]), 6)
        0.291667
    """
    return risk_coverage_curve(confidences=confidences, correct=correct).aurc


def oracle_aurc(*, n: int, n_correct: int) -> float:
    """AURC of a perfect ranking: ``AURC* = (1/N) Σ_{k=1..N} max(0, k − n_correct)/k``.

    Example:
        >>> round(oracle_aurc(n=4, n_correct=2), 6)  # (1/4)(0 + 0 + 1/3 + 2/4)
        0.208333
    """
    if n < 1:
        raise MetricInputError("oracle_aurc needs n ≥ 1")
    if not 0 <= n_correct <= n:
        raise MetricInputError(f"n_correct must be in [0, {n}], got {n_correct}")
    k = np.arange(1, n + 1, dtype=np.float64)
    return float(np.sum(np.maximum(0.0, k - n_correct) / k) / n)


def excess_aurc(*, confidences: ArrayLike, correct: ArrayLike) -> float:
    """E-AURC: ``AURC − AURC*`` with ``AURC* = (1/N) Σ_k max(0, k − n_correct)/k``.

    Zero for a confidence that ranks every correct prediction strictly above every wrong
    one; never negative. Lower is better.

    Example:
        >>> round(excess_aurc(confidences=[0.9, 0.8, 0.8, 0.3], correct=[1, 1, 0, 0]), 6)
        0.083333
    """
    return risk_coverage_curve(confidences=confidences, correct=correct).e_aurc


def coverage_at_risk(*, confidences: ArrayLike, correct: ArrayLike, max_risk: float) -> float:
    """Largest coverage of a curve point whose risk is ≤ ``max_risk`` (0.0 if none).

    Example:
        >>> coverage_at_risk(confidences=[0.9, 0.8, 0.8, 0.3], correct=[1, 1, 0, 0], max_risk=0.4)
        0.75
    """
    if not 0.0 <= max_risk <= 1.0:
        raise MetricInputError(f"max_risk must be in [0, 1], got {max_risk}")
    point = risk_coverage_curve(confidences=confidences, correct=correct).point_for_risk(max_risk)
    return 0.0 if point is None else point.coverage


def risk_at_coverage(*, confidences: ArrayLike, correct: ArrayLike, coverage: float) -> float:
    """Risk at the highest threshold whose coverage is ≥ ``coverage`` (in (0, 1]).

    Ties can make the attained coverage exceed the target; the risk is that of the whole
    covered set (see :meth:`RiskCoverageCurve.point_for_coverage` for the point itself).

    Example:
        >>> risk_at_coverage(confidences=[0.9, 0.8, 0.8, 0.3], correct=[1, 1, 0, 0], coverage=0.5)
        0.3333333333333333
    """
    if not 0.0 < coverage <= 1.0:
        raise MetricInputError(f"coverage must be in (0, 1], got {coverage}")
    return risk_coverage_curve(confidences=confidences, correct=correct).point_for_coverage(coverage).risk


@dataclass(frozen=True)
class SelectiveResult:
    """Selective accuracy at one threshold.

    Attributes:
        threshold: τ; covered set ``{confidence ≥ τ}``.
        n: All predictions.
        n_covered: Predictions kept.
        coverage: ``n_covered / n``.
        accuracy: Accuracy on the covered set (``None`` if nothing is covered).
        risk: ``1 − accuracy`` (``None`` if nothing is covered).
    """

    threshold: float
    n: int
    n_covered: int
    coverage: float
    accuracy: float | None
    risk: float | None


def selective_accuracy(
    *, confidences: ArrayLike, correct: ArrayLike, threshold: float = R2VC_CALIBRATION_THRESHOLD
) -> SelectiveResult:
    """Accuracy on the covered set ``{confidence ≥ threshold}`` (R2VC Eq. 1).

    Args:
        confidences: Confidence of each prediction, in [0, 1].
        correct: Whether each prediction is correct.
        threshold: τ (default 0.60, R2VC's τ_cal).

    Example:
        >>> r = selective_accuracy(confidences=[0.9, 0.7, 0.5], correct=[1, 0, 0], threshold=0.6)
        >>> r.coverage, r.accuracy
        (0.6666666666666666, 0.5)
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    covered = conf >= threshold
    k = int(covered.sum())
    acc = float(ok[covered].mean()) if k else None
    return SelectiveResult(
        threshold=float(threshold),
        n=int(conf.size),
        n_covered=k,
        coverage=k / conf.size,
        accuracy=acc,
        risk=None if acc is None else 1.0 - acc,
    )


@register_metric
@dataclass(frozen=True)
class AURC(
    ConfidenceMetric,
    name="aurc",
    higher_is_better=False,
    description="area under the risk–coverage curve (ties enter together)",
    citation=f"{GEIFMAN_CITATION} {R2VC_CITATION}",
    function=aurc,
):
    """Registry object for :func:`aurc` (``METRICS.get("aurc")``).

    Example:
        >>> AURC()(confidences=[0.9, 0.1], correct=[1, 0])
        0.25
    """


@register_metric
@dataclass(frozen=True)
class ExcessAURC(
    ConfidenceMetric,
    name="e-aurc",
    higher_is_better=False,
    description="AURC minus the AURC of a perfect ranking",
    citation=GEIFMAN_CITATION,
    function=excess_aurc,
):
    """Registry object for :func:`excess_aurc` (``METRICS.get("e-aurc")``).

    Example:
        >>> ExcessAURC()(confidences=[0.9, 0.1], correct=[1, 0])
        0.0
    """


@register_metric
@dataclass(frozen=True)
class CoverageAtRisk(
    ConfidenceMetric,
    name="coverage-at-risk",
    higher_is_better=True,
    description="largest coverage whose selective risk is ≤ max_risk",
    citation=R2VC_CITATION,
    function=coverage_at_risk,
):
    """Registry object for :func:`coverage_at_risk` (``METRICS.get("coverage-at-risk")``).

    Example:
        >>> CoverageAtRisk(max_risk=0.0)(confidences=[0.9, 0.1], correct=[1, 0])
        0.5
    """

    max_risk: float = 0.1


@register_metric
@dataclass(frozen=True)
class RiskAtCoverage(
    ConfidenceMetric,
    name="risk-at-coverage",
    higher_is_better=False,
    description="selective risk at the highest threshold reaching the coverage",
    citation=R2VC_CITATION,
    function=risk_at_coverage,
):
    """Registry object for :func:`risk_at_coverage` (``METRICS.get("risk-at-coverage")``).

    Example:
        >>> RiskAtCoverage(coverage=0.5)(confidences=[0.9, 0.1], correct=[1, 0])
        0.0
    """

    coverage: float = 0.8


@register_metric
@dataclass(frozen=True)
class SelectiveAccuracy(
    Metric,
    name="selective-accuracy",
    higher_is_better=True,
    description="accuracy on the predictions with confidence ≥ threshold",
    citation=R2VC_CITATION,
):
    """Registry object for :func:`selective_accuracy` (``METRICS.get("selective-accuracy")``).

    Returns ``None`` when no prediction reaches the threshold.

    Example:
        >>> SelectiveAccuracy(threshold=0.5)(confidences=[0.9, 0.1], correct=[1, 0])
        1.0
    """

    threshold: float = R2VC_CALIBRATION_THRESHOLD

    def __call__(self, *, confidences: ArrayLike, correct: ArrayLike) -> float | None:
        return selective_accuracy(
            confidences=confidences, correct=correct, threshold=self.threshold
        ).accuracy


def oracle_aurc_of(*, correct: ArrayLike) -> float:
    """``AURC*`` computed from a correctness vector.

    Example:
        >>> oracle_aurc_of(correct=[1, 1, 1])
        0.0
    """
    ok = as_correct(correct)
    if ok.size == 0:
        raise MetricInputError("correct is empty: AURC* needs at least one prediction")
    return oracle_aurc(n=int(ok.size), n_correct=int(ok.sum()))



__all__ = [
    "AURC",
    "R2VC_CALIBRATION_THRESHOLD",
    "CoverageAtRisk",
    "ExcessAURC",
    "RiskAtCoverage",
    "RiskCoverageCurve",
    "SelectiveAccuracy",
    "SelectivePoint",
    "SelectiveResult",
    "aurc",
    "aurc_batched",
    "coverage_at_risk",
    "excess_aurc",
    "oracle_aurc",
    "oracle_aurc_of",
    "risk_at_coverage",
    "risk_coverage_curve",
    "selective_accuracy",
]
