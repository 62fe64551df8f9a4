"""Stage 2, embedded default: BM25 with `bm25s` over a paragraph store.

Uses Lucene's BM25 variant (``method="lucene"``: idf = ln(1 + (N − df + 0.5)/(df + 0.5)),
tf part ``tf / (tf + k1·(1 − b + b·dl/avgdl))``) with Anserini's defaults k1 = 0.9,
b = 0.4, and the :class:`~.analysis.LuceneLikeAnalyzer`, so that on ordinary prose it gives
the same scores as the pyserini backend. Passages sharing no term with the query are not
returned (as in Lucene).

Index layout (``index_dir``): bm25s's own files plus ``averitec_bm25s.json`` recording the
corpus fingerprint and the analyser/BM25 settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.baselines.r2vc.stages.retrieval._index_meta import (
    read_index_meta,
    rebuild_hint,
    search_queries,
)
from averitec_tools.baselines.r2vc.stages.retrieval.analysis import LuceneLikeAnalyzer
from averitec_tools.baselines.r2vc.types import ScoredPassage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory

META_FILE = "averitec_bm25s.json"
#: Anserini's BM25 defaults.
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


def _top_rows(scores: np.ndarray, *, k: int) -> np.ndarray:
    """Rows of the ``k`` best positive scores, best first; ties go to the lower row (as
    Lucene breaks them by internal doc id), also at the cut, so ``k`` never changes the
    order of the first results.

    Example:
        >>> _top_rows(np.array([0.0, 2.0, 1.0, 2.0, 1.0]), k=3).tolist()
        [1, 3, 2]
    """
    rows = np.flatnonzero(scores > 0)  # ascending row order
    if len(rows) > k:
        kth = np.partition(scores[rows], len(rows) - k)[len(rows) - k]
        above = rows[scores[rows] > kth]
        tied = rows[scores[rows] == kth]
        rows = np.concatenate([above, tied[: k - len(above)]])
    return rows[np.lexsort((rows, -scores[rows]))]


class Bm25sRetriever:
    """BM25 (Lucene variant) over a :class:`ParagraphStore`, backed by bm25s.

    Args:
        store: The paragraph store the index was built from.
        model: A fitted ``bm25s.BM25``.
        analyzer: The analyser used for documents; queries go through it too.
        include_title: Whether ``title`` was indexed with the text.

    Example:
        >>> from averitec_tools.baselines.r2vc.corpus.store import build_corpus
        >>> store = build_corpus(passages=[{"id": "x", "text": "Cats purr."},
        ...                                {"id": "y", "text": "Dogs bark loudly."}])
        >>> r = Bm25sRetriever.build(store=store, show_progress=False)
        >>> [h.passage.doc_id for h in r.search(["barking dog"], k=5)[0]]
        ['y']
    """

    name = "bm25s"

    def __init__(
        self, *, store: ParagraphStore, model: Any, analyzer: LuceneLikeAnalyzer, include_title: bool
    ) -> None:
        self.store = store
        self.model = model
        self.analyzer = analyzer
        self.include_title = include_title

    @classmethod
    def build(
        cls,
        *,
        store: ParagraphStore,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        include_title: bool = True,
        analyzer: LuceneLikeAnalyzer | None = None,
        show_progress: bool = True,
    ) -> Bm25sRetriever:
        """Tokenise every paragraph (batched, with a progress bar) and fit the BM25 index."""
        import bm25s
        from bm25s.tokenization import Tokenized
        from tqdm.auto import tqdm

        analyzer = analyzer or LuceneLikeAnalyzer()
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        with tqdm(total=len(store), desc="bm25s: tokenising", unit="para", disable=not show_progress) as bar:
            for texts in store.iter_texts(include_title=include_title):
                for text in texts:
                    ids.append([vocab.setdefault(tok, len(vocab)) for tok in analyzer(text)])
                bar.update(len(texts))
        if not vocab:
            raise UserError("corpus has no indexable terms (every paragraph is stop words or punctuation)")
        model = bm25s.BM25(k1=k1, b=b, method="lucene")
        model.index(Tokenized(ids=ids, vocab=vocab), show_progress=show_progress)
        return cls(store=store, model=model, analyzer=analyzer, include_title=include_title)

    def save(self, index_dir: str | os.PathLike[str]) -> None:
        """Save the index to ``index_dir`` (written beside it, then swapped in)."""
        with atomic_directory(index_dir) as tmp:
            self.model.save(str(tmp), show_progress=False)
            meta = {
                "backend": "bm25s",
                "corpus_fingerprint": self.store.fingerprint,
                "num_paragraphs": len(self.store),
                "k1": self.model.k1,
                "b": self.model.b,
                "method": self.model.method,
                "include_title": self.include_title,
                **self.analyzer.settings(),
            }
            (tmp / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, *, store: ParagraphStore, index_dir: str | os.PathLike[str], mmap: bool = True) -> Bm25sRetriever:
        """Load an index saved by :meth:`save`; it must have been built from ``store``.

        Raises:
            UserError: The index is missing, corrupt, or built from another corpus.
        """
        import bm25s

        root = Path(index_dir)
        include_title, stem, stopwords = read_index_meta(
            root, kind="bm25s", store=store, meta_file=META_FILE, needs=(),
            parse=lambda m: (bool(m["include_title"]), m["stem"] == "porter", frozenset(m["stopwords"])),
        )
        try:
            model = bm25s.BM25.load(str(root), mmap=mmap, show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            raise UserError(f"{root}: corrupt bm25s index ({exc})", hint=rebuild_hint(root)) from None
        if int(model.scores["num_docs"]) != len(store):
            raise UserError(
                f"{root}: bm25s index holds {model.scores['num_docs']} paragraphs, corpus has {len(store)}",
                hint=rebuild_hint(root),
            )
        analyzer = LuceneLikeAnalyzer(stopwords=stopwords, stem=stem)
        return cls(store=store, model=model, analyzer=analyzer, include_title=include_title)

    @classmethod
    def load_or_build(
        cls,
        *,
        store: ParagraphStore,
        index_dir: str | os.PathLike[str] | None,
        rebuild: bool = False,
        show_progress: bool = True,
    ) -> Bm25sRetriever:
        """Load the index in ``index_dir`` if present (and not ``rebuild``), else build and save it."""
        if index_dir is not None and not rebuild and (Path(index_dir) / META_FILE).exists():
            return cls.load(store=store, index_dir=index_dir)
        retriever = cls.build(store=store, show_progress=show_progress)
        if index_dir is not None:
            retriever.save(index_dir)
        return retriever

    def score_rows(self, query: str) -> np.ndarray:
        """BM25 score of every paragraph (row order) for ``query``."""
        vocab = self.model.vocab_dict
        ids = [vocab[t] for t in self.analyzer(query) if t in vocab]
        if not ids:
            return np.zeros(len(self.store), dtype=np.float32)
        return np.asarray(self.model.get_scores_from_ids(ids))

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Top ``k`` paragraphs per query by BM25; passages with score 0 are left out."""
        results: list[list[ScoredPassage]] = []
        for query in search_queries(queries, k=k):
            scores = self.score_rows(query)
            top = _top_rows(scores, k=k)
            passages = self.store.passages(top.tolist())
            results.append(
                [ScoredPassage(passage=p, score=float(scores[r]), source=self.name)
                 for p, r in zip(passages, top, strict=True)]
            )
        return results


__all__ = ["DEFAULT_B", "DEFAULT_K1", "Bm25sRetriever"]
