"""The batched retrieval pass of the paper runs (``experiments/pools.py``): each claim searched once."""

from __future__ import annotations

from typing import Any

from averitec_tools.baselines.r2vc.experiments.pools import (
    PooledRetriever,
    prefetch_pools,
    search_pools,
)
from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage


class Counting:
    name = "bm25s"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def search(self, queries: list[str], *, k: int) -> list[list[ScoredPassage]]:
        self.calls.append(list(queries))
        return [[ScoredPassage(Passage(doc_id=f"{q}-{i}", title="", url="", text=q), float(-i)) for i in range(30)][:k]
                for q in queries]


class Claim:
    def __init__(self, claim: str, evidence: Any = None) -> None:
        self.claim, self.evidence = claim, evidence


class Pipe:
    class config:  # noqa: N801 - the pipeline's attribute name
        class retrieval:  # noqa: N801
            top_m = 24

    def __init__(self, retriever: Any) -> None:
        self.retriever = retriever


def test_search_pools_batches_distinct_queries_in_order() -> None:
    inner = Counting()
    pools = search_pools(inner, ["a", "b", "a", "c", "d", "e"], k=24, batch=2)
    assert inner.calls == [["a", "b"], ["c", "d"], ["e"]]  # fixed chunks by first-seen position
    assert list(pools) == ["a", "b", "c", "d", "e"] and len(pools["a"]) == 24
    assert pools["c"] == inner.search(["c"], k=24)[0]  # what a one-by-one search gives (this retriever)


def test_prefetch_serves_every_row_from_one_pass_and_leaves_given_evidence_alone() -> None:
    claims = [Claim("x"), Claim("y"), Claim("given", evidence=[]), Claim("x")]
    inner = Counting()
    first = Pipe(inner)
    pools = prefetch_pools(first, claims=claims)
    assert inner.calls == [["x", "y"]] and set(pools) == {"x", "y"}
    second = Pipe(inner)  # the next table row's pipeline: the same pools, no search
    assert prefetch_pools(second, claims=claims, pools=pools) is pools and inner.calls == [["x", "y"]]
    assert isinstance(second.retriever, PooledRetriever)
    hits = second.retriever.search(["y", "x"], k=3)
    assert [h.passage.doc_id for h in hits[0]] == ["y-0", "y-1", "y-2"] and inner.calls == [["x", "y"]]
    assert second.retriever.search(["z"], k=1)[0][0].passage.doc_id == "z-0"  # not prefetched: searched
    assert (second.retriever.n_pooled, second.retriever.n_searched) == (2, 1)
    assert prefetch_pools(Pipe(None), claims=claims) == {}
    only_given = Pipe(Counting())
    assert prefetch_pools(only_given, claims=[Claim("g", evidence=[])]) == {}
    assert isinstance(only_given.retriever, Counting) and only_given.retriever.calls == []
