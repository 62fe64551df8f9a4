"""``averitec2024``: the AVeriTeC 2024 shared-task scorer (``averitec_evaluate.py``).

Reproduced quirks of the official scorer (each checked against a straightforward
re-implementation in ``benchmarks/reference_scorer.py``):

* **First 10 items.** Only ``evidence[:10]`` is scored; the matched METEOR sum is
  multiplied by ``1 / len(gold strings)`` (unmatched gold items count as 0; extra
  predictions beyond the gold count are simply unmatched).
* **Pair direction.** ``single_meteor_score(tokenize(gold), tokenize(predicted))``: gold
  is METEOR's reference, the prediction its hypothesis (METEOR is not symmetric).
* **Gold strings.** One ``"question answer"`` string per gold answer; a Boolean answer
  gets ``". " + boolean_explanation`` appended; a question without answers becomes
  ``"question No answer could be found."``. Predicted strings are ``question + " " +
  answer``, followed by any ``string_evidence`` strings, then capped at 10.
* **Question-only score** compares the first 10 predicted questions with *all* gold
  questions, normalised by the gold question count; without an ``evidence`` key it falls
  back to ``string_evidence[:10]``.
* **AVeriTeC score** at λ ∈ {0.1, 0.2, 0.25, 0.3, 0.4, 0.5}: a claim scores its label
  correctness only if its Q+A score is strictly greater than λ (``>``).
* **Per-claim-type score @ 0.25** averages the *thresholded evidence score* (Q+A score if
  ``> 0.25`` else 0) per claim type -- not label correctness, despite being printed as
  "Veracity scores".
* **Labels** are compared exactly (no case or whitespace normalisation); macro-F1 uses
  scikit-learn semantics over the four verdicts.
* **Answer-only scores** are not in the official script. ``answers_only`` follows the
  only public implementation (``evaluate_answers_only`` in a fork of the 2024 scorer):
  the raw ``answer`` fields of the first 10 predicted items against the raw ``answer``
  fields of every gold answer (no Boolean explanation, nothing for a question without
  answers), normalised by the number of gold answers; a gold claim without any answer
  scores 0 (a division by zero there). ``answers_only_averitec_tools`` is our own earlier
  definition, by analogy with the Q+A strings: Boolean answers keep ``". " +
  boolean_explanation`` and an unanswered question counts as ``"No answer could be
  found."``, normalised by that string count.

Deliberate differences (bad input is an error here, never a silent score):

* the official script silently substitutes ``predictions[0]`` for a missing ``claim_id``;
  here missing, duplicate or out-of-range ids are an error;
* an empty ``evidence`` list (scored 0 there), an unknown label (counted as wrong there)
  and gold claims without questions (a division by zero there) are errors; with
  ``--lenient`` the first two are scored as the official script does, and counted;
* a prediction whose ``claim`` text differs from the reference claim is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

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
from averitec_tools.scoring.evidence_strings import (
    MAX_EVIDENCE,
    answer_strings,
    qa_strings,
    raw_answers,
)
from averitec_tools.scoring.profiles._averitec import (
    averitec_signature,
    gold_strings,
    label_correctness,
    level_means,
    read_inputs,
    result,
    summary_head,
    thresholded,
    veracity,
)
from averitec_tools.scoring.profiles._meteor import METEOR_OPTIONS
from averitec_tools.scoring.profiles.base import (
    PathLike,
    ProfileOption,
    ProfileResult,
    ScoringProfile,
)
from averitec_tools.scoring.submission import (
    load_predictions_2024,
)
from averitec_tools.scoring.warm import WarmScoring

TYPE_THRESHOLD = 0.25


class Profile(ScoringProfile):
    """The 2024 shared-task scorer (see the module docstring for its quirks)."""

    name: ClassVar[str] = "averitec2024"
    description: ClassVar[str] = "AVeriTeC 2024 shared task (Q-only/Q+A/A-only Hu-METEOR, AVeriTeC score at 6 λ, >)"
    citation: ClassVar[str] = "Schlichtkrull et al. (2024), The Automated Verification of Textual Claims (AVeriTeC) Shared Task"
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = {
        **METEOR_OPTIONS,
        "evidence_scorer": ProfileOption((str, type(None)), None, "a non-official evidence scorer spec "
                                         "(minilm-qa-f1) scored beside the official figures; docs/meta_eval.md"),
    }
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        "questions_only", "questions_answers", "answers_only", "answers_only_averitec_tools", claim_key(LABEL_ACCURACY),
        *(claim_key(AVeriTeCScore(threshold=t)) for t in AVERITEC_THRESHOLDS),
    )

    def gold_strings(self, references: PathLike) -> list[str]:
        return gold_strings(references, profile=self.name)

    def score(
        self,
        *,
        predictions: PathLike,
        references: PathLike,
        jobs: int | None = None,
        progress: bool = False,
        warm: WarmScoring | None = None,
        **options: Any,
    ) -> ProfileResult:
        inputs = read_inputs(
            profile=self.name, declared=self.OPTIONS, predictions=predictions, references=references, options=options,
            warm=warm,
            load_predictions=load_predictions_2024, where=lambda i: f"{predictions} (claim_id {i})",
        )
        metric, gold, preds, lenience, engine = inputs.metric, inputs.gold, inputs.preds, inputs.lenience, inputs.engine

        q_tasks, qa_tasks, a_tasks, raw_tasks = [], [], [], []
        has_answers = [bool(raw_answers(g.questions)) for g in gold]
        for p, g in zip(preds, gold, strict=True):
            if p.evidence is not None:
                src_q = [e.question for e in p.evidence[:MAX_EVIDENCE]]
                src_a = [e.answer for e in p.evidence[:MAX_EVIDENCE]]
            else:
                src_q = src_a = list(p.string_evidence or ())[:MAX_EVIDENCE]
            src_qa = ([e.question + " " + e.answer for e in p.evidence or ()] + list(p.string_evidence or ()))[:MAX_EVIDENCE]
            q_tasks.append(HungarianTask(tuple(src_q), tuple(q.question for q in g.questions)))
            qa_tasks.append(HungarianTask(tuple(src_qa), tuple(qa_strings(g.questions))))
            a_tasks.append(HungarianTask(tuple(src_a), tuple(answer_strings(g.questions))))
            if raw_answers(g.questions):
                raw_tasks.append(HungarianTask(tuple(src_a), tuple(raw_answers(g.questions))))
        n = len(gold)
        values = score_tasks(
            [*q_tasks, *qa_tasks, *a_tasks, *raw_tasks], engine=engine, jobs=jobs, progress=progress, n_claims=n,
            claims=[*range(n), *range(n), *range(n), *(i for i, ok in enumerate(has_answers) if ok)],
            reference_cache=prepared_cache_file(references=references, cache_dir=options.get("cache_dir")),
        )
        q_scores, qa_scores, a_scores = values[:n], values[n : 2 * n], values[2 * n : 3 * n]
        raw_iter = iter(values[3 * n :])
        raw_scores = [next(raw_iter) if ok else 0.0 for ok in has_answers]

        sig = averitec_signature(profile=self.name, engine=engine, lenience=lenience)
        extra = None
        if options.get("evidence_scorer"):  # never official: added beside the figures, named in the signature
            from averitec_tools.scoring.meta_eval.profile_option import evidence_scores

            extra, extra_sig = evidence_scores(spec=options["evidence_scorer"], predicted=[t.candidates for t in qa_tasks],
                                               references=[t.references for t in qa_tasks],
                                               claims=[g.claim for g in gold], labels=[g.label for g in gold])
            sig = f"{sig}|evidence-scorer:{extra_sig}"
        summary = summary_head(profile=self.name, sig=sig, lenience=lenience, means={
            "questions_only": q_scores, "answers_only": raw_scores, "answers_only_averitec_tools": a_scores,
            "questions_answers": qa_scores,
        })
        if extra is not None:
            summary["evidence_scorer"] = {"spec": options["evidence_scorer"], "signature": sig.rsplit("|evidence-scorer:", 1)[1],
                                          "mean": sum(extra) / n if n else 0.0, "official": False}
        pred_labels = [p.pred_label for p in preds]
        gold_labels, correct = label_correctness(gold, pred_labels)
        per_level = thresholded(qa_scores, correct)
        if metric == "all":
            summary["veracity"] = veracity(gold_labels=gold_labels, pred_labels=pred_labels, correct=correct)
            summary["averitec_score"] = level_means(per_level)
            summary["by_claim_type"] = {
                threshold_key(TYPE_THRESHOLD): by_claim_type(
                    evidence_scores=qa_scores, claim_types=[g.claim_types for g in gold], threshold=TYPE_THRESHOLD
                )
            }

        acc_key, level_keys = claim_key(LABEL_ACCURACY), [claim_key(AVeriTeCScore(threshold=t)) for t in AVERITEC_THRESHOLDS]
        per_claim = []
        for i in range(n):
            vals: dict[str, float] = {
                "questions_only": q_scores[i],
                "questions_answers": qa_scores[i],
                "answers_only": raw_scores[i],
                "answers_only_averitec_tools": a_scores[i],
            }
            if extra is not None:
                vals["evidence_scorer"] = extra[i]
            if metric == "all":
                vals[acc_key] = float(correct[i])
                for k, key in enumerate(level_keys):
                    vals[key] = float(per_level[i][k])
            per_claim.append(vals)
        return result(profile=self.name, sig=sig, summary=summary, inputs=inputs,
                      pred_labels=pred_labels, values=per_claim)
