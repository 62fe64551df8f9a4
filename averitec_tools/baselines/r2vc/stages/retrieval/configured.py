"""The retriever a :class:`~averitec_tools.baselines.r2vc.config.RetrievalConfig` describes.

Both the full pipeline's assembly and the offline preset build their retriever from the
configuration's retrieval section; :func:`retriever_from_config` is that one mapping of
settings to :func:`~averitec_tools.baselines.r2vc.stages.retrieval.build_retriever`.

Example:
    >>> from averitec_tools.baselines.r2vc.config import RetrievalConfig
    >>> from averitec_tools.baselines.r2vc.corpus.store import build_corpus
    >>> store = build_corpus(passages=[
    ...     {"doc_id": "a", "title": "Paris", "url": "", "text": "Paris is the capital of France."},
    ...     {"doc_id": "b", "title": "Rome", "url": "", "text": "Rome is the capital of Italy."},
    ... ])
    >>> r = retriever_from_config(RetrievalConfig(dense_model=None), corpus=store, index_dir=None)
    >>> [hit.passage.doc_id for hit in r.search(["capital of Italy"], k=1)[0]]
    ['b']
"""

from __future__ import annotations

import os
from typing import Any

from averitec_tools.baselines.r2vc.config import RetrievalConfig
from averitec_tools.baselines.r2vc.stages.retrieval import build_retriever

#: The retrieval settings handed to :func:`build_retriever` under their own names.
BUILDER_SETTINGS: tuple[str, ...] = ("sparse", "dense_model", "alpha", "epsilon", "top_sparse", "top_dense",
                                     "top_m", "dense_index", "device", "encode_batch_size")


def retriever_from_config(config: RetrievalConfig, *, corpus: Any, index_dir: str | os.PathLike[str] | None,
                          rebuild: bool = False, show_progress: bool = False, engine: Any = None) -> Any:
    """Build (or load) the retriever of ``config`` over ``corpus``.

    Args:
        config: The retrieval section (its ``corpus`` and ``index_dir`` are the caller's to
            resolve: they come as ``corpus`` and ``index_dir``).
        corpus: A paragraph store or its directory.
        index_dir: Where indexes are built once and loaded afterwards (None: in memory).
        rebuild: Rebuild indexes even if they exist.
        show_progress: Show progress bars while indexing.
        engine: An :mod:`averitec_tools.engines` engine (None: this process).

    Returns:
        An object implementing ``Retriever``.
    """
    settings = {name: getattr(config, name) for name in BUILDER_SETTINGS}
    return build_retriever(corpus=corpus, index_dir=index_dir, rebuild=rebuild, show_progress=show_progress,
                           engine=engine, **settings)


__all__ = ["BUILDER_SETTINGS", "retriever_from_config"]
