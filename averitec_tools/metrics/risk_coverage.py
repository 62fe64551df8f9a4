"""The risk–coverage curve of R2VC's Eq. 1 (tied confidences enter together), its area
(AURC), the oracle's area (AURC*) and both for many resamples at once (see
:mod:`averitec_tools.metrics.selective` for the metrics built on them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import (
    ArrayLike,
    MetricInputError,
    as_batch,
    as_confidences_correct,
)

#: Slack of the risk and coverage comparisons (float sums of 0/1 values).
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
    conf2, ok2, batch_shape = as_batch(confidences, correct)
    n = conf2.shape[1]
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


__all__ = ["RiskCoverageCurve", "SelectivePoint", "aurc_batched", "oracle_aurc", "risk_coverage_curve"]
