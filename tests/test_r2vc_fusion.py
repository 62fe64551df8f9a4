"""Algorithm C.2 fusion: hand-derived values on a 4-doc fixture, and ranx.fuse as reference."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from averitec_tools.baselines.r2vc.stages.retrieval.fusion import (
    DEFAULT_EPSILON,
    DEFAULT_TOP_M,
    HybridRetriever,
    fuse,
    fuse_scores,
    min_max_normalise,
)
from averitec_tools.baselines.r2vc.types import Passage, Retriever, ScoredPassage
from averitec_tools.errors import UserError


def _p(doc: str, title: str = "", url: str = "", text: str | None = None) -> Passage:
    return Passage(doc_id=doc, title=title, url=url, text=doc.upper() if text is None else text)


# Sparse: a=12, b=4, d=2. Dense: b=0.8, c=0.2, d=0.5 (c only dense, a only sparse).
SPARSE = [
    ScoredPassage(_p("a", title="A"), 12.0, "bm25s"),
    ScoredPassage(_p("b", title=""), 4.0, "bm25s"),
    ScoredPassage(_p("d", title="D", url=""), 2.0, "bm25s"),
]
DENSE = [
    ScoredPassage(_p("b", title="B title", url="https://b"), 0.8, "dense"),
    ScoredPassage(_p("d", title="D dense", url="https://d"), 0.5, "dense"),
    ScoredPassage(_p("c", title="C"), 0.2, "dense"),
]


def test_min_max_by_hand() -> None:
    assert min_max_normalise({"a": 12.0, "b": 4.0, "d": 2.0}, epsilon=0.0) == {"a": 1.0, "b": 0.2, "d": 0.0}
    eps = min_max_normalise({"a": 12.0, "b": 4.0, "d": 2.0}, epsilon=0.5)
    assert eps["a"] == pytest.approx(10 / 10.5) and eps["b"] == pytest.approx(2 / 10.5)
    assert min_max_normalise({}, epsilon=1e-6) == {}
    # A single hit (or all-equal scores) normalises to 0, with ε > 0 and with ε = 0.
    assert min_max_normalise({"x": 3.0}, epsilon=1e-6) == {"x": 0.0}
    assert min_max_normalise({"x": 3.0, "y": 3.0}, epsilon=0.0) == {"x": 0.0, "y": 0.0}


def test_fusion_by_hand_eps0() -> None:
    # s̃: a=1, b=0.2, d=0; d̃: b=1, d=0.5, c=0; α=0.3:
    # a=0.3, b=0.06+0.7=0.76, d=0.35, c=0.
    out = fuse(SPARSE, DENSE, alpha=0.3, epsilon=0.0, top_m=24)
    assert [h.passage.doc_id for h in out] == ["b", "d", "a", "c"]
    assert [h.score for h in out] == pytest.approx([0.76, 0.35, 0.3, 0.0])
    assert {h.source for h in out} == {"hybrid"}
    parts = {f.doc_id: f for f in fuse_scores(SPARSE, DENSE, alpha=0.3, epsilon=0.0)}
    assert (parts["c"].sparse, parts["c"].dense) == (0.0, 0.0)  # missing sparse score → 0
    assert (parts["a"].sparse, parts["a"].dense) == (1.0, 0.0)  # missing dense score → 0


def test_fusion_by_hand_with_epsilon() -> None:
    out = {h.passage.doc_id: h.score for h in fuse(SPARSE, DENSE, alpha=0.3, epsilon=0.5, top_m=24)}
    assert out["a"] == pytest.approx(0.3 * 10 / 10.5)
    assert out["b"] == pytest.approx(0.3 * 2 / 10.5 + 0.7 * 0.6 / 1.1)
    assert out["d"] == pytest.approx(0.7 * 0.3 / 1.1)
    assert out["c"] == 0.0


def test_fusion_keeps_top_m_and_coalesces_fields() -> None:
    out = fuse(SPARSE, DENSE, alpha=0.3, epsilon=0.0, top_m=2)
    assert [h.passage.doc_id for h in out] == ["b", "d"]
    # b: sparse title empty → dense title; url only in dense. d: sparse title wins (first non-empty).
    assert out[0].passage.title == "B title" and out[0].passage.url == "https://b"
    assert out[1].passage.title == "D" and out[1].passage.url == "https://d"


def test_fusion_alpha_extremes_and_ties() -> None:
    only_sparse = fuse(SPARSE, DENSE, alpha=1.0, epsilon=0.0)
    assert [h.passage.doc_id for h in only_sparse][:2] == ["a", "b"]
    # d and c both fuse to 0 under α = 1: ties keep first appearance (sparse list, then dense).
    assert [h.passage.doc_id for h in only_sparse][2:] == ["d", "c"]
    only_dense = fuse(SPARSE, DENSE, alpha=0.0, epsilon=0.0)
    assert [h.passage.doc_id for h in only_dense] == ["b", "d", "a", "c"]


def test_fusion_empty_and_one_sided() -> None:
    assert fuse([], [], alpha=0.5) == []
    out = fuse([], DENSE, alpha=0.5, epsilon=0.0)
    assert [h.passage.doc_id for h in out] == ["b", "d", "c"]
    assert out[0].score == pytest.approx(0.5)


def test_fusion_duplicate_doc_in_one_list_keeps_best() -> None:
    dup = [ScoredPassage(_p("a"), 5.0), ScoredPassage(_p("a"), 1.0), ScoredPassage(_p("z"), 0.0)]
    out = fuse(dup, [], alpha=1.0, epsilon=0.0)
    assert [(h.passage.doc_id, h.score) for h in out] == [("a", 1.0), ("z", 0.0)]


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [({"alpha": 1.5}, "alpha"), ({"alpha": -0.1}, "alpha"), ({"epsilon": -1.0}, "epsilon"), ({"top_m": 0}, ">= 1")],
)
def test_fusion_bad_parameters(kwargs: dict[str, float], msg: str) -> None:
    with pytest.raises(UserError, match=msg):
        fuse(SPARSE, DENSE, **kwargs)  # type: ignore[arg-type]


# ranx.fuse in a child process with numba's JIT off: the same ranx code, run by the
# interpreter. Compiling ranx's kernels cost ~40 s CPU per test run (a fresh venv has no
# numba cache); interpreted, the two tiny runs take milliseconds.
_RANX_FUSE = """
import json, sys, warnings
import ranx
spec = json.load(sys.stdin)
runs = [ranx.Run(run, name=name) for name, run in spec["runs"].items()]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fused = ranx.fuse(runs=runs, norm="min-max", method="wsum", params={"weights": spec["weights"]})
print(json.dumps({q: {d: float(s) for d, s in hits.items()} for q, hits in fused.to_dict().items()}))
"""


def _ranx_fuse(runs: dict[str, dict[str, dict[str, float]]], weights: list[float]) -> dict[str, dict[str, float]]:
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    proc = subprocess.run([sys.executable, "-c", _RANX_FUSE], input=json.dumps({"runs": runs, "weights": weights}),
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, dict[str, float]] = json.loads(proc.stdout)
    return result


def test_fusion_matches_ranx() -> None:
    sparse = {
        "q1": SPARSE,
        "q2": [ScoredPassage(_p(d), s) for d, s in [("x", 31.5), ("y", 20.25), ("z", 3.0), ("w", 1.0)]],
    }
    dense = {
        "q1": DENSE,
        "q2": [ScoredPassage(_p(d), s) for d, s in [("v", 0.91), ("y", 0.74), ("x", 0.42), ("u", 0.05)]],
    }
    alpha = 0.35
    runs = {name: {q: {h.passage.doc_id: h.score for h in hits} for q, hits in src.items()}
            for name, src in (("sparse", sparse), ("dense", dense))}
    ref = _ranx_fuse(runs, [alpha, 1 - alpha])
    for q in sparse:
        ours = fuse(sparse[q], dense[q], alpha=alpha, epsilon=0.0, top_m=100)
        assert {h.passage.doc_id for h in ours} == set(ref[q])
        for h in ours:
            assert h.score == pytest.approx(ref[q][h.passage.doc_id], abs=1e-12)
        # With the default ε the scores move by at most ~ε relative to ranx's.
        ours_eps = fuse(sparse[q], dense[q], alpha=alpha, epsilon=DEFAULT_EPSILON, top_m=100)
        for h in ours_eps:
            assert h.score == pytest.approx(ref[q][h.passage.doc_id], abs=1e-5)


class _Fixed:
    def __init__(self, name: str, hits: list[ScoredPassage]) -> None:
        self.name = name
        self.hits = hits
        self.asked_k: list[int] = []

    def search(self, queries: list[str], *, k: int) -> list[list[ScoredPassage]]:
        self.asked_k.append(k)
        return [self.hits[:k] for _ in queries]


def test_hybrid_retriever_uses_ns_nd_and_m() -> None:
    s, d = _Fixed("bm25s", SPARSE), _Fixed("dense", DENSE)
    h = HybridRetriever(sparse=s, dense=d, alpha=0.3, epsilon=0.0, top_sparse=2, top_dense=3)
    assert isinstance(h, Retriever)
    assert h.top_m == DEFAULT_TOP_M
    out = h.search(["q1", "q2"], k=3)
    assert s.asked_k == [2] and d.asked_k == [3]
    assert len(out) == 2 and all(len(x) == 3 for x in out)
    # Sparse truncated to a, b: s̃ a=1, b=0; fused b=0.7, a=0.3, d=0.35.
    assert [x.passage.doc_id for x in out[0]] == ["b", "d", "a"]


def test_hybrid_retriever_empty() -> None:
    h = HybridRetriever(sparse=_Fixed("bm25s", []), dense=_Fixed("dense", []))
    assert h.search(["q"], k=24) == [[]]
    assert h.search([], k=24) == []
    with pytest.raises(UserError, match="top_sparse"):
        HybridRetriever(sparse=_Fixed("s", []), dense=_Fixed("d", []), top_sparse=0)
