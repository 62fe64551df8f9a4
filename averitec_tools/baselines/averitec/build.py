"""Build an :class:`~averitec_tools.baselines.averitec.pipeline.AVeriTeCPipeline` from a configuration.

:func:`build_pipeline` reads top-down, one stage after another, each built by its own
function that returns the stage with its component name, its stage-cache settings and the
seconds it took (:class:`Built`): the justifier first (refusing an untrained seq2seq model
must not wait for training), then the evidence stages the variant needs — the knowledge
store, BM25 retrieval, the question writer, the reranker — then the verdict model; the
pipeline is built whole from them. Where the configuration asks for it, the ``decision``
settings are then fitted on the decision slice
(:mod:`~averitec_tools.baselines.averitec.training.decision_slice`) and the pipeline is
built again as they say. Models load on first use, so stages served from the stage cache
never load theirs.

Example:
    >>> RETRIEVAL_NAMES["bm25s"]
    'bm25s Lucene BM25'
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.baselines.averitec.io.stage_cache import StageCache
from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline, NoReranker
from averitec_tools.baselines.averitec.variants import Variant
from averitec_tools.errors import UserError

#: The reranker's component under ``decision.reranker: bm25-order``.
BM25_ORDER = "bm25-order (decision.reranker: bm25-order)"
#: What the retrieval component is called, by ``retrieval.bm25``.
RETRIEVAL_NAMES = {"upstream": "rank_bm25 Okapi over NLTK word_tokenize", "bm25s": "bm25s Lucene BM25"}


@dataclass
class Built:
    """Stages built for a pipeline: the objects, their component names, their stage-cache
    settings and the seconds each took, in build order."""

    parts: dict[str, Any] = field(default_factory=dict)
    components: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    #: The training claims (and their file's facts) the question writer was given, for the decision slice.
    train: tuple[list[ClaimItem], dict[str, Any]] | None = None
    #: The trained classifiers' checkpoint manifests, by stage.
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)


def _identity(model: str) -> dict[str, str]:
    """Component name of ``model`` plus, for a local directory, a stamp of its files."""
    from averitec_tools.baselines.averitec.io.stage_cache import local_model_stamp
    from averitec_tools.baselines.averitec.models import describe

    resolved, component = describe(model=model)
    loc = Path(resolved.location)
    local = loc.is_dir() and loc.parent.name != "snapshots"
    return {"component": component, "stamp": local_model_stamp(str(loc)) if local else ""}


def _justifier(config: AVeriTeCConfig, built: Built) -> None:
    from averitec_tools.baselines.averitec.stages.justification import build_justifier

    t = time.perf_counter()
    jc = config.justification
    justifier = build_justifier(config=jc, config_name=config.name)
    built.parts["justifier"] = justifier
    built.settings["justification"] = {"component": justifier.component, "aggregation": config.verdict.aggregation}
    if justifier.component != "extractive-fallback":
        built.settings["justification"] |= {**_identity(jc.checkpoint or jc.model), **dataclasses.asdict(jc),
                                            "device": None, "train": None, "checkpoint": None}
    built.seconds["justification"] = time.perf_counter() - t


def _questions(config: AVeriTeCConfig, built: Built, exclude: Sequence[str]) -> None:
    """The question writer, given the training claims (no scored claim's twin)."""
    from averitec_tools.baselines.averitec.stages.questions import build_question_writer
    from averitec_tools.baselines.averitec.training.checkpoints import training_claims

    t = time.perf_counter()
    train, info = training_claims(config, exclude=exclude)
    built.train = (train, info)
    qc = config.questions
    writer = built.parts["question_writer"] = build_question_writer(config=qc, train=train)
    built.components["questions"] = writer.component
    built.settings["questions"] = {
        **(_identity(qc.model) if qc.model != "retrieval-fallback" else {"component": qc.model}),
        **dataclasses.asdict(qc), "device": None,
        "train": {k: info.get(k) for k in ("sha256", "claims", "dropped_scored_claims", "kept_ids_hash")}}
    built.seconds["questions"] = time.perf_counter() - t


def _classifier(config: AVeriTeCConfig, built: Built, exclude: Sequence[str], *, kind: str, progress: bool,
                settings: dict[str, Any]) -> None:
    """The fine-tuned pair classifier of ``kind`` (``reranker`` or ``verdict``), trained where missing;
    its stage-cache settings: its identity, ``settings``, its input length."""
    from averitec_tools.baselines.averitec.training.checkpoints import obtain_checkpoint
    from averitec_tools.baselines.averitec.training.classifier import PairClassifier

    t = time.perf_counter()
    section = getattr(config, kind)
    ckpt, _ = obtain_checkpoint(kind=kind, cfg=config, exclude=exclude, progress=progress)
    model = built.parts[kind] = PairClassifier(checkpoint=ckpt, device=section.train.device,
                                               batch_size=section.batch_size, max_length=section.max_length)
    built.manifests[kind] = dict(getattr(model, "manifest", {}) or {})
    built.components[kind] = model.component
    built.settings[kind] = {**_identity(ckpt), **settings, "max_length": model.max_length}
    built.seconds[kind] = time.perf_counter() - t


def _reranker(config: AVeriTeCConfig, built: Built, exclude: Sequence[str], *, rerank: bool, progress: bool) -> None:
    if rerank and config.decision.reranker != "bm25-order":
        rc = config.reranker
        _classifier(config, built, exclude, kind="reranker", progress=progress,
                    settings={"input": rc.input, "keep": rc.keep})
    else:
        built.components["reranker"] = BM25_ORDER if rerank else NoReranker.component
        # the same evidence as the no-reranker variant's: the same stage-cache key
        built.settings["reranker"] = {"component": NoReranker.component, "keep": config.reranker.keep}


def _evidence(config: AVeriTeCConfig, built: Built, variant: Variant, store: str | None, exclude: Sequence[str], *,
              progress: bool) -> None:
    """The evidence stages a variant needs: knowledge store, retrieval, questions, reranker (or their names)."""
    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore

    if not variant.needs_store:
        skipped = f"skipped ({variant.name} variant)"
        built.components.update({"store": "gold QA pairs" if variant.evidence == "gold" else skipped,
                                 "retrieval": skipped, "questions": skipped, "reranker": skipped})
        return
    if not store:
        raise UserError(f"variant {variant.name!r} retrieves evidence: --store DIR is required",
                        hint="or download the split's store: averitec data download averitec-store --split dev")
    built.parts["store"] = KnowledgeStore(store)
    built.components["store"] = str(Path(store))
    rc = config.retrieval
    built.components["retrieval"] = f"{RETRIEVAL_NAMES[rc.bm25]} top-{rc.top_k} sentences"
    built.settings["retrieval"] = {"top_k": rc.top_k, "bm25": rc.bm25}
    _questions(config, built, exclude)
    _reranker(config, built, exclude, rerank=variant.rerank, progress=progress)


def _verdict(config: AVeriTeCConfig, built: Built, exclude: Sequence[str], *, progress: bool) -> None:
    _classifier(config, built, exclude, kind="verdict", progress=progress, settings={"input": config.verdict.input})
    built.components["justification"] = built.parts["justifier"].component


def _leak_guard(config: AVeriTeCConfig, built: Built, exclude: Sequence[str], store: str | None) -> dict[str, Any]:
    """Training claims dropped as scored claims' normalised twins (None without a training file), and
    what the store's builder left out."""
    from averitec_tools.baselines.averitec.config import train_path
    from averitec_tools.baselines.averitec.corpus.store import read_leak_guard
    from averitec_tools.baselines.averitec.training.checkpoints import training_claims

    info = built.train[1] if built.train is not None else None
    if info is None:  # no evidence stage read the training claims: read them here
        try:
            has_train = train_path(config).is_file()
        except UserError:  # no training file configured
            has_train = False
        info = training_claims(config, exclude=exclude)[1] if has_train else None
    dropped = int(info["dropped_scored_claims"]) if info is not None else None
    return {"train_duplicates_dropped": dropped, **(read_leak_guard(store) if "store" in built.parts and store else {})}


def build_pipeline(*, config: AVeriTeCConfig, variant: Variant, store: str | None,
                   claims: Sequence[ClaimItem], progress: bool = False) -> AVeriTeCPipeline:
    """Build every stage the variant needs (training what the config asks to train), top-down
    (see the module docs)."""
    from averitec_tools.baselines.averitec.config import cache_dir
    from averitec_tools.baselines.averitec.training.leak_guard import scored_texts

    exclude = scored_texts(claims)  # texts only: no scored label reaches a fit (training/leak_guard.py)
    built = Built()
    _justifier(config, built)
    _evidence(config, built, variant, store, exclude, progress=progress)
    _verdict(config, built, exclude, progress=progress)
    parts = built.parts
    pipe = AVeriTeCPipeline(
        config=config, variant=variant, store=parts.get("store"), question_writer=parts.get("question_writer"),
        reranker=parts.get("reranker"), verdict=parts["verdict"], justifier=parts["justifier"],
        components=built.components, build_seconds={k: round(v, 2) for k, v in built.seconds.items()},
        cache=StageCache(cache_dir(config) / "stages" if config.data.stage_cache else None),
        stage_settings=built.settings,
        leak_guard=_leak_guard(config, built, exclude, store), verdict_training=_verdict_training(built))
    dc = config.decision
    rerank = variant.rerank and dc.reranker != "bm25-order"
    if built.train is None or (dc.label_bias == "none" and dc.head == "none" and (not rerank or dc.reranker == "always")):
        return pipe
    from averitec_tools.baselines.averitec.training.decision_slice import (
        decided,
        fit_decision,
        slice_prior,
    )

    t = time.perf_counter()
    train, info = built.train
    fitted = fit_decision(pipe, train=train, train_info=info, reranker_variant=rerank, progress=progress,
                          scored=exclude)
    priors = None
    if "head" in fitted:  # the scored claims' probe probabilities, from the probe the slice's came from
        texts = sorted({c.claim for c in claims})
        probe = slice_prior(config, train_info=info, scored=exclude).prior
        priors = {t: [float(x) for x in row] for t, row in zip(texts, probe.predict_texts(texts), strict=True)}
    return decided(pipe, fitted, seconds=round(time.perf_counter() - t, 2), priors=priors)


def _verdict_training(built: Built) -> dict[str, Any]:
    """The verdict model's training set as its manifest records it (claims, examples, what they hold)."""
    data = built.manifests.get("verdict", {}).get("data", {})
    keys = ("claims", "dropped_scored_claims", "pseudo_test_held_out", "train_examples", "heldout_examples",
            "class_counts", "gold_examples", "retrieved_examples", "retrieved_per_claim", "retrieved_labels",
            "retrieved_store")
    out = {k: data[k] for k in keys if k in data}
    settings = built.manifests.get("verdict", {}).get("settings", {})
    return out | ({"settings": settings} if out and settings else {})


__all__ = ["Built", "build_pipeline"]
