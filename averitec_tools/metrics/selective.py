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

from averitec_tools.metrics._inputs import (
    ArrayLike,
    MetricInputError,
    as_confidences_correct,
    as_correct,
)
from averitec_tools.metrics.base import ConfidenceMetric, Metric, register_metric
from averitec_tools.metrics.risk_coverage import (
    RiskCoverageCurve,
    SelectivePoint,
    aurc_batched,
    oracle_aurc,
    risk_coverage_curve,
)

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
    "AURC", "CoverageAtRisk", "ExcessAURC", "RiskAtCoverage", "RiskCoverageCurve", "SelectiveAccuracy",
    "SelectivePoint", "aurc", "aurc_batched", "coverage_at_risk", "excess_aurc", "oracle_aurc", "oracle_aurc_of",
    "risk_at_coverage", "risk_coverage_curve", "selective_accuracy",
]
