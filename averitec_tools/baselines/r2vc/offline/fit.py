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
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from averitec_tools.labels import AVERITEC_LABELS
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


def _macro_f1(gold: np.ndarray, pred: np.ndarray, weight: np.ndarray, labels: Sequence[str]) -> float:
    scores = []
    for lab in labels:
        tp = float(weight[(gold == lab) & (pred == lab)].sum())
        fp = float(weight[(gold != lab) & (pred == lab)].sum())
        fn = float(weight[(gold == lab) & (pred != lab)].sum())
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores))


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
                f1 = _macro_f1(G, pred, W, labels)
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


def apply_fitted(cfg: Any, fitted: dict[str, Any] | None) -> Any:
    """``cfg`` with the fitted thresholds and gates of a ``fitted`` block (unchanged without one).

    Example:
        >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
        >>> fit = {"nli_thresholds": {"t_ent": 0.3, "t_contr": 0.4, "delta": 0.0},
        ...        "gates": {"tau_cal": 0.5, "tau_ver": 0.1}}
        >>> c = apply_fitted(R2VCConfig(), fit)
        >>> c.verifier.t_ent, c.verifier.delta, c.calibration.tau_ver
        (0.3, 0.0, 0.1)
    """
    from dataclasses import replace

    if not fitted:
        return cfg
    th, gates = fitted.get("nli_thresholds"), fitted.get("gates")
    if th:
        cfg = replace(cfg, verifier=replace(cfg.verifier, t_ent=th["t_ent"], t_contr=th["t_contr"],
                                            delta=th["delta"]))
    if gates:
        cfg = replace(cfg, calibration=replace(cfg.calibration, tau_cal=gates["tau_cal"], tau_ver=gates["tau_ver"]))
    return cfg


def nli_pipeline(cfg: Any, *, nli: Any, retriever: Any) -> Any:
    """The NLI-only pipeline of ``cfg`` that decodes the calibration slice (no calibrator)."""
    from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config

    v = cfg.verifier
    gen = NLIFallbackGenerator(nli=nli, subset_size=cfg.generator.subset_size, t_ent=v.t_ent,
                               t_contr=v.t_contr, delta=v.delta)
    return R2VCPipeline(retriever=retriever, generator=gen, verifier=verifier_from_config(backend=nli, config=v),
                        calibrator=None, config=cfg)


def _slice_inputs(cfg: Any, *, claims: Sequence[Any], store: Any) -> dict[str, Any]:
    """The slice's stored NLI probabilities, each claim's evidence subsets and gold labels."""
    from averitec_tools.baselines.r2vc.io.claims import scored_gold
    from averitec_tools.baselines.r2vc.pipeline import claim_seed
    from averitec_tools.baselines.r2vc.stages.generation.sampling import sample_evidence_subsets

    stored = [s for s in map(store.get, claims) if s is not None]
    assert len(stored) == len(claims)  # every slice claim was decoded before
    g = cfg.generator
    return {
        "probs": [np.asarray(s.probs).reshape(-1, 3) for s in stored],
        "subsets": [sample_evidence_subsets(n_passages=len(s.pool), k=g.k, seed=claim_seed(g.seed, c.claim_id),
                                            subset_size=g.subset_size) if s.pool else []
                    for c, s in zip(claims, stored, strict=True)],
        "gold": [str(scored_gold(c)) for c in claims],
    }


def _fit_decision_rules(cfg: Any, *, claims: Sequence[Any], store: Any) -> tuple[Any, dict[str, Any]]:
    """Global y_NLI thresholds, then (``offline.threshold_regimes`` > 1) one set per evidence regime."""
    from averitec_tools.baselines.r2vc.offline.rules import fit_regime_thresholds

    inputs = _slice_inputs(cfg, claims=claims, store=store)
    thresholds = fit_nli_thresholds(**inputs)
    cfg = apply_fitted(cfg, {"nli_thresholds": asdict(thresholds)})
    fitted: dict[str, Any] = {"nli_thresholds": thresholds}
    if cfg.offline.threshold_regimes > 1:
        fitted["regime_thresholds"] = fit_regime_thresholds(**inputs, n_regimes=cfg.offline.threshold_regimes,
                                                            global_fit=thresholds, fit=fit_nli_thresholds)
    return cfg, fitted


def _fit_conflict(*, claims: Sequence[Any], store: Any, examples: Sequence[Any], labels: Sequence[str]) -> Any:
    """The Conflicting rule on the slice claims' out-of-fold chosen labels (claims without candidates skipped)."""
    from averitec_tools.baselines.r2vc.offline.rules import fit_conflict_rule

    probs = {c.claim: np.asarray(store.get(c).probs).reshape(-1, 3) for c in claims}
    return fit_conflict_rule(probs=[probs[e.claim] for e in examples], labels=list(labels),
                             gold=[e.gold for e in examples])


@dataclass(frozen=True)
class SliceFit:
    """What :func:`fit_decision` fits on a slice: the configuration with the fitted thresholds,
    the calibrator, and the fitted parts (``nli_thresholds``, ``regime_thresholds``, ``gates``,
    ``conflict_rule``; those its settings ask for)."""

    config: Any
    calibrator: Any
    parts: dict[str, Any]

    @property
    def regimes(self) -> Any:
        """The regime thresholds (None with one regime)."""
        fitted = self.parts.get("regime_thresholds")
        return None if fitted is None else fitted.thresholds


def fit_decision(cfg: Any, *, nli: Any, retriever: Any, claims: Sequence[Any], store: Any,
                 where: str = "claims") -> SliceFit:
    """Fit everything decision-related on ``claims`` replayed from ``store`` (every claim decoded there).

    With ``offline.fit_thresholds``: the y_NLI thresholds (per regime with
    ``offline.threshold_regimes`` > 1), then the calibrator on the candidates re-derived with
    them, then the gates on out-of-fold π and, with ``offline.conflict_rule``, the Conflicting
    rule on the out-of-fold chosen labels. Without it, the calibrator alone.
    """
    from averitec_tools.baselines.r2vc.calibration_fit import calibration_examples
    from averitec_tools.baselines.r2vc.stages.calibration.fitting import fit_from_examples

    off = cfg.offline
    parts: dict[str, Any] = {}
    if off.fit_thresholds:
        cfg, parts = _fit_decision_rules(cfg, claims=claims, store=store)
    fitter = nli_pipeline(cfg, nli=nli, retriever=retriever)
    fitter.candidate_store = store
    if "regime_thresholds" in parts:
        fitter.regime_thresholds = parts["regime_thresholds"].thresholds
    examples = calibration_examples(fitter, claims=claims, where=where)
    c = cfg.calibration
    cal = fit_from_examples(examples, max_iter=c.max_iter, fit_on=c.fit_on, heldout_fraction=c.heldout_fraction,
                            seed=cfg.generator.seed, label_features=c.label_features)
    if off.fit_thresholds:
        oof = out_of_fold_choice(examples, folds=off.gate_folds, seed=cfg.generator.seed, fit_on=c.fit_on,
                                 max_iter=c.max_iter, label_features=c.label_features, select_by=c.select_by)
        parts["gates"] = fit_gates(pi=oof.pi, s_ver=oof.s_ver, correct=oof.correct,
                                   target_coverage=off.target_coverage)
        if off.conflict_rule:
            parts["conflict_rule"] = _fit_conflict(claims=claims, store=store, examples=examples, labels=oof.labels)
    return SliceFit(config=cfg, calibrator=cal, parts=parts)


def fit_on_slice(
    cfg: Any,
    *,
    nli: Any,
    retriever: Any,
    claims: Sequence[Any],
    cal_file: Any,
    store_dir: Any,
    where: str,
    slice_desc: str,
    progress: bool = False,
) -> tuple[Any, dict[str, Any] | None]:
    """Fit the calibrator — and, with ``offline.fit_thresholds``, the y_NLI thresholds and gates — on a slice.

    The slice's claims are decoded once into a candidate store under ``store_dir``
    (every pool passage scored by the NLI model); thresholds are fitted on the stored
    probabilities, then the calibrator on the candidates re-derived with them, then the
    gates on out-of-fold π. The calibrator is saved to ``cal_file`` with the fitted
    values in ``fit_info["fitted"]``; a later call loads it instead.

    Returns:
        ``(calibrator, fitted)`` (``fitted`` is None without ``fit_thresholds``).
    """
    from pathlib import Path

    from tqdm.auto import tqdm

    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.offline.data import offline_store_settings
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator

    cal_path = Path(cal_file)
    if cal_path.is_file():
        cal = Calibrator.load(cal_path)
        return cal, cal.fit_info.get("fitted")

    off = cfg.offline
    probe = nli_pipeline(cfg, nli=nli, retriever=retriever)
    settings, described = offline_store_settings(cfg, probe.components)
    probe.candidate_store = open_store(store_dir, config=cfg, components=probe.components, settings=settings,
                                       described=described)
    for claim in tqdm(claims, desc="calibration slice", unit="claim", disable=not progress):
        probe.decode(claim)
    fit = fit_decision(cfg, nli=nli, retriever=retriever, claims=claims, store=probe.candidate_store, where=where)
    cal, parts = fit.calibrator, fit.parts
    fitted = fitted_summary(**parts, slice_desc=slice_desc) if off.fit_thresholds else None
    if fitted is not None:
        cal.fit_info["fitted"] = fitted
    cal.save(cal_path)
    return Calibrator.load(cal_path), fitted


def fitted_summary(*, slice_desc: str, nli_thresholds: FittedThresholds | None = None,
                   gates: FittedGates | None = None, regime_thresholds: Any = None,
                   conflict_rule: Any = None) -> dict[str, Any]:
    """The ``fitted`` block of a run summary: values, targets and the slice they came from."""
    out: dict[str, Any] = {"slice": slice_desc}
    if nli_thresholds is not None:
        out["nli_thresholds"] = asdict(nli_thresholds) | {
            "target": "maximise the 4-way macro-F1 of the slice's candidates (y_NLI over each evidence subset)",
            "paper": {"t_ent": 0.60, "t_contr": 0.60, "delta": 0.10}}
    if regime_thresholds is not None:
        out["regime_thresholds"] = regime_thresholds.summary()
    if gates is not None:
        out["gates"] = asdict(gates) | {
            "target": f"maximise covered accuracy with coverage ≥ {gates.target_coverage} "
            "(out-of-fold π of the slice's chosen candidates)",
            "paper": {"tau_cal": 0.60, "tau_ver": 0.55}}
    if conflict_rule is not None:
        out["conflict_rule"] = conflict_rule.summary()
    return out


__all__ = [
    "DELTA_GRID",
    "apply_fitted",
    "fit_on_slice",
    "THRESHOLD_GRID",
    "FittedGates",
    "FittedThresholds",
    "fit_gates",
    "fit_nli_thresholds",
    "SliceFit",
    "fit_decision",
    "nli_pipeline",
    "fitted_summary",
    "OutOfFoldChoice",
    "out_of_fold_choice",
]
