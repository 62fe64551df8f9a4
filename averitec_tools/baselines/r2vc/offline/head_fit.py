"""Fit the claim-level verdict head on the calibration slice (``offline.verdict_head``, issue 37).

The slice's claims are training claims the verifier never saw; their pools were retrieved
from the honest corpus with their own, their article's and their sibling claims' answers
excluded — the evidence a scored claim gets. :func:`fit_verdict_head` fits the head
(:class:`~averitec_tools.baselines._run.claim_head.ClaimHead`) on their pool statistics
(and, with ``offline.head_features: prior+pool``, the claim-only probe's out-of-fold
log-probabilities), its offsets for ``offline.head_objective`` on out-of-fold
probabilities, then the confidence gate on the out-of-fold confidences for
``offline.target_coverage`` (:func:`~averitec_tools.baselines.r2vc.offline.fit.fit_gates`).
Folds keep claim groups whole (normalised twins and one fact-checking article's claims).

The settings were chosen by cross-validation on the slice (``benchmarks/r2vc_head_cv.py``);
dev and the pseudo-test are never read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import (
    fit_head,
    macro_f1_index,
    out_of_fold_head_proba,
)
from averitec_tools.baselines.r2vc.stages.calibration.pool_features import (
    POOL_FEATURES,
    pool_features,
)
from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import (
    VerdictHeadRule,
    head_inputs,
)
from averitec_tools.labels import AVERITEC_LABELS

#: The prior's feature names (its log-probabilities, in label order).
PRIOR_FEATURES: tuple[str, ...] = tuple(f"log_prior:{label}" for label in AVERITEC_LABELS)


def fit_verdict_head(cfg: Any, *, pools: Sequence[np.ndarray], gold: Sequence[str], groups: np.ndarray,
                     prior_logp: np.ndarray | None = None) -> tuple[VerdictHeadRule, dict[str, Any]]:
    """The head and gate fitted on the slice claims' ``pools`` (NLI probabilities) and ``gold`` labels.

    Returns the rule and its summary (settings, offsets, gate, the slice's out-of-fold figures).
    """
    from averitec_tools.baselines.r2vc.offline.fit import fit_gates

    off = cfg.offline
    pool = np.stack([pool_features(p, pool=cfg.retrieval.top_m) for p in pools])
    X = head_inputs(pool=pool, prior_logp=prior_logp, features=off.head_features)
    names = (*PRIOR_FEATURES, *POOL_FEATURES) if off.head_features == "prior+pool" else POOL_FEATURES
    y = np.array([AVERITEC_LABELS.index(g) for g in gold])
    seed = off.seed
    head = fit_head(X, y, names=names, groups=groups, c=off.head_c, objective=off.head_objective, seed=seed)
    oof = out_of_fold_head_proba(X, y, names=names, groups=groups, c=off.head_c, seed=seed)
    pick = (np.log(np.clip(oof, 1e-12, None)) + head.offsets).argmax(axis=1)
    conf = oof[np.arange(len(y)), pick]
    gates = fit_gates(pi=conf, s_ver=np.zeros(len(y)), correct=(pick == y).astype(int),
                      target_coverage=off.target_coverage)
    rule = VerdictHeadRule(head=head, tau=gates.tau_cal, features=off.head_features)
    summary = {"features": list(names), "c": off.head_c, "objective": off.head_objective,
               "offsets": dict(zip(AVERITEC_LABELS, head.offsets.tolist(), strict=True)), "tau": gates.tau_cal,
               "slice_out_of_fold": {"claims": len(y), "accuracy": float(np.mean(pick == y)),
                                     "macro_f1": macro_f1_index(y, pick), "coverage": gates.coverage,
                                     "covered_accuracy": gates.covered_accuracy,
                                     "predicted": dict(zip(AVERITEC_LABELS, np.bincount(pick, minlength=4).tolist(),
                                                           strict=True))}}
    return rule, summary


__all__ = ["PRIOR_FEATURES", "fit_verdict_head"]
