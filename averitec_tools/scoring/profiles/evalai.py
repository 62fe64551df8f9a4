"""``evalai``: the AVeriTeC EvalAI leaderboard scorer (``evaluation_script/main.py``).

Reproduced quirks of the leaderboard script:

* **Format.** JSON lines ``{id, label, evidence: [str]}`` for both the submission and the
  gold file; lines are aligned *by position* (the ``id`` field is not used to align --
  here a different id at the same line is an error instead of a silent misalignment).
* **No cap.** Every predicted evidence string is scored (no first-10 rule).
* **Normalised by the predicted count.** The matched METEOR sum is multiplied by
  ``1 / len(predicted evidence)`` -- a precision-like score, unlike the 2023/2024 scorers.
* **Thresholds ``>=``.** At λ ∈ {0.2, 0.25, 0.3}: ``label_accuracy`` counts claims with
  the right label *and* evidence score ``>= λ``; ``evidence_meteor`` sums the evidence
  scores that clear λ; both divide by the number of claims.
* Gold evidence strings are ``"question answer"`` with Boolean answers' explanations
  appended (already so in the gold files); labels are compared exactly.

Deliberate differences: an empty predicted evidence list is an error (the script skips
such a claim, which then scores 0 at every λ; ``--lenient`` does the same), and so is an
empty gold evidence list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from averitec_tools.errors import PredictionCountError, UserError
from averitec_tools.metrics.averitec_score import AVeriTeCScore, threshold_key
from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
from averitec_tools.metrics.keys import claim_key
from averitec_tools.metrics.prepared_cache import prepared_cache_file
from averitec_tools.records.averitec import AVERITEC_LABELS
from averitec_tools.scoring.lenient import Lenience
from averitec_tools.scoring.profiles._meteor import METEOR_OPTIONS, make_engine, signature
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    PathLike,
    ProfileOption,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)
from averitec_tools.scoring.submission import load_evalai

EVALAI_THRESHOLDS: tuple[float, ...] = (0.2, 0.25, 0.3)


def _at_thresholds(
    scores: list[float], correct: list[bool], per_claim_values: list[dict[str, float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """The script's ``label_accuracy`` and ``evidence_meteor`` at each λ (``>=``), and the
    per-claim values they are means of (added to ``per_claim_values``).

    Example:
        >>> values = [{}, {}]
        >>> acc, evidence = _at_thresholds([0.25, 0.1], [True, True], values)
        >>> acc["0.25"], evidence["0.2"], values[0]["label_accuracy@0.3"]
        (0.5, 0.125, 0.0)
    """
    n = len(scores)
    label_acc: dict[str, float] = {}
    evidence: dict[str, float] = {}
    for t in EVALAI_THRESHOLDS:
        metric = AVeriTeCScore(threshold=t, strict=False)
        key, label_key = threshold_key(t), claim_key(metric)
        hits = metric.gated(evidence_scores=scores, values=correct)
        kept = metric.gated(evidence_scores=scores, values=scores)
        for values, hit, score in zip(per_claim_values, hits, kept, strict=True):
            values[label_key] = hit
            values[f"evidence_meteor@{key}"] = score
        label_acc[key] = sum(hits) / n
        evidence[key] = sum(kept) / n
    return label_acc, evidence


class Profile(ScoringProfile):
    """The EvalAI leaderboard scorer (see the module docstring for its quirks)."""

    name: ClassVar[str] = "evalai"
    description: ClassVar[str] = "AVeriTeC EvalAI leaderboard (JSON lines, all evidence, normalised by predictions, >=)"
    citation: ClassVar[str] = "AVeriTeC EvalAI challenge evaluation script"
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = METEOR_OPTIONS
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        "evidence_score", "correct",
        # label_accuracy@λ: the EvalAI name of averitec-score(threshold=λ,strict=False) (metrics/keys.py)
        *(k for t in EVALAI_THRESHOLDS for k in (claim_key(AVeriTeCScore(threshold=t, strict=False)),
                                                  f"evidence_meteor@{threshold_key(t)}")),
    )

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references, options = call.predictions, call.references, call.options
        metric = options.get("metric", "all")
        lenience = Lenience(enabled=bool(options.get("lenient", False)))
        gold, preds = _aligned(predictions, references, lenience)
        engine = make_engine(options, warm=call.warm, profile=self.name)
        # --lenient: a prediction without evidence is skipped by the EvalAI scorer (score 0 at every λ).
        tasks = [HungarianTask(p.evidence, g.evidence, "candidate") for p, g in zip(preds, gold, strict=True) if p.evidence]
        solved = iter(score_tasks(
            tasks, engine=engine, jobs=call.jobs, progress=call.progress,
            reference_cache=prepared_cache_file(references=references, cache_dir=options.get("cache_dir")),
        ))
        scores = [next(solved) if p.evidence else 0.0 for p in preds]
        n = len(gold)
        sig = signature(profile=self.name, engine=engine, thresholds=EVALAI_THRESHOLDS, comparison=">=",
                        normalisation="pred", evidence_cap=None, lenient=lenience.enabled)
        summary: dict[str, Any] = {"profile": self.name, "signature": sig, "n_claims": n}
        if lenience.enabled:
            summary["tolerated"] = lenience.summary()
        correct = [p.label == g.label for p, g in zip(preds, gold, strict=True)]
        per_claim_values: list[dict[str, float]] = [{"evidence_score": s} for s in scores]
        if metric == "all":
            summary["label_accuracy"], summary["evidence_meteor"] = _at_thresholds(scores, correct, per_claim_values)
            for i, c in enumerate(correct):
                per_claim_values[i]["correct"] = float(c)
        else:
            summary["evidence_score"] = sum(scores) / n
        per_claim = tuple(
            ClaimScore(claim_id=g.id, gold_label=g.label, pred_label=p.label, values=vals, confidence=p.confidence,
                       probabilities=p.probabilities)
            for p, g, vals in zip(preds, gold, per_claim_values, strict=True)
        )
        return ProfileResult(profile=self.name, signature=sig, n_claims=n, summary=summary, per_claim=per_claim,
                             labels=AVERITEC_LABELS, warnings=tuple(lenience.warnings()))


def _aligned(predictions: PathLike, references: PathLike, lenience: Lenience) -> tuple[list[Any], list[Any]]:
    """(gold, predictions) of the two line files, one prediction per reference line with its id."""
    gold = load_evalai(references, role="references")
    preds = load_evalai(predictions, role="predictions", lenience=lenience)
    if len(gold) != len(preds):
        raise PredictionCountError(
            f"{predictions}: {len(preds)} predictions, not one per reference claim (the EvalAI scorer aligns lines by position)",
            n_predictions=len(preds), n_references=len(gold),
            detail=f"{references} has {len(gold)} claims",
        )
    for line, (p, g) in enumerate(zip(preds, gold, strict=True), start=1):
        if p.id != g.id:
            raise UserError(
                f"{predictions}: item {line} has id {p.id!r}, not the id of reference item {line}",
                detail=f"reference item {line} has id {g.id!r}",
                hint="the EvalAI scorer aligns by line; write predictions in the reference order",
            )
    return gold, preds
