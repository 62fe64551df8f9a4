"""The offline preset's slice fit: everything decision-related, fitted on held-out training claims.

The calibration slice (training claims held out from the verifier) is decoded once into a
candidate store (every pool passage scored by the verifier); then :func:`fit_decision`
fits, on the stored probabilities, the y_NLI thresholds (per evidence regime with
``offline.threshold_regimes`` > 1, :mod:`.thresholds`), the calibrator on the candidates
re-derived with them, the gates on out-of-fold π and the Conflicting rule (:mod:`.rules`).
:func:`fit_on_slice` keeps the result — the calibrator with the fitted values in its
``fit_info`` — under a key of everything it depends on (the baselines' one
:func:`~averitec_tools.baselines._run.decision_fit.cached_fit`), and
:func:`fitted_summary` is the ``fitted`` block of the run summary.

Example:
    >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
    >>> fit = {"nli_thresholds": {"t_ent": 0.3, "t_contr": 0.4, "delta": 0.0},
    ...        "gates": {"tau_cal": 0.5, "tau_ver": 0.1}}
    >>> c = apply_fitted(R2VCConfig(), fit)
    >>> c.verifier.t_ent, c.verifier.delta, c.calibration.tau_ver
    (0.3, 0.0, 0.1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.offline.rules import FittedConflictRule, FittedRegimes
from averitec_tools.baselines.r2vc.offline.thresholds import (
    FittedGates,
    FittedThresholds,
    fit_gates,
    fit_nli_thresholds,
    out_of_fold_choice,
)
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import ClaimRules
from averitec_tools.baselines.r2vc.stages.calibration.fitting import CalibrationExample
from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
from averitec_tools.baselines.r2vc.stages.verification.regimes import RegimeThresholds
from averitec_tools.baselines.r2vc.stages.verification.verifier import (
    Verifier,
    verifier_from_config,
)
from averitec_tools.baselines.r2vc.types import Retriever
from averitec_tools.hashing import json_digest
from averitec_tools.leakage.duplicates import OWN_EVIDENCE_VERSION
from averitec_tools.nli import CachedNLI


def apply_fitted(cfg: R2VCConfig, fitted: Mapping[str, Any] | None) -> R2VCConfig:
    """``cfg`` with the fitted thresholds and gates of a ``fitted`` block (unchanged without one)."""
    if not fitted:
        return cfg
    th, gates = fitted.get("nli_thresholds"), fitted.get("gates")
    if th:
        cfg = replace(cfg, verifier=replace(cfg.verifier, t_ent=th["t_ent"], t_contr=th["t_contr"],
                                            delta=th["delta"]))
    if gates:
        cfg = replace(cfg, calibration=replace(cfg.calibration, tau_cal=gates["tau_cal"], tau_ver=gates["tau_ver"]))
    return cfg


def nli_stages(cfg: R2VCConfig, nli: CachedNLI) -> tuple[NLIFallbackGenerator, Verifier]:
    """The NLI-only generator and the verifier of ``cfg`` over one NLI model."""
    v = cfg.verifier
    gen = NLIFallbackGenerator(nli=nli, subset_size=cfg.generator.subset_size, t_ent=v.t_ent,
                               t_contr=v.t_contr, delta=v.delta)
    return gen, verifier_from_config(backend=nli, config=v)


def nli_pipeline(cfg: R2VCConfig, *, nli: CachedNLI, retriever: Retriever | None,
                 store: CandidateStore | None = None, rules: ClaimRules | None = None) -> R2VCPipeline:
    """The NLI-only pipeline of ``cfg`` that decodes the calibration slice (no calibrator)."""
    gen, verifier = nli_stages(cfg, nli)
    return R2VCPipeline(retriever=retriever, generator=gen, verifier=verifier, calibrator=None, config=cfg,
                        candidate_store=store, rules=rules)


def open_slice_store(cfg: R2VCConfig, *, nli: CachedNLI, retriever: Retriever, directory: Path,
                     replay_only: bool = False) -> CandidateStore:
    """The candidate store the calibration slice is decoded into (keyed as any offline store)."""
    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.offline.data import offline_store_settings

    components = nli_pipeline(cfg, nli=nli, retriever=retriever).components
    settings, described = offline_store_settings(cfg, components)
    return open_store(directory, config=cfg, components=components, settings=settings, described=described,
                      replay_only=replay_only)


def _slice_inputs(cfg: R2VCConfig, *, claims: Sequence[ClaimInput], store: CandidateStore) -> dict[str, Any]:
    """The slice's stored NLI probabilities, each claim's evidence subsets and gold labels."""
    from averitec_tools.baselines.r2vc.io.claims import scored_gold
    from averitec_tools.baselines.r2vc.stages.generation.sampling import (
        claim_seed,
        sample_evidence_subsets,
    )

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


def _fit_decision_rules(cfg: R2VCConfig, *, claims: Sequence[ClaimInput], store: CandidateStore
                        ) -> tuple[R2VCConfig, dict[str, Any]]:
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


def _fit_conflict(*, claims: Sequence[ClaimInput], store: CandidateStore, examples: Sequence[CalibrationExample],
                  labels: Sequence[str]) -> FittedConflictRule:
    """The Conflicting rule on the slice claims' out-of-fold chosen labels (claims without candidates skipped)."""
    from averitec_tools.baselines.r2vc.offline.rules import fit_conflict_rule

    probs = {c.claim: np.asarray(stored.probs).reshape(-1, 3)
             for c in claims if (stored := store.get(c)) is not None}
    return fit_conflict_rule(probs=[probs[e.claim] for e in examples], labels=list(labels),
                             gold=[e.gold for e in examples])


@dataclass(frozen=True)
class SliceFit:
    """What :func:`fit_decision` fits on a slice: the configuration with the fitted thresholds,
    the calibrator, and the fitted parts (``nli_thresholds``, ``regime_thresholds``, ``gates``,
    ``conflict_rule``; those its settings ask for)."""

    config: R2VCConfig
    calibrator: Calibrator
    parts: dict[str, Any]

    @property
    def regimes(self) -> RegimeThresholds | None:
        """The regime thresholds (None with one regime)."""
        fitted: FittedRegimes | None = self.parts.get("regime_thresholds")
        return None if fitted is None else fitted.thresholds


def fit_decision(cfg: R2VCConfig, *, nli: CachedNLI, retriever: Retriever | None, claims: Sequence[ClaimInput],
                 store: CandidateStore, where: str = "claims") -> SliceFit:
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
    regimes = parts["regime_thresholds"].thresholds if "regime_thresholds" in parts else None
    fitter = nli_pipeline(cfg, nli=nli, retriever=retriever, store=store, rules=ClaimRules(regime_thresholds=regimes))
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


def slice_fit_key(fit_cfg: R2VCConfig, *, train_key: str, corpus_key: str) -> str:
    """Cache key of the calibration-slice fit: the verifier, the corpus and every setting the fit reads."""
    off = fit_cfg.offline
    return json_digest("slc-v6", train_key, corpus_key, off.exclude_own_evidence, OWN_EVIDENCE_VERSION,
                       asdict(fit_cfg.retrieval),
                       asdict(fit_cfg.generator), asdict(fit_cfg.verifier), asdict(fit_cfg.ablation),
                       asdict(fit_cfg.calibration) | {"path": None, "tau_cal": None, "tau_ver": None,
                                                      "abstain": None, "on_abstain": None},
                       [off.fit_thresholds, off.target_coverage, off.gate_folds, off.threshold_regimes,
                        off.conflict_rule])


def fit_on_slice(cfg: R2VCConfig, *, nli: CachedNLI, retriever: Retriever, claims: Sequence[ClaimInput],
                 cal_file: Path, store_dir: Path, where: str, slice_desc: str,
                 progress: bool = False) -> tuple[Calibrator, dict[str, Any] | None]:
    """Fit the calibrator — and, with ``offline.fit_thresholds``, the y_NLI thresholds and gates — on a slice.

    The slice's claims are decoded once into a candidate store under ``store_dir``
    (every pool passage scored by the NLI model); thresholds are fitted on the stored
    probabilities, then the calibrator on the candidates re-derived with them, then the
    gates on out-of-fold π. The calibrator is saved to ``cal_file`` with the fitted
    values in ``fit_info["fitted"]``; a later call loads it instead.

    Returns:
        ``(calibrator, fitted)`` (``fitted`` is None without ``fit_thresholds``).
    """
    from averitec_tools.baselines._run.decision_fit import cached_fit

    def make() -> Calibrator:
        from tqdm.auto import tqdm

        store = open_slice_store(cfg, nli=nli, retriever=retriever, directory=store_dir)
        probe = nli_pipeline(cfg, nli=nli, retriever=retriever, store=store)
        for claim in tqdm(claims, desc="calibration slice", unit="claim", disable=not progress):
            probe.decode(claim)
        fit = fit_decision(cfg, nli=nli, retriever=retriever, claims=claims, store=store, where=where)
        if cfg.offline.fit_thresholds:
            fit.calibrator.fit_info["fitted"] = fitted_summary(**fit.parts, slice_desc=slice_desc)
        return fit.calibrator

    cal = cached_fit(Path(cal_file), make, read=Calibrator.load, write=lambda c, path: c.save(path), read_back=True)
    return cal, cal.fit_info.get("fitted")


def fitted_summary(*, slice_desc: str, nli_thresholds: FittedThresholds | None = None,
                   gates: FittedGates | None = None, regime_thresholds: FittedRegimes | None = None,
                   conflict_rule: FittedConflictRule | None = None) -> dict[str, Any]:
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


__all__ = ["apply_fitted", "fit_decision", "fit_on_slice", "nli_pipeline", "nli_stages", "open_slice_store",
           "slice_fit_key"]
