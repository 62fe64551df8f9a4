"""What a claim's retrieved pool says, as numbers a claim-level head can weigh against the prior.

The offline configuration's verdict head (``offline.verdict_head``,
:mod:`averitec_tools.baselines._run.claim_head`) reads the claim-only probe's
log-probabilities and these statistics of the verifier's NLI probabilities over the claim's
evidence pool (rows in retrieval order; contradiction, neutral, entailment):

* ``ent_max`` / ``contr_max`` — the strongest entailment / contradiction in the pool;
* ``ent_top`` / ``contr_top`` — their means over the first :data:`TOP` passages (Table G.1
  scores the top 6 entailment passages);
* ``ent_mean`` / ``contr_mean`` — their means over the whole pool;
* ``decisive_share`` — the share of passages whose neutral probability is below one half;
* ``pool_size`` — passages retrieved, over the pool size asked for (own evidence removed
  can leave fewer).

Example:
    >>> p = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1], [0.1, 0.8, 0.1]])
    >>> dict(zip(POOL_FEATURES, pool_features(p, pool=4).round(3).tolist()))  # doctest: +NORMALIZE_WHITESPACE
    {'ent_max': 0.7, 'contr_max': 0.6, 'ent_top': 0.3, 'contr_top': 0.267, 'ent_mean': 0.3, 'contr_mean': 0.267,
     'decisive_share': 0.667, 'pool_size': 0.75}
"""

from __future__ import annotations

import numpy as np

from averitec_tools.nli import CONTR, ENT, NEUT

#: The passages ``ent_top`` / ``contr_top`` average over (Table G.1: top entailment passages used in scoring).
TOP = 6
POOL_FEATURES: tuple[str, ...] = ("ent_max", "contr_max", "ent_top", "contr_top", "ent_mean", "contr_mean",
                                  "decisive_share", "pool_size")


def pool_features(probs: np.ndarray, *, pool: int) -> np.ndarray:
    """:data:`POOL_FEATURES` of one pool's ``(n, 3)`` NLI probabilities (zeros for an empty pool)."""
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 3)
    if not len(p):
        return np.zeros(len(POOL_FEATURES))
    top = p[:TOP]
    return np.array([p[:, ENT].max(), p[:, CONTR].max(), top[:, ENT].mean(), top[:, CONTR].mean(),
                     p[:, ENT].mean(), p[:, CONTR].mean(), float(np.mean(p[:, NEUT] < 0.5)),
                     len(p) / max(pool, 1)])


__all__ = ["POOL_FEATURES", "TOP", "pool_features"]
