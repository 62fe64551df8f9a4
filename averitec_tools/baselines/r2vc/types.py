"""Records and interfaces shared by the R2VC stages.

Stages talk only through these types, so each backend (bm25s, pyserini, FAISS; HF
generators; NLI cross-encoders) can be swapped without touching the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Passage:
    """One retrieval unit of the corpus: a paragraph with its page title and URL."""

    doc_id: str
    title: str
    url: str
    text: str


@dataclass(frozen=True)
class ScoredPassage:
    """A passage with a retriever's (or the fused) score for one query."""

    passage: Passage
    score: float
    #: Which retriever produced the score ("bm25s", "pyserini", "dense", "hybrid").
    source: str = ""


@runtime_checkable
class Retriever(Protocol):
    """Anything that maps a batch of queries to ranked, scored passages."""

    name: str

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Return, for each query, up to ``k`` passages, best first."""
        ...


__all__ = ["Passage", "Retriever", "ScoredPassage"]
