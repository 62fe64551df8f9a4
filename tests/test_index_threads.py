"""FAISS index builds whose bytes do not depend on the machine's OpenMP thread settings.

FAISS's HNSW build inserts points from every OpenMP thread at once, so the graph (and the
file) depends on how many threads there are and how they interleave: a 2-core machine
with ``OMP_NUM_THREADS`` unset wrote another ``faiss.index`` than a Ray worker (one
thread). Every build therefore runs FAISS with a fixed thread count
(:data:`~averitec_tools.baselines.r2vc.stages.retrieval.dense.FAISS_BUILD_THREADS`), restores the
caller's afterwards, and records it in the index metadata. The last test builds the same
index in fresh processes under several ``OMP_NUM_THREADS`` settings and compares bytes, so
an environment-dependent build fails on every machine (on a 2-core one too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests._engine_helpers import tiny_corpus, tree_digest


class _StubEncoder:
    """A sentence encoder stand-in: deterministic unit vectors, no model load."""

    def __init__(self, dim: int = 16) -> None:
        self.dim = dim

    def get_embedding_dimension(self) -> int:
        return self.dim

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        rows = [np.random.default_rng(abs(hash(t)) % 2**32).standard_normal(self.dim) for t in texts]
        x = np.asarray(rows, dtype=np.float32)
        return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def thread_spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """FAISS's thread count seen at every ``add``/``train`` of an index (the build's)."""
    import faiss

    seen: list[int] = []
    for cls in (faiss.IndexHNSWFlat, faiss.IndexFlatIP, faiss.IndexIVFPQ):
        for name in ("add", "train"):
            original = getattr(cls, name)

            def spy(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
                seen.append(faiss.omp_get_max_threads())
                return _original(self, *args, **kwargs)

            monkeypatch.setattr(cls, name, spy)
    return seen


def test_dense_retriever_builds_with_the_fixed_thread_count(tmp_path: Path, thread_spy: list[int]) -> None:
    import faiss

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import (
        FAISS_BUILD_THREADS,
        DenseRetriever,
    )

    store = ParagraphStore.open(tiny_corpus(tmp_path, n=20))
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(3)  # the caller's setting, whatever it is, is put back afterwards
    try:
        retriever = DenseRetriever.build(store=store, model="minilm", encoder=_StubEncoder(), chunk_size=8,
                                         show_progress=False)
        assert faiss.omp_get_max_threads() == 3
    finally:
        faiss.omp_set_num_threads(before)
    assert thread_spy == [FAISS_BUILD_THREADS] * 3  # three chunks of 8, 8, 4 paragraphs
    retriever.save(tmp_path / "ix")
    meta = json.loads((tmp_path / "ix" / "averitec_dense.json").read_text())
    assert meta["build_threads"] == FAISS_BUILD_THREADS == 1


@pytest.mark.parametrize("index_type", ["hnsw", "flat", "ivfpq"])
def test_shard_builds_use_the_fixed_thread_count(tmp_path: Path, thread_spy: list[int], index_type: str,
                                                  encoded_tiny_corpus) -> None:  # type: ignore[no-untyped-def]
    import faiss

    from averitec_tools.baselines.r2vc.stages.retrieval.dense import FAISS_BUILD_THREADS
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(3)
    try:
        meta = build_index_from_shards(shards_dir=encoded_tiny_corpus.shards, out_dir=tmp_path / "ix",
                                       corpus=str(encoded_tiny_corpus.corpus), model="minilm",
                                       index_type=index_type, nlist=2, pq_m=8, nbits=4, faiss_device="cpu")
        assert faiss.omp_get_max_threads() == 3
    finally:
        faiss.omp_set_num_threads(before)
    assert thread_spy and set(thread_spy) == {FAISS_BUILD_THREADS}
    assert meta["build_threads"] == FAISS_BUILD_THREADS
    assert json.loads((tmp_path / "ix" / "averitec_dense.json").read_text())["build_threads"] == 1


_BUILD = """
import sys
from pathlib import Path
import numpy as np
from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever
from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import build_index_from_shards

corpus, shards, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
rows = iter(np.concatenate([np.load(p) for p in sorted(shards.glob("shard-*.npy"))]))

class Replay:  # the shards' MiniLM vectors, in corpus order (no model load)
    def get_embedding_dimension(self):
        return 384
    def encode(self, texts, **_):
        return np.stack([next(rows) for _ in texts])

store = ParagraphStore.open(corpus)
DenseRetriever.build(store=store, model="minilm", encoder=Replay(), chunk_size=64,
                     show_progress=False).save(out / "dense")
for kind in ("hnsw", "ivfpq"):
    build_index_from_shards(shards_dir=shards, out_dir=out / kind, corpus=str(corpus), model="minilm",
                            index_type=kind, nlist=4, pq_m=8, nbits=4, faiss_device="cpu")
"""


def test_index_bytes_do_not_depend_on_omp_num_threads(tmp_path: Path,
                                                      encoded_tiny_corpus) -> None:  # type: ignore[no-untyped-def]
    """The in-process HNSW build, the shard HNSW build and an IVF-PQ build of the engine
    tests' 150 MiniLM vectors (> 100: FAISS adds HNSW level 0 from all threads), each in a
    fresh process with ``OMP_NUM_THREADS`` unset, 1 and 2: the same files, byte for byte."""
    digests = {}
    for setting in (None, "1", "2"):
        env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        if setting is not None:
            env["OMP_NUM_THREADS"] = setting
        out = tmp_path / f"omp-{setting}"
        done = subprocess.run([sys.executable, "-c", _BUILD, str(encoded_tiny_corpus.corpus),
                               str(encoded_tiny_corpus.shards), str(out)],
                              env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        digests[setting] = tree_digest(out)
    assert digests[None] == digests["1"] == digests["2"]
    assert digests[None]["dense/faiss.index"] == digests[None]["hnsw/faiss.index"]


_IVFSQ = """
import sys, hashlib
import numpy as np
import faiss
from averitec_tools.baselines.r2vc.stages.retrieval import compact

rng = np.random.default_rng(0)
x = rng.standard_normal((6000, 64)).astype("float32")
x /= np.linalg.norm(x, axis=1, keepdims=True)
nlist = compact.ivfsq_nlist(len(x))
threads = int(sys.argv[1]) if sys.argv[1] != "auto" else None
seen = []
original = faiss.IndexIVFScalarQuantizer.add
def add(self, *a):
    seen.append(faiss.omp_get_max_threads())
    return original(self, *a)
faiss.IndexIVFScalarQuantizer.add = add
index = compact.build_ivfsq(dim=64, sample=x[compact.training_rows(total=len(x), nlist=nlist)],
                            chunks=[x[i:i + 1000] for i in range(0, len(x), 1000)], nlist=nlist, threads=threads)
print(hashlib.sha256(faiss.serialize_index(index).tobytes()).hexdigest(), set(seen))
"""


def test_ivfsq8_builds_on_every_core_and_its_bytes_do_not_depend_on_them() -> None:
    """FEVER's ``ivfsq8`` index is built on the threads it is given (every core by default: the plan
    charges its CPU hours spread over them) and its file is the same on 1, 2 and 4 threads, each in a
    fresh process (``OMP_NUM_THREADS=1`` set, which the build overrides)."""
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import build_threads_for

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = {}
    for threads in ("1", "2", "4", "auto"):
        done = subprocess.run([sys.executable, "-c", _IVFSQ, threads], env=env, capture_output=True, text=True,
                              check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        digest, seen = done.stdout.split(maxsplit=1)
        out[threads] = (digest, seen.strip())
    assert len({digest for digest, _ in out.values()}) == 1
    assert [out[t][1] for t in ("1", "2", "4")] == ["{1}", "{2}", "{4}"]
    assert out["auto"][1] == f"{{{build_threads_for('ivfsq8')}}}" and build_threads_for("hnsw") == 1
