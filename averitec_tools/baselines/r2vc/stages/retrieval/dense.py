"""Stage 3: dense retrieval with a sentence-transformers encoder and FAISS.

Paragraphs are encoded in chunks (Table G.1: chunk size 8192) with a progress bar,
L2-normalised, and added to a FAISS index scored by inner product (so scores are
cosine similarities): ``IndexHNSWFlat`` with M = 64, efConstruction = 512,
efSearch = 512 (the paper's), the exact ``IndexFlatIP`` (``index_type="flat"``), or
``ivfsq8`` (:mod:`.compact`: 8-bit codes in an inverted file, FEVER's full wiki-pages in 64 GB).

Index layout (``index_dir``): ``faiss.index`` and ``averitec_dense.json`` recording the
encoder id, dimension, index parameters and corpus fingerprint; loading checks them, so
a query is never encoded with a different model than the passages.

Every build runs FAISS with :data:`FAISS_BUILD_THREADS` OpenMP threads
(:func:`fixed_build_threads`, recorded as ``build_threads``): FAISS's HNSW build inserts
points from all its threads at once, so with the machine's default thread count the file
would depend on the core count, ``OMP_NUM_THREADS`` and scheduling.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.baselines.r2vc.stages.retrieval import compact
from averitec_tools.baselines.r2vc.stages.retrieval._index_meta import (
    read_index_meta,
    rebuild_hint,
    search_queries,
)
from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import (
    FAISS_BUILD_THREADS,
    fixed_build_threads,
    per_query_distances,
)
from averitec_tools.baselines.r2vc.types import ScoredPassage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory
from averitec_tools.models import ResolvedModel, load_sentence_encoder, resolve_model

META_FILE = "averitec_dense.json"
INDEX_FILE = "faiss.index"
INDEX_TYPES: tuple[str, ...] = ("hnsw", "flat", "ivfsq8")
#: FAISS HNSW settings from Table G.1.
HNSW_M = 64
HNSW_EF_CONSTRUCTION = 512
HNSW_EF_SEARCH = 512
#: Paragraphs encoded (and added to the index) per chunk, Table G.1.
ENCODE_CHUNK = 8192
def _encode(encoder: Any, texts: list[str], *, batch_size: int, prefix: str = "") -> np.ndarray:
    if prefix:
        texts = [prefix + t for t in texts]
    vectors = encoder.encode(
        texts,
        batch_size=batch_size,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    )
    return np.ascontiguousarray(vectors, dtype=np.float32)


def _embedding_dim(encoder: Any) -> int:
    # sentence-transformers renamed the method; support both spellings.
    getter = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    return int(getter())


def place_index(index: Any, *, index_type: str, device: str | None) -> tuple[Any, str]:
    """Move a flat index to the GPU when one is usable; returns ``(index, "cuda"|"cpu")``.

    GPU FAISS (the ``gpu`` extra's ``faiss-gpu-cu12``) is used when ``device`` is CUDA
    (or ``None`` with CUDA available) and FAISS sees a GPU. FAISS has no GPU HNSW, so an
    HNSW index is searched on the CPU (the paper's configuration: HNSW over 1024-d BGE
    vectors is fast there); ``faiss_device`` records where each index runs.

    Example:
        >>> import faiss
        >>> place_index(faiss.IndexFlatIP(4), index_type="flat", device="cpu")[1]
        'cpu'
    """
    import faiss

    wants_gpu = device is not None and str(device).startswith("cuda")
    if device is None:
        try:
            import torch

            wants_gpu = bool(torch.cuda.is_available())
        except ImportError:  # pragma: no cover - depends on the install
            wants_gpu = False
    gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if not wants_gpu or index_type != "flat" or gpus < 1 or not hasattr(faiss, "StandardGpuResources"):
        return index, "cpu"
    ordinal = int(str(device).split(":")[1]) if device and ":" in str(device) else 0
    resources = faiss.StandardGpuResources()
    gpu_index: Any = faiss.index_cpu_to_gpu(resources, ordinal, index)
    gpu_index.referenced_resources = resources  # keep the resources alive with the index
    return gpu_index, "cuda"


def new_faiss_index(
    *,
    dim: int,
    index_type: str = "hnsw",
    hnsw_m: int = HNSW_M,
    ef_construction: int = HNSW_EF_CONSTRUCTION,
    ef_search: int = HNSW_EF_SEARCH,
) -> Any:
    """An empty inner-product FAISS index of the given type.

    Example:
        >>> new_faiss_index(dim=4, index_type="flat").ntotal
        0
    """
    import faiss

    if index_type == "flat":
        return faiss.IndexFlatIP(dim)
    if index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = ef_construction
        index.hnsw.efSearch = ef_search
        return index
    raise UserError(f"unknown dense index type {index_type!r}", hint=f"use one of: {', '.join(INDEX_TYPES)}")


@dataclass(eq=False, kw_only=True, repr=False)
class DenseRetriever:
    """Sentence-transformers + FAISS retriever over a :class:`ParagraphStore`.

    Args:
        store: The paragraph store the index was built from.
        encoder: A loaded ``SentenceTransformer``.
        resolved: Which model the encoder is (recorded in the saved index).
        index: The FAISS index; row ``i`` of the store is vector ``i``.
        index_type: ``"hnsw"``, ``"flat"`` or ``"ivfsq8"``.
        include_title: Whether ``title`` was encoded with the text.
        query_prefix: Text prepended to each query (some encoders want an instruction).
        batch_size: Encoder batch size for queries.
        device: Where the index is searched (a GPU copy where a GPU and GPU FAISS exist,
            flat indexes only; ``search_index`` and ``faiss_device`` say what was placed).

    Example:
        >>> from averitec_tools.baselines.r2vc.corpus.store import build_corpus
        >>> store = build_corpus(passages=[{"id": "x", "text": "The cat sat on the mat."},
        ...                                {"id": "y", "text": "Stock markets fell sharply."}])
        >>> r = DenseRetriever.build(store=store, model="minilm", index_type="flat", show_progress=False)
        >>> r.search(["a kitten on a rug"], k=1)[0][0].passage.doc_id
        'x'
    """

    name: str = field(default="dense", init=False)

    store: ParagraphStore
    encoder: Any
    resolved: ResolvedModel
    index: Any
    index_type: str
    include_title: bool = True
    query_prefix: str = ""
    batch_size: int = 64
    device: InitVar[str | None] = None
    #: The index searched: a GPU copy where a GPU and GPU FAISS exist (flat indexes).
    search_index: Any = field(init=False)
    faiss_device: str = field(init=False)

    def __post_init__(self, device: str | None) -> None:
        self.search_index, self.faiss_device = place_index(self.index, index_type=self.index_type, device=device)

    @classmethod
    def build(
        cls,
        *,
        store: ParagraphStore,
        model: str,
        index_type: str = "hnsw",
        device: str | None = None,
        batch_size: int = 64,
        chunk_size: int = ENCODE_CHUNK,
        include_title: bool = True,
        query_prefix: str = "",
        show_progress: bool = True,
        encoder: Any = None,
    ) -> DenseRetriever:
        """Encode every paragraph in chunks (progress bar) and add it to a new FAISS index.

        ``encoder`` lets a caller reuse an already loaded ``SentenceTransformer`` for
        ``model`` (e.g. to build HNSW and flat indexes from one model).
        """
        from tqdm.auto import tqdm

        if index_type not in INDEX_TYPES:
            raise UserError(f"unknown dense index type {index_type!r}", hint=f"use one of: {', '.join(INDEX_TYPES)}")
        if encoder is None:
            encoder, resolved = load_sentence_encoder(model=model, device=device)
        else:
            resolved = resolve_model(model=model)

        def encode(texts: list[str]) -> np.ndarray:
            return _encode(encoder, texts, batch_size=batch_size)

        with tqdm(total=len(store), desc=f"dense: encoding ({resolved.model_id})", unit="para",
                  disable=not show_progress) as bar:
            if index_type == compact.IVFSQ:  # trained on an encoded sample first, then filled chunk by chunk
                index = compact.build_ivfsq_from_store(store=store, encode=encode, include_title=include_title,
                                                       chunk_size=chunk_size, on_chunk=bar.update)
            else:
                index = new_faiss_index(dim=_embedding_dim(encoder), index_type=index_type)
                for texts in store.iter_texts(batch_size=chunk_size, include_title=include_title):
                    with fixed_build_threads():
                        index.add(encode(texts))
                    bar.update(len(texts))
        return cls(store=store, encoder=encoder, resolved=resolved, index=index, index_type=index_type,
                   include_title=include_title, query_prefix=query_prefix, batch_size=batch_size,
                   device=device)

    def save(self, index_dir: str | os.PathLike[str]) -> None:
        """Save the FAISS index and its metadata to ``index_dir`` (swapped in atomically)."""
        import faiss

        with atomic_directory(index_dir) as tmp:
            faiss.write_index(self.index, str(tmp / INDEX_FILE))
            meta: dict[str, Any] = {
                "backend": "faiss",
                "model_id": self.resolved.model_id,
                "dim": int(self.index.d),
                "index_type": self.index_type,
                "metric": "inner_product",
                "normalized": True,
                "include_title": self.include_title,
                "query_prefix": self.query_prefix,
                "corpus_fingerprint": self.store.fingerprint,
                "num_paragraphs": len(self.store),
            }
            params = compact.index_params(self.index, self.index_type)
            meta.update(params)  # keys in faiss_build's order: the two layouts' bytes are the same
            meta["build_device"] = "cpu"  # as averitec_tools.baselines.r2vc.stages.retrieval.faiss_build records it
            meta["build_threads"] = params.get("build_threads", FAISS_BUILD_THREADS)  # ivfsq8: its own
            (tmp / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(
        cls,
        *,
        store: ParagraphStore,
        index_dir: str | os.PathLike[str],
        model: str | None = None,
        device: str | None = None,
        batch_size: int = 64,
        ef_search: int = HNSW_EF_SEARCH,
    ) -> DenseRetriever:
        """Load an index saved by :meth:`save` and its encoder.

        Args:
            store: The corpus the index was built from (checked).
            index_dir: The saved index.
            model: If given, must resolve to the model recorded in the index.
            device: Torch device for the encoder.
            batch_size: Query encoding batch size.
            ef_search: HNSW efSearch at query time.

        Raises:
            UserError: Missing/corrupt index, another corpus, or another model.
        """
        import faiss

        root = Path(index_dir)
        model_id, index_type, dim, include_title, query_prefix = read_index_meta(
            root, kind="dense", store=store, meta_file=META_FILE, needs=(INDEX_FILE,),
            parse=lambda m: (str(m["model_id"]), str(m["index_type"]), int(m["dim"]),
                             bool(m.get("include_title", True)), str(m.get("query_prefix", ""))),
        )
        if model is not None:
            requested = resolve_model(model=model).model_id
            if requested != model_id:
                raise UserError(
                    f"{root}: dense index was built with {model_id!r}, not {requested!r}",
                    hint=rebuild_hint(root),
                )
        try:
            index = faiss.read_index(str(root / INDEX_FILE))
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
            raise UserError(f"{root / INDEX_FILE}: corrupt FAISS index ({first})", hint=rebuild_hint(root)) from None
        if index.ntotal != len(store) or index.d != dim:
            raise UserError(
                f"{root}: dense index holds {index.ntotal} vectors of dim {index.d}, "
                f"corpus has {len(store)} paragraphs (metadata dim {dim})",
                hint=rebuild_hint(root),
            )
        if index_type == "hnsw":
            hnsw_index: Any = faiss.downcast_index(index)
            hnsw_index.hnsw.efSearch = ef_search
        encoder, resolved = load_sentence_encoder(model=model or model_id, device=device)
        if _embedding_dim(encoder) != dim:
            raise UserError(f"{root}: encoder {model_id!r} gives a different dimension than the index ({dim})",
                            hint=rebuild_hint(root))
        return cls(store=store, encoder=encoder, resolved=resolved, index=index, index_type=index_type,
                   include_title=include_title, query_prefix=query_prefix, batch_size=batch_size,
                   device=device)

    @classmethod
    def load_or_build(
        cls,
        *,
        store: ParagraphStore,
        model: str,
        index_dir: str | os.PathLike[str] | None,
        index_type: str = "hnsw",
        device: str | None = None,
        batch_size: int = 64,
        rebuild: bool = False,
        show_progress: bool = True,
    ) -> DenseRetriever:
        """Load the index in ``index_dir`` if present (and not ``rebuild``), else build and save it."""
        if index_dir is not None and not rebuild and (Path(index_dir) / META_FILE).exists():
            loaded = cls.load(store=store, index_dir=index_dir, model=model, device=device, batch_size=batch_size)
            if loaded.index_type != index_type:
                raise UserError(
                    f"{index_dir}: dense index is {loaded.index_type!r}, {index_type!r} was asked for",
                    hint="pass rebuild=True to rebuild it",
                )
            return loaded
        retriever = cls.build(store=store, model=model, index_type=index_type, device=device,
                              batch_size=batch_size, show_progress=show_progress)
        if index_dir is not None:
            retriever.save(index_dir)
        return retriever

    def encode_queries(self, queries: Sequence[str]) -> np.ndarray:
        """L2-normalised query embeddings, shape ``(len(queries), dim)``."""
        return _encode(self.encoder, list(queries), batch_size=self.batch_size, prefix=self.query_prefix)

    def search_vectors(self, vectors: np.ndarray, *, k: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS search: ``(scores, rows)``, each ``(n_queries, k)``; row −1 marks no hit. On ``ivfsq8`` a batch
        gets what one query at a time gets, on any thread count (:func:`per_query_distances`)."""
        kk = min(k, len(self.store))
        with per_query_distances() if self.index_type == compact.IVFSQ else nullcontext():
            return self.search_index.search(np.ascontiguousarray(vectors, dtype=np.float32), kk)  # type: ignore[no-any-return]

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Top ``k`` paragraphs per query by cosine similarity."""
        queries = search_queries(queries, k=k)
        if not queries:
            return []
        scores, rows = self.search_vectors(self.encode_queries(queries), k=k)
        results: list[list[ScoredPassage]] = []
        for q_scores, q_rows in zip(scores, rows, strict=True):
            keep = q_rows >= 0
            passages = self.store.passages(q_rows[keep].tolist())
            results.append([ScoredPassage(passage=p, score=float(s), source=self.name)
                            for p, s in zip(passages, q_scores[keep], strict=True)])
        return results


__all__ = ["ENCODE_CHUNK", "FAISS_BUILD_THREADS", "HNSW_M", "INDEX_TYPES", "DenseRetriever", "fixed_build_threads",
           "new_faiss_index"]
