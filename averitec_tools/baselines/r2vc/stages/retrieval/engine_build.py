"""The R2VC retriever's missing indexes, built on an engine before the retriever loads them.

:func:`~averitec_tools.baselines.r2vc.stages.retrieval.build_retriever` (and so ``averitec
baseline r2vc --engine ray``) calls :func:`build_missing_indexes` first when it is given
a non-local engine: every index of the configuration that is missing from ``index_dir``
(or all of them with ``rebuild``) is built with the engine builders — the sparse ones
through :data:`~averitec_tools.baselines.r2vc.stages.retrieval.backends.SPARSE_BACKENDS`, the dense one as
:func:`~averitec_tools.baselines.r2vc.stages.retrieval.encode.encode_corpus` into ``index_dir/dense.shards``
(shards of the retriever's own 8192-row encoding chunk, resumable) followed by
:func:`~averitec_tools.baselines.r2vc.stages.retrieval.faiss_build.build_index_from_shards`. The files are the
ones the retriever's in-process builders write (byte-identical for bm25s and the
HNSW/flat dense index; the same search results for pyserini), so the retriever then
simply loads them.

Example:
    >>> missing_indexes(index_dir="/nonexistent", sparse="bm25s", dense_model=None, rebuild=False)
    ['bm25s']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.stages.retrieval.backends import SPARSE_BACKENDS
from averitec_tools.errors import UserError

#: The dense index's folder in ``index_dir`` (the sparse ones are named after their backend).
DENSE = "dense"
#: Where the dense index's embedding shards are kept, inside the retriever's ``index_dir``.
DENSE_SHARDS = "dense.shards"


def _meta_file(kind: str) -> str:
    if kind == DENSE:
        from averitec_tools.baselines.r2vc.stages.retrieval.dense import META_FILE

        return META_FILE
    return SPARSE_BACKENDS.get(kind).meta_file


def missing_indexes(*, index_dir: str | os.PathLike[str], sparse: str | None, dense_model: str | None,
                    rebuild: bool) -> list[str]:
    """The index folders (``bm25s``, ``pyserini``, ``dense``) of the configuration to build."""
    wanted = ([sparse] if sparse else []) + ([DENSE] if dense_model else [])
    return [kind for kind in wanted if rebuild or not (Path(index_dir) / kind / _meta_file(kind)).exists()]


def build_missing_indexes(
    *,
    store: Any,
    engine: Any,
    index_dir: str | os.PathLike[str] | None,
    sparse: str | None,
    dense_model: str | None,
    dense_index: str = "hnsw",
    device: str | None = None,
    encode_batch_size: int = 64,
    rebuild: bool = False,
) -> dict[str, Any]:
    """Build the configuration's missing indexes in ``index_dir`` on ``engine``.

    Returns:
        Per index built: the builder's summary (``{}`` when nothing was missing).

    Raises:
        UserError: No ``index_dir`` or an in-memory store (engine workers read the store
            from disk and the retriever loads the indexes from ``index_dir``).
    """
    if index_dir is None or store.path is None:
        raise UserError(f"engine {engine.name}: building retrieval indexes needs a corpus on disk and an index "
                        "directory", hint="pass index_dir and a ParagraphStore opened from a directory")
    root = Path(index_dir)
    corpus = str(store.path)
    built: dict[str, Any] = {}
    for kind in missing_indexes(index_dir=root, sparse=sparse, dense_model=dense_model, rebuild=rebuild):
        if kind == DENSE:
            built[kind] = _build_dense(corpus=corpus, root=root, engine=engine, model=str(dense_model),
                                       index_type=dense_index, device=device, batch_size=encode_batch_size,
                                       rebuild=rebuild)
        else:
            built[kind] = SPARSE_BACKENDS.get(kind).build_on_engine(corpus=corpus, out_dir=root / kind,
                                                                    engine=engine)
    return built


def _build_dense(*, corpus: str, root: Path, engine: Any, model: str, index_type: str, device: str | None,
                 batch_size: int, rebuild: bool) -> dict[str, Any]:
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import ENCODE_CHUNK
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import encode_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards

    shards = root / DENSE_SHARDS
    manifest = encode_corpus(corpus=corpus, shards_dir=shards, model=model, engine=engine, shard_size=ENCODE_CHUNK,
                             batch_size=batch_size, device=device, resume=not rebuild)
    meta = build_index_from_shards(shards_dir=shards, out_dir=root / DENSE, corpus=corpus, model=model,
                                   index_type=index_type)
    return {**meta, "shards": str(shards), "shards_encoded": manifest["encoded"],
            "shards_skipped": manifest["skipped"]}


__all__ = ["DENSE_SHARDS", "build_missing_indexes"]
