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

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, NamedTuple

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
from averitec_tools.metrics.signature import embed_signature, extend_signature
from averitec_tools.scoring.evidence_strings import (
    MAX_EVIDENCE,
    answer_strings,
    qa_strings,
    raw_answers,
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
    load_predictions_2024,
)

TYPE_THRESHOLD = 0.25


def _string_list_scorer(spec: str) -> Any:
    """The ``evidence_scorer`` option's scorer (imported only when the option is given)."""
    from averitec_tools.metrics.evidence_scorer import string_list_scorer

    return string_list_scorer(spec)


class Profile(ScoringProfile):
    """The 2024 shared-task scorer (see the module docstring for its quirks)."""

    name: ClassVar[str] = "averitec2024"
    description: ClassVar[str] = "AVeriTeC 2024 shared task (Q-only/Q+A/A-only Hu-METEOR, AVeriTeC score at 6 λ, >)"
    citation: ClassVar[str] = "Schlichtkrull et al. (2024), The Automated Verification of Textual Claims (AVeriTeC) Shared Task"
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = {
        **METEOR_OPTIONS,
        "evidence_scorer": ProfileOption((str, type(None)), None, "a non-official evidence scorer spec "
                                         "(minilm-qa-f1) scored beside the official figures; docs/meta_eval.md",
                                         check=_string_list_scorer),
    }
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        "questions_only", "questions_answers", "answers_only", "answers_only_averitec_tools", claim_key(LABEL_ACCURACY),
        *(claim_key(AVeriTeCScore(threshold=t)) for t in AVERITEC_THRESHOLDS),
    )

    def gold_strings(self, references: PathLike) -> list[str]:
        return av.gold_strings(references, profile=self.name)

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references, options, warm = call.predictions, call.references, call.options, call.warm
        jobs, progress = call.jobs, call.progress
        inputs = av.read_inputs(
            profile=self.name, predictions=predictions, references=references, options=options,
            warm=warm,
            load_predictions=load_predictions_2024, where=lambda i: f"{predictions} (claim_id {i})",
        )
        metric, gold, preds, lenience = inputs.metric, inputs.gold, inputs.preds, inputs.lenience
        n = len(gold)
        tasks = _tasks(preds, gold)
        evidence = _evidence_scores(tasks, engine=inputs.engine, jobs=jobs, progress=progress, n=n,
                                    reference_cache=prepared_cache_file(references=references,
                                                                        cache_dir=options.get("cache_dir")))
        sig = av.averitec_signature(profile=self.name, engine=inputs.engine, lenience=lenience)
        extra = None
        if options.get("evidence_scorer"):  # never official: added beside the figures, named in the signature
            extra, extra_sig = _extra_evidence_scores(options["evidence_scorer"], tasks=tasks, gold=gold)
            sig = extend_signature(sig, embed_signature(EVIDENCE_SCORER, extra_sig))
        summary = av.summary_head(profile=self.name, sig=sig, lenience=lenience, means=evidence.means())
        if extra is not None:
            summary["evidence_scorer"] = {"spec": options["evidence_scorer"], "signature": extra_sig,
                                          "mean": sum(extra) / n if n else 0.0, "official": False}
        pred_labels = [p.pred_label for p in preds]
        gold_labels, correct = av.label_correctness(gold, pred_labels)
        per_level = av.thresholded(evidence.qa, correct)
        if metric == "all":
            summary["veracity"] = av.veracity(gold_labels=gold_labels, pred_labels=pred_labels, correct=correct)
            summary["averitec_score"] = av.level_means(per_level)
            summary["by_claim_type"] = {
                threshold_key(TYPE_THRESHOLD): by_claim_type(
                    evidence_scores=evidence.qa, claim_types=[g.claim_types for g in gold], threshold=TYPE_THRESHOLD
                )
            }
        per_claim = _per_claim(evidence, extra=extra, labels=(correct, per_level) if metric == "all" else None)
        return av.result(profile=self.name, sig=sig, summary=summary, inputs=inputs,
                      pred_labels=pred_labels, values=per_claim)


#: The name an ``--evidence-scorer``'s signature is embedded under in the score's (``evidence-scorer.metric:…``).
EVIDENCE_SCORER = "evidence-scorer"


def _extra_evidence_scores(spec: str, *, tasks: _Tasks, gold: Sequence[Any]) -> tuple[list[float], str]:
    """(per-claim scores, signature) of the ``--evidence-scorer`` on each claim's Q+A strings
    (the claim texts and gold labels go to the scorers that judge verdicts)."""
    scorer = _string_list_scorer(spec)
    scores = scorer.score_strings(predicted=[t.candidates for t in tasks.qa], references=[t.references for t in tasks.qa],
                                  claims=[g.claim for g in gold], labels=[g.label for g in gold])
    return scores, scorer.signature()


class _Tasks(NamedTuple):
    """The Hungarian-METEOR tasks of every claim, per evidence score.

    ``raw`` holds one task per claim whose gold has an answer (``has_answers``).
    """

    q: list[HungarianTask]
    qa: list[HungarianTask]
    a: list[HungarianTask]
    raw: list[HungarianTask]
    has_answers: list[bool]


def _tasks(preds: Sequence[Any], gold: Sequence[Any]) -> _Tasks:
    """Predicted against gold strings, as the official scorer builds them (module docstring)."""
    tasks = _Tasks([], [], [], [], [bool(raw_answers(g.questions)) for g in gold])
    for p, g in zip(preds, gold, strict=True):
        if p.evidence is not None:
            src_q = [e.question for e in p.evidence[:MAX_EVIDENCE]]
            src_a = [e.answer for e in p.evidence[:MAX_EVIDENCE]]
        else:
            src_q = src_a = list(p.string_evidence or ())[:MAX_EVIDENCE]
        src_qa = ([e.question + " " + e.answer for e in p.evidence or ()] + list(p.string_evidence or ()))[:MAX_EVIDENCE]
        tasks.q.append(HungarianTask(tuple(src_q), tuple(q.question for q in g.questions)))
        tasks.qa.append(HungarianTask(tuple(src_qa), tuple(qa_strings(g.questions))))
        tasks.a.append(HungarianTask(tuple(src_a), tuple(answer_strings(g.questions))))
        if raw_answers(g.questions):
            tasks.raw.append(HungarianTask(tuple(src_a), tuple(raw_answers(g.questions))))
    return tasks


class _EvidenceScores(NamedTuple):
    """Per-claim evidence scores (claim order)."""

    q: list[float]
    qa: list[float]
    a: list[float]
    raw: list[float]

    def means(self) -> dict[str, Sequence[float]]:
        """The summary's evidence figures, by name, in the summary's order."""
        return {"questions_only": self.q, "answers_only": self.raw, "answers_only_averitec_tools": self.a,
                "questions_answers": self.qa}


def _evidence_scores(tasks: _Tasks, *, engine: Any, jobs: int | None, progress: bool, n: int,
                     reference_cache: Any) -> _EvidenceScores:
    """Score every task in one METEOR pass; a claim without gold answer scores 0 answers-only."""
    values = score_tasks(
        [*tasks.q, *tasks.qa, *tasks.a, *tasks.raw], engine=engine, jobs=jobs, progress=progress, n_claims=n,
        claims=[*range(n), *range(n), *range(n), *(i for i, ok in enumerate(tasks.has_answers) if ok)],
        reference_cache=reference_cache,
    )
    raw_iter = iter(values[3 * n :])
    return _EvidenceScores(values[:n], values[n : 2 * n], values[2 * n : 3 * n],
                           [next(raw_iter) if ok else 0.0 for ok in tasks.has_answers])


def _per_claim(evidence: _EvidenceScores, *, extra: Sequence[float] | None,
               labels: tuple[Sequence[bool], Any] | None) -> list[dict[str, float]]:
    """Each claim's values: the evidence scores, the non-official scorer's, then (``labels``:
    correctness and the per-λ results, with ``metric == "all"``) label accuracy and the AVeriTeC scores."""
    acc_key, level_keys = claim_key(LABEL_ACCURACY), [claim_key(AVeriTeCScore(threshold=t)) for t in AVERITEC_THRESHOLDS]
    per_claim = []
    for i in range(len(evidence.q)):
        vals: dict[str, float] = {
            "questions_only": evidence.q[i],
            "questions_answers": evidence.qa[i],
            "answers_only": evidence.raw[i],
            "answers_only_averitec_tools": evidence.a[i],
        }
        if extra is not None:
            vals["evidence_scorer"] = extra[i]
        if labels is not None:
            correct, per_level = labels
            vals[acc_key] = float(correct[i])
            for k, key in enumerate(level_keys):
                vals[key] = float(per_level[i][k])
        per_claim.append(vals)
    return per_claim
