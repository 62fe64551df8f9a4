"""Expected and maximum calibration error, and reliability-diagram data.

Default definition (the one R2VC reports, Guo et al. 2017):

``ECE = Σ_b (n_b / N) · |acc_b − conf_b|`` over ``M = 15`` equal-width bins on [0, 1],
where bin ``b`` (0-based) is the half-open interval ``(b/M, (b+1)/M]`` and a confidence of
exactly 0 goes to the first bin; ``n_b`` is the number of predictions in the bin, ``acc_b``
the fraction of them that are correct and ``conf_b`` their mean confidence. Empty bins
contribute nothing. ``MCE = max_b |acc_b − conf_b|`` over the non-empty bins.

Options:

* ``strategy="quantile"`` (equal-mass bins): edges are the ``0, 1/M, …, 1`` quantiles of
  the confidences (``numpy.percentile``, linear interpolation), intervals right-closed as
  above; repeated confidences can make some bins empty. This is exactly the binning of
  ``sklearn.calibration.calibration_curve(strategy="quantile")``; with
  ``strategy="uniform"`` the per-bin (confidence, accuracy) pairs equal that function's
  ``(prob_pred, prob_true)``.
* **Top-label** ECE uses the confidence of the predicted label and whether it is correct
  (``confidences``/``correct``, or :func:`top_label_from_probabilities`).
* **Classwise** ECE (Kull et al. 2019) is the mean over classes ``k`` of the ECE of
  ``p_k`` against ``1[y = k]``, each with its own bins.

Other libraries differ: some bin left-closed ``[b/M, (b+1)/M)`` (torchmetrics), some
default to 10 bins, and some weight by bin count differently for the classwise variant, so
values are comparable only under the same definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import (
    ArrayLike,
    as_class_indices,
    as_confidences_correct,
    as_probability_matrix,
)
from averitec_tools.metrics.base import ConfidenceMetric, ProbabilityMetric, register_metric
from averitec_tools.metrics.binning import (
    DEFAULT_N_BINS,
    STRATEGIES,
    BinningStrategy,
    binned_sums,
    ece_mce,
)

GUO_CITATION = (
    "Guo, C., Pleiss, G., Sun, Y., Weinberger, K. Q. (2017). On calibration of modern "
    "neural networks. ICML."
)
NAEINI_CITATION = (
    "Naeini, M. P., Cooper, G., Hauskrecht, M. (2015). Obtaining well calibrated "
    "probabilities using Bayesian binning. AAAI."
)
KULL_CITATION = (
    "Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T., Song, H., Flach, P. (2019). "
    "Beyond temperature scaling: obtaining well-calibrated multiclass probabilities with "
    "Dirichlet calibration. NeurIPS."
)


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin of a reliability diagram.

    Attributes:
        index: 0-based bin number.
        lower: Lower edge (exclusive, except that confidence 0 belongs to bin 0).
        upper: Upper edge (inclusive).
        count: Number of predictions in the bin.
        accuracy: Fraction correct, ``None`` for an empty bin.
        confidence: Mean confidence, ``None`` for an empty bin.
    """

    index: int
    lower: float
    upper: float
    count: int
    accuracy: float | None
    confidence: float | None

    @property
    def gap(self) -> float | None:
        """``|accuracy − confidence|``, or ``None`` for an empty bin."""
        if self.accuracy is None or self.confidence is None:
            return None
        return abs(self.accuracy - self.confidence)


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Binned calibration data, with the ECE and MCE computed from it.

    Attributes:
        n: Number of predictions.
        n_bins: Number of bins requested.
        strategy: ``"uniform"`` (equal width) or ``"quantile"`` (equal mass).
        edges: The ``n_bins + 1`` bin edges.
        bins: One :class:`ReliabilityBin` per bin (empty ones included).
        ece: ``Σ_b (n_b/N)·|acc_b − conf_b|``.
        mce: ``max_b |acc_b − conf_b|`` over non-empty bins.
    """

    n: int
    n_bins: int
    strategy: str
    edges: tuple[float, ...]
    bins: tuple[ReliabilityBin, ...]
    ece: float
    mce: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (used by ``averitec calibration --json``)."""
        return {
            "n": self.n,
            "n_bins": self.n_bins,
            "strategy": self.strategy,
            "ece": self.ece,
            "mce": self.mce,
            "edges": list(self.edges),
            "bins": [
                {
                    "index": b.index,
                    "lower": b.lower,
                    "upper": b.upper,
                    "count": b.count,
                    "accuracy": b.accuracy,
                    "confidence": b.confidence,
                    "gap": b.gap,
                }
                for b in self.bins
            ],
        }


def reliability_diagram(
    *,
    confidences: ArrayLike,
    correct: ArrayLike,
    n_bins: int = DEFAULT_N_BINS,
    strategy: BinningStrategy = "uniform",
) -> ReliabilityDiagram:
    """Bin predictions by confidence and return per-bin accuracy/confidence, ECE and MCE.

    Bins are ``(e_b, e_{b+1}]`` (confidence 0 in the first bin); see the module docstring
    for both strategies. ``ECE = Σ_b (n_b/N)·|acc_b − conf_b|``; ``MCE = max_b |acc_b − conf_b|``
    over non-empty bins.

    Args:
        confidences: Confidence of each prediction, in [0, 1].
        correct: Whether each prediction is correct.
        n_bins: Number of bins (default 15).
        strategy: ``"uniform"`` (equal width, default) or ``"quantile"`` (equal mass).

    Returns:
        A :class:`ReliabilityDiagram`.

    Example:
        >>> d = reliability_diagram(confidences=[0.1, 0.2, 0.8, 0.9], correct=[0, 1, 1, 1], n_bins=2)
        >>> [(b.count, b.accuracy, round(b.confidence, 2)) for b in d.bins]
        [(2, 0.5, 0.15), (2, 1.0, 0.85)]
        >>> round(d.ece, 3), round(d.mce, 3)
        (0.25, 0.35)
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    edges, counts, conf_sums, correct_sums = binned_sums(conf, ok, n_bins, strategy)
    ece, mce = ece_mce(counts, conf_sums, correct_sums)
    bins = tuple(
        ReliabilityBin(
            index=b,
            lower=float(edges[b]),
            upper=float(edges[b + 1]),
            count=int(counts[b]),
            accuracy=float(correct_sums[b] / counts[b]) if counts[b] else None,
            confidence=float(conf_sums[b] / counts[b]) if counts[b] else None,
        )
        for b in range(n_bins)
    )
    return ReliabilityDiagram(
        n=int(conf.size),
        n_bins=int(n_bins),
        strategy=strategy,
        edges=tuple(float(e) for e in edges),
        bins=bins,
        ece=ece,
        mce=mce,
    )


def expected_calibration_error(
    *,
    confidences: ArrayLike,
    correct: ArrayLike,
    n_bins: int = DEFAULT_N_BINS,
    strategy: BinningStrategy = "uniform",
) -> float:
    """Top-label expected calibration error.

    Definition: ``ECE = Σ_b (n_b/N)·|acc_b − conf_b|`` over ``n_bins`` bins (default 15
    equal-width bins ``(b/15, (b+1)/15]``, confidence 0 in the first bin; ``"quantile"``
    for equal-mass bins). Range [0, 1], lower is better.

    Args:
        confidences: Confidence of each prediction, in [0, 1].
        correct: Whether each prediction is correct.
        n_bins: Number of bins.
        strategy: ``"uniform"`` or ``"quantile"``.

    Returns:
        The ECE.

    Example:
        >>> round(expected_calibration_error(confidences=[0.1, 0.2, 0.8, 0.9],
        ...                                  correct=[0, 1, 1, 1], n_bins=2), 6)
        0.25
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    _, counts, conf_sums, correct_sums = binned_sums(conf, ok, n_bins, strategy)
    return ece_mce(counts, conf_sums, correct_sums)[0]


def maximum_calibration_error(
    *,
    confidences: ArrayLike,
    correct: ArrayLike,
    n_bins: int = DEFAULT_N_BINS,
    strategy: BinningStrategy = "uniform",
) -> float:
    """Maximum calibration error: ``MCE = max_b |acc_b − conf_b|`` over non-empty bins.

    Bins as in :func:`expected_calibration_error`. Range [0, 1], lower is better.

    Example:
        >>> round(maximum_calibration_error(confidences=[0.1, 0.2, 0.8, 0.9],
        ...                                 correct=[0, 1, 1, 1], n_bins=2), 6)
        0.35
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    _, counts, conf_sums, correct_sums = binned_sums(conf, ok, n_bins, strategy)
    return ece_mce(counts, conf_sums, correct_sums)[1]


def top_label_from_probabilities(
    *,
    probabilities: ArrayLike | Sequence[Sequence[float]],
    labels_true: ArrayLike | Sequence[Any],
    classes: Sequence[Any] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Turn probability vectors into top-label ``(confidences, correct)``.

    The predicted class is the arg-max (the first column on ties); its probability is the
    confidence and it is correct when it equals the true label.

    Example:
        >>> conf, ok = top_label_from_probabilities(probabilities=[[0.7, 0.3], [0.4, 0.6]],
        ...                                         labels_true=[0, 0])
        >>> conf.tolist(), ok.tolist()
        ([0.7, 0.6], [True, False])
    """
    probs = as_probability_matrix(probabilities)
    idx = as_class_indices(labels_true, n=probs.shape[0], classes=classes, n_classes=probs.shape[1])
    pred = np.argmax(probs, axis=1)
    return probs[np.arange(probs.shape[0]), pred], pred == idx


def classwise_calibration_error(
    *,
    probabilities: ArrayLike | Sequence[Sequence[float]],
    labels_true: ArrayLike | Sequence[Any],
    classes: Sequence[Any] | None = None,
    n_bins: int = DEFAULT_N_BINS,
    strategy: BinningStrategy = "uniform",
) -> float:
    """Classwise ECE (Kull et al. 2019).

    Definition: ``cwECE = (1/K) Σ_k Σ_b (n_bk/N)·|acc_bk − conf_bk|``, i.e. the mean over
    classes of the ECE of ``p_k`` against ``1[y = k]``, binned per class as in
    :func:`expected_calibration_error`.

    Args:
        probabilities: (N, K) probability vectors.
        labels_true: True labels (entries of ``classes``, or column indices).
        classes: The label of each column.
        n_bins: Number of bins per class.
        strategy: ``"uniform"`` or ``"quantile"``.

    Example:
        >>> classwise_calibration_error(probabilities=[[1.0, 0.0], [0.0, 1.0]], labels_true=[0, 1])
        0.0
    """
    probs = as_probability_matrix(probabilities)
    idx = as_class_indices(labels_true, n=probs.shape[0], classes=classes, n_classes=probs.shape[1])
    per_class = [
        expected_calibration_error(
            confidences=probs[:, k], correct=idx == k, n_bins=n_bins, strategy=strategy
        )
        for k in range(probs.shape[1])
    ]
    return float(np.mean(per_class))


@dataclass(frozen=True)
class _Binned:
    """The parameters of the binned calibration errors (:func:`~averitec_tools.metrics.binning.binned_sums`)."""

    n_bins: int = DEFAULT_N_BINS
    strategy: BinningStrategy = "uniform"


@register_metric
class ExpectedCalibrationError(
    ConfidenceMetric,
    _Binned,
    name="ece",
    higher_is_better=False,
    description="Σ_b (n_b/N)·|acc_b − conf_b| over confidence bins (top label)",
    citation=f"{NAEINI_CITATION} {GUO_CITATION}",
    function=expected_calibration_error,
):
    """Registry object for top-label ECE (``METRICS.get("ece")``).

    Example:
        >>> round(ExpectedCalibrationError(n_bins=2)(confidences=[0.1, 0.9], correct=[0, 1]), 6)
        0.1
    """


@register_metric
class MaximumCalibrationError(
    ConfidenceMetric,
    _Binned,
    name="mce",
    higher_is_better=False,
    description="max over non-empty confidence bins of |acc_b − conf_b| (top label)",
    citation=NAEINI_CITATION,
    function=maximum_calibration_error,
):
    """Registry object for MCE (``METRICS.get("mce")``).

    Example:
        >>> round(MaximumCalibrationError(n_bins=2)(confidences=[0.1, 0.9], correct=[0, 1]), 6)
        0.1
    """


@register_metric
class ClasswiseCalibrationError(
    ProbabilityMetric,
    _Binned,
    name="ece-classwise",
    higher_is_better=False,
    description="mean over classes k of the ECE of p_k against 1[y = k]",
    citation=KULL_CITATION,
    function=classwise_calibration_error,
):
    """Registry object for classwise ECE (``METRICS.get("ece-classwise")``).

    Example:
        >>> ClasswiseCalibrationError()(probabilities=[[1.0, 0.0]], labels_true=[0])
        0.0
    """


__all__ = [
    "DEFAULT_N_BINS", "STRATEGIES", "BinningStrategy", "ClasswiseCalibrationError", "ExpectedCalibrationError",
    "MaximumCalibrationError", "ReliabilityDiagram", "classwise_calibration_error", "expected_calibration_error",
    "maximum_calibration_error", "reliability_diagram", "top_label_from_probabilities",
]
