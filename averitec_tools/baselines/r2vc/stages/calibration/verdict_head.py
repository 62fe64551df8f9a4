"""The offline configuration's final verdict: a claim-level head over the prior and the pool.

``offline.verdict_head: prior+pool`` (``offline-minilm``; issue 37) decides each AVeriTeC
claim's label with :class:`VerdictHead`: the claim-only probe's log-probabilities
(:class:`~averitec_tools.baselines._run.claim_prior.ClaimPrior`) and the statistics of the
verifier's NLI probabilities over the claim's retrieved pool
(:mod:`.pool_features`) go through a
:class:`~averitec_tools.baselines._run.claim_head.ClaimHead` fitted on the calibration
slice (:mod:`averitec_tools.baselines.r2vc.offline.head`). Its confidence (the head's
probability of its label) is the claim's ``confidence``, and the paper-style gate is one
threshold on it, ``tau``, fitted on the slice's out-of-fold confidences for the target
coverage: a claim below it is ``abstained`` (scored as Not Enough Evidence by
``gated_paper``). The candidates, π and s_ver stay in the record (``r2vc.candidate_label``,
``s_ver``); ``r2vc.head_label`` is the head's label, ``pred_label`` unless the claim
abstained as Uncertain. FEVER claims (three labels) keep the candidate decision.

Example:
    >>> from averitec_tools.baselines._run.claim_head import ClaimHead
    >>> from averitec_tools.baselines._run.claim_prior import ClaimPrior
    >>> prior = ClaimPrior(coef=np.zeros((4, 2)), intercept=np.zeros(4), c=1.0)   # uniform: log 1/4 each
    >>> names = tuple(f"log_prior_{i}" for i in range(4)) + POOL_FEATURES
    >>> coef = np.zeros((4, len(names)))
    >>> coef[0, names.index("ent_max")] = 4.0   # Supported rises with the strongest entailment
    >>> head = ClaimHead(features=names, mean=np.zeros(len(names)), scale=np.ones(len(names)), coef=coef,
    ...                  intercept=np.array([0.0, 1.0, -2.0, -2.0]), offsets=np.zeros(4), c=1.0)
    >>> vh = VerdictHead(head=head, prior=prior, tau=0.5, pool=2)
    >>> uniform = np.log(np.full((1, 4), 0.25))
    >>> v = vh.decide(uniform, np.array([[0.0, 0.1, 0.9]]))   # logits 3.6, 1, -2, -2: e^3.6 / sum
    >>> v.label, round(v.confidence, 3), v.abstained
    ('Supported', 0.924, False)
    >>> vh.decide(uniform, np.zeros((0, 3))).label   # nothing retrieved: the intercepts decide
    'Refuted'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import ClaimHead
from averitec_tools.baselines._run.claim_prior import ClaimPrior
from averitec_tools.baselines.r2vc.stages.calibration.pool_features import (
    POOL_FEATURES,
    pool_features,
)

#: Names of the prior's features (log-probabilities, AVeriTeC label order).
PRIOR_FEATURES: tuple[str, ...] = tuple(f"log_prior_{i}" for i in range(4))
#: ``offline.verdict_head`` values: the features each reads (``off``: the candidate decision).
HEAD_FEATURES: dict[str, tuple[str, ...]] = {"off": (), "prior+pool": PRIOR_FEATURES + POOL_FEATURES}


def head_rows(log_prior: np.ndarray, pools: list[np.ndarray], *, pool: int) -> np.ndarray:
    """Feature rows: each claim's prior log-probabilities, then its pool's :data:`POOL_FEATURES`.

    Example:
        >>> head_rows(np.log(np.full((1, 4), 0.25)), [np.array([[0.2, 0.3, 0.5]])], pool=2).round(3).tolist()
        [[-1.386, -1.386, -1.386, -1.386, 0.5, 0.2, 0.5, 0.2, 0.5, 0.2, 1.0, 0.5]]
    """
    stats = np.stack([pool_features(p, pool=pool) for p in pools]) if pools else np.zeros((0, len(POOL_FEATURES)))
    return np.hstack([np.asarray(log_prior, dtype=np.float64).reshape(len(pools), -1), stats])


def log_proba(p: np.ndarray) -> np.ndarray:
    """Log-probabilities with a floor (a label the probe never saw has probability 0)."""
    return np.log(np.clip(np.asarray(p, dtype=np.float64), 1e-12, None))


@dataclass(frozen=True)
class HeadVerdict:
    """The head's decision for one claim (``tau``: the gate it was held against)."""

    label: str
    confidence: float
    abstained: bool
    tau: float = 0.0

    def fields(self, *, on_abstain: str) -> dict[str, Any]:
        """What the verdict sets in the claim's prediction: ``label`` is the head's, or ``Uncertain``
        where it abstains as Uncertain (the candidate's label stays ``candidate_label``).

        Example:
            >>> v = HeadVerdict("Refuted", 0.4, True, 0.5)
            >>> v.fields(on_abstain="uncertain")["label"], v.fields(on_abstain="candidate")["label"]
            ('Uncertain', 'Refuted')
        """
        sign = "<" if self.abstained else "≥"
        as_uncertain = self.abstained and on_abstain == "uncertain"
        return {"head_label": self.label, "confidence": self.confidence, "abstained": self.abstained,
                "rule_label": None, "label": "Uncertain" if as_uncertain else self.label,
                "reason": f"verdict head: confidence {self.confidence:.3f} {sign} tau {self.tau:.3f}"}


@dataclass(frozen=True)
class VerdictHead:
    """The fitted head with the probe it reads and its gate.

    Attributes:
        head: The claim head (features :data:`HEAD_FEATURES` ``["prior+pool"]``).
        prior: The claim-only probe for scored claims (fitted without their twins; anything with
            ``predict_texts(texts) -> (n, 4) probabilities``).
        tau: Gate: a claim whose head confidence is below it abstains (0: never).
        pool: The pool size retrieval asks for (``retrieval.top_m``; ``pool_size`` divides by it).
        info: The fit's record (the run summary's ``fitted.verdict_head``).
    """

    head: ClaimHead
    prior: ClaimPrior | Any
    tau: float
    pool: int
    info: dict[str, Any] | None = None

    def decide(self, log_prior: np.ndarray, probs: np.ndarray, *, gate: bool = True) -> HeadVerdict:
        """The verdict for one claim from its prior log-probabilities and its pool's ``(n, 3)`` NLI probabilities."""
        x = head_rows(log_prior, [np.asarray(probs).reshape(-1, 3)], pool=self.pool)
        pick, conf = self.head.decide(x)
        confidence = float(conf[0])
        return HeadVerdict(label=self.head.labels[int(pick[0])], confidence=confidence,
                           abstained=gate and confidence < self.tau, tau=self.tau)

    def verdict(self, claim: str, probs: np.ndarray, *, gate: bool = True) -> HeadVerdict:
        """The verdict for a claim text (the probe embeds it) and its pool's NLI probabilities."""
        return self.decide(log_proba(self.prior.predict_texts([claim])), probs, gate=gate)


__all__ = ["HEAD_FEATURES", "PRIOR_FEATURES", "HeadVerdict", "VerdictHead", "head_rows", "log_proba"]
