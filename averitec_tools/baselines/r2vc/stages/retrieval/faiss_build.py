"""Build a FAISS index from embedding shards written by :mod:`.encode`.

* ``hnsw`` (the paper's, M = 64, efConstruction = 512) and ``flat``: shards are added in
  order, one at a time, exactly as the dense retriever adds its encoding chunks, so the
  index file is byte-identical to one built by
  :meth:`~averitec_tools.baselines.r2vc.stages.retrieval.dense.DenseRetriever.build` on the
  same machine.
* ``ivfpq`` for corpora whose flat vectors do not fit in memory: an inverted file with
  product-quantised codes (inner product), trained on a seeded sample of rows gathered
  shard by shard, then filled shard by shard. Memory stays one shard plus the sample.

Device (``faiss_device``: ``auto``, ``cpu`` or ``gpu``): where faiss-gpu is installed
and sees a GPU (``faiss.get_num_gpus() > 0``), ``auto`` trains and fills IVF-PQ and
flat indexes on every visible GPU (``index_cpu_to_all_gpus``) and copies the result back
(``index_gpu_to_cpu``) before writing, so the file is an ordinary CPU index. FAISS has
no GPU builder for HNSW: HNSW is always built on the CPU, and the metadata says so.
``gpu`` without a usable GPU is refused before any work. The metadata records the
device in ``build_device`` (and a ``build_device_note`` when a GPU was not used for that
reason).

CPU training and filling run on
:data:`~averitec_tools.baselines.r2vc.retrieval.dense.FAISS_BUILD_THREADS` OpenMP threads
(``build_threads`` in the metadata), whatever the machine's default: an HNSW build on
more threads is not reproducible.

Every shard is checked against the manifest before use; a missing or corrupt one is
named with the command that re-encodes it. The output directory has the dense
retriever's layout (``faiss.index`` + ``averitec_dense.json``), so
``DenseRetriever.load`` serves it.

Example:
    >>> ivfpq_params(num_vectors=1000, dim=384)
    (31, 48)
    >>> import faiss
    >>> choose_faiss_device(requested="auto", index_type="ivfpq", faiss_module=faiss)  # no GPU here
    ('cpu', None)
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from averitec_tools.baselines.r2vc.stages.retrieval.encode import (
    read_manifest,
    rebuild_command,
    shard_ok,
)
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory

INDEX_TYPES: tuple[str, ...] = ("hnsw", "flat", "ivfpq")
FAISS_DEVICES: tuple[str, ...] = ("auto", "cpu", "gpu")
#: Index types FAISS can build on a GPU (it has no GPU HNSW builder).
GPU_INDEX_TYPES: tuple[str, ...] = ("flat", "ivfpq")
NO_GPU_HNSW = "FAISS has no GPU builder for HNSW: built on the CPU"
#: Sub-quantiser counts FAISS's GPU IVF-PQ supports (with 8-bit codes).
GPU_PQ_M: tuple[int, ...] = (1, 2, 3, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 96)
#: Training rows per IVF list (FAISS warns below 39).
TRAIN_PER_LIST = 64
IVF_NPROBE = 16


def ivfpq_params(*, num_vectors: int, dim: int) -> tuple[int, int]:
    """Default ``(nlist, pq_m)``: about √N lists (at least 1), 8-dim PQ sub-vectors."""
    nlist = max(1, int(math.sqrt(num_vectors)))
    pq_m = next(m for m in (dim // 8, dim // 4, dim // 2, dim) if m >= 1 and dim % m == 0)
    return nlist, pq_m


def visible_gpus(faiss_module: Any) -> int:
    """GPUs faiss can use (0 with the CPU wheel, whose ``get_num_gpus`` is absent or 0)."""
    get = getattr(faiss_module, "get_num_gpus", None)
    return int(get()) if get is not None else 0


def choose_faiss_device(*, requested: str, index_type: str, faiss_module: Any, pq_m: int | None = None,
                        nbits: int = 8) -> tuple[str, str | None]:
    """``(device, note)``: where the index is built, and why not on a GPU when one was usable.

    ``pq_m`` (when known) and ``nbits`` are checked against what FAISS's GPU IVF-PQ
    supports (8-bit codes; :data:`GPU_PQ_M` sub-quantisers).

    Raises:
        UserError: ``requested`` is ``gpu`` but faiss sees no GPU or cannot build this
            index there, or an unknown device.
    """
    if requested not in FAISS_DEVICES:
        raise UserError(f"unknown FAISS device {requested!r}", hint=f"use one of: {', '.join(FAISS_DEVICES)}")
    gpus = visible_gpus(faiss_module)
    if requested == "gpu" and gpus < 1:
        raise UserError("--faiss-device gpu: faiss sees no GPU (faiss-gpu not installed, or no CUDA device visible)",
                        hint="pip install 'averitec-tools[gpu]' (faiss-gpu-cu12) on a CUDA machine, "
                             "or use --faiss-device auto|cpu")
    if requested == "cpu" or gpus < 1:
        return "cpu", None
    note = None
    if index_type not in GPU_INDEX_TYPES:
        note = NO_GPU_HNSW
    elif index_type == "ivfpq" and (nbits != 8 or (pq_m is not None and pq_m not in GPU_PQ_M)):
        note = (f"FAISS's GPU IVF-PQ needs 8-bit codes and pq_m in {', '.join(map(str, GPU_PQ_M))} "
                f"(got {nbits} bits, pq_m {pq_m}): built on the CPU")
        if requested == "gpu":
            raise UserError(f"--faiss-device gpu: {note.split(': built')[0]}",
                            hint="choose --pq-m from that list, or use --faiss-device auto|cpu")
    return ("cpu", note) if note else ("gpu", None)


def checked_shards(*, shards_dir: Path, corpus: str, model: str) -> tuple[dict[str, Any], list[Path]]:
    """The manifest and the shard files in row order, every one verified.

    Raises:
        UserError: No manifest, an unfinished job, or a missing/corrupt shard (named,
            with the command that re-encodes it).
    """
    manifest = read_manifest(shards_dir)
    hint = rebuild_command(corpus=corpus, shards=str(shards_dir), model=model)
    if manifest is None:
        raise UserError(f"{shards_dir}: no {('manifest.json')} (no encoding job here)", hint=hint)
    missing = [i for i in range(manifest["num_shards"]) if i not in manifest["shards"]]
    if missing:
        raise UserError(f"{shards_dir}: {len(missing)} of {manifest['num_shards']} shards not encoded yet "
                        f"(first: shard {missing[0]})", hint=hint)
    paths = []
    for i in range(manifest["num_shards"]):
        record = manifest["shards"][i]
        if not shard_ok(shards_dir, record):
            state = "missing" if not (shards_dir / record["file"]).exists() else "corrupt (SHA-256 mismatch)"
            raise UserError(f"{shards_dir / record['file']}: shard {i} is {state}", hint=hint)
        paths.append(shards_dir / record["file"])
    return manifest, paths


def _sample(paths: list[Path], *, total: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(total, size=min(size, total), replace=False))
    parts, offset = [], 0
    for path in paths:
        block = np.load(path, mmap_mode="r")
        here = rows[(rows >= offset) & (rows < offset + len(block))] - offset
        parts.append(np.asarray(block[here], dtype=np.float32))
        offset += len(block)
    return np.ascontiguousarray(np.concatenate(parts))


def build_index_from_shards(
    *,
    shards_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    corpus: str,
    model: str,
    index_type: str = "hnsw",
    nlist: int | None = None,
    pq_m: int | None = None,
    nbits: int = 8,
    seed: int = 0,
    faiss_device: str = "auto",
    faiss_module: Any = None,
) -> dict[str, Any]:
    """Build and save the index (see module docs); returns its metadata.

    Args:
        shards_dir: Output of :func:`~.encode.encode_corpus`.
        out_dir: Index directory to write (swapped in atomically).
        corpus: The paragraph store (for messages and the rebuild command).
        model: The encoder name given to the encoding job (for the rebuild command).
        index_type: ``hnsw``, ``flat`` or ``ivfpq``.
        nlist, pq_m, nbits: IVF-PQ settings (defaults: :func:`ivfpq_params`, 8 bits).
        seed: Seed of the IVF-PQ training sample.
        faiss_device: ``auto`` (a GPU when faiss-gpu sees one and the type allows),
            ``cpu`` or ``gpu`` (see module docs).
        faiss_module: The ``faiss`` module to use (default: ``import faiss``; tests inject
            a stand-in to exercise the GPU path).
    """
    if faiss_module is None:
        import faiss as faiss_module
    faiss = faiss_module

    if index_type not in INDEX_TYPES:
        raise UserError(f"unknown dense index type {index_type!r}", hint=f"use one of: {', '.join(INDEX_TYPES)}")
    choose_faiss_device(requested=faiss_device, index_type=index_type, faiss_module=faiss, pq_m=pq_m,
                        nbits=nbits)  # refuse an impossible --faiss-device gpu before reading shards
    manifest, paths = checked_shards(shards_dir=Path(shards_dir), corpus=corpus, model=model)
    n = int(manifest["num_paragraphs"])
    dim = int(manifest["shards"][0]["dim"])
    if index_type == "ivfpq":
        default_nlist, default_m = ivfpq_params(num_vectors=n, dim=dim)
        nlist, pq_m = nlist or default_nlist, pq_m or default_m
    device, device_note = choose_faiss_device(requested=faiss_device, index_type=index_type, faiss_module=faiss,
                                              pq_m=pq_m, nbits=nbits)
    if index_type == "ivfpq":
        assert nlist is not None and pq_m is not None
        empty = _new_ivfpq(faiss, paths=paths, n=n, dim=dim, nlist=nlist, pq_m=pq_m, nbits=nbits, seed=seed)
    else:
        empty = _EmptyIndex(_dense_api().new_faiss_index(dim=dim, index_type=index_type), None, {})
    index = _fill(faiss, empty, paths=paths, device=device, index_type=index_type, nlist=nlist, pq_m=pq_m)
    meta = _metadata(faiss, manifest, index=index, dim=dim, index_type=index_type, extra=empty.extra,
                     device=device, device_note=device_note)
    with atomic_directory(out_dir) as tmp:
        faiss.write_index(index, str(tmp / "faiss.index"))
        (tmp / "averitec_dense.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return meta


def _dense_api() -> Any:
    """The dense retriever's module, whose index layout this one matches (imported only to build)."""
    from averitec_tools.baselines.r2vc.stages.retrieval import dense

    return dense


class _EmptyIndex(NamedTuple):
    """An index before filling, its training rows (``None``: needs none) and its metadata."""

    index: Any
    train: np.ndarray | None
    extra: dict[str, Any]


def _new_ivfpq(faiss: Any, *, paths: list[Path], n: int, dim: int, nlist: int, pq_m: int, nbits: int,
               seed: int) -> _EmptyIndex:
    """The untrained IVF-PQ index (inner product) and its seeded training sample.

    Raises:
        UserError: Too few vectors for the lists and codes, or ``dim`` not divisible by ``pq_m``.
    """
    if n < max(nlist, 2 ** nbits) or dim % pq_m:
        raise UserError(f"ivfpq: {n} vectors of dim {dim} cannot train {nlist} lists and {pq_m} "
                        f"sub-quantisers of {nbits} bits (needs >= {max(nlist, 2 ** nbits)} vectors, "
                        f"dim divisible by pq_m)", hint="use --index-type hnsw for small corpora")
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFPQ(quantizer, dim, nlist, pq_m, nbits, faiss.METRIC_INNER_PRODUCT)
    index.own_fields = True
    quantizer.this.disown()
    train = _sample(paths, total=n, size=max(nlist * TRAIN_PER_LIST, 2 ** nbits * 40), seed=seed)
    index.cp.seed = seed
    index.pq.cp.seed = seed
    index.nprobe = min(nlist, IVF_NPROBE)
    extra = {"nlist": nlist, "pq_m": pq_m, "nbits": nbits, "nprobe": int(index.nprobe),
             "train_rows": int(len(train)), "train_seed": seed}
    return _EmptyIndex(index, train, extra)


def _fill(faiss: Any, empty: _EmptyIndex, *, paths: list[Path], device: str, index_type: str,
          nlist: int | None, pq_m: int | None) -> Any:
    """Train (when needed) and add every shard in order, on all GPUs or the fixed CPU threads.

    Returns the filled CPU index (a GPU-built one is copied back).
    """
    target = empty.index
    if device == "gpu":
        options = faiss.GpuMultipleClonerOptions()
        options.useFloat16 = bool(pq_m and pq_m > 48)  # IVF-PQ lookup tables beyond 48 sub-quantisers
        target = faiss.index_cpu_to_all_gpus(empty.index, co=options)
    with _dense_api().fixed_build_threads(faiss):
        if empty.train is not None:
            target.train(empty.train)
        for path in paths:
            target.add(np.ascontiguousarray(np.load(path), dtype=np.float32))
    if device != "gpu":
        return empty.index
    index = faiss.index_gpu_to_cpu(target)
    if index_type == "ivfpq":
        index.nprobe = min(int(nlist or 1), IVF_NPROBE)
    return index


def _metadata(faiss: Any, manifest: dict[str, Any], *, index: Any, dim: int, index_type: str,
              extra: dict[str, Any], device: str, device_note: str | None) -> dict[str, Any]:
    """The ``averitec_dense.json`` the dense retriever loads, with where and how it was built."""
    dense = _dense_api()
    meta: dict[str, Any] = {
        "backend": "faiss",
        "model_id": manifest["model_id"],
        "dim": dim,
        "index_type": index_type,
        "metric": "inner_product",
        "normalized": True,
        "include_title": bool(manifest["include_title"]),
        "query_prefix": "",
        "corpus_fingerprint": manifest["corpus_fingerprint"],
        "num_paragraphs": int(manifest["num_paragraphs"]),
    }
    if index_type == "hnsw":
        meta.update(hnsw_m=dense.HNSW_M, ef_construction=int(index.hnsw.efConstruction))
    meta.update(extra)
    meta["build_device"] = device
    meta["build_threads"] = dense.FAISS_BUILD_THREADS
    if device == "gpu":
        meta["build_gpus"] = visible_gpus(faiss)
    if device_note:
        meta["build_device_note"] = device_note
    return meta


__all__ = ["INDEX_TYPES", "build_index_from_shards", "choose_faiss_device"]
