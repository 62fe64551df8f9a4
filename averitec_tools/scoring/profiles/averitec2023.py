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

from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.metrics.averitec_score import (
    AVERITEC_THRESHOLDS,
    AVeriTeCScore,
    by_claim_type,
    threshold_key,
)
from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
from averitec_tools.metrics.keys import claim_key
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY
from averitec_tools.metrics.prepared_cache import prepared_cache_file
from averitec_tools.records.averitec import AVeriTeCClaim
from averitec_tools.scoring.evidence_strings import (
    MAX_EVIDENCE,
    qa_strings,
)
from averitec_tools.scoring.profiles import _averitec as av
from averitec_tools.scoring.profiles._meteor import METEOR_OPTIONS
from averitec_tools.scoring.profiles.base import (
    PathLike,
    ProfileOption,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)
from averitec_tools.scoring.submission import (
    Prediction2023,
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
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = METEOR_OPTIONS
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        "questions_only", "questions_answers", claim_key(LABEL_ACCURACY), "justification",
        *(k for t in AVERITEC_THRESHOLDS for k in (claim_key(AVeriTeCScore(threshold=t)), f"justification_score@{threshold_key(t)}")),
    )

    def gold_strings(self, references: PathLike) -> list[str]:
        return av.gold_strings(references, profile=self.name)

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references, options = call.predictions, call.references, call.options
        def needs_justification(i: int, g: AVeriTeCClaim, metric: str) -> None:
            if metric == "all" and g.justification is None:
                raise UserError(f"{references}[{i}]: reference claim has no 'justification'")

        inputs = av.read_inputs(
            profile=self.name, predictions=predictions, references=references, options=options,
            warm=call.warm,
            load_predictions=load_predictions_2023, where=lambda i: f"{predictions}[{i}]",
            check_reference=needs_justification,
        )
        metric, gold, preds, lenience, engine = inputs.metric, inputs.gold, inputs.preds, inputs.lenience, inputs.engine
        n = len(gold)
        values = score_tasks(
            _tasks(preds, gold, justification=metric == "all"), engine=engine, jobs=call.jobs, progress=call.progress,
            n_claims=n, reference_cache=prepared_cache_file(references=references, cache_dir=options.get("cache_dir")),
        )
        q_scores, qa_scores, j_scores = values[:n], values[n : 2 * n], values[2 * n :]

        sig = av.averitec_signature(profile=self.name, engine=engine, lenience=lenience)
        summary = av.summary_head(profile=self.name, sig=sig, lenience=lenience,
                               means={"questions_only": q_scores, "questions_answers": qa_scores})
        pred_labels = [p.label for p in preds]
        gold_labels, correct = av.label_correctness(gold, pred_labels)
        per_claim: list[dict[str, float]] = [{"questions_only": q, "questions_answers": qa}
                                             for q, qa in zip(q_scores, qa_scores, strict=True)]
        if metric == "all":
            per_level, per_level_j = av.thresholded(qa_scores, correct), av.thresholded(qa_scores, j_scores)
            summary["veracity"] = av.veracity(gold_labels=gold_labels, pred_labels=pred_labels, correct=correct)
            summary["justification"] = float(np.mean(j_scores))
            summary["averitec_score"] = av.level_means(per_level)
            summary["justification_score"] = av.level_means(per_level_j)
            types = [g.claim_types for g in gold]
            summary["by_claim_type"] = {
                threshold_key(t): by_claim_type(evidence_scores=qa_scores, claim_types=types, threshold=t)
                for t in TYPE_THRESHOLDS
            }
            _add_label_values(per_claim, correct=correct, j_scores=j_scores, per_level=per_level, per_level_j=per_level_j)
        return av.result(profile=self.name, sig=sig, summary=summary, inputs=inputs,
                      pred_labels=pred_labels, values=per_claim)


def _tasks(preds: Sequence[Prediction2023], gold: Sequence[AVeriTeCClaim], *, justification: bool) -> list[HungarianTask]:
    """The question-only tasks of every claim, then the Q+A tasks, then (``justification``)
    the justification tasks, built as ``eval.py`` builds its strings (module docstring)."""
    q_tasks, qa_tasks, j_tasks = [], [], []
    for p, g in zip(preds, gold, strict=True):
        strings = comparison_strings(p)[:MAX_EVIDENCE]
        src_q = [q.question for q in p.questions[:MAX_EVIDENCE]] if p.questions is not None else strings
        q_tasks.append(HungarianTask(tuple(src_q), tuple(q.question for q in g.questions)))
        qa_tasks.append(HungarianTask(tuple(strings), tuple(qa_strings(g.questions))))
        if justification:
            just = p.justification if p.justification is not None else " ".join(strings)
            # A 1x1 assignment is the METEOR score itself (times 1/1.0).
            j_tasks.append(HungarianTask((just,), (g.justification or "",)))
    return [*q_tasks, *qa_tasks, *j_tasks]


def _add_label_values(per_claim: Sequence[dict[str, float]], *, correct: Sequence[bool], j_scores: Sequence[float],
                      per_level: np.ndarray, per_level_j: np.ndarray) -> None:
    """Each claim's label accuracy, justification score and, per λ, its AVeriTeC and justification scores."""
    acc_key, level_keys = claim_key(LABEL_ACCURACY), [claim_key(AVeriTeCScore(threshold=t)) for t in AVERITEC_THRESHOLDS]
    for i, vals in enumerate(per_claim):
        vals[acc_key] = float(correct[i])
        vals["justification"] = j_scores[i]
        for k, t in enumerate(AVERITEC_THRESHOLDS):
            vals[level_keys[k]] = float(per_level[i][k])
            vals[f"justification_score@{threshold_key(t)}"] = float(per_level_j[i][k])
