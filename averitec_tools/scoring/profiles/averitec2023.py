"""``averitec2023``: the original AVeriTeC ``eval.py`` (2023 release of the dataset).

Reproduced quirks of the official scorer:

* **Format.** Predictions use the gold schema (``claim``, ``label``, ``questions`` →
  ``answers``, optional ``justification``) or ``string_evidence: [str]``; they are aligned
  with the references *by position*. A lone answer object instead of a list is accepted
  (``eval.py`` wraps it).
* **Comparison strings** are built the same way for predictions and gold: one
  ``"question answer"`` string per answer (Boolean answers get ``". " +
  boolean_explanation``), ``"question No answer could be found."`` for a question
  without answers, then any ``string_evidence``; predictions are capped at the first 10
  *strings* (not questions) and the matched sum is multiplied by ``1 / len(gold strings)``.
* **Question-only score** uses the first 10 predicted *questions*; without a
  ``questions`` key it falls back to the first 10 evidence strings.
* **Justification score** is ``METEOR(pred justification, gold justification)``; without
  a predicted justification it falls back to the first 10 comparison strings joined by
  spaces. ``justification_score`` at λ keeps it only where the Q+A score is ``> λ``.
* **AVeriTeC score** at λ ∈ {0.1, 0.2, 0.25, 0.3, 0.4, 0.5} with strict ``>``.
* **Per-claim-type scores** at 0.2 and 0.3 average the thresholded *evidence* score.

Deliberate differences: a ``"justification": null`` (``eval.py`` crashes on it), an empty
``questions`` list (``eval.py`` scores its question-only figure 0 and uses only
``string_evidence`` for Q+A), unknown labels (counted as wrong there), reference claims
without a justification, count mismatches and claim-text mismatches are errors. With
``--lenient`` the first three are scored as ``eval.py`` does (a null justification as
absent) and counted (see :mod:`averitec_tools.scoring.lenient`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.metrics.averitec_score import AVERITEC_THRESHOLDS, by_claim_type, threshold_key
from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
from averitec_tools.metrics.label_metrics import f1_per_label, macro_f1
from averitec_tools.metrics.prepared_cache import prepared_cache_file
from averitec_tools.records.averitec import AVERITEC_LABELS
from averitec_tools.scoring.engine import (
    MAX_EVIDENCE,
    check_options,
    make_engine,
    qa_strings,
    signature,
)
from averitec_tools.scoring.lenient import Lenience
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    PathLike,
    ProfileResult,
    ScoringProfile,
)
from averitec_tools.scoring.submission import (
    Prediction2023,
    check_claim_text,
    load_gold_claims,
    load_predictions_2023,
)

TYPE_THRESHOLDS = (0.2, 0.3)


def comparison_strings(pred: Prediction2023) -> list[str]:
    """``extract_full_comparison_strings`` of a prediction (before the cap of 10)."""
    return qa_strings(pred.questions or ()) + list(pred.string_evidence or ())


class Profile(ScoringProfile):
    """The 2023 ``eval.py`` scorer (see the module docstring for its quirks)."""

    name: ClassVar[str] = "averitec2023"
    description: ClassVar[str] = "AVeriTeC 2023 eval.py (gold-schema predictions, justification scores, >)"
    citation: ClassVar[str] = "Schlichtkrull et al. (2023), AVeriTeC: A Dataset for Real-world Claim Verification"
    OPTIONS: ClassVar[tuple[str, ...]] = ("allow_download", "metric", "lenient", "cache_dir")
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        "questions_only", "questions_answers", "label_accuracy", "justification",
        *(f"{m}@{threshold_key(t)}" for t in AVERITEC_THRESHOLDS for m in ("averitec_score", "justification_score")),
    )

    def score(
        self,
        *,
        predictions: PathLike,
        references: PathLike,
        jobs: int | None = None,
        progress: bool = False,
        **options: Any,
    ) -> ProfileResult:
        check_options(self.name, options, self.OPTIONS)
        metric = options.get("metric", "all")
        gold = load_gold_claims(references, profile=self.name)
        lenience = Lenience(enabled=bool(options.get("lenient", False)))
        preds = load_predictions_2023(predictions, n_references=len(gold), references=str(references), lenience=lenience)
        for i, (p, g) in enumerate(zip(preds, gold, strict=True)):
            check_claim_text(p.claim, g.claim, f"{predictions}[{i}]")
            if metric == "all" and g.justification is None:
                raise UserError(f"{references}[{i}]: reference claim has no 'justification'")
        engine = make_engine(options)

        q_tasks, qa_tasks, j_tasks = [], [], []
        for p, g in zip(preds, gold, strict=True):
            strings = comparison_strings(p)[:MAX_EVIDENCE]
            src_q = [q.question for q in p.questions[:MAX_EVIDENCE]] if p.questions is not None else strings
            q_tasks.append(HungarianTask(tuple(src_q), tuple(q.question for q in g.questions)))
            qa_tasks.append(HungarianTask(tuple(strings), tuple(qa_strings(g.questions))))
            if metric == "all":
                just = p.justification if p.justification is not None else " ".join(strings)
                # A 1x1 assignment is the METEOR score itself (times 1/1.0).
                j_tasks.append(HungarianTask((just,), (g.justification or "",)))
        n = len(gold)
        values = score_tasks(
            [*q_tasks, *qa_tasks, *j_tasks], engine=engine, jobs=jobs, progress=progress, n_claims=n,
            reference_cache=prepared_cache_file(references=references, cache_dir=options.get("cache_dir")),
        )
        q_scores, qa_scores, j_scores = values[:n], values[n : 2 * n], values[2 * n :]

        sig = signature(
            profile=self.name,
            engine=engine,
            thresholds=AVERITEC_THRESHOLDS,
            comparison=">",
            normalisation="gold",
            evidence_cap=MAX_EVIDENCE,
            lenient=lenience.enabled,
        )
        summary: dict[str, Any] = {
            "profile": self.name,
            "signature": sig,
            "n_claims": n,
            "questions_only": float(np.mean(q_scores)),
            "questions_answers": float(np.mean(qa_scores)),
        }
        if lenience.enabled:
            summary["tolerated"] = lenience.summary()
        gold_labels = [g.label for g in gold]
        pred_labels = [p.label for p in preds]
        correct = [pl == gl for pl, gl in zip(pred_labels, gold_labels, strict=True)]
        per_level = np.zeros((n, len(AVERITEC_THRESHOLDS)))
        per_level_j = np.zeros((n, len(AVERITEC_THRESHOLDS)))
        if metric == "all":
            per_level = np.array(
                [[c if e > lvl else 0.0 for lvl in AVERITEC_THRESHOLDS] for e, c in zip(qa_scores, correct, strict=True)]
            )
            per_level_j = np.array(
                [[j if e > lvl else 0.0 for lvl in AVERITEC_THRESHOLDS] for e, j in zip(qa_scores, j_scores, strict=True)]
            )
            summary["veracity"] = {
                "accuracy": float(np.mean(correct)),
                "macro_f1": macro_f1(gold=gold_labels, predicted=pred_labels, labels=AVERITEC_LABELS),
                "f1": f1_per_label(gold=gold_labels, predicted=pred_labels, labels=AVERITEC_LABELS),
            }
            summary["justification"] = float(np.mean(j_scores))
            summary["averitec_score"] = {
                threshold_key(t): float(v) for t, v in zip(AVERITEC_THRESHOLDS, np.mean(per_level, axis=0), strict=True)
            }
            summary["justification_score"] = {
                threshold_key(t): float(v) for t, v in zip(AVERITEC_THRESHOLDS, np.mean(per_level_j, axis=0), strict=True)
            }
            types = [g.claim_types for g in gold]
            summary["by_claim_type"] = {
                threshold_key(t): by_claim_type(evidence_scores=qa_scores, claim_types=types, threshold=t)
                for t in TYPE_THRESHOLDS
            }

        per_claim = []
        for i, (p, g) in enumerate(zip(preds, gold, strict=True)):
            vals: dict[str, float] = {"questions_only": q_scores[i], "questions_answers": qa_scores[i]}
            if metric == "all":
                vals["label_accuracy"] = float(correct[i])
                vals["justification"] = j_scores[i]
                for k, t in enumerate(AVERITEC_THRESHOLDS):
                    vals[f"averitec_score@{threshold_key(t)}"] = float(per_level[i][k])
                    vals[f"justification_score@{threshold_key(t)}"] = float(per_level_j[i][k])
            per_claim.append(
                ClaimScore(
                    claim_id=i,
                    gold_label=g.label,
                    pred_label=p.label,
                    values=vals,
                    confidence=p.confidence,
                    probabilities=p.probabilities,
                    claim_types=g.claim_types,
                )
            )
        return ProfileResult(
            profile=self.name,
            signature=sig,
            n_claims=n,
            summary=summary,
            per_claim=tuple(per_claim),
            labels=AVERITEC_LABELS,
            warnings=tuple(lenience.warnings()),
        )
