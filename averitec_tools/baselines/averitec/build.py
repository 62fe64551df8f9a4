"""Build an :class:`~averitec_tools.baselines.averitec.pipeline.AVeriTeCPipeline` from a configuration.

:func:`build_pipeline` builds every stage a variant needs (training what the configuration
asks to train) and, for the offline configuration, the decision settings fitted on the
decision slice (:mod:`~averitec_tools.baselines.averitec.decision_slice`). It sits above
both the pipeline and the slice fit, which runs the pipeline on the slice (no import cycle).

Example:
    >>> RETRIEVAL_NAMES["bm25s"]
    'bm25s Lucene BM25'
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.data import ClaimItem
from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline, NoReranker
from averitec_tools.baselines.averitec.stage_cache import StageCache
from averitec_tools.baselines.averitec.variants import Variant
from averitec_tools.errors import UserError

#: What the retrieval component is called, by ``retrieval.bm25``.
RETRIEVAL_NAMES = {"upstream": "rank_bm25 Okapi over NLTK word_tokenize", "bm25s": "bm25s Lucene BM25"}


def _identity(model: str) -> dict[str, str]:
    """Component name of ``model`` plus, for a local directory, a stamp of its files."""
    from averitec_tools.baselines.averitec.models import describe
    from averitec_tools.baselines.averitec.stage_cache import local_model_stamp

    resolved, component = describe(model=model)
    loc = Path(resolved.location)
    local = loc.is_dir() and loc.parent.name != "snapshots"
    return {"component": component, "stamp": local_model_stamp(str(loc)) if local else ""}


def _settings(section: Any, *keys: str) -> dict[str, Any]:
    return {k: getattr(section, k) for k in keys}


def _dropped_twins(config: AVeriTeCConfig, exclude: Sequence[str]) -> int | None:
    """Training claims dropped as scored claims' normalised twins (None without a training file)."""
    from averitec_tools.baselines.averitec.checkpoints import training_claims
    from averitec_tools.baselines.averitec.config import train_path

    try:
        if not train_path(config).is_file():
            return None
    except UserError:
        return None
    return int(training_claims(config, exclude=exclude)[1]["dropped_scored_claims"])


def build_pipeline(*, config: AVeriTeCConfig, variant: Variant, store: str | None,
                   claims: Sequence[ClaimItem], progress: bool = False) -> AVeriTeCPipeline:
    """Build every stage the variant needs (training what the config asks to train); models
    load on first use, so stages served from the stage cache never load theirs."""
    from averitec_tools.baselines.averitec.checkpoints import obtain_checkpoint, training_claims
    from averitec_tools.baselines.averitec.config import cache_dir
    from averitec_tools.baselines.averitec.justification import build_justifier
    from averitec_tools.baselines.averitec.questions import build_question_writer
    from averitec_tools.baselines.averitec.store import KnowledgeStore
    from averitec_tools.baselines.averitec.training import PairClassifier

    build: dict[str, float] = {}
    components: dict[str, str] = {}
    settings: dict[str, Any] = {}
    from averitec_tools.baselines.averitec.leak_guard import scored_texts

    exclude = scored_texts(claims)  # texts only: no scored label reaches a fit (leak_guard.py)
    kstore = writer = rr = None
    # First the justifier: refusing an untrained seq2seq model must not wait for training.
    t = time.perf_counter()
    jc = config.justification
    justifier = build_justifier(config=jc, config_name=config.name)
    settings["justification"] = {"component": justifier.component, "aggregation": config.verdict.aggregation}
    if justifier.component != "extractive-fallback":
        settings["justification"] |= {**_identity(jc.checkpoint or jc.model), **dataclasses.asdict(jc),
                                      "device": None, "train": None, "checkpoint": None}
    build["justification"] = time.perf_counter() - t
    t = time.perf_counter()
    if variant.needs_store:
        if not store:
            raise UserError(f"variant {variant.name!r} retrieves evidence: --store DIR is required",
                            hint="or download the split's store: averitec data download averitec-store --split dev")
        kstore = KnowledgeStore(store)
        components["store"] = str(Path(store))
        rc = config.retrieval
        components["retrieval"] = f"{RETRIEVAL_NAMES[rc.bm25]} top-{rc.top_k} sentences"
        settings["retrieval"] = {"top_k": rc.top_k, "bm25": rc.bm25}
        train, info = training_claims(config, exclude=exclude)
        writer = build_question_writer(config=config.questions, train=train)
        components["questions"] = writer.component
        qc = config.questions
        settings["questions"] = {
            **(_identity(qc.model) if qc.model != "retrieval-fallback" else {"component": qc.model}),
            **dataclasses.asdict(qc), "device": None,
            "train": {k: info.get(k) for k in ("sha256", "claims", "dropped_scored_claims", "kept_ids_hash")}}
        build["questions"] = time.perf_counter() - t
        if variant.rerank:
            t = time.perf_counter()
            ckpt, _ = obtain_checkpoint(kind="reranker", cfg=config, exclude=exclude, progress=progress)
            rr = PairClassifier(checkpoint=ckpt, device=config.reranker.train.device,
                                batch_size=config.reranker.batch_size, max_length=config.reranker.max_length)
            components["reranker"] = rr.component
            settings["reranker"] = {**_identity(ckpt), **_settings(config.reranker, "input", "keep"),
                                    "max_length": rr.max_length}
            build["reranker"] = time.perf_counter() - t
        else:
            components["reranker"] = NoReranker.component
            settings["reranker"] = {"component": NoReranker.component, "keep": config.reranker.keep}
    else:
        skipped = f"skipped ({variant.name} variant)"
        components.update({"store": "gold QA pairs" if variant.evidence == "gold" else skipped,
                           "retrieval": skipped, "questions": skipped, "reranker": skipped})
    t = time.perf_counter()
    ckpt, _ = obtain_checkpoint(kind="verdict", cfg=config, exclude=exclude, progress=progress)
    vd = PairClassifier(checkpoint=ckpt, device=config.verdict.train.device, batch_size=config.verdict.batch_size,
                        max_length=config.verdict.max_length)
    components["verdict"] = vd.component
    settings["verdict"] = {**_identity(ckpt), "input": config.verdict.input, "max_length": vd.max_length}
    build["verdict"] = time.perf_counter() - t
    components["justification"] = justifier.component
    cache = StageCache(cache_dir(config) / "stages" if config.data.stage_cache else None)
    pipe = AVeriTeCPipeline(config=config, variant=variant, store=kstore, question_writer=writer, reranker=rr,
                            verdict=vd, justifier=justifier, components=components,
                            build_seconds={k: round(v, 2) for k, v in build.items()}, cache=cache,
                            stage_settings=settings)
    from averitec_tools.baselines.averitec.store import read_leak_guard

    pipe.leak_guard = {"train_duplicates_dropped": _dropped_twins(config, exclude),
                       **(read_leak_guard(store) if kstore is not None and store else {})}
    dc = config.decision
    if variant.needs_store and (dc.label_bias != "none" or (variant.rerank and dc.reranker != "always")):
        from averitec_tools.baselines.averitec.decision_slice import apply_decision, fit_decision

        t = time.perf_counter()
        apply_decision(pipe, fit_decision(pipe, train=train, train_info=info, reranker_variant=variant.rerank,
                                          progress=progress))
        pipe.build_seconds["decision"] = round(time.perf_counter() - t, 2)
    return pipe


__all__ = ["RETRIEVAL_NAMES", "build_pipeline"]
