"""Sparse indexing on an engine: bm25s here, pyserini (Lucene) in :mod:`.lucene_build`.

Each backend's engine builder (``corpus``, ``out_dir``, ``engine``, ``include_title`` → a
summary dict) is its :attr:`~averitec_tools.baselines.r2vc.stages.retrieval.backends.SparseBackend.build_on_engine`.

bm25s: the analysis step runs on the engine.

Tokenising (the :class:`~averitec_tools.baselines.r2vc.stages.retrieval.analysis.LuceneLikeAnalyzer`:
stop words, Porter stemming) is the costly, parallel part; workers analyse blocks of
rows read from the memory-mapped store and return their token lists in row order. The
driver numbers terms in first-seen row order — exactly as
:meth:`~averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend.Bm25sRetriever.build`
does — and fits bm25s, so the saved index is byte-identical to the local one. (bm25s
fits one in-memory sparse matrix: the driver holds the token ids of the whole corpus.)

Example:
    >>> from averitec_tools.baselines.r2vc.corpus.store import build_corpus
    >>> import tempfile, os
    >>> tmp = tempfile.mkdtemp()
    >>> _ = build_corpus(passages=[{"id": "x", "text": "Cats purr."}, {"id": "y", "text": "Dogs bark."}],
    ...                  out_dir=os.path.join(tmp, "c"))
    >>> build_bm25s(corpus=os.path.join(tmp, "c"), out_dir=os.path.join(tmp, "ix"))["num_paragraphs"]
    2
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.stages.retrieval.encode import shard_specs
from averitec_tools.errors import UserError

#: Rows analysed per work item.
BLOCK_ROWS = 8192


@dataclass(frozen=True)
class TokenizeWorker:
    """Picklable worker factory: ``(start, stop)`` row blocks → token lists per row."""

    corpus: str
    include_title: bool = True

    def __call__(self) -> Callable[[list[Any]], list[list[list[str]]]]:
        from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, index_text
        from averitec_tools.baselines.r2vc.stages.retrieval.analysis import LuceneLikeAnalyzer

        store = ParagraphStore.open(self.corpus)
        analyzer = LuceneLikeAnalyzer()

        def run(items: list[Any]) -> list[list[list[str]]]:
            return [[analyzer(index_text(p, include_title=self.include_title))
                     for p in store.passages(range(start, stop))] for start, stop in items]

        return run


def build_bm25s(
    *,
    corpus: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    engine: Any = None,
    block_rows: int = BLOCK_ROWS,
    include_title: bool = True,
) -> dict[str, Any]:
    """Analyse the store on ``engine`` (default local), fit bm25s, save to ``out_dir``.

    Returns:
        ``{"num_paragraphs", "vocabulary", "blocks"}``.
    """
    import bm25s
    from bm25s.tokenization import Tokenized

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.analysis import LuceneLikeAnalyzer
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import (
        DEFAULT_B,
        DEFAULT_K1,
        Bm25sRetriever,
    )
    from averitec_tools.engines import get_engine

    engine = engine or get_engine("local")
    store = ParagraphStore.open(corpus)
    blocks = [(start, stop) for _, start, stop in shard_specs(num_rows=len(store), shard_size=block_rows)]
    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    for block in engine.map_batches(blocks, worker=TokenizeWorker(corpus=str(corpus), include_title=include_title),
                                    batch_size=1):
        for tokens in block:
            ids.append([vocab.setdefault(tok, len(vocab)) for tok in tokens])
    if not vocab:
        raise UserError("corpus has no indexable terms (every paragraph is stop words or punctuation)")
    model = bm25s.BM25(k1=DEFAULT_K1, b=DEFAULT_B, method="lucene")
    model.index(Tokenized(ids=ids, vocab=vocab), show_progress=False)
    Bm25sRetriever(store=store, model=model, analyzer=LuceneLikeAnalyzer(),
                   include_title=include_title).save(out_dir)
    return {"backend": "bm25s", "num_paragraphs": len(store), "vocabulary": len(vocab), "blocks": len(blocks)}


__all__ = ["BLOCK_ROWS", "build_bm25s"]
