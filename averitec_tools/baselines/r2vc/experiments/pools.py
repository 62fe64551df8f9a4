"""Every claim's evidence pool searched in one batched pass before decoding.

Searched one claim at a time, FEVER's ``ivfsq8`` index (:mod:`~averitec_tools.baselines.r2vc.stages.retrieval.compact`)
costs seconds of CPU per query at 25 M units, and a paper run would ask for the same pool
several times: once per candidate store (the DPO decoding, the SFT decoding, NLI-only) and
once more for each claim of a decode chunk
(:mod:`~averitec_tools.baselines.r2vc.experiments.batching` looks its chunk's pools up
before the pipeline asks). :func:`prefetch_pools` searches each distinct claim text once,
:data:`SEARCH_BATCH` queries per ``search`` call in claim-list order (FAISS parallelises a
batch over the host's OpenMP threads; chunks are fixed by position, so a rerun searches the
same batches), and :class:`PooledRetriever` answers the pipeline from those pools. A query
not searched beforehand goes to the wrapped retriever.

Example:
    >>> from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage
    >>> class Counting:
    ...     name, calls = "bm25s", []
    ...     def search(self, queries, *, k):
    ...         self.calls.append(list(queries))
    ...         return [[ScoredPassage(Passage(doc_id=q, title="", url="", text=q), 1.0)][:k] for q in queries]
    >>> inner = Counting()
    >>> pooled = PooledRetriever(inner, pools=search_pools(inner, ["a", "b", "a"], k=24, batch=2))
    >>> inner.calls, pooled.search(["b"], k=24)[0][0].passage.doc_id
    ([['a', 'b']], 'b')
    >>> pooled.search(["c"], k=1)[0][0].passage.doc_id
    'c'
    >>> inner.calls[-1], pooled.n_searched, pooled.n_pooled
    (['c'], 1, 1)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from averitec_tools.baselines.r2vc.types import ScoredPassage

#: Queries per ``search`` call of the batched pass.
SEARCH_BATCH = 256


def search_pools(retriever: Any, queries: Sequence[str], *, k: int, batch: int = SEARCH_BATCH
                 ) -> dict[str, list[ScoredPassage]]:
    """Each distinct query's top ``k``, searched ``batch`` distinct queries per call, in first-seen order."""
    unique = list(dict.fromkeys(queries))
    pools: dict[str, list[ScoredPassage]] = {}
    for start in range(0, len(unique), max(1, int(batch))):
        part = unique[start:start + max(1, int(batch))]
        pools.update(zip(part, retriever.search(part, k=k), strict=True))
    return pools


class PooledRetriever:
    """A retriever answering from pools searched beforehand (:func:`search_pools`); other queries go to ``inner``."""

    def __init__(self, inner: Any, *, pools: Mapping[str, list[ScoredPassage]]) -> None:
        self.inner, self.pools = inner, pools
        self.name = getattr(inner, "name", "pooled")
        self.n_pooled = self.n_searched = 0

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        out = []
        for q in queries:
            if q in self.pools:
                self.n_pooled += 1
                out.append(list(self.pools[q][:k]))
            else:
                self.n_searched += 1
                out.append(self.inner.search([q], k=k)[0])
        return out


def prefetch_pools(pipe: Any, *, claims: Sequence[Any], pools: dict[str, list[ScoredPassage]] | None = None
                   ) -> dict[str, list[ScoredPassage]]:
    """Give ``pipe`` a :class:`PooledRetriever` over the pools of ``claims`` that carry no evidence of their own.

    ``pools`` (an earlier row's) are reused, not searched again. Returns the pools
    (``{}`` when the pipeline has no retriever or every claim brings its evidence).
    """
    if pipe.retriever is None:
        return pools or {}
    if pools is None:
        queries = [c.claim for c in claims if c.evidence is None]
        pools = search_pools(pipe.retriever, queries, k=pipe.config.retrieval.top_m) if queries else {}
    if pools:
        pipe.retriever = PooledRetriever(pipe.retriever, pools=pools)
    return pools


__all__ = ["PooledRetriever", "prefetch_pools", "search_pools"]
