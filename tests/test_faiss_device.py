"""Where FAISS builds an index from shards (``--faiss-device``): decided from what faiss sees.

No GPU exists on the CI machine: the decision and the GPU code path are exercised with
stand-in ``faiss`` namespaces (the GPU one wraps the real CPU faiss and records what was
moved to and from the "GPU").
"""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from averitec_tools.baselines.r2vc.stages.retrieval.faiss_build import (
    NO_GPU_HNSW,
    build_index_from_shards,
    choose_faiss_device,
)
from averitec_tools.errors import UserError
from tests._engine_helpers import tiny_corpus, tree_digest


def _faiss_with(gpus: int | None) -> Any:
    return types.SimpleNamespace() if gpus is None else types.SimpleNamespace(get_num_gpus=lambda: gpus)


@pytest.mark.parametrize(("requested", "index_type", "gpus", "extra", "expected"), [
    ("auto", "ivfpq", 0, {}, ("cpu", None)),
    ("auto", "flat", None, {}, ("cpu", None)),  # CPU wheel without get_num_gpus
    ("auto", "ivfpq", 2, {"pq_m": 48}, ("gpu", None)),
    ("auto", "flat", 1, {}, ("gpu", None)),
    ("gpu", "flat", 1, {}, ("gpu", None)),
    ("cpu", "ivfpq", 4, {}, ("cpu", None)),
    ("auto", "hnsw", 1, {}, ("cpu", NO_GPU_HNSW)),
    ("gpu", "hnsw", 1, {}, ("cpu", NO_GPU_HNSW)),
    ("auto", "hnsw", 0, {}, ("cpu", None)),
])
def test_device_decision(requested: str, index_type: str, gpus: int | None, extra: dict[str, int],
                         expected: tuple[str, str | None]) -> None:
    assert choose_faiss_device(requested=requested, index_type=index_type, faiss_module=_faiss_with(gpus),
                               **extra) == expected


def test_gpu_refused_without_gpu_or_for_unsupported_pq() -> None:
    with pytest.raises(UserError, match="--faiss-device gpu: faiss sees no GPU"):
        choose_faiss_device(requested="gpu", index_type="ivfpq", faiss_module=_faiss_with(0))
    device, note = choose_faiss_device(requested="auto", index_type="ivfpq", faiss_module=_faiss_with(1), pq_m=128)
    assert device == "cpu" and note is not None and "pq_m 128" in note
    assert choose_faiss_device(requested="auto", index_type="ivfpq", faiss_module=_faiss_with(1), nbits=4)[0] == "cpu"
    with pytest.raises(UserError, match="GPU IVF-PQ needs 8-bit codes"):
        choose_faiss_device(requested="gpu", index_type="ivfpq", faiss_module=_faiss_with(1), pq_m=128)
    with pytest.raises(UserError, match="unknown FAISS device 'tpu'"):
        choose_faiss_device(requested="tpu", index_type="flat", faiss_module=_faiss_with(0))


def _shards(root: Path, corpus: Path, *, n: int = 300, dim: int = 16, size: int = 128) -> Path:
    """Random unit vectors as encoding shards with a manifest (no encoder needed)."""
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
    from averitec_tools.baselines.r2vc.stages.retrieval.encode import (
        _header,
        _write_manifest,
        shard_file,
        shard_specs,
    )
    from averitec_tools.hashing import file_sha256

    store = ParagraphStore.open(corpus)
    vectors = np.random.default_rng(0).standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    root.mkdir()
    manifest = {**_header(store=store, model_id="fake", shard_size=size, include_title=True), "shards": {}}
    for i, start, stop in shard_specs(num_rows=n, shard_size=size):
        np.save(root / shard_file(i), vectors[start:stop])
        manifest["shards"][i] = {"shard": i, "file": shard_file(i), "start": start, "stop": stop, "dim": dim,
                                 "sha256": file_sha256(root / shard_file(i))}
    _write_manifest(root, manifest)
    return root


class _FakeGpuFaiss(types.ModuleType):
    """The real faiss, plus one pretend GPU: cloning "to the GPU" wraps the index and logs calls."""

    def __init__(self) -> None:
        import faiss

        super().__init__("fake_faiss_gpu")
        self.real, self.log = faiss, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def get_num_gpus(self) -> int:
        return 1

    def GpuMultipleClonerOptions(self) -> Any:  # noqa: N802 - faiss's name
        return types.SimpleNamespace(useFloat16=None)

    def index_cpu_to_all_gpus(self, index: Any, co: Any = None) -> Any:
        log = self.log
        log.append(("to_gpu", type(index).__name__, co.useFloat16))

        class OnGpu:
            cpu = index

            def train(self, x: np.ndarray) -> None:
                log.append(("train", len(x)))
                index.train(x)

            def add(self, x: np.ndarray) -> None:
                log.append(("add", len(x)))
                index.add(x)

        return OnGpu()

    def index_gpu_to_cpu(self, index: Any) -> Any:
        self.log.append(("to_cpu",))
        return index.cpu


def test_gpu_path_trains_and_fills_on_the_gpu_and_writes_a_cpu_index(tmp_path: Path) -> None:
    corpus = tiny_corpus(tmp_path, n=300)
    shards = _shards(tmp_path / "shards", corpus)
    common = {"shards_dir": shards, "corpus": str(corpus), "model": "fake"}
    fake = _FakeGpuFaiss()
    meta = build_index_from_shards(out_dir=tmp_path / "gpu", index_type="ivfpq", nlist=4, pq_m=8,
                                   faiss_module=fake, **common)
    assert (meta["build_device"], meta["build_gpus"]) == ("gpu", 1)
    assert fake.log == [("to_gpu", "IndexIVFPQ", False), ("train", 300),
                        ("add", 128), ("add", 128), ("add", 44), ("to_cpu",)]
    cpu = build_index_from_shards(out_dir=tmp_path / "cpu", index_type="ivfpq", nlist=4, pq_m=8,
                                  faiss_device="cpu", faiss_module=fake, **common)
    assert cpu["build_device"] == "cpu" and len(fake.log) == 6  # nothing more went to the "GPU"
    # Here the "GPU" is the CPU index itself, so both files must be the same bytes.
    assert tree_digest(tmp_path / "gpu")["faiss.index"] == tree_digest(tmp_path / "cpu")["faiss.index"]
    fake.log.clear()
    hnsw = build_index_from_shards(out_dir=tmp_path / "hnsw", faiss_module=fake, **common)
    assert (hnsw["build_device"], hnsw["build_device_note"], fake.log) == ("cpu", NO_GPU_HNSW, [])
    saved = json.loads((tmp_path / "hnsw" / "averitec_dense.json").read_text())
    assert saved["build_device_note"] == NO_GPU_HNSW


def test_cli_auto_records_cpu_here_and_gpu_is_one_line_exit_2(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import faiss

    from averitec_tools.cli.main import main

    assert faiss.get_num_gpus() == 0  # this machine: the faiss-cpu wheel, no GPU
    corpus = tiny_corpus(tmp_path, n=300)
    shards = _shards(tmp_path / "shards", corpus)
    meta = build_index_from_shards(shards_dir=shards, out_dir=tmp_path / "auto", corpus=str(corpus), model="fake",
                                   index_type="flat")
    assert meta["build_device"] == "cpu" and "build_device_note" not in meta
    assert json.loads((tmp_path / "auto" / "averitec_dense.json").read_text())["build_device"] == "cpu"
    code = main(["index", "dense", "--corpus", str(corpus), "--out", str(tmp_path / "ix"), "--index-type", "ivfpq",
                 "--faiss-device", "gpu", "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("averitec index: error: --faiss-device gpu: faiss sees no GPU "
                                   "(faiss-gpu not installed, or no CUDA device visible) (pip install")
    assert "Traceback" not in captured.err
    assert not (tmp_path / "ix").exists() and not (tmp_path / "ix.shards").exists()  # refused before encoding
