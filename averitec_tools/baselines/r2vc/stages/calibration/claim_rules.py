"""Claim-level rules over a claim's whole evidence pool, fitted on held-out training claims.

The R2VC candidates say True, False or Uncertain; AVeriTeC has a fourth verdict,
Conflicting Evidence/Cherrypicking, that no candidate can emit. :class:`ConflictRule`
gives it one: a claim whose pool holds a passage that strongly entails it *and* one that
strongly contradicts it (max entailment ≥ ``t_ent`` and max contradiction ≥ ``t_contr``
over the pool's NLI probabilities) is labelled Conflicting. The rule is ours (the paper
evaluates on FEVER/VitaminC, which have no such label); the offline configuration fits
its two thresholds on the calibration slice (``offline.conflict_rule``,
:func:`~averitec_tools.baselines.r2vc.offline.rules.fit_conflict_rule`), or leaves it off
where no setting beats none there.

Example:
    >>> import numpy as np
    >>> rule = ConflictRule(t_ent=0.8, t_contr=0.7)
    >>> pool = np.array([[0.05, 0.05, 0.9], [0.75, 0.2, 0.05]])  # contradiction, neutral, entailment
    >>> rule.applies(pool), rule.applies(pool[:1]), ConflictRule.from_dict(rule.to_dict()) == rule
    (True, False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.stages.verification.regimes import RegimeThresholds
from averitec_tools.nli import CONTR, ENT

#: The AVeriTeC label the rule emits.
CONFLICTING = "Conflicting Evidence/Cherrypicking"


def pool_extremes(probs: np.ndarray) -> tuple[float, float]:
    """(max entailment, max contradiction) over a pool's NLI probabilities (0, 0 when empty).

    Example:
        >>> pool_extremes(np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]]))
        (0.7, 0.6)
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 3)
    if not len(p):
        return 0.0, 0.0
    return float(p[:, ENT].max()), float(p[:, CONTR].max())


@dataclass(frozen=True)
class ConflictRule:
    """Label a claim Conflicting when its pool both strongly entails and strongly contradicts it."""

    t_ent: float
    t_contr: float

    def applies(self, probs: np.ndarray) -> bool:
        """Whether the pool's max entailment and max contradiction both reach the thresholds."""
        ent, contr = pool_extremes(probs)
        return ent >= self.t_ent and contr >= self.t_contr

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConflictRule:
        return cls(t_ent=float(data["t_ent"]), t_contr=float(data["t_contr"]))


@dataclass(frozen=True)
class ClaimRules:
    """The claim-level rules fitted on a calibration slice (offline): y_NLI thresholds per evidence
    regime and the Conflicting rule (None: not fitted).

    Example:
        >>> ClaimRules.from_fitted({"conflict_rule": {"rule": {"t_ent": 0.8, "t_contr": 0.7}}}).conflict_rule
        ConflictRule(t_ent=0.8, t_contr=0.7)
    """

    regime_thresholds: RegimeThresholds | None = None
    conflict_rule: ConflictRule | None = None

    @classmethod
    def from_fitted(cls, fitted: Mapping[str, Any] | None) -> ClaimRules:
        """The rules of a run summary's ``fitted`` block (none without one)."""
        fitted = fitted or {}
        regimes, conflict = fitted.get("regime_thresholds"), (fitted.get("conflict_rule") or {}).get("rule")
        return cls(regime_thresholds=RegimeThresholds.from_dict(regimes) if regimes else None,
                   conflict_rule=ConflictRule.from_dict(conflict) if conflict else None)


__all__ = ["CONFLICTING", "ClaimRules", "ConflictRule", "pool_extremes"]
