"""Veracity label metrics: accuracy, per-label F1 and macro F1 over a fixed label set.

Same definitions as ``sklearn.metrics.f1_score(gold, pred, labels=LABELS, average=None /
"macro")`` with its default zero-division behaviour (a label never gold nor predicted has
F1 0), computed directly so that ``averitec score`` does not pay scikit-learn's import
time. ``tests/test_label_metrics.py`` checks them against scikit-learn.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from averitec_tools.metrics.base import Metric, register_metric


def accuracy(*, gold: Sequence[str | None], predicted: Sequence[str | None]) -> float:
    """Fraction of equal labels (``np.mean`` of the matches; 0.0 when empty).

    Example:
        >>> accuracy(gold=["Supported", "Refuted"], predicted=["Supported", "Supported"])
        0.5
    """
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    if not gold:
        return 0.0
    return float(np.mean([g == p for g, p in zip(gold, predicted, strict=True)]))


def f1_per_label(*, gold: Sequence[str | None], predicted: Sequence[str | None], labels: Sequence[str]) -> dict[str, float]:
    """F1 of each label in ``labels`` (0.0 where precision and recall are both undefined).

    Example:
        >>> f1_per_label(gold=["A", "B"], predicted=["A", "A"], labels=["A", "B"])
        {'A': 0.6666666666666666, 'B': 0.0}
    """
    if len(gold) != len(predicted):
        raise ValueError("gold and predicted differ in length")
    out: dict[str, float] = {}
    for label in labels:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p == label)
        fp = sum(1 for g, p in zip(gold, predicted, strict=True) if g != label and p == label)
        fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g == label and p != label)
        denom = 2 * tp + fp + fn
        out[label] = 0.0 if denom == 0 else 2 * tp / denom
    return out


def macro_f1(*, gold: Sequence[str | None], predicted: Sequence[str | None], labels: Sequence[str]) -> float:
    """Unweighted mean of :func:`f1_per_label` over ``labels``.

    Example:
        >>> macro_f1(gold=["A", "B"], predicted=["A", "A"], labels=["A", "B"])
        0.3333333333333333
    """
    per = f1_per_label(gold=gold, predicted=predicted, labels=labels)
    return float(np.mean(list(per.values()))) if per else 0.0


def weighted_macro_f1(*, gold: np.ndarray, predicted: np.ndarray, weights: np.ndarray,
                      labels: Sequence[str]) -> float:
    """Macro-F1 over ``labels`` with item ``i`` counted ``weights[i]`` times (numpy arrays, vectorised).

    Per label, F1 = 2·TP / (2·TP + FP + FN) from the weighted counts (0 without a weighted true
    positive); the unweighted mean over ``labels``. With unit weights it is :func:`macro_f1`.

    Example:
        >>> g, p = np.array(["A", "A", "B"]), np.array(["A", "B", "B"])
        >>> weighted_macro_f1(gold=g, predicted=p, weights=np.array([1.0, 1.0, 1.0]), labels=["A", "B"])
        0.6666666666666666
        >>> weighted_macro_f1(gold=g, predicted=p, weights=np.array([1.0, 0.5, 0.5]), labels=["A", "B"])  # A 0.8, B 2/3
        0.7333333333333334
    """
    scores = []
    for lab in labels:
        tp = float(weights[(gold == lab) & (predicted == lab)].sum())
        fp = float(weights[(gold != lab) & (predicted == lab)].sum())
        fn = float(weights[(gold == lab) & (predicted != lab)].sum())
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores))


@register_metric
class LabelAccuracy(
    Metric, name="label-accuracy", higher_is_better=True,
    description="fraction of claims whose predicted label equals the gold label",
):
    """Label accuracy (``METRICS.get("label-accuracy")``).

    Example:
        >>> LabelAccuracy()(gold=["A", "B"], predicted=["A", "A"])
        0.5
    """

    def __call__(self, *, gold: Sequence[str | None], predicted: Sequence[str | None]) -> float:
        return accuracy(gold=gold, predicted=predicted)


@register_metric
class MacroF1(
    Metric, name="label-macro-f1", higher_is_better=True,
    description="unweighted mean of per-label F1 over the profile's label set (sklearn semantics)",
    citation="scikit-learn f1_score(average='macro')",
):
    """Macro-averaged F1 over a fixed label set (``METRICS.get("label-macro-f1")``).

    Example:
        >>> MacroF1()(gold=["A", "B"], predicted=["A", "A"], labels=["A", "B"])
        0.3333333333333333
    """

    def __call__(self, *, gold: Sequence[str | None], predicted: Sequence[str | None], labels: Sequence[str]) -> float:
        return macro_f1(gold=gold, predicted=predicted, labels=labels)


LABEL_ACCURACY = LabelAccuracy()
LABEL_MACRO_F1 = MacroF1()

__all__ = ["LABEL_ACCURACY", "LABEL_MACRO_F1", "LabelAccuracy", "MacroF1", "accuracy", "f1_per_label", "macro_f1",
           "weighted_macro_f1"]
