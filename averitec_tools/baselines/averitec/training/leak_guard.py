"""What the AVeriTeC baseline trains on, as hashes: the proof that scored labels never reach a fit.

The reranker, verdict and justification models train on the training split minus every
claim whose normalised text (:func:`~averitec_tools.leakage.duplicates.normalise_claim`)
equals a scored claim's (:func:`~averitec_tools.baselines.averitec.io.data.without_scored_claims`);
the scored claims enter only through :func:`scored_texts`. :func:`fit_inputs` hashes the
exact example sets each stage's training is fed (its train and held-out shares) and the
decision slice the ``decision`` settings are chosen on (:mod:`.decision_slice`), without
training: tests/test_r2vc_leak_guard.py checks they do not move when the scored claims'
labels are shuffled, and do move when a scored claim's normalised twin is planted.

Example:
    >>> from averitec_tools.baselines.averitec.io.data import ClaimItem
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> scored_texts([ClaimItem(0, AVeriTeCClaim(claim="x", label="Refuted"))])
    ['x']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.leakage.duplicates import rows_digest


def scored_texts(claims: Sequence[ClaimItem]) -> list[str]:
    """The only thing training reads of the scored claims: their texts."""
    return [c.claim for c in claims]


def fit_inputs(cfg: Any, *, scored: Sequence[ClaimItem]) -> dict[str, Any]:
    """Hashes of every training input of ``cfg`` when ``scored`` are the claims run (no training)."""
    from averitec_tools.baselines.averitec.stages.reranker import reranker_groups
    from averitec_tools.baselines.averitec.stages.verdict import verdict_examples
    from averitec_tools.baselines.averitec.training.checkpoints import _split, training_claims

    claims, info = training_claims(cfg, exclude=scored_texts(scored))
    out: dict[str, Any] = {"train_duplicates_dropped": info["dropped_scored_claims"],
                           "training_claims": rows_digest((c.claim_id, c.claim, c.record.label) for c in claims)}
    r_train, r_held = _split(claims, cfg.reranker.train)
    out["reranker"] = rows_digest(
        [g for part, seed in ((r_train, 0), (r_held, 1))
         for g in reranker_groups(part, seed=cfg.reranker.train.seed + seed, negatives=cfg.reranker.negatives,
                                  style=cfg.reranker.input)])
    v_train, v_held = _split(claims, cfg.verdict.train)
    out["verdict"] = rows_digest(verdict_examples(v_train, style=cfg.verdict.input)
                                 + verdict_examples(v_held, style=cfg.verdict.input))
    from averitec_tools.baselines.averitec.training.decision_slice import decision_slice

    # the claims the ``decision`` settings are chosen on (their labels are training labels)
    out["decision_slice"] = rows_digest((c.claim_id, c.claim, c.record.label)
                                        for c in decision_slice(cfg, claims=claims))
    j_train, j_held = _split(claims, cfg.justification.train)
    out["justification"] = rows_digest([[c.claim_id for c in j_train], [c.claim_id for c in j_held]])
    return out


__all__ = ["fit_inputs", "scored_texts"]
