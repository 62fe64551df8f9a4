"""Brier score: binary (confidence of correctness) and multiclass (probability vectors).

Definitions (N predictions, K classes):

* **Binary / correctness Brier** (how R2VC scores its calibrator):
  ``BS = (1/N) Σ_i (p_i − y_i)²`` with ``p_i`` the confidence that prediction ``i`` is
  correct and ``y_i ∈ {0, 1}`` its correctness. Range [0, 1]. Equals
  ``sklearn.metrics.brier_score_loss(y, p)`` (scikit-learn's binary default scales the
  two-column sum by ½, which gives exactly this).
* **Multiclass Brier** (Brier 1950): ``BS = (1/N) Σ_i Σ_k (p_ik − 1[y_i = k])²``, range
  [0, 2]. Equals ``brier_score_loss(y, P, labels=...)`` for K > 2 (scikit-learn's
  ``scale_by_half="auto"`` keeps [0, 2] for multiclass). ``scale_by_half=True`` divides by
  2, giving [0, 1]; for K = 2 the halved multiclass score equals the binary score of the
  positive column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import (
    ArrayLike,
    as_class_indices,
    as_confidences_correct,
    as_probability_matrix,
)
from averitec_tools.metrics.base import (
    ConfidenceMetric,
    MetricInfo,
    ProbabilityMetric,
    register_metric,
)

BRIER_CITATION = (
    "Brier, G. W. (1950). Verification of forecasts expressed in terms of probability. "
    "Monthly Weather Review 78(1)."
)


def brier_score(*, confidences: ArrayLike, correct: ArrayLike) -> float:
    """Binary Brier score of confidences against correctness.

    Definition: ``BS = (1/N) Σ_i (confidence_i − correct_i)²`` with ``correct_i ∈ {0, 1}``;
    lower is better, range [0, 1]. Identical to ``sklearn.metrics.brier_score_loss``.

    Args:
        confidences: Confidence that each prediction is correct, each in [0, 1].
        correct: Whether each prediction is correct (bool or 0/1).

    Returns:
        The Brier score.

    Raises:
        MetricInputError: (a ``ValueError``) on empty or mismatched input or a confidence
            outside [0, 1].

    Example:
        >>> round(brier_score(confidences=[0.9, 0.6, 0.2], correct=[1, 0, 0]), 6)
        0.136667
    """
    conf, ok = as_confidences_correct(confidences=confidences, correct=correct)
    return float(np.mean((conf - ok.astype(np.float64)) ** 2))


def brier_batched(confidences: npt.NDArray[np.float64], correct: npt.NDArray[Any], axis: int = -1) -> Any:
    """:func:`brier_score` of many samples at once (along ``axis``), for the bootstrap.

    Inputs are not validated (the caller checked them once, before resampling).

    Example:
        >>> b = brier_batched(np.array([[0.9, 0.6, 0.2], [1.0, 0.0, 0.0]]), np.array([[1, 0, 0], [1, 0, 0]]))
        >>> [round(float(x), 6) for x in b]
        [0.136667, 0.0]
    """
    return np.mean((confidences - correct) ** 2, axis=axis)


def multiclass_brier_score(
    *,
    probabilities: ArrayLike | Sequence[Sequence[float]],
    labels_true: ArrayLike | Sequence[Any],
    classes: Sequence[Any] | None = None,
    scale_by_half: bool = False,
) -> float:
    """Multiclass Brier score of probability vectors against one-hot true labels.

    Definition: ``BS = (1/N) Σ_i Σ_k (p_ik − 1[y_i = k])²`` (range [0, 2]); with
    ``scale_by_half=True`` it is halved (range [0, 1]). Matches
    ``sklearn.metrics.brier_score_loss(y, P, labels=classes, scale_by_half=...)``.

    Args:
        probabilities: (N, K) matrix; row ``i`` is a probability vector over ``classes``.
        labels_true: True labels: entries of ``classes``, or column indices if ``classes`` is
            ``None``.
        classes: The label of each column.
        scale_by_half: Divide by 2 so that the score lies in [0, 1].

    Returns:
        The multiclass Brier score.

    Example:
        >>> round(multiclass_brier_score(probabilities=[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]],
        ...                              labels_true=["a", "b"], classes=["a", "b", "c"]), 6)
        0.8
    """
    probs = as_probability_matrix(probabilities)
    idx = as_class_indices(labels_true, n=probs.shape[0], classes=classes, n_classes=probs.shape[1])
    onehot = np.zeros_like(probs)
    onehot[np.arange(probs.shape[0]), idx] = 1.0
    score = float(np.mean(np.sum((probs - onehot) ** 2, axis=1)))
    return score / 2.0 if scale_by_half else score


@register_metric
class BrierScore(
    ConfidenceMetric,
    name="brier",
    higher_is_better=False,
    description="mean of (confidence − correct)² over predictions",
    citation=BRIER_CITATION,
    function=brier_score,
):
    """Registry object for :func:`brier_score` (``METRICS.get("brier")``).

    Example:
        >>> BrierScore()(confidences=[1.0, 0.0], correct=[True, False])
        0.0
    """


@register_metric
class MulticlassBrierScore(
    ProbabilityMetric,
    name="brier-multiclass",
    higher_is_better=False,
    description="mean over predictions of Σ_k (p_k − 1[y = k])²",
    citation=BRIER_CITATION,
    function=multiclass_brier_score,
):
    """Registry object for :func:`multiclass_brier_score` (``METRICS.get("brier-multiclass")``).

    Example:
        >>> MulticlassBrierScore()(probabilities=[[1.0, 0.0]], labels_true=[1])
        2.0
    """

    scale_by_half: bool = False

    @property
    def info(self) -> MetricInfo:
        return dataclasses.replace(super().info, bounds=(0.0, 1.0 if self.scale_by_half else 2.0))



__all__ = ["BrierScore", "MulticlassBrierScore", "brier_batched", "brier_score", "multiclass_brier_score"]
