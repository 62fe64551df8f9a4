"""The claim-level verdict head of the offline configuration (``offline.verdict_head``; ours, issue 37).

The R2VC candidates of the NLI-only configuration can only say True, False or Uncertain, and
each reads one evidence subset; what the *pool* says as a whole — how strongly anything in
it entails or contradicts the claim, how much of it bears on the claim at all — and what
the claim's words alone suggest are left to a claim-level head:
:class:`~averitec_tools.baselines._run.claim_head.ClaimHead` over the pool's NLI statistics
(:mod:`.pool_features`) and, with ``offline.head_features: prior+pool``, the claim-only
probe's log-probabilities (:mod:`averitec_tools.baselines._run.claim_prior`). It is fitted
on the calibration slice — training claims the verifier never saw, whose pools were
retrieved as a scored claim's are — so it learns how far evidence retrieved that way can
be trusted; where it says nothing the head falls back to the label prior.

The head's label replaces the chosen candidate's (the record keeps both:
``r2vc.candidate_label``, ``r2vc.rule_label``), its probability of that label is the
claim's confidence, and one gate on it (``tau``, fitted on the slice's out-of-fold
confidences for the target coverage) replaces the paper's two.

Example:
    >>> import numpy as np
    >>> from averitec_tools.baselines._run.claim_head import fit_head
    >>> X = np.array([[0.9, 0.0], [0.8, 0.1], [0.1, 0.9], [0.0, 0.8]] * 5)
    >>> head = fit_head(X, np.array([0, 0, 1, 1] * 5), names=("a", "b"), groups=np.arange(20), c=10.0)
    >>> rule = VerdictHeadRule(head=head, tau=0.6, features="pool")
    >>> rule.decide(np.array([0.9, 0.0]))[:2], VerdictHeadRule.from_dict(rule.to_dict()).tau
    (('Supported', True), 0.6)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import ClaimHead

#: ``offline.head_features`` values: the pool's NLI statistics, with or without the probe's prior.
HEAD_FEATURES: tuple[str, ...] = ("pool", "prior+pool")


def head_inputs(*, pool: np.ndarray, prior_logp: np.ndarray | None, features: str) -> np.ndarray:
    """The head's feature rows: the probe's log-probabilities (``prior+pool``) then the pool statistics.

    Example:
        >>> head_inputs(pool=np.ones((1, 2)), prior_logp=np.zeros((1, 4)), features="prior+pool").shape
        (1, 6)
    """
    if features not in HEAD_FEATURES:
        raise ValueError(f"head features must be one of {HEAD_FEATURES}, got {features!r}")
    if features == "pool":
        return np.asarray(pool, dtype=np.float64)
    if prior_logp is None:
        raise ValueError("head features 'prior+pool' need the claim-only probe's probabilities")
    return np.hstack([np.asarray(prior_logp, dtype=np.float64), np.asarray(pool, dtype=np.float64)])


@dataclass(frozen=True)
class VerdictHeadRule:
    """A fitted head and its confidence gate.

    Attributes:
        head: The fitted head (its feature names say what it reads).
        tau: Claims whose head confidence is below it abstain (gated).
        features: ``pool`` or ``prior+pool`` (:data:`HEAD_FEATURES`).
    """

    head: ClaimHead
    tau: float
    features: str = "pool"

    @property
    def needs_prior(self) -> bool:
        """Whether the rule reads the claim-only probe."""
        return self.features == "prior+pool"

    def decide(self, row: np.ndarray) -> tuple[str, bool, float]:
        """(AVeriTeC label, accepted by the gate, confidence) of one claim's feature row."""
        pick, conf = self.head.decide(np.asarray(row, dtype=np.float64).reshape(1, -1))
        return self.head.labels[int(pick[0])], bool(conf[0] >= self.tau), float(conf[0])

    def to_dict(self) -> dict[str, Any]:
        return {"head": self.head.to_dict(), "tau": self.tau, "features": self.features}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> VerdictHeadRule:
        return cls(head=ClaimHead.from_dict(raw["head"]), tau=float(raw["tau"]), features=str(raw["features"]))


__all__ = ["HEAD_FEATURES", "VerdictHeadRule", "head_inputs"]
