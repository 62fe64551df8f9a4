"""The decision slice: training claims that neither the reranker nor the verdict model
trained on, run through the pipeline on a store built for them the honest way, to make the
``decision`` settings' choices (:mod:`~averitec_tools.baselines.averitec.stages.decision`) on training claims only.

The slice is the claims held out by *both* models' splits (``<stage>.train.heldout``, the
same seeded share of the same training claims: with equal settings the same claims), in
training-file order, at most ``decision.slice_claims``. Its store is
``build_store(..., exclude_own_evidence=True)`` over the slice claims (as ``build-store
--exclude-own-evidence`` builds dev's), cached; its questions come from the training
claims *minus the slice* (the slice's own gold questions never reach it). The scored
(dev or pseudo-test) claims enter only through their texts, as in training
(:mod:`.leak_guard`). The result — both Q+A figures, the reranker choice, the fitted
offsets and the slice macro-F1 with and without them — is cached by everything it depends
on (slice ids, checkpoints, stage settings, the decision settings) and listed in the run
summary under ``decision``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline, NoReranker

#: Bumped when the fit changes in a way its inputs do not show.
FIT_VERSION = "v2"


def decision_slice(cfg: AVeriTeCConfig, *, claims: Sequence[ClaimItem]) -> list[ClaimItem]:
    """The training ``claims`` held out by both the reranker's and the verdict model's split.

    Example:
        >>> from averitec_tools.baselines.averitec.config import builtin_config
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [ClaimItem(i, AVeriTeCClaim(claim=f"c{i}")) for i in range(40)]
        >>> [c.claim_id for c in decision_slice(builtin_config("offline-minilm"), claims=cs)]
        [2, 4, 11, 23, 24, 27]
    """
    from averitec_tools.baselines.averitec.training.checkpoints import _split

    held_v = {c.claim_id for c in _split(claims, cfg.verdict.train)[1]}
    # bm25-order: no reranker is trained or used, its split holds nothing out
    held_r = held_v if cfg.decision.reranker == "bm25-order" else {c.claim_id for c in _split(claims, cfg.reranker.train)[1]}
    out = [c for c in claims if c.claim_id in held_r and c.claim_id in held_v]
    cap = cfg.decision.slice_claims
    return out if cap is None else out[:cap]


def _slice_store(cfg: AVeriTeCConfig, items: Sequence[ClaimItem], train_sha: str | None,
                 pool: Sequence[ClaimItem] | None = None) -> Path:
    """The slice's store; ``pool``: draw the distractors from these claims (the other training
    claims, as a scored split's store draws from the training split), else from the slice's own."""
    from averitec_tools.baselines.averitec.config import cache_dir
    from averitec_tools.baselines.averitec.corpus.store import build_store
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    ids = [c.claim_id for c in items]
    key = fingerprint(ids, train_sha, cfg.decision.distractors, *(["pool"] if pool is not None else []))
    out = cache_dir(cfg) / f"decision-store-{key}"
    if not (out / "leak_guard.info").is_file():
        build_store(claims=[c.record for c in items], claim_ids=[c.claim_id for c in items], out=out,
                    distractors=cfg.decision.distractors, seed=0, exclude_own_evidence=True,
                    pool_claims=None if pool is None else [c.record for c in pool])
    return out


def qa_score(*, items: Sequence[ClaimItem], evidence: Sequence[Sequence[Any]], train_file: str | Path) -> float:
    """hu-METEOR Q+A (``averitec2024`` profile) of ``evidence`` against the items' gold."""
    from averitec_tools.baselines.averitec.io.output import NO_EVIDENCE
    from averitec_tools.jsonio import load_json
    from averitec_tools.scoring.profiles import score_with_profile

    raw = load_json(train_file)
    with tempfile.TemporaryDirectory() as tmp:
        gold, pred = Path(tmp) / "gold.json", Path(tmp) / "pred.json"
        gold.write_text(json.dumps([raw[c.claim_id] for c in items]), encoding="utf-8")
        pred.write_text(json.dumps([
            {"claim_id": i, "claim": c.claim, "pred_label": "Refuted",
             "evidence": [{"question": p.question, "answer": p.answer, "url": p.url} for p in (ev or [NO_EVIDENCE])]}
            for i, (c, ev) in enumerate(zip(items, evidence, strict=True))]), encoding="utf-8")
        result = score_with_profile(profile="averitec2024", predictions=pred, references=gold)
    return float(result.summary["questions_answers"])


def _slice_run(pipe: AVeriTeCPipeline, *, items: Sequence[ClaimItem], store: Path, writer: Any, writer_info: dict[str, Any],
               rerank: bool, progress: bool) -> tuple[list[list[Any]], list[np.ndarray]]:
    """Each slice claim's evidence and its pairs' verdict probabilities (through the stage cache)."""
    from tqdm.auto import tqdm

    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.baselines.averitec.io.stage_cache import StageCache
    from averitec_tools.baselines.averitec.variants import VARIANTS

    settings = {**pipe.stage_settings, "questions": {**pipe.stage_settings["questions"], "train": writer_info}}
    if not rerank:
        settings["reranker"] = {"component": NoReranker.component, "keep": pipe.config.reranker.keep}
    run = AVeriTeCPipeline(config=pipe.config, variant=VARIANTS["full" if rerank else "no-reranker"],
                           store=KnowledgeStore(store), question_writer=writer,
                           reranker=pipe.reranker if rerank else None, verdict=pipe.verdict, justifier=pipe.justifier,
                           components=dict(pipe.components), stage_settings=settings,
                           cache=StageCache(pipe.cache.root))  # its own counts: the summary's are the scored claims'
    evidence, probs = [], []
    for item in tqdm(items, desc=f"decision slice ({'reranker' if rerank else 'bm25 order'})", disable=not progress):
        ev, parent = run.evidence_for(item, [], {})
        p, _ = run.verdict_probs(item, ev, parent)
        evidence.append(ev)
        probs.append(p)
    return evidence, probs


def slice_prior(cfg: AVeriTeCConfig, *, train_info: dict[str, Any], scored: Sequence[str]) -> Any:
    """The claim-only probe of the run (:func:`~averitec_tools.baselines._run.claim_prior.fitted_prior`:
    the training claims minus the scored claims' twins and the pseudo-test), fitted once, cached."""
    from averitec_tools.baselines._run.claim_prior import fitted_prior

    return fitted_prior(train_path=train_info["path"], scored=scored, pseudo_test_claims=cfg.data.pseudo_test_claims)


def fit_decision(pipe: AVeriTeCPipeline, *, train: Sequence[ClaimItem], train_info: dict[str, Any], reranker_variant: bool,
                 progress: bool = False, scored: Sequence[str] = ()) -> dict[str, Any]:
    """Make (or read back from the cache) the ``decision`` settings' choices for ``pipe`` (``scored``:
    the scored claims' texts, whose twins the claim-head's probe leaves out)."""
    from averitec_tools.baselines._run.decision_fit import cached_fit
    from averitec_tools.baselines.averitec.config import cache_dir
    from averitec_tools.baselines.averitec.stages.decision import (
        BIAS_GRID,
        FINE_STEP,
        choose_reranker,
        fit_label_bias,
    )
    from averitec_tools.baselines.averitec.stages.questions import build_question_writer
    from averitec_tools.baselines.averitec.stages.verdict import LABELS
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    cfg, dc = pipe.config, pipe.config.decision
    items = [c for c in decision_slice(cfg, claims=train) if c.record.label in LABELS]
    ids = [c.claim_id for c in items]
    choose = reranker_variant and dc.reranker == "slice-choice"
    head = dc.head == "claim-head"
    if not items:
        return {"slice_claims": 0, "note": "empty decision slice: nothing chosen, nothing fitted"}
    prior = slice_prior(cfg, train_info=train_info, scored=scored).training_proba(ids) if head else None
    key = fingerprint("decision", FIT_VERSION, ids, train_info.get("sha256"), pipe.stage_settings, dc,
                      cfg.verdict.aggregation, BIAS_GRID, FINE_STEP, choose, reranker_variant,
                      *([_head_key(prior)] if prior is not None else []))

    def make() -> dict[str, Any]:
        t0 = time.perf_counter()
        slice_ids = set(ids)
        rest = [c for c in train if c.claim_id not in slice_ids]
        store = _slice_store(cfg, items, train_info.get("sha256"), rest if head else None)
        writer = build_question_writer(config=cfg.questions, train=rest)
        writer_info = {"claims": len(rest), "kept_ids_hash": fingerprint([c.claim_id for c in rest]),
                       "sha256": train_info.get("sha256")}
        runs = {rerank: _slice_run(pipe, items=items, store=store, writer=writer, writer_info=writer_info,
                                   rerank=rerank, progress=progress)
                for rerank in ([True, False] if choose else [reranker_variant])}
        qa = {rerank: qa_score(items=items, evidence=ev, train_file=train_info["path"])
              for rerank, (ev, _) in runs.items()}
        use = choose_reranker(qa_reranker=qa[True], qa_bm25=qa[False]) if choose else reranker_variant
        gold = [LABELS.index(c.record.label) for c in items]
        out: dict[str, Any] = {
            "slice_claims": len(items), "slice_ids_hash": fingerprint(ids),
            "slice_labels": {lab: sum(g == i for g in gold) for i, lab in enumerate(LABELS)},
            "slice_qa": {("reranker" if r else "bm25_order"): round(v, 4) for r, v in qa.items()},
            "reranker_used": bool(use)}
        if dc.label_bias == "slice-fit":
            out["label_bias"] = fit_label_bias(claim_probs=runs[use][1], gold=gold, rule=cfg.verdict.aggregation)
        if prior is not None:
            from averitec_tools.baselines.averitec.training.head_fit import fit_slice_head

            out["head"] = fit_slice_head(prior=prior, claim_probs=runs[use][1], gold=gold, texts=[c.claim for c in items],
                                         articles=[c.record.fact_checking_article for c in items],
                                         rule=cfg.verdict.aggregation)
        out["seconds"] = round(time.perf_counter() - t0, 1)
        return out

    return cached_fit(cache_dir(cfg) / f"decision-{key}.json", make, read=_read_fit, write=_write_fit)


def _head_key(prior: np.ndarray) -> list[Any]:
    """What the claim head's fit depends on beyond the decision settings: its version, grid and the
    slice claims' out-of-fold probe probabilities."""
    from averitec_tools.baselines.averitec.training.head_fit import HEAD_C_GRID, HEAD_VERSION

    return [HEAD_VERSION, HEAD_C_GRID, np.round(prior, 8).tolist()]


def _read_fit(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8"))) | {"cached": True}


def _write_fit(fit: dict[str, Any], path: Path) -> None:
    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(path) as fh:
        fh.write(json.dumps(fit, indent=1))


def decided(pipe: AVeriTeCPipeline, fitted: dict[str, Any], *, seconds: float,
            priors: dict[str, list[float]] | None = None) -> AVeriTeCPipeline:
    """``pipe`` as ``fitted`` says: BM25 order where the reranker lost, the label bias, the claim
    head with the scored claims' ``priors`` (claim text → probe probabilities) (a new pipeline;
    ``seconds`` the fit took, listed with the build's)."""
    from averitec_tools.baselines._run.claim_head import ClaimHead
    from averitec_tools.baselines.averitec.stages.decision import bias_vector
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    reranker, components, settings = pipe.reranker, dict(pipe.components), dict(pipe.stage_settings)
    if pipe.variant.rerank and pipe.reranker is not None and fitted.get("reranker_used") is False:
        reranker = None
        components["reranker"] = "bm25-order (decision slice: the reranker did not beat BM25 order)"
        settings["reranker"] = {"component": NoReranker.component, "keep": pipe.config.reranker.keep}
    bias = None
    if "label_bias" in fitted:
        bias = bias_vector(fitted["label_bias"]["bias"])
        # the justification reads the label: its stage-cache key must see the offsets
        settings["justification"] = {**settings.get("justification", {}), "label_bias": bias}
    head = ClaimHead.from_dict(fitted["head"]["model"]) if "head" in fitted else None
    if head is not None:  # the label is the head's: the justification's key must see it
        settings["justification"] = {**settings.get("justification", {}), "head": fingerprint(fitted["head"]["model"])}
    return AVeriTeCPipeline(config=pipe.config, variant=pipe.variant, store=pipe.store,
                            question_writer=pipe.question_writer, reranker=reranker, verdict=pipe.verdict,
                            justifier=pipe.justifier, components=components,
                            build_seconds={**pipe.build_seconds, "decision": seconds}, cache=pipe.cache,
                            stage_settings=settings, leak_guard=pipe.leak_guard, label_bias=bias,
                            decision=dict(fitted), head=head, priors=priors if head is not None else None,
                            verdict_training=pipe.verdict_training)


__all__ = ["decided", "decision_slice", "fit_decision"]
