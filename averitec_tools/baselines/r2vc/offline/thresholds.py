"""Decision settings fitted on held-out *training* claims (the offline configuration, §2).

The paper's y_NLI thresholds (T_ent = T_contr = 0.60, δ = 0.10) and gates (τ_cal = 0.60,
τ_ver = 0.55) were set for DeBERTa-v3-large on FEVER/VitaminC. A small verifier
fine-tuned on AVeriTeC never reaches them (every candidate Uncertain, every claim
abstained), so the offline configuration fits them on its calibration slice — training
claims held out from the verifier — and records the fitted values with the slice
(``offline.fit_thresholds``; the ``paper`` defaults stay in the configuration classes):

* :func:`fit_nli_thresholds` — (T_ent, T_contr, δ) on a grid, maximising the 4-way
  macro-F1 of the slice's candidates (each candidate's y_NLI over its evidence subset
  against the claim's gold label, a claim weighing 1 whatever its k). Macro-F1, not
  accuracy, because accuracy is maximised by predicting the majority class (Refuted)
  for every claim.
* :func:`fit_gates` — (τ_cal, τ_ver) on a grid over out-of-fold π and s_ver of each
  slice claim's chosen candidate i* (:func:`out_of_fold_choice`: calibrators fitted
  without the claim's fold), maximising the accuracy of the covered claims subject to
  a coverage of at least ``target_coverage``.

Example:
    >>> probs = [np.array([[0.1, 0.1, 0.8], [0.2, 0.7, 0.1]]), np.array([[0.7, 0.2, 0.1]])]
    >>> subsets = [[(0, 1)], [(0,)]]
    >>> fit = fit_nli_thresholds(probs=probs, subsets=subsets, gold=["Supported", "Refuted"],
    ...                          grid=(0.5, 0.6), deltas=(0.1,))
    >>> (fit.t_ent, fit.t_contr, fit.delta, fit.macro_f1)  # S and R right; NEE and C have no claims
    (0.5, 0.5, 0.1, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.label_metrics import weighted_macro_f1
from averitec_tools.nli import CONTR, ENT

#: Threshold grid for T_ent and T_contr, and the margins δ tried.
THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.05 * i, 2) for i in range(2, 19))
DELTA_GRID: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2)
_S, _R, _N = "Supported", "Refuted", "Not Enough Evidence"


@dataclass(frozen=True)
class FittedThresholds:
    """Fitted y_NLI thresholds and the slice figure they reach."""

    t_ent: float
    t_contr: float
    delta: float
    macro_f1: float
    n_claims: int
    n_candidates: int


def fit_nli_thresholds(
    *,
    probs: Sequence[np.ndarray],
    subsets: Sequence[Sequence[Sequence[int]]],
    gold: Sequence[str],
    grid: Sequence[float] = THRESHOLD_GRID,
    deltas: Sequence[float] = DELTA_GRID,
    labels: Sequence[str] = AVERITEC_LABELS,
) -> FittedThresholds:
    """(T_ent, T_contr, δ) maximising the weighted 4-way macro-F1 of the slice's candidates.

    Args:
        probs: Per claim, the NLI probabilities of its evidence pool (``(n, 3)``).
        subsets: Per claim, each candidate's evidence subset (indices into the pool).
        gold: Per claim, the gold label in the scored space (AVeriTeC's four labels).
        grid: Values tried for T_ent and T_contr.
        deltas: Margins δ tried.
        labels: The labels macro-F1 averages over.

    Ties keep the first grid point (lowest thresholds, then lowest δ).
    """
    ent, con, weight, gold_c = [], [], [], []
    for p, subs, g in zip(probs, subsets, gold, strict=True):
        p = np.asarray(p).reshape(-1, 3)
        if not len(subs) or not len(p):
            continue
        for s in subs:
            ent.append(p[list(s), ENT].max())
            con.append(p[list(s), CONTR].max())
            weight.append(1.0 / len(subs))
            gold_c.append(g)
    E, C, W, G = np.array(ent), np.array(con), np.array(weight), np.array(gold_c)
    best: tuple[float, float, float, float] | None = None
    for te in grid:
        for tc in grid:
            for d in deltas:
                pred = np.where((te <= E) & (C + d <= E), _S, np.where((tc <= C) & (E + d <= C), _R, _N))
                f1 = weighted_macro_f1(gold=G, predicted=pred, weights=W, labels=labels)
                if best is None or f1 > best[3] + 1e-12:
                    best = (float(te), float(tc), float(d), f1)
    if best is None:
        raise ValueError("no candidates to fit the NLI thresholds on")
    return FittedThresholds(t_ent=best[0], t_contr=best[1], delta=best[2], macro_f1=best[3],
                            n_claims=len({i for i, s in enumerate(subsets) if len(s)}), n_candidates=len(E))


@dataclass(frozen=True)
class FittedGates:
    """Fitted gates and what they give on the slice (out-of-fold π)."""

    tau_cal: float
    tau_ver: float
    coverage: float
    covered_accuracy: float
    accuracy: float
    target_coverage: float
    n_claims: int


def fit_gates(
    *,
    pi: Sequence[float] | np.ndarray,
    s_ver: Sequence[float] | np.ndarray,
    correct: Sequence[int] | np.ndarray,
    target_coverage: float = 0.5,
) -> FittedGates:
    """(τ_cal, τ_ver) maximising covered accuracy with coverage ≥ ``target_coverage``.

    Candidate thresholds are the observed values of π and s_ver (τ_ver also −∞, i.e.
    no verifier gate); a claim is covered when π ≥ τ_cal and s_ver ≥ τ_ver. Ties keep
    the larger coverage.

    Example:
        >>> g = fit_gates(pi=[0.9, 0.8, 0.3, 0.2], s_ver=[0.5, 0.1, 0.6, 0.4], correct=[1, 0, 1, 0],
        ...               target_coverage=0.25)
        >>> g.tau_cal, g.tau_ver, g.covered_accuracy, g.coverage  # both right claims, through both gates
        (0.3, 0.4, 1.0, 0.5)
    """
    P, V, Y = np.asarray(pi, float), np.asarray(s_ver, float), np.asarray(correct, int)
    n = len(P)
    if n == 0:
        raise ValueError("no claims to fit the gates on")
    best: tuple[float, float, float, float] | None = None  # (covered acc, coverage, tau_cal, tau_ver)
    for tv in [-np.inf, *np.unique(V)]:
        ok_v = tv <= V
        for tc in np.unique(P):
            cov = ok_v & (tc <= P)
            c = cov.sum() / n
            if c + 1e-12 < target_coverage:
                continue
            acc = float(Y[cov].mean())
            if best is None or (acc, c) > best[:2]:
                best = (acc, c, float(tc), float(tv))
    assert best is not None  # the lowest thresholds cover every claim
    return FittedGates(tau_cal=best[2], tau_ver=best[3] if np.isfinite(best[3]) else -1.0, coverage=float(best[1]),
                       covered_accuracy=best[0], accuracy=float(Y.mean()), target_coverage=target_coverage,
                       n_claims=n)


@dataclass(frozen=True)
class OutOfFoldChoice:
    """Each slice claim's chosen candidate with π from calibrators not fitted on it."""

    pi: np.ndarray
    s_ver: np.ndarray
    correct: np.ndarray
    labels: list[str]


def out_of_fold_choice(examples: Sequence[Any], *, folds: int = 5, seed: int = 0, fit_on: str = "all",
                       max_iter: int = 2000, label_features: bool = False, select_by: str = "pi") -> OutOfFoldChoice:
    """π, s_ver, correctness and label of each claim's chosen candidate, π from calibrators not fitted on it.

    The claims are split into ``folds`` seeded folds; each fold's π comes from a
    calibrator fitted on the others (:func:`~averitec_tools.baselines.r2vc.stages.calibration.fitting.fit_from_examples`
    without its own held-out split); i* is chosen as the run chooses it (``select_by``).
    """
    from averitec_tools.baselines.r2vc.stages.calibration.decision import choose_index
    from averitec_tools.baselines.r2vc.stages.calibration.fitting import fit_from_examples

    n = len(examples)
    fold = np.random.default_rng(seed).permutation(n) % max(min(folds, n), 1)
    pi, sv, ok, labels = np.zeros(n), np.zeros(n), np.zeros(n, dtype=int), [""] * n
    for f in np.unique(fold):
        fit = [e for e, g in zip(examples, fold, strict=True) if g != f]
        cal = fit_from_examples(fit or list(examples), max_iter=max_iter, fit_on=fit_on, heldout_fraction=0.0,
                                seed=seed, label_features=label_features)
        for i in np.flatnonzero(fold == f):
            e = examples[int(i)]
            p = cal.predict(e.features_for(cal))
            best = choose_index(p, e.s_ver, select_by=select_by)
            pi[i], sv[i], ok[i], labels[i] = p[best], e.s_ver[best], int(e.labels[best] == e.gold), e.labels[best]
    return OutOfFoldChoice(pi=pi, s_ver=sv, correct=ok, labels=labels)


__all__ = ["FittedGates", "FittedThresholds", "fit_gates", "fit_nli_thresholds", "out_of_fold_choice"]
