"""What a run reports beyond its predictions: the summary, components, fallbacks, gate check.

* :class:`RunSummary` — counts, labels, per-stage timings, ``components`` (stage → model
  id and revision, or the named ablation/fallback), ``fallbacks`` (kind → count, kinds in
  :data:`FALLBACK_KINDS`), ``warnings`` and ``decision`` (the emitted decisions against
  gold labels, :func:`decision_metrics`).
* :func:`gate_warning` — warns when no candidate of the calibration slice passes both
  gates (π ≥ τ_cal and s_ver ≥ τ_ver).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines._run.spec import RunSummary as BaseRunSummary
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


@dataclass(kw_only=True)
class RunSummary(BaseRunSummary):
    """What a run did: counts, label distribution and timings (seconds); ``extra`` keys last."""

    n_abstained: int
    n_malformed: int
    n_candidates: int
    stage_seconds: dict[str, float]
    wall_seconds: float
    config: str
    format: str
    warnings: list[str] = field(default_factory=list)
    decision: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        processed = max(self.n_claims - self.n_resumed, 0)
        per_claim = {k: (v / processed if processed else 0.0) for k, v in self.stage_seconds.items()}
        per_candidate = {
            k: (self.stage_seconds[k] / self.n_candidates if self.n_candidates else 0.0)
            for k in ("generate", "verify")
        }
        return {
            "out": self.out,
            "config": self.config,
            "format": self.format,
            "n_claims": self.n_claims,
            "n_resumed": self.n_resumed,
            "n_processed": processed,
            "labels": self.labels,
            "n_abstained": self.n_abstained,
            "n_candidates": self.n_candidates,
            "n_malformed": self.n_malformed,
            "stage_seconds": self.stage_seconds,
            "seconds_per_claim": per_claim,
            "seconds_per_candidate": per_candidate,
            "wall_seconds": self.wall_seconds,
            "claims_per_second": processed / self.wall_seconds if self.wall_seconds > 0 else 0.0,
            "components": self.components,
            "fallbacks": self.fallbacks,
            "warnings": self.warnings,
            "decision": self.decision,
            **self.extra,
        }


def describe_components(pipe: Any) -> dict[str, Any]:
    """Stage → what runs it: a model id (and revision when known) or a named ablation.

    Builders may refine the entries (corpus, revisions); this is the default read off
    the stage objects.
    """
    cfg = pipe.config
    components: dict[str, Any] = {
        "retrieval": {
            "retriever": getattr(pipe.retriever, "name", None) or "none (no retriever: every claim abstains)",
            "sparse": cfg.retrieval.sparse or "none" + (" (ablation:dense_only)" if cfg.ablation.dense_only else ""),
            "dense": cfg.retrieval.dense_model or "none" + (" (ablation:sparse_only)" if cfg.ablation.sparse_only else ""),
        },
        "generator": getattr(pipe.generator, "name", type(pipe.generator).__name__),
        "verifier": {
            "backend": pipe.verifier.nli.name,
            "score": pipe.verifier.score,
            "pair_order": getattr(pipe.verifier.nli.backend, "pair_order", cfg.verifier.pair_order),
        },
        "question_writer": getattr(pipe.question_writer, "name", type(pipe.question_writer).__name__),
    }
    index_builds = getattr(pipe.retriever, "index_builds", None)
    if index_builds:  # indexes that were missing and built on a scale-out engine for this run
        components["retrieval"]["index_builds"] = dict(index_builds)
    cal = pipe.calibrator
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
    "candidate": "an abstention emits the chosen candidate's label with r2vc.abstained = true: `averitec "
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


__all__ = ["ABSTENTION_SCORING", "FALLBACK_KINDS", "RunSummary", "RunTotals", "decision_metrics", "describe_components", "gate_warning", "run_extra"]
