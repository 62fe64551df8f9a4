"""The claim-level decision rules of the offline configuration, fitted on the calibration slice.

* :func:`fit_regime_thresholds` — y_NLI thresholds per evidence regime
  (:class:`~averitec_tools.baselines.r2vc.stages.verification.regimes.RegimeThresholds`):
  the slice's claims are split at quantiles of their pools' decisiveness and
  :func:`~averitec_tools.baselines.r2vc.offline.fit.fit_nli_thresholds` runs in each
  regime; a regime with fewer than ``min_claims`` claims keeps the global thresholds.
* :func:`fit_conflict_rule` — the two thresholds of the Conflicting rule
  (:class:`~averitec_tools.baselines.r2vc.stages.calibration.claim_rules.ConflictRule`) on
  a grid, maximising the slice's 4-way macro-F1 of the labels the run would emit (the
  slice claims' out-of-fold chosen labels with the rule applied); None — no rule — when
  no grid point beats leaving it off.

Example:
    >>> import numpy as np
    >>> ent = lambda e, c: np.array([[c, 1 - e - c, e]])
    >>> probs = [ent(0.9, 0.8), ent(0.9, 0.05), ent(0.05, 0.9), ent(0.85, 0.75)]
    >>> gold = ["Conflicting Evidence/Cherrypicking", "Supported", "Refuted", "Conflicting Evidence/Cherrypicking"]
    >>> fit = fit_conflict_rule(probs=probs, labels=["Supported", "Supported", "Refuted", "Refuted"], gold=gold)
    >>> fit.rule, round(fit.macro_f1, 3), round(fit.macro_f1_without, 3)
    (ConflictRule(t_ent=0.1, t_contr=0.1), 0.75, 0.333)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import (
    CONFLICTING,
    ConflictRule,
    pool_extremes,
)
from averitec_tools.baselines.r2vc.stages.verification.regimes import RegimeThresholds, decisiveness
from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.label_metrics import macro_f1

#: Thresholds tried for the Conflicting rule (max entailment, max contradiction).
CONFLICT_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(2, 20))


@dataclass(frozen=True)
class FittedConflictRule:
    """The fitted rule (None: off) with the slice figures with and without it."""

    rule: ConflictRule | None
    macro_f1: float
    macro_f1_without: float
    n_fired: int
    n_claims: int

    def summary(self) -> dict[str, Any]:
        return {"rule": None if self.rule is None else self.rule.to_dict(), "macro_f1": self.macro_f1,
                "macro_f1_without": self.macro_f1_without, "n_fired": self.n_fired, "n_claims": self.n_claims,
                "target": "maximise the slice's 4-way macro-F1 of the out-of-fold chosen labels with the rule "
                          "(off where no setting beats none)"}


def apply_conflict_rule(labels: Sequence[str], extremes: Sequence[tuple[float, float]],
                        rule: ConflictRule | None) -> list[str]:
    """``labels`` with Conflicting where ``rule`` fires on a claim's (max ent, max contr)."""
    if rule is None:
        return list(labels)
    return [CONFLICTING if e >= rule.t_ent and c >= rule.t_contr else lab
            for lab, (e, c) in zip(labels, extremes, strict=True)]


def fit_conflict_rule(*, probs: Sequence[np.ndarray], labels: Sequence[str], gold: Sequence[str],
                      grid: Sequence[float] = CONFLICT_GRID) -> FittedConflictRule:
    """The (t_ent, t_contr) maximising macro-F1 of ``labels`` with the rule; ties keep the first grid point."""
    extremes = [pool_extremes(p) for p in probs]
    without = macro_f1(gold=gold, predicted=labels, labels=AVERITEC_LABELS)
    best: tuple[float, ConflictRule | None] = (without, None)
    for te in grid:
        for tc in grid:
            rule = ConflictRule(t_ent=float(te), t_contr=float(tc))
            f1 = macro_f1(gold=gold, predicted=apply_conflict_rule(labels, extremes, rule), labels=AVERITEC_LABELS)
            if f1 > best[0] + 1e-12:
                best = (f1, rule)
    fired = apply_conflict_rule(labels, extremes, best[1])
    return FittedConflictRule(rule=best[1], macro_f1=best[0], macro_f1_without=without,
                              n_fired=sum(a == CONFLICTING for a in fired),
                              n_claims=len(labels))


@dataclass(frozen=True)
class FittedRegimes:
    """Regime thresholds with the claims and slice macro-F1 of each regime."""

    thresholds: RegimeThresholds
    per_regime: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {**self.thresholds.to_dict(), "regimes": self.per_regime,
                "split": "quantiles of the slice pools' decisiveness max_j (1 - p_neutral)",
                "target": "per regime: maximise the 4-way macro-F1 of the slice's candidates"}


def fit_regime_thresholds(*, probs: Sequence[np.ndarray], subsets: Sequence[Sequence[Sequence[int]]],
                          gold: Sequence[str], n_regimes: int, global_fit: Any, fit: Callable[..., Any],
                          min_claims: int = 40) -> FittedRegimes:
    """Edges at the slice's decisiveness quantiles and (T_ent, T_contr, δ) fitted in each regime.

    ``fit`` fits one regime's thresholds from its claims' ``probs``, ``subsets`` and ``gold``
    (:func:`~averitec_tools.baselines.r2vc.offline.fit.fit_nli_thresholds`); ``global_fit``,
    its result on the whole slice, is kept for a regime with fewer than ``min_claims`` claims.
    """
    d = np.array([decisiveness(p) for p in probs])
    edges = tuple(float(np.quantile(d, q / n_regimes)) for q in range(1, n_regimes)) if len(d) else ()
    regime = np.searchsorted(np.asarray(edges), d, side="right")
    triples, rows = [], []
    for r in range(len(edges) + 1):
        idx = [int(i) for i in np.flatnonzero(regime == r) if len(subsets[int(i)])]
        got = global_fit
        if len(idx) >= min_claims:
            got = fit(probs=[probs[i] for i in idx], subsets=[subsets[i] for i in idx], gold=[gold[i] for i in idx])
        triples.append((got.t_ent, got.t_contr, got.delta))
        rows.append({"regime": r, "n_claims": len(idx), "t_ent": got.t_ent, "t_contr": got.t_contr,
                     "delta": got.delta, "global": got is global_fit})
    return FittedRegimes(thresholds=RegimeThresholds(edges=edges, thresholds=tuple(triples)), per_regime=rows)


__all__ = ["FittedConflictRule", "FittedRegimes", "apply_conflict_rule", "fit_conflict_rule", "fit_regime_thresholds"]
