"""The FEVER score (Thorne et al., 2018), exactly as the reference ``fever-scorer``.

Reproduces ``fever/scorer.py`` of ``sheffieldnlp/fever-scorer`` (``fever_score(predictions,
actual, max_evidence=5)``), quirks included:

* labels are compared case-insensitively (``.upper()``);
* only the first ``max_evidence`` predicted sentences count, for the strict score,
  precision and recall alike (``None`` = all of them);
* the strict score needs the right label and, unless the gold label is NOT ENOUGH INFO,
  one *complete* gold evidence group inside the truncated predicted evidence;
* precision and recall are macro averages over the claims whose gold label is not
  NOT ENOUGH INFO, whatever was predicted; a claim with no predicted evidence has
  precision 1.0; a claim with no gold evidence groups has recall 1.0; duplicated
  predicted sentences count once each in the precision denominator;
* with no verifiable claims, precision is 1.0 and recall 0.0.

Differences (crash fixes only): where the reference divides by zero (precision + recall
= 0, or an empty file) it raises ``ZeroDivisionError``; here F1 is 0.0 and an empty input
is a :class:`~averitec_tools.errors.UserError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import Metric, register_metric
from averitec_tools.records.fever import FeverClaim, FeverPrediction

NEI = "NOT ENOUGH INFO"

CITATION = (
    "Thorne, Vlachos, Christodoulopoulos, Mittal. FEVER: a large-scale dataset for Fact "
    "Extraction and VERification. NAACL-HLT 2018."
)


@dataclass(frozen=True)
class FeverClaimOutcome:
    """Per-claim parts of the FEVER score.

    ``precision``/``recall`` are ``None`` for NOT ENOUGH INFO gold claims, which the
    reference leaves out of both macro averages.
    """

    label_correct: bool
    strict_correct: bool
    precision: float | None
    recall: float | None


@dataclass(frozen=True)
class FeverScoreResult:
    """Headline FEVER figures and the per-claim outcomes behind them."""

    strict_score: float
    label_accuracy: float
    precision: float
    recall: float
    f1: float
    n_claims: int
    per_claim: tuple[FeverClaimOutcome, ...]

    def as_dict(self) -> dict[str, float]:
        return {
            "strict_score": self.strict_score,
            "label_accuracy": self.label_accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


@register_metric
class FeverScore(
    Metric, name="fever-score", higher_is_better=True,
    description="FEVER strict score: correct label and a complete gold evidence set "
    "among the first max_evidence predicted sentences",
    citation=CITATION,
):
    """The FEVER score with an evidence cap.

    Args:
        max_evidence: How many predicted sentences count (the reference default is 5);
            ``None`` counts all of them.

    Example:
        >>> gold = FeverClaim.from_dict({"id": 1, "label": "SUPPORTS", "claim": "c",
        ...     "evidence": [[[0, 0, "P", 1]]]}, where="g:1")
        >>> pred = FeverPrediction.from_dict({"id": 1, "predicted_label": "SUPPORTS",
        ...     "predicted_evidence": [["P", 1], ["Q", 2]]}, where="p:1")
        >>> r = FeverScore().compute(golds=[gold], predictions=[pred])
        >>> (r.strict_score, r.precision, r.recall)
        (1.0, 0.5, 1.0)
    """

    max_evidence: int | None = 5

    def validate(self) -> None:
        if self.max_evidence is not None and (
            isinstance(self.max_evidence, bool)
            or not isinstance(self.max_evidence, int)
            or self.max_evidence < 0
        ):
            raise UserError(f"--max-evidence must be a non-negative integer, found {self.max_evidence!r}")

    def score_claim(self, *, gold: FeverClaim, prediction: FeverPrediction) -> FeverClaimOutcome:
        """Score one claim (see the module docstring for the reference's rules)."""
        gold_label = (gold.label or "").upper()
        label_correct = gold_label == prediction.predicted_label.upper()
        predicted = (
            prediction.predicted_evidence
            if self.max_evidence is None
            else prediction.predicted_evidence[: self.max_evidence]
        )
        predicted_set = set(predicted)
        complete_group = any(
            all(e.key in predicted_set for e in group) for group in gold.evidence
        )
        if gold_label == NEI:
            return FeverClaimOutcome(label_correct, label_correct, None, None)
        strict = label_correct and complete_group
        gold_sentences = {e.key for group in gold.evidence for e in group if e.line is not None}
        if predicted:
            hits = sum(1.0 for p in predicted if p in gold_sentences)
            precision = hits / float(len(predicted))
        else:
            precision = 1.0
        recall = 1.0 if (not gold.evidence or complete_group) else 0.0
        return FeverClaimOutcome(label_correct, strict, precision, recall)

    def compute(
        self, *, golds: Sequence[FeverClaim], predictions: Sequence[FeverPrediction]
    ) -> FeverScoreResult:
        """Score aligned gold claims and predictions (same order, same length).

        Raises:
            UserError: if the sequences are empty or of different lengths.
        """
        if len(golds) != len(predictions):
            raise UserError(
                f"{len(predictions)} predictions for {len(golds)} gold claims: the files must align"
            )
        if not golds:
            raise UserError("no claims to score")
        outcomes = tuple(
            self.score_claim(gold=g, prediction=p) for g, p in zip(golds, predictions, strict=True)
        )
        correct = strict = 0.0
        precision_sum = precision_hits = recall_sum = recall_hits = 0.0
        for o in outcomes:
            if o.label_correct:
                correct += 1.0
                if o.strict_correct:
                    strict += 1.0
            if o.precision is not None:
                precision_sum += o.precision
                precision_hits += 1.0
            if o.recall is not None:
                recall_sum += o.recall
                recall_hits += 1.0
        total = len(outcomes)
        precision = precision_sum / precision_hits if precision_hits > 0 else 1.0
        recall = recall_sum / recall_hits if recall_hits > 0 else 0.0
        f1 = 2.0 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        return FeverScoreResult(
            strict_score=strict / total,
            label_accuracy=correct / total,
            precision=precision,
            recall=recall,
            f1=f1,
            n_claims=total,
            per_claim=outcomes,
        )


#: The registered instance (reference default ``max_evidence=5``).
FEVER_SCORE = FeverScore()

__all__ = ["CITATION", "FEVER_SCORE", "FeverScore"]
