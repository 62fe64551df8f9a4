"""The claim head's features and decision (``decision.head: claim-head``, issue 37 item 3).

A claim's features: the claim-only probe's log-probabilities and the log of the verdict
model's claim distribution (the aggregation rule's outcome distribution over its evidence
pairs, :func:`~averitec_tools.baselines.averitec.stages.verdict.aggregate_probabilities`);
the head (:class:`~averitec_tools.baselines._run.claim_head.ClaimHead`, fitted on the
decision slice by :mod:`~averitec_tools.baselines.averitec.training.head_fit`) gives the label.

Example:
    >>> X = head_features(np.array([[0.2, 0.6, 0.1, 0.1]]), [np.array([[0.1, 0.8, 0.05, 0.05]])], rule="upstream")
    >>> X.shape, HEAD_FEATURES[:2]
    ((1, 8), ('prior:Supported', 'prior:Refuted'))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.labels import AVERITEC_LABELS

#: Feature names: the probe's log-probabilities, then the verdict model's claim distribution.
HEAD_FEATURES: tuple[str, ...] = tuple(f"{part}:{lab}" for part in ("prior", "verdict") for lab in AVERITEC_LABELS)

def head_features(prior: np.ndarray, claim_probs: Sequence[np.ndarray], *, rule: str) -> np.ndarray:
    """``(n, 8)`` rows: log prior, log claim distribution (floored at 1e-6) of each claim's pairs."""
    from averitec_tools.baselines.averitec.stages.verdict import aggregate_probabilities

    dist = np.stack([aggregate_probabilities(np.asarray(p, dtype=float).reshape(-1, 4), rule=rule)
                     for p in claim_probs]) if len(claim_probs) else np.zeros((0, 4))
    return np.log(np.clip(np.hstack([np.asarray(prior, dtype=float).reshape(-1, 4), dist]), 1e-6, None))


def head_decision(head: Any, prior: np.ndarray, probs: np.ndarray, *, rule: str) -> tuple[str, float, dict[str, float]]:
    """(label, confidence, probabilities) of one claim: the head's label over its features."""
    x = head_features(np.asarray(prior).reshape(1, 4), [probs], rule=rule)
    p, i = head.proba(x)[0], int(head.decide(x)[0][0])
    return head.labels[i], float(p[i]), {lab: float(x) for lab, x in zip(head.labels, p, strict=True)}


__all__ = ["HEAD_FEATURES", "head_decision", "head_features"]
