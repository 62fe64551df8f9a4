"""The ``averimatec`` profile's result: per-claim values, the four columns, the signature.

Shared by a judged run (:mod:`averitec_tools.scoring.averimatec_run`) and a replay of the
organisers' intermediate file (:mod:`averitec_tools.scoring.averimatec_replay`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.metrics.averimatec import RATING_PASS, ClaimScores, aggregate, passes
from averitec_tools.metrics.ev2r import ThresholdPreset
from averitec_tools.metrics.signature import render_signature, threshold_field

#: The four leaderboard columns (``verdict`` is the AVerImaTeC score).
COLUMNS = ("question", "evidence", "verdict", "justification")


def clean(value: object) -> str:
    """A signature field value (``|`` separates fields, so it never appears inside one).

    Example:
        >>> clean("openai:my|model")
        'openai:my/model'
    """
    return str(value).replace("|", "/")


def column_values(s: ClaimScores, rule: ThresholdPreset) -> dict[str, float]:
    """A claim's per-claim values: averaging each over claims gives the summary's column.

    Example:
        >>> from averitec_tools.metrics.averimatec import AVERIMATEC_PRESETS
        >>> column_values(ClaimScores(0.5, 0.4, 1.0, 0.8), AVERIMATEC_PRESETS.get("notebook"))
        {'question': 0.5, 'evidence': 0.4, 'verdict': 0.0, 'justification': 0.0, 'label_accuracy': 1.0}
    """
    ok = passes(s.evidence, rule)
    return {"question": s.question, "evidence": 0.0 if s.evidence is None else s.evidence,
            "verdict": s.verdict if ok else 0.0, "justification": s.justification if ok else 0.0,
            "label_accuracy": s.verdict}


def signature(opts: Mapping[str, Any], *, judge: Sequence[tuple[str, Any]]) -> str:
    """The averimatec signature: the judge part, then the arithmetic's fixed and chosen rules."""
    rule: ThresholdPreset = opts["rule"]
    return render_signature([
        ("profile", "averimatec"), ("metric", "averimatec-score"), *judge,
        ("rating_pass", f"{RATING_PASS}(>=)"), ("no_evidence", 0),
        ("thr", threshold_field(rule.threshold, rule.comparison)), ("thr_preset", rule.name),
        ("align", opts["averimatec_align"]),
    ])


@dataclass(frozen=True)
class Assembled:
    """A run's outcome, ready to become the profile's result: per-claim scores (in gold order),
    ``(gold label, predicted verdict)`` per claim, the signature, summary fields beyond the
    columns, why claims are unscored (``None``: scored) and warnings."""

    scores: Sequence[ClaimScores]
    labels: Sequence[tuple[str, str]]
    signature: str
    extra: Mapping[str, Any]
    unscored: Sequence[str | None] = ()
    warnings: Sequence[str] = ()

    def reasons(self) -> list[str | None]:
        return list(self.unscored) or [None] * len(self.scores)


def summary(name: str, run: Assembled, opts: Mapping[str, Any]) -> dict[str, Any]:
    """The ``--json`` object: the four columns and label accuracy first, then the rule and the run."""
    rule: ThresholdPreset = opts["rule"]
    scores = run.scores
    scored = [s for s, r in zip(scores, run.reasons(), strict=True) if r is None]
    columns = aggregate(scored, rule)
    columns["label_accuracy"] = sum(s.verdict for s in scores) / len(scores) if scores else math.nan
    return {
        "profile": name, "signature": run.signature, "n_claims": len(scores),
        **{k: columns[k] for k in (*COLUMNS, "label_accuracy")},
        "threshold": {"preset": rule.name, "threshold": rule.threshold, "comparison": rule.comparison,
                      "source": rule.source},
        "alignment": opts["averimatec_align"],
        "claims_without_evidence_score": sum(1 for s in scores if s.evidence is None),
        **run.extra,
    }


def per_claim_values(run: Assembled, rule: ThresholdPreset) -> list[dict[str, float]]:
    """Each claim's values (an unscored claim's four columns NaN, its label accuracy kept)."""
    out = []
    for s, reason in zip(run.scores, run.reasons(), strict=True):
        values = column_values(s, rule)
        if reason is not None:
            values.update(dict.fromkeys(COLUMNS, math.nan))
        out.append(values)
    return out


__all__ = ["COLUMNS", "Assembled", "clean", "column_values", "per_claim_values", "signature", "summary"]
