"""The fever8 profile's judge-failure modes: what a judge request that failed on the judge's
side means for a claim (``raise``, ``zero`` -- the organisers' code -- or ``unscored``), the
signature field that names the mode, and the means over the scored claims.

Under ``unscored`` a claim whose judge request failed on the judge's side (after its
retries) keeps its label accuracy and Hungarian METEOR scores, but its judge values are NaN
and it is left out of their means; ``judge.unscored`` counts it by reason
(:data:`UNSCORED_REASONS`). What the submission's content causes -- an unparseable reply,
a request refused for its content -- scores 0 in every mode
(:mod:`averitec_tools.metrics.judge_policy`), so that no failure raises a score.

Example:
    >>> failures_field("unscored", failed=1, unscored=3), FAILURE_MODE_TITLES["zero"]
    ('unscored(3)', 'official (failures score 0)')
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from averitec_tools.metrics.averitec_score import threshold_key
from averitec_tools.metrics.judge_policy import UNAVAILABLE_REASON
from averitec_tools.metrics.keys import claim_key
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY

#: Why a claim is unscored under ``judge_unscored``: only a failure on the judge's side.
UNSCORED_REASONS = (UNAVAILABLE_REASON,)
#: Per-claim values that come from the judge (NaN on an unscored claim).
JUDGE_KEYS = ("ev2r_qa_precision", "ev2r_qa_recall", "ev2r_q_precision", "ev2r_q_recall")
#: The Hungarian METEOR threshold of the old AVeriTeC score reported alongside.
METEOR_THRESHOLD = 0.25
FAILURE_MODE_TITLES = {"zero": "official (failures score 0)", "raise": "raise",
                       "unscored": "unscored (failed on the judge's side: excluded from the judge means, result incomplete)"}


def failures_field(mode: str, *, failed: int, unscored: int) -> str:
    """The signature's ``failures`` field.

    Example:
        >>> failures_field("raise", failed=0, unscored=0), failures_field("zero", failed=2, unscored=0)
        ('raise', 'zero(2)')
        >>> failures_field("unscored", failed=1, unscored=3)
        'unscored(3)'
    """
    if mode == "zero":
        return f"zero({failed})"
    return f"unscored({unscored})" if mode == "unscored" else "raise"


def means(per_claim: Sequence[Any], *, key: str) -> dict[str, float]:
    """The summary's means; the judge's over the scored claims only (NaN: none scored).

    Example:
        >>> from averitec_tools.scoring.profiles.base import ClaimScore
        >>> rows = [ClaimScore(0, "S", "S", dict.fromkeys(["ev2r_qa_precision", "ev2r_qa_recall", "ev2r_q_precision",
        ...     "ev2r_q_recall", "averitec_score_ev2r@0.5", "label_accuracy", "averitec_score_hu_meteor@0.25"], 1.0)),
        ...     ClaimScore(1, "S", "R", {**dict.fromkeys(JUDGE_KEYS + ("averitec_score_ev2r@0.5",), float("nan")),
        ...     "label_accuracy": 0.0, "averitec_score_hu_meteor@0.25": 0.0}, unscored="judge_request_failed")]
        >>> m = means(rows, key="0.5")
        >>> m["qa_r"], m["score"], m["acc"]
        (1.0, 1.0, 0.5)
    """
    names = {"qa_p": "ev2r_qa_precision", "qa_r": "ev2r_qa_recall", "q_p": "ev2r_q_precision", "q_r": "ev2r_q_recall",
             "score": f"averitec_score_ev2r@{key}", "acc": claim_key(LABEL_ACCURACY),
             "m_score": f"averitec_score_hu_meteor@{threshold_key(METEOR_THRESHOLD)}"}
    out = {}
    for short, name in names.items():
        vals = [float(c.values[name]) for c in per_claim if not math.isnan(float(c.values[name]))]
        out[short] = sum(vals) / len(vals) if vals else float("nan")
    return out


__all__ = ["FAILURE_MODE_TITLES", "JUDGE_KEYS", "UNSCORED_REASONS", "failures_field", "means"]
