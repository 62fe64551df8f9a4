"""Stage 4: fusion of sparse and dense results (R2VC §3.2, Algorithm C.2).

For one query, the sparse list ``E_s`` and the dense list ``E_d`` are outer-joined on
``doc_id``; each retriever's scores are min–max normalised independently,
``r̃ = (r − min r) / (max r − min r + ε)``; a passage missing from one list gets 0 for
that retriever; the fused score is ``α·r̃_s + (1 − α)·r̃_d``; the top ``M`` are kept and
their text fields coalesced (first non-empty value, sparse first).

The paper gives neither α nor ε; we use α = 0.5 and ε = 1e-6. Note that the formula
maps a list whose scores are all equal (e.g. a single hit) to 0 for that retriever.
Ties on the fused score keep first-appearance order (sparse rank, then dense rank), so
the output is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from averitec_tools.baselines.r2vc.types import Passage, Retriever, ScoredPassage
from averitec_tools.errors import UserError

#: α: weight of the normalised sparse score (not published in the paper; equal weight).
DEFAULT_ALPHA = 0.5
#: ε in the min–max denominator (not published in the paper).
DEFAULT_EPSILON = 1e-6
#: N_s, N_d and M from Table G.1.
DEFAULT_TOP_SPARSE = 200
DEFAULT_TOP_DENSE = 200
DEFAULT_TOP_M = 24


@dataclass(frozen=True)
class FusedScore:
    """The parts of one fused score, kept for analysis and tests.

    Attributes:
        doc_id: The passage id.
        sparse: Normalised sparse score r̃_s (0 when the sparse list lacks the passage).
        dense: Normalised dense score r̃_d (0 when the dense list lacks the passage).
        fused: ``α·sparse + (1 − α)·dense``.
    """

    doc_id: str
    sparse: float
    dense: float
    fused: float


def _check_parameters(*, alpha: float, epsilon: float, top_m: int) -> None:
    if not (0.0 <= alpha <= 1.0) or math.isnan(alpha):
        raise UserError(f"fusion weight alpha must be in [0, 1], got {alpha}")
    if not epsilon >= 0.0:
        raise UserError(f"fusion epsilon must be >= 0, got {epsilon}")
    if top_m < 1:
        raise UserError(f"number of fused passages to keep must be >= 1, got {top_m}")


def _first_by_doc(hits: Sequence[ScoredPassage]) -> dict[str, ScoredPassage]:
    """Keep the best (first, since lists are ranked) hit per doc_id, in rank order."""
    out: dict[str, ScoredPassage] = {}
    for hit in hits:
        prev = out.get(hit.passage.doc_id)
        if prev is None or hit.score > prev.score:
            out[hit.passage.doc_id] = hit
    return out


def min_max_normalise(scores: dict[str, float], *, epsilon: float) -> dict[str, float]:
    """Min–max normalise one retriever's scores with ε in the denominator.

    Example:
        >>> min_max_normalise({"a": 3.0, "b": 1.0, "c": 2.0}, epsilon=0.0)
        {'a': 1.0, 'b': 0.0, 'c': 0.5}
    """
    if not scores:
        return {}
    lo = min(scores.values())
    hi = max(scores.values())
    denom = hi - lo + epsilon
    if denom == 0.0:  # ε = 0 and all scores equal: every passage is at the minimum
        return dict.fromkeys(scores, 0.0)
    return {doc: (s - lo) / denom for doc, s in scores.items()}


def _coalesce(*passages: Passage | None) -> Passage:
    present = [p for p in passages if p is not None]

    def first(field: str) -> str:
        for p in present:
            value = getattr(p, field)
            if value:
                return str(value)
        return ""

    return Passage(doc_id=present[0].doc_id, title=first("title"), url=first("url"), text=first("text"))


def fuse_scores(
    sparse: Sequence[ScoredPassage],
    dense: Sequence[ScoredPassage],
    *,
    alpha: float = DEFAULT_ALPHA,
    epsilon: float = DEFAULT_EPSILON,
) -> list[FusedScore]:
    """Score every passage of the outer join (all of them, best first, no cut).

    Example:
        >>> p = lambda d: Passage(doc_id=d, title="", url="", text=d)
        >>> s = [ScoredPassage(p("a"), 10.0), ScoredPassage(p("b"), 0.0)]
        >>> d = [ScoredPassage(p("b"), 0.9), ScoredPassage(p("c"), 0.1)]
        >>> [(f.doc_id, round(f.fused, 3)) for f in fuse_scores(s, d, alpha=0.5, epsilon=0.0)]
        [('a', 0.5), ('b', 0.5), ('c', 0.0)]
    """
    _check_parameters(alpha=alpha, epsilon=epsilon, top_m=1)
    s_hits = _first_by_doc(sparse)
    d_hits = _first_by_doc(dense)
    s_norm = min_max_normalise({k: v.score for k, v in s_hits.items()}, epsilon=epsilon)
    d_norm = min_max_normalise({k: v.score for k, v in d_hits.items()}, epsilon=epsilon)
    order = list(s_hits) + [doc for doc in d_hits if doc not in s_hits]
    fused = []
    for doc in order:
        s = s_norm.get(doc, 0.0)
        d = d_norm.get(doc, 0.0)
        fused.append(FusedScore(doc_id=doc, sparse=s, dense=d, fused=alpha * s + (1.0 - alpha) * d))
    # sorted() is stable: ties keep first-appearance order.
    return sorted(fused, key=lambda f: -f.fused)


def fuse(
    sparse: Sequence[ScoredPassage],
    dense: Sequence[ScoredPassage],
    *,
    alpha: float = DEFAULT_ALPHA,
    epsilon: float = DEFAULT_EPSILON,
    top_m: int = DEFAULT_TOP_M,
) -> list[ScoredPassage]:
    """Algorithm C.2: fuse one query's sparse and dense lists and keep the top ``top_m``.

    Args:
        sparse: The sparse retriever's ranked hits (E_s).
        dense: The dense retriever's ranked hits (E_d).
        alpha: Weight of the sparse score.
        epsilon: ε in the min–max denominator.
        top_m: M, the number of passages kept.

    Returns:
        Up to ``top_m`` passages with the fused score, ``source="hybrid"``, best first.

    Example:
        >>> p = lambda d: Passage(doc_id=d, title="", url="", text=d)
        >>> s = [ScoredPassage(p("a"), 12.0), ScoredPassage(p("b"), 4.0)]
        >>> d = [ScoredPassage(p("b"), 0.8), ScoredPassage(p("c"), 0.2)]
        >>> [(h.passage.doc_id, round(h.score, 2)) for h in fuse(s, d, alpha=0.5, epsilon=0.0, top_m=2)]
        [('a', 0.5), ('b', 0.5)]
    """
    _check_parameters(alpha=alpha, epsilon=epsilon, top_m=top_m)
    s_hits = _first_by_doc(sparse)
    d_hits = _first_by_doc(dense)
    out = []
    for f in fuse_scores(sparse, dense, alpha=alpha, epsilon=epsilon)[:top_m]:
        s_hit = s_hits.get(f.doc_id)
        d_hit = d_hits.get(f.doc_id)
        passage = _coalesce(
            s_hit.passage if s_hit is not None else None,
            d_hit.passage if d_hit is not None else None,
        )
        out.append(ScoredPassage(passage=passage, score=f.fused, source="hybrid"))
    return out


@dataclass(eq=False, kw_only=True, repr=False)
class HybridRetriever:
    """A :class:`Retriever` that fuses a sparse and a dense retriever (Algorithm C.2).

    ``search(queries, k=M)`` asks the sparse retriever for ``top_sparse`` and the dense one
    for ``top_dense`` passages per query and returns the top ``k`` fused passages.

    Args:
        sparse: The sparse retriever (bm25s or pyserini).
        dense: The dense retriever.
        alpha: Weight of the sparse score.
        epsilon: ε in the min–max denominator.
        top_sparse: N_s.
        top_dense: N_d.
        top_m: M, the pool size the pipeline should pass as ``k``.

    Example:
        >>> class Fixed:
        ...     def __init__(self, name, hits): self.name, self.hits = name, hits
        ...     def search(self, queries, *, k): return [self.hits[:k] for _ in queries]
        >>> p = lambda d: Passage(doc_id=d, title="", url="", text=d)
        >>> s = Fixed("bm25s", [ScoredPassage(p("a"), 2.0), ScoredPassage(p("b"), 1.0)])
        >>> d = Fixed("dense", [ScoredPassage(p("b"), 0.9), ScoredPassage(p("a"), 0.1)])
        >>> h = HybridRetriever(sparse=s, dense=d, alpha=0.75, epsilon=0.0)
        >>> [x.passage.doc_id for x in h.search(["q"], k=24)[0]]
        ['a', 'b']
    """

    name: ClassVar[str] = "hybrid"

    sparse: Retriever
    dense: Retriever
    alpha: float = DEFAULT_ALPHA
    epsilon: float = DEFAULT_EPSILON
    top_sparse: int = DEFAULT_TOP_SPARSE
    top_dense: int = DEFAULT_TOP_DENSE
    top_m: int = DEFAULT_TOP_M

    def __post_init__(self) -> None:
        _check_parameters(alpha=self.alpha, epsilon=self.epsilon, top_m=self.top_m)
        if self.top_sparse < 1 or self.top_dense < 1:
            raise UserError(
                f"top_sparse and top_dense must be >= 1, got {self.top_sparse} and {self.top_dense}"
            )

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Return, for each query, the top ``k`` fused passages (``k`` plays the role of M)."""
        queries = list(queries)
        if not queries:
            return []
        sparse_hits = self.sparse.search(queries, k=self.top_sparse)
        dense_hits = self.dense.search(queries, k=self.top_dense)
        return [
            fuse(s, d, alpha=self.alpha, epsilon=self.epsilon, top_m=k)
            for s, d in zip(sparse_hits, dense_hits, strict=True)
        ]


__all__ = ["DEFAULT_ALPHA", "DEFAULT_EPSILON", "DEFAULT_TOP_DENSE", "DEFAULT_TOP_M", "DEFAULT_TOP_SPARSE",
           "HybridRetriever", "fuse", "fuse_scores", "min_max_normalise"]
