"""The ``averimatec`` profile's result: per-claim values, the four columns, the signature.

Shared by a judged run (:mod:`averitec_tools.scoring.averimatec_run`) and a replay of the
organisers' intermediate file (:mod:`averitec_tools.scoring.averimatec_replay`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from averitec_tools.metrics.averimatec import RATING_PASS, ClaimScores, aggregate, passes
from averitec_tools.metrics.ev2r import ThresholdPreset
from averitec_tools.metrics.signature import render_signature, threshold_field
from averitec_tools.records.averimatec import AVERIMATEC_LABELS
from averitec_tools.scoring.profiles.base import ClaimScore, ProfileResult

#: The four leaderboard columns (``verdict`` is the AVerImaTeC score).
COLUMNS = ("question", "evidence", "verdict", "justification")


def clean(value: object) -> str:
    """A signature field value (``|`` separates fields, so it never appears inside one)."""
    return str(value).replace("|", "/")


def column_values(s: ClaimScores, rule: ThresholdPreset) -> dict[str, float]:
    """A claim's per-claim values: averaging each over claims gives the summary's column."""
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


def result(name: str, scores: Sequence[ClaimScores], *, labels: Sequence[tuple[str, str]], opts: Mapping[str, Any],
           sig: str, extra: Mapping[str, Any], unscored: Sequence[str | None] = (), warnings: Sequence[str] = (),
           ) -> ProfileResult:
    """The profile result: summary (the four columns first), per-claim values, signature."""
    rule: ThresholdPreset = opts["rule"]
    reasons = list(unscored) or [None] * len(scores)
    scored = [s for s, r in zip(scores, reasons, strict=True) if r is None]
    columns = aggregate(scored, rule)
    columns["label_accuracy"] = sum(s.verdict for s in scores) / len(scores) if scores else math.nan
    per_claim = []
    for i, (s, reason) in enumerate(zip(scores, reasons, strict=True)):
        values = column_values(s, rule)
        if reason is not None:
            values.update(dict.fromkeys(COLUMNS, math.nan))
        per_claim.append(ClaimScore(claim_id=i, gold_label=labels[i][0], pred_label=labels[i][1], values=values,
                                    unscored=reason))
    summary: dict[str, Any] = {
        "profile": name, "signature": sig, "n_claims": len(scores),
        **{k: columns[k] for k in (*COLUMNS, "label_accuracy")},
        "threshold": {"preset": rule.name, "threshold": rule.threshold, "comparison": rule.comparison,
                      "source": rule.source},
        "alignment": opts["averimatec_align"],
        "claims_without_evidence_score": sum(1 for s in scores if s.evidence is None),
        **extra,
    }
    return ProfileResult(profile=name, signature=sig, n_claims=len(scores), summary=summary,
                         per_claim=tuple(per_claim), labels=AVERIMATEC_LABELS, warnings=tuple(warnings))


__all__ = ["COLUMNS", "clean", "column_values", "result", "signature"]
