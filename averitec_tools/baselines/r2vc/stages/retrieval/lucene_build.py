"""pyserini (Lucene) indexing with the per-document work on an engine.

Turning paragraph-store rows into Anserini ``JsonCollection`` documents is the part
that grows with the corpus: the store is cut into blocks of consecutive rows (8192 by
default), each block is one work item, and a worker (a Ray actor under ``--engine
ray``) reads its rows from the memory-mapped store and writes them atomically as
``docs-NNNNN.jsonl`` — the same ``{"id": row, "contents": text}`` lines
:meth:`~averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend.PyseriniRetriever.build_index`
writes. The driver then runs Anserini's ``IndexCollection`` once over the block
directory with one indexing thread per block (up to the CPU count), through
:func:`~averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend.index_json_documents`,
so the index and its metadata are the retriever's own layout. Document ids are row
numbers, so search results (ids and scores) do not depend on how the rows were split.

The JSONL blocks go to a temporary directory beside the index (visible to every
worker when the index lives on a shared filesystem) and are removed afterwards; the
index is swapped in only when complete. Blocks are not resumable (rewriting them is
cheap next to indexing).

Example:
    >>> docs_file(3)
    'docs-00003.jsonl'
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.stages.retrieval.encode import shard_specs

#: Rows per JSONL block (one work item).
BLOCK_ROWS = 8192


def docs_file(index: int) -> str:
    """File name of JSONL block ``index``."""
    return f"docs-{index:05d}.jsonl"


@dataclass(frozen=True)
class JsonDocsWorker:
    """Picklable worker factory: ``(block, start, stop)`` items → JSONL block files written."""

    corpus: str
    docs_dir: str
    partial_dir: str
    include_title: bool = True

    def __call__(self) -> Callable[[list[Any]], list[int]]:
        from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, index_text
        from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import json_document

        store = ParagraphStore.open(self.corpus)
        out = Path(self.docs_dir)

        def run(items: list[Any]) -> list[int]:
            written = []
            for index, start, stop in items:
                path = out / docs_file(index)
                # Written outside docs_dir: a worker killed mid-block leaves nothing Anserini reads.
                tmp = Path(self.partial_dir) / f"{path.name}.{os.getpid()}"
                with tmp.open("w", encoding="utf-8") as fh:
                    for row, passage in zip(range(start, stop), store.passages(range(start, stop)), strict=True):
                        fh.write(json_document(row=row, text=index_text(passage, include_title=self.include_title))
                                 + "\n")
                os.replace(tmp, path)
                written.append(stop - start)
            return written

        return run


def build_pyserini(
    *,
    corpus: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    engine: Any = None,
    block_rows: int = BLOCK_ROWS,
    include_title: bool = True,
    threads: int | None = None,
) -> dict[str, Any]:
    """Write JSONL blocks on ``engine`` (default local), index them with Anserini into ``out_dir``.

    Args:
        corpus: Paragraph store directory.
        out_dir: Index directory (the pyserini retriever's layout; swapped in atomically).
        engine: An :mod:`averitec_tools.engines` engine.
        block_rows: Rows per JSONL block.
        include_title: Index ``title\\ntext`` (as the retriever's own builder does).
        threads: Anserini indexing threads (default: one per block, at most the CPU count).

    Returns:
        ``{"backend", "num_paragraphs", "blocks", "threads"}``.

    Raises:
        ResourceError: No Java / pyserini, or Lucene indexing failed.
    """
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import index_json_documents
    from averitec_tools.engines import get_engine

    engine = engine or get_engine("local")
    store = ParagraphStore.open(corpus)
    blocks = shard_specs(num_rows=len(store), shard_size=block_rows)
    threads = threads or max(1, min(len(blocks), os.cpu_count() or 1))
    target = Path(out_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.docs."))
    docs, partial = work / "docs", work / "partial"
    try:
        docs.mkdir()
        partial.mkdir()
        worker = JsonDocsWorker(corpus=str(corpus), docs_dir=str(docs), partial_dir=str(partial),
                                include_title=include_title)
        rows = sum(engine.map_batches(blocks, worker=worker, batch_size=1))
        if rows != len(store):
            raise RuntimeError(f"pyserini blocks hold {rows} rows, the corpus {len(store)}")
        index_json_documents(docs_dir=docs, store=store, index_dir=target, include_title=include_title,
                             threads=threads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"backend": "pyserini", "num_paragraphs": len(store), "blocks": len(blocks), "threads": threads}


__all__ = ["BLOCK_ROWS", "build_pyserini"]
