"""Abstention-aware label metrics: an "I don't know" label as a class, or as abstention.

R2VC scores ``UNCERTAIN`` two ways (§5, selective prediction): in standard benchmark
evaluation it is **a third class** like any other, while in selective analysis a prediction
of it is **an abstention** — the system declined to answer. AVeriTeC's
``Not Enough Evidence`` and FEVER's ``NOT ENOUGH INFO`` raise the same choice. The switch is
explicit here (``mode="class"`` or ``mode="abstain"``); nothing is inferred.

Definitions (N claims, gold ``y_i``, prediction ``ŷ_i``, abstain labels ``A``):

* ``mode="class"``: every claim is scored. ``accuracy = (1/N) Σ_i 1[ŷ_i = y_i]``;
  ``macro_f1`` = unweighted mean over ``labels`` (default: every gold and predicted label)
  of per-class F1 (equal to scikit-learn's ``f1_score(labels=labels, average="macro",
  zero_division=0)``).
  ``coverage = 1``.
* ``mode="abstain"``: claims with ``ŷ_i ∈ A`` are abstentions and are not scored. With
  ``S = {i : ŷ_i ∉ A}``: ``coverage = |S|/N``;
  ``accuracy = (1/|S|) Σ_{i∈S} 1[ŷ_i = y_i]`` (selective accuracy; a gold abstain label on
  an answered claim counts as an error); ``effective_accuracy = (1/N) Σ_{i∈S} 1[ŷ_i = y_i]``
  (abstentions count as errors); ``macro_f1`` over ``S`` with the abstain labels removed
  from ``labels``. With no answered claim, ``accuracy`` and ``macro_f1`` are ``None``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import numpy as np

from averitec_tools.metrics._inputs import MetricInputError
from averitec_tools.metrics.base import Metric, register_metric

AbstentionMode = Literal["class", "abstain"]
ABSTENTION_MODES: tuple[str, ...] = ("class", "abstain")

#: The "cannot decide" labels of R2VC, the ternary space, FEVER/VitaminC and AVeriTeC.
DEFAULT_ABSTAIN_LABELS: tuple[str, ...] = (
    "Uncertain",
    "UNCERTAIN",
    "NEI",
    "NOT ENOUGH INFO",
    "Not Enough Evidence",
)

R2VC_ABSTENTION_CITATION = (
    "R2VC: Modular Fact-Checking with Retrieval, Verification, and Confidence Calibration, "
    "§5 (UNCERTAIN as a third class in standard evaluation, as abstention in selective "
    "analysis)."
)


@dataclass(frozen=True)
class LabelScores:
    """Label metrics under one abstention mode (see the module docstring for definitions).

    Attributes:
        mode: ``"class"`` or ``"abstain"``.
        n: All claims.
        n_answered: Claims scored (all of them in ``"class"`` mode).
        n_abstained: Claims whose prediction is an abstain label (counted in both modes).
        coverage: ``n_answered / n``.
        accuracy: Accuracy on the answered claims (``None`` if none answered).
        effective_accuracy: Correct answered claims over all ``n``.
        macro_f1: Macro-F1 over ``labels`` on the answered claims (``None`` if none).
        labels: The classes averaged in ``macro_f1``.
        per_class_f1: F1 of each of ``labels``.
    """

    mode: str
    n: int
    n_answered: int
    n_abstained: int
    coverage: float
    accuracy: float | None
    effective_accuracy: float
    macro_f1: float | None
    labels: tuple[str, ...]
    per_class_f1: Mapping[str, float]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "mode": self.mode,
            "n": self.n,
            "n_answered": self.n_answered,
            "n_abstained": self.n_abstained,
            "coverage": self.coverage,
            "accuracy": self.accuracy,
            "effective_accuracy": self.effective_accuracy,
            "macro_f1": self.macro_f1,
            "labels": list(self.labels),
            "per_class_f1": dict(self.per_class_f1),
        }


def abstention_mask(
    *, predictions: Sequence[str | None], abstain_labels: Collection[str] = DEFAULT_ABSTAIN_LABELS
) -> np.ndarray:
    """Boolean mask: ``True`` where the prediction is one of ``abstain_labels``.

    Example:
        >>> abstention_mask(predictions=["Supported", "Not Enough Evidence"]).tolist()
        [False, True]
    """
    wanted = set(abstain_labels)
    return np.fromiter((p in wanted for p in predictions), dtype=bool, count=len(predictions))


def label_scores(
    *,
    gold: Sequence[str],
    predictions: Sequence[str | None],
    mode: AbstentionMode = "class",
    abstain_labels: Collection[str] = DEFAULT_ABSTAIN_LABELS,
    labels: Sequence[str] | None = None,
) -> LabelScores:
    """Accuracy and macro-F1 with the abstain labels scored as a class or as abstentions.

    Args:
        gold: Gold label of each claim.
        predictions: Predicted label of each claim (``None`` = no prediction, always wrong).
        mode: ``"class"`` (abstain labels are ordinary classes) or ``"abstain"``
            (predictions of them are withheld from scoring).
        abstain_labels: Labels meaning "cannot decide".
        labels: Classes for macro-F1 (default: sorted union of gold and predicted labels);
            in ``"abstain"`` mode the abstain labels are removed from them.

    Returns:
        A :class:`LabelScores`.

    Raises:
        MetricInputError: on empty or mismatched input or an unknown ``mode``.

    Example:
        >>> g = ["SUPPORTS", "REFUTES", "NEI", "SUPPORTS"]
        >>> p = ["SUPPORTS", "NEI", "NEI", "REFUTES"]
        >>> label_scores(gold=g, predictions=p, mode="class").accuracy
        0.5
        >>> s = label_scores(gold=g, predictions=p, mode="abstain")
        >>> s.coverage, s.accuracy, s.effective_accuracy, s.labels
        (0.5, 0.5, 0.25, ('REFUTES', 'SUPPORTS'))
    """
    _check_inputs(gold=gold, predictions=predictions, mode=mode)
    abstained = abstention_mask(predictions=predictions, abstain_labels=abstain_labels)
    answered = ~abstained if mode == "abstain" else np.ones(len(gold), dtype=bool)
    if labels is None:
        labels = sorted({*gold, *(p for p in predictions if p is not None)})
    label_set = tuple(
        lab for lab in labels if not (mode == "abstain" and lab in set(abstain_labels))
    )
    g_ans = [g for g, keep in zip(gold, answered, strict=True) if keep]
    p_ans = [p for p, keep in zip(predictions, answered, strict=True) if keep]
    n = len(gold)
    n_answered = len(g_ans)
    n_correct = sum(g == p for g, p in zip(g_ans, p_ans, strict=True))
    per_class, macro = _f1_scores(g_ans, p_ans, label_set)
    return LabelScores(
        mode=mode,
        n=n,
        n_answered=n_answered,
        n_abstained=int(abstained.sum()),
        coverage=n_answered / n,
        accuracy=n_correct / n_answered if n_answered else None,
        effective_accuracy=n_correct / n,
        macro_f1=macro,
        labels=label_set,
        per_class_f1=MappingProxyType(per_class),
    )


def _check_inputs(*, gold: Sequence[str], predictions: Sequence[str | None], mode: str) -> None:
    """Refuse an unknown mode, unpaired or empty input, or a claim without gold label."""
    if mode not in ABSTENTION_MODES:
        raise MetricInputError(
            f"unknown abstention mode {mode!r} (use one of: {', '.join(ABSTENTION_MODES)})"
        )
    if len(gold) != len(predictions):
        raise MetricInputError(
            f"gold and predictions differ in length ({len(gold)} vs {len(predictions)})"
        )
    if not gold:
        raise MetricInputError("no claims to score: gold and predictions are empty")
    missing_gold = [i for i, g in enumerate(gold) if g is None]
    if missing_gold:
        raise MetricInputError(f"gold[{missing_gold[0]}] has no label")


def _f1_scores(g_ans: Sequence[str], p_ans: Sequence[str | None],
               label_set: tuple[str, ...]) -> tuple[dict[str, float], float | None]:
    """Per-class F1 of ``label_set`` on the answered claims, and their mean (``None``: nothing to average)."""
    if not (g_ans and label_set):
        return {}, None
    from averitec_tools.metrics.label_codes import encode_label_pairs, per_class_f1_of_codes

    # Gold labels outside ``label_set`` get their own rows so that predicting them is
    # nobody's false positive and the averaged classes match scikit-learn's labels=.
    coded = [*label_set, *sorted({g for g in g_ans if g not in label_set})]
    codes = encode_label_pairs(gold=g_ans, predictions=p_ans, labels=coded)
    f1s = per_class_f1_of_codes(codes, n_labels=len(coded))[: len(label_set)]
    return {lab: float(v) for lab, v in zip(label_set, f1s, strict=True)}, float(np.mean(f1s))


@dataclass(frozen=True)
class _AbstainMetric(Metric):
    """A figure of :func:`label_scores` in ``abstain`` mode (its field named by ``figure``), with the
    abstain labels as the parameter."""

    figure: ClassVar[str]
    abstain_labels: tuple[str, ...] = DEFAULT_ABSTAIN_LABELS

    @property
    def params(self) -> dict[str, Any]:
        return {"abstain_labels": list(self.abstain_labels)}

    def __call__(self, *, gold: Sequence[str], predictions: Sequence[str | None]) -> float | None:
        scores = label_scores(gold=gold, predictions=predictions, mode="abstain", abstain_labels=self.abstain_labels)
        return getattr(scores, self.figure)


@register_metric
class AbstentionCoverage(
    _AbstainMetric,
    name="abstain-coverage",
    higher_is_better=True,
    description="fraction of claims whose prediction is not an abstain label",
    citation=R2VC_ABSTENTION_CITATION,
):
    """Registry object: fraction of claims not answered with an abstain label.

    Example:
        >>> AbstentionCoverage()(gold=["NEI", "SUPPORTS"], predictions=["NEI", "SUPPORTS"])
        0.5
    """

    figure: ClassVar[str] = "coverage"


@register_metric
class AbstentionAccuracy(
    _AbstainMetric,
    name="abstain-accuracy",
    higher_is_better=True,
    description="accuracy on claims whose prediction is not an abstain label",
    citation=R2VC_ABSTENTION_CITATION,
):
    """Registry object: accuracy on the claims not answered with an abstain label.

    Returns ``None`` when every prediction is an abstention.

    Example:
        >>> AbstentionAccuracy()(gold=["NEI", "SUPPORTS"], predictions=["NEI", "REFUTES"])
        0.0
    """

    figure: ClassVar[str] = "accuracy"


__all__ = ["DEFAULT_ABSTAIN_LABELS", "AbstentionAccuracy", "AbstentionCoverage", "abstention_mask", "label_scores"]
