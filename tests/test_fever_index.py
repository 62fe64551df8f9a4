"""The FEVER recipe's default dense index, ``ivfsq8`` (``stages/retrieval/compact.py``).

A hashed bag-of-words stand-in encoder keeps the tests offline and fast; what is checked is
the index: built through ``DenseRetriever.build``, equal to the exact flat index's results on
an easy query set, saved and loaded with its parameters, its bytes independent of the
caller's OpenMP thread count, and its memory formula equal to the serialised size.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

faiss = pytest.importorskip("faiss")

from averitec_tools.baselines.r2vc.corpus.store import build_corpus  # noqa: E402
from averitec_tools.baselines.r2vc.stages.retrieval import compact  # noqa: E402
from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever  # noqa: E402

DIM = 32
WORDS = ["cat", "dog", "film", "actor", "river", "city", "war", "king", "song", "album", "team", "goal"]


class HashEncoder:
    """Deterministic sentence vectors: each word adds a hashed random direction."""

    def get_sentence_embedding_dimension(self) -> int:
        return DIM

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
                out[i] += np.random.default_rng(seed).standard_normal(DIM)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def _store(n: int = 900):
    rng = np.random.default_rng(1)
    return build_corpus(passages=[{"id": f"p{i}", "text": " ".join(rng.choice(WORDS, size=6)) + f" w{i}"}
                                  for i in range(n)])


def _build(store, index_type: str) -> DenseRetriever:
    return DenseRetriever.build(store=store, model="minilm", index_type=index_type, encoder=HashEncoder(),
                                show_progress=False, chunk_size=256)


def test_ivfsq8_finds_what_the_exact_index_finds_and_records_its_parameters(tmp_path: Path) -> None:
    store = _store()
    ivf, flat = _build(store, "ivfsq8"), _build(store, "flat")
    assert ivf.index.ntotal == len(store) and ivf.index.nlist == compact.ivfsq_nlist(len(store)) == 30
    assert ivf.index.nprobe == compact.ivfsq_nprobe(30) == 16
    queries = HashEncoder().encode([p.text for p in store.passages(list(range(0, 900, 9)))])
    _, got = ivf.search_vectors(queries, k=1)
    assert got[:, 0].tolist() == list(range(0, 900, 9))  # each passage's own text finds it
    _, exact = flat.search_vectors(queries, k=10)
    _, approx = ivf.search_vectors(queries, k=10)
    overlap = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, approx, strict=True)])
    assert overlap >= 0.9
    ivf.save(tmp_path / "dense")
    import json

    meta = json.loads((tmp_path / "dense" / "averitec_dense.json").read_text())
    assert meta["index_type"] == "ivfsq8" and meta["nlist"] == 30 and meta["quantizer"] == "QT_8bit"
    assert "HNSW M = 64" in meta["departure"]
    loaded = faiss.read_index(str(tmp_path / "dense" / "faiss.index"))
    assert loaded.nprobe == ivf.index.nprobe and loaded.ntotal == len(store)


def test_ivfsq8_bytes_do_not_depend_on_the_callers_thread_count() -> None:
    store = _store(700)
    before = faiss.omp_get_max_threads()
    digests = []
    try:
        for threads in (1, 3):
            faiss.omp_set_num_threads(threads)
            index = _build(store, "ivfsq8").index
            digests.append(hashlib.sha256(faiss.serialize_index(index).tobytes()).hexdigest())
            assert faiss.omp_get_max_threads() == threads  # the caller's setting is put back
    finally:
        faiss.omp_set_num_threads(before)
    assert digests[0] == digests[1]


@pytest.mark.parametrize("index_type", ["ivfsq8", "hnsw", "flat"])
def test_bytes_per_unit_is_the_serialised_size(index_type: str) -> None:
    rng = np.random.default_rng(0)
    n, dim = 4000, 64
    x = rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    if index_type == "ivfsq8":
        nlist = compact.ivfsq_nlist(n)
        index = compact.build_ivfsq(dim=dim, sample=x[compact.training_rows(total=n, nlist=nlist)], chunks=[x],
                                    nlist=nlist)
    elif index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
        index.add(x)
    else:
        index = faiss.IndexFlatIP(dim)
        index.add(x)
    measured = len(faiss.serialize_index(index)) / n
    predicted = compact.bytes_per_unit(index_type=index_type, dim=dim, num_vectors=n, hnsw_m=16)
    assert abs(measured - predicted) / measured < 0.02, (measured, predicted)


def test_full_fever_fits_the_host_ram_budget_and_hnsw_does_not() -> None:
    units = 25_000_000
    sq = compact.bytes_per_unit(index_type="ivfsq8", dim=1024, num_vectors=units) * units
    hnsw = compact.bytes_per_unit(index_type="hnsw", dim=1024, num_vectors=units) * units
    assert sq < compact.HOST_RAM_BUDGET / 2 < compact.HOST_RAM_BUDGET < hnsw


def test_the_fever_recipe_defaults_to_ivfsq8(tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.experiments.paper import load_recipe, row_config

    fever, vitaminc = load_recipe("paper-fever"), load_recipe("paper-vitaminc")
    cfg = row_config(fever, "full", work=tmp_path, corpus=str(tmp_path / "corpus"))
    assert cfg.retrieval.dense_index == "ivfsq8"
    assert dict(vitaminc.pipeline) == {}  # given evidence: no index


def test_ivfsq8_batched_search_is_deterministic_and_thread_independent() -> None:
    """The FEVER recipe's batched retrieval pass (experiments/pools.py): a batch gives the same rows and
    scores on 1 or 3 search threads, on a rerun, and as one query at a time (no BLAS over the batch)."""
    store = _store()
    ivf = _build(store, "ivfsq8")
    queries = HashEncoder().encode([f"{a} {b} film" for a in WORDS for b in WORDS])  # 144 queries
    before, threshold = faiss.omp_get_max_threads(), faiss.cvar.distance_compute_blas_threshold
    try:
        results = []
        for threads in (1, 3, 1):
            faiss.omp_set_num_threads(threads)
            results.append(ivf.search_vectors(queries, k=24))
    finally:
        faiss.omp_set_num_threads(before)
    for scores, rows in results[1:]:
        assert np.array_equal(rows, results[0][1]) and np.array_equal(scores, results[0][0])
    one = [ivf.search_vectors(queries[i:i + 1], k=24) for i in range(len(queries))]
    assert np.array_equal(np.concatenate([r for _, r in one]), results[0][1])
    assert np.array_equal(np.concatenate([s for s, _ in one]), results[0][0])
    assert faiss.cvar.distance_compute_blas_threshold == threshold  # FAISS's setting, put back
