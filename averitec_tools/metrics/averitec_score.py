"""The λ-thresholded AVeriTeC score: a claim counts only if its evidence is good enough.

Per claim, with evidence score ``e`` (Hungarian METEOR) and label correctness ``c``:
``score = c if e > λ else 0`` (strict ``>`` in the 2023/2024 scorers; ``>=`` on EvalAI).
The reported figure is the mean over claims. The per-claim-type breakdown of the official
scorers averages the *thresholded evidence score* (``e if e > λ else 0``), not label
correctness -- a quirk kept here as :func:`thresholded_evidence`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from averitec_tools.metrics.base import Metric, register_metric

#: λ values the 2023 and 2024 scorers report.
AVERITEC_THRESHOLDS: tuple[float, ...] = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)


def passes(evidence_score: float, threshold: float, *, strict: bool = True) -> bool:
    """Whether ``evidence_score`` clears ``threshold`` (``>`` if strict, else ``>=``).

    Example:
        >>> passes(0.25, 0.25), passes(0.25, 0.25, strict=False)
        (False, True)
    """
    return evidence_score > threshold if strict else evidence_score >= threshold


def claim_averitec_score(*, evidence_score: float, correct: bool, threshold: float, strict: bool = True) -> float:
    """One claim's AVeriTeC score: 1.0 if the label is right and the evidence clears λ.

    Example:
        >>> claim_averitec_score(evidence_score=0.4, correct=True, threshold=0.25)
        1.0
    """
    return float(correct) if passes(evidence_score, threshold, strict=strict) else 0.0


def thresholded_evidence(*, evidence_score: float, threshold: float, strict: bool = True) -> float:
    """The evidence score if it clears λ, else 0 (what per-claim-type scores average).

    Example:
        >>> thresholded_evidence(evidence_score=0.2, threshold=0.25)
        0.0
    """
    return evidence_score if passes(evidence_score, threshold, strict=strict) else 0.0


def averitec_score(
    *, evidence_scores: Sequence[float], correct: Sequence[bool], threshold: float, strict: bool = True
) -> float:
    """Mean AVeriTeC score over claims (``np.mean`` as in the official scorer).

    Example:
        >>> averitec_score(evidence_scores=[0.3, 0.1], correct=[True, True], threshold=0.25)
        0.5
    """
    if len(evidence_scores) != len(correct):
        raise ValueError("evidence_scores and correct differ in length")
    if not evidence_scores:
        return 0.0
    return float(
        np.mean(
            [
                claim_averitec_score(evidence_score=e, correct=c, threshold=threshold, strict=strict)
                for e, c in zip(evidence_scores, correct, strict=True)
            ]
        )
    )


def by_claim_type(
    *,
    evidence_scores: Sequence[float],
    claim_types: Sequence[Sequence[str]],
    threshold: float,
    strict: bool = True,
) -> dict[str, float]:
    """Mean thresholded evidence score per claim type (types in first-seen order).

    Example:
        >>> by_claim_type(evidence_scores=[0.5, 0.1], claim_types=[["A"], ["A", "B"]], threshold=0.25)
        {'A': 0.25, 'B': 0.0}
    """
    groups: dict[str, list[float]] = {}
    for score, types in zip(evidence_scores, claim_types, strict=True):
        value = thresholded_evidence(evidence_score=score, threshold=threshold, strict=strict)
        for t in types:
            groups.setdefault(t, []).append(value)
    return {t: float(np.mean(v)) for t, v in groups.items()}


@register_metric
class AVeriTeCScore(
    Metric, name="averitec-score", higher_is_better=True,
    description="fraction of claims with the right label and Hungarian METEOR evidence score above λ "
    "(strict: >, else >=)",
    citation="Schlichtkrull et al. (2023), AVeriTeC", shown=("threshold",),
):
    """λ-thresholded AVeriTeC score (label accuracy counted only where evidence clears λ).

    Its string form always names λ (a per-claim key per λ):

    Example:
        >>> m = AVeriTeCScore(threshold=0.3)
        >>> str(m), m(evidence_scores=[0.3, 0.5], correct=[True, True])
        ('averitec-score(threshold=0.3)', 0.5)
        >>> str(AVERITEC_SCORE), str(AVeriTeCScore(threshold=0.2, strict=False))
        ('averitec-score(threshold=0.25)', 'averitec-score(threshold=0.2,strict=False)')
    """

    threshold: float = 0.25
    strict: bool = True

    def __call__(self, *, evidence_scores: Sequence[float], correct: Sequence[bool]) -> float:
        return averitec_score(evidence_scores=evidence_scores, correct=correct, threshold=self.threshold,
                              strict=self.strict)

    def passes(self, evidence_score: float) -> bool:
        """Whether ``evidence_score`` clears this λ (``>`` if strict, else ``>=``)."""
        return passes(evidence_score, self.threshold, strict=self.strict)

    def claim_score(self, *, evidence_score: float, correct: bool) -> float:
        """One claim's score: 1.0 if its label is right and its evidence clears λ."""
        return claim_averitec_score(evidence_score=evidence_score, correct=correct, threshold=self.threshold,
                                    strict=self.strict)

    def gated(self, *, evidence_scores: Sequence[float], values: Sequence[float]) -> list[float]:
        """Per claim, its value where its evidence clears λ, else 0.0: with label correctness
        the per-claim scores, with justification scores the 2023 scorer's ``justification_score``.

        Example:
            >>> AVeriTeCScore(threshold=0.3).gated(evidence_scores=[0.3, 0.5], values=[True, 0.7])
            [0.0, 0.7]
        """
        return [float(v) if self.passes(e) else 0.0 for e, v in zip(evidence_scores, values, strict=True)]


AVERITEC_SCORE = AVeriTeCScore()


def threshold_key(threshold: float) -> str:
    """JSON key for a threshold: ``0.25`` -> ``"0.25"``, ``0.1`` -> ``"0.1"``.

    Example:
        >>> threshold_key(0.2)
        '0.2'
    """
    return repr(float(threshold))


__all__ = [
    "AVERITEC_THRESHOLDS", "AVeriTeCScore", "averitec_score", "by_claim_type", "claim_averitec_score", "passes",
    "threshold_key",
]
