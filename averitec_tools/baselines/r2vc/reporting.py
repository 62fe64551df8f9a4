"""What a run reports beyond its predictions: the summary, components, fallbacks, gate check.

* :func:`run_summary` — the run's :class:`~averitec_tools.baselines._run.summary.RunSummary`:
  counts, labels, per-stage timings, ``components`` (stage → model id and revision, or the
  named ablation/fallback, :func:`describe_components`), ``fallbacks`` (kind → count, kinds
  in :data:`FALLBACK_KINDS`), ``warnings`` and ``decision`` (the emitted decisions against
  gold labels, :func:`decision_metrics`).
* :func:`gate_warning` — warns when no candidate of the calibration slice passes both
  gates (π ≥ τ_cal and s_ver ≥ τ_ver).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines._run.loop import ClaimsRun
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.io.formats import FALLBACK_EVIDENCE

#: Per-claim fallbacks counted in ``RunSummary.fallbacks``.
FALLBACK_KINDS: dict[str, str] = {
    "no_candidates": "empty retrieval: abstained without candidates (confidence 0)",
    "uncited_top_evidence": f"the chosen candidate cited nothing: the top {FALLBACK_EVIDENCE} "
    "retrieved passages are listed as evidence",
    "unparseable_output": "a generator output had no label: kept as an Uncertain candidate",
    "template_question": "the question writer's output was not a question: 'Is it true that <claim>?'",
    "questions_not_written": "a FEVER/VitaminC claim: its output format has no questions, so none were written",
}


#: The keys of an R2VC run summary, in the order ``--json`` lists them (then ``extra``).
SUMMARY_LAYOUT: tuple[str, ...] = (
    "out", "config", "format", "n_claims", "n_resumed", "n_processed", "labels", "n_abstained", "n_candidates",
    "n_malformed", "stage_seconds", "seconds_per_claim", "seconds_per_candidate", "wall_seconds",
    "claims_per_second", "components", "fallbacks", "warnings", "decision")


def run_summary(pipe: Any, *, claims: Sequence[ClaimInput], done: ClaimsRun, totals: RunTotals,
                out: str | os.PathLike[str], output_format: str, wall_seconds: float,
                warnings: list[str]) -> RunSummary:
    """The summary of a run of ``pipe``: counts, labels, timings (per claim processed, per candidate),
    components, fallbacks, the emitted decisions against gold (:func:`decision_metrics`) and
    :func:`run_extra`."""
    processed = max(len(claims) - done.n_resumed, 0)
    seconds = totals.stage_seconds
    figures = {
        "n_processed": processed, "n_abstained": totals.n_abstained, "n_candidates": totals.n_candidates,
        "n_malformed": totals.n_malformed, "stage_seconds": seconds,
        "seconds_per_claim": {k: (v / processed if processed else 0.0) for k, v in seconds.items()},
        "seconds_per_candidate": {k: (seconds[k] / totals.n_candidates if totals.n_candidates else 0.0)
                                  for k in ("generate", "verify")},
        "wall_seconds": wall_seconds, "claims_per_second": processed / wall_seconds if wall_seconds > 0 else 0.0,
        "decision": decision_metrics(claims=claims, records=done.records,
                                     on_abstain=pipe.config.calibration.on_abstain),
    }
    labels = Counter(r.get("pred_label", r.get("predicted_label")) for r in done.records)
    return RunSummary(out=str(out), config=pipe.config.name, output_format=output_format, n_claims=len(claims),
                      n_resumed=done.n_resumed, labels=dict(sorted(labels.items())), components=pipe.components,
                      fallbacks={k: int(totals.fallbacks.get(k, 0)) for k in FALLBACK_KINDS}, figures=figures,
                      layout=SUMMARY_LAYOUT, warnings=warnings,
                      extra=run_extra(pipe, claims=claims, records=done.records))


def describe_components(config: Any, *, retriever: Any, generator: Any, verifier: Any, calibrator: Any,
                        question_writer: Any) -> dict[str, Any]:
    """Stage → what runs it: a model id (and revision when known) or a named ablation.

    Builders may refine the entries (corpus, revisions) before they build the pipeline;
    this is the default read off the stage objects (the ``no_calibration`` ablation drops
    the calibrator; no question writer is the template one).
    """
    from averitec_tools.baselines.r2vc.stages.questions import FallbackQuestionWriter

    cfg = config
    question_writer = question_writer or FallbackQuestionWriter()
    components: dict[str, Any] = {
        "retrieval": {
            "retriever": getattr(retriever, "name", None) or "none (no retriever: every claim abstains)",
            "sparse": cfg.retrieval.sparse or "none" + (" (ablation:dense_only)" if cfg.ablation.dense_only else ""),
            "dense": cfg.retrieval.dense_model or "none" + (" (ablation:sparse_only)" if cfg.ablation.sparse_only else ""),
        },
        "generator": getattr(generator, "name", type(generator).__name__),
        "verifier": {
            "backend": verifier.nli.name,
            "score": verifier.score,
            "pair_order": getattr(verifier.nli.backend, "pair_order", cfg.verifier.pair_order),
        },
        "question_writer": getattr(question_writer, "name", type(question_writer).__name__),
    }
    index_builds = getattr(retriever, "index_builds", None)
    if index_builds:  # indexes that were missing and built on a scale-out engine for this run
        components["retrieval"]["index_builds"] = dict(index_builds)
    cal = None if cfg.ablation.no_calibration else calibrator
    if cal is None:
        components["calibrator"] = "ablation:no_calibration (π = s_ver clipped to [0, 1])"
    else:
        components["calibrator"] = getattr(cal, "source", None) or type(cal).__name__
    if cfg.ablation.nli_only:
        components["generator"] = f"ablation:nli_only ({components['generator']})"
    return components


def gate_warning(pipe: Any) -> str | None:
    """A warning when no calibration-slice candidate passes both gates, else None.

    Reads the (π, s_ver) Pareto frontier that :meth:`Calibrator.fit` records over every
    candidate of its fit slice; without a calibrator there is no slice to check.
    """
    cal = pipe.calibrator
    frontier = None if cal is None else (getattr(cal, "fit_info", None) or {}).get("gate_frontier")
    if not frontier:
        return None
    c = pipe.config.calibration
    if not c.abstain:
        return None
    ok = any(pi >= c.tau_cal and sv >= c.tau_ver for pi, sv in frontier)
    if ok:
        return None
    best_pi = max(p for p, _ in frontier)
    best_sv = max(v for _, v in frontier)
    msg = (f"config {pipe.config.name!r}: no candidate of the calibration slice passes both gates "
           f"(π ≥ τ_cal = {c.tau_cal}, s_ver ≥ τ_ver = {c.tau_ver}; slice maxima π {best_pi:.3f}, "
           f"s_ver {best_sv:.3f}): expect every claim to abstain")
    return msg


#: How an abstention is scored in the output's label space, by ``calibration.on_abstain``.
ABSTENTION_SCORING: dict[str, str] = {
    "uncertain": "an abstention emits Uncertain (AVeriTeC: Not Enough Evidence, FEVER: NOT ENOUGH INFO): "
    "correct only when that is the gold label",
    "candidate": "an abstention emits the chosen candidate's label (the verdict head's where one decides) with "
    "r2vc.abstained = true: `averitec "
    "score` scores that label (full coverage); coverage, covered_accuracy and aurc count the claim as "
    "abstained",
}


def decision_metrics(*, claims: Sequence[ClaimInput], records: Sequence[dict[str, Any]],
                     on_abstain: str = "uncertain") -> dict[str, Any]:
    """The *emitted* decisions against gold labels, in the label space the output is scored in.

    Correctness is the record's ``pred_label`` (``predicted_label`` for FEVER output)
    equal to the claim's gold label in the same space — AVeriTeC's four labels, so a
    Conflicting Evidence/Cherrypicking claim is never right — exactly what
    ``averitec score`` counts, so ``accuracy`` equals its label accuracy on the same
    file. ``coverage`` = share of claims not abstained; ``covered_accuracy`` and
    ``selective_risk`` = accuracy and error rate of the covered claims; ``aurc`` ranks
    every emitted label by π with the abstained claims after all accepted ones (ranking
    score (1 + π)/2 when accepted, π/2 when abstained); ``aurc_constant`` is the AURC of
    a constant confidence (the error rate). Claims without a gold label are skipped.

    Example:
        >>> c = [ClaimInput(0, "a", "False", "Refuted"), ClaimInput(1, "b", "Uncertain", "Not Enough Evidence")]
        >>> r = [{"pred_label": "Refuted", "confidence": 0.9, "r2vc": {"abstained": False}},
        ...      {"pred_label": "Supported", "confidence": 0.2, "r2vc": {"abstained": True}}]
        >>> d = decision_metrics(claims=c, records=r, on_abstain="candidate")
        >>> d["accuracy"], d["coverage"], d["covered_accuracy"], d["aurc"]
        (0.5, 0.5, 1.0, 0.25)
    """
    from averitec_tools.baselines.r2vc.io.claims import scored_gold
    from averitec_tools.metrics.selective import aurc

    pairs = [(c, r) for c, r in zip(claims, records, strict=True) if c.gold_label_raw is not None]
    if not pairs:
        return {}
    conf, correct, covered = [], [], []
    spaces = set()
    for claim, rec in pairs:
        space = "averitec" if "pred_label" in rec else "fever"
        spaces.add(space)
        emitted = rec.get("pred_label", rec.get("predicted_label"))
        abstained = bool(rec.get("r2vc", {}).get("abstained"))
        pi = min(max(float(rec.get("confidence", 0.0)), 0.0), 1.0)
        conf.append(pi / 2 if abstained else (1.0 + pi) / 2)
        correct.append(int(emitted == scored_gold(claim, space=space)))
        covered.append(not abstained)
    n_cov = sum(covered)
    right_cov = sum(ok for ok, cov in zip(correct, covered, strict=True) if cov)
    accuracy = sum(correct) / len(pairs)
    return {
        "n": len(pairs),
        "label_space": "/".join(sorted(spaces)),
        "abstention_scoring": ABSTENTION_SCORING[on_abstain],
        "accuracy": accuracy,
        "coverage": n_cov / len(pairs),
        "covered_accuracy": right_cov / n_cov if n_cov else None,
        "selective_risk": 1 - right_cov / n_cov if n_cov else None,
        "aurc": aurc(confidences=conf, correct=correct),
        "aurc_constant": 1 - accuracy,
    }


def run_extra(pipe: Any, *, claims: Sequence[ClaimInput], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The summary's extra keys: fitted values, ``leak_guard``, ``oracle_corpus``, gated/ungated
    figures (:func:`~averitec_tools.baselines.r2vc.paper_scores.paper_scores`) and the ``signature``.

    Example:
        >>> from types import SimpleNamespace
        >>> pipe = SimpleNamespace(fitted=None, leak_guard=None, components={}, config=SimpleNamespace(name="x"))
        >>> run_extra(pipe, claims=[], records=[])["signature"][:24]
        'r2vc-run|config:x|corpus'
    """
    from averitec_tools.baselines.r2vc.paper_scores import paper_scores, run_signature

    corpus = pipe.components.get("corpus")
    oracle = corpus.get("oracle_corpus") if isinstance(corpus, dict) else None
    out: dict[str, Any] = {"fitted": pipe.fitted} if pipe.fitted else {}
    if getattr(pipe, "leak_guard", None) is not None:
        out["leak_guard"] = pipe.leak_guard
    if oracle is not None:
        out["oracle_corpus"] = oracle
    rule = getattr(pipe, "conflict_rule", None)
    if rule is not None:  # which claims' labels came from the claim-level rule, not a candidate
        out["claim_rules"] = {"conflict_rule": rule.to_dict(),
                              "n_conflicting": sum(r.get("r2vc", {}).get("rule_label") is not None for r in records)}
    out |= paper_scores(claims=claims, records=records)
    space = "fever" if records and "pred_label" not in records[0] else "averitec"
    dev = bool(corpus.get("dev_annotations")) if isinstance(corpus, dict) else False
    out["signature"] = run_signature(config=pipe.config.name, oracle_corpus=oracle, space=space, dev_annotations=dev)
    return out


class RunTotals:
    """Per-stage seconds and counts over the claims a run predicted (not those it resumed)."""

    def __init__(self, *, stages: Sequence[str]) -> None:
        self.stage_seconds = dict.fromkeys(stages, 0.0)
        self.n_abstained = self.n_malformed = self.n_candidates = 0
        self.fallbacks: Counter[str] = Counter()

    def add(self, pred: Any) -> None:
        """Add one :class:`~averitec_tools.baselines.r2vc.io.formats.ClaimPrediction`."""
        for stage, sec in pred.timings.items():
            self.stage_seconds[stage] += sec
        self.n_abstained += pred.abstained
        self.n_malformed += pred.n_malformed
        self.n_candidates += pred.n_candidates
        self.fallbacks.update(pred.fallbacks)


__all__ = ["FALLBACK_KINDS", "SUMMARY_LAYOUT", "RunTotals", "describe_components", "gate_warning", "run_summary"]
