"""``ivfsq8``: a dense index for FEVER's full wiki-pages within 64 GB of host RAM.

Table G.1's ``IndexHNSWFlat`` (M = 64) keeps every vector as 1024 floats plus 2M graph
links at level 0: about 4,624 B per unit, ≈ 116 GB for FEVER's ≈ 25 M sentence units.
``ivfsq8`` (a departure, labelled as one in the docs and the run summary's components)
is an inverted file of ``√N`` lists (inner product on L2-normalised vectors, so scores
are cosine similarities up to the quantisation) holding each vector as 8-bit scalar codes,
one byte per dimension (FAISS ``IndexIVFScalarQuantizer``, ``QT_8bit``, per-dimension
ranges): ``dim + 8`` bytes per unit plus the centroids, ≈ 24 GiB at 25 M units. A query
scans :func:`ivfsq_nprobe` lists: :data:`IVFSQ_SCAN_SHARE` of them (at least
:data:`IVFSQ_MIN_NPROBE`), the share that reached recall@24 ≥ 0.95 against the exact
index in the benchmark (0.969 at 200,000 synthetic units; docs/r2vc.md).

It is trained on a seeded sample of :data:`TRAIN_PER_LIST` rows per list (k-means
centroids and the quantiser's ranges), then filled chunk by chunk, on every core the process
is given (:func:`~averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads.build_threads_for`,
set inside the code, whatever ``OMP_NUM_THREADS`` says): the file is byte-identical on any
thread count (tested).

``benchmarks/bench_fever_index.py`` measures it against an exact flat index
(docs/r2vc.md, "The FEVER index"); :func:`bytes_per_unit` is the memory formula the
plans use.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.standard_normal((2000, 16)).astype("float32")
    >>> x /= np.linalg.norm(x, axis=1, keepdims=True)
    >>> index = build_ivfsq(dim=16, sample=x[training_rows(total=2000, nlist=8, seed=0)],
    ...                     chunks=[x[:1000], x[1000:]], nlist=8)
    >>> index.ntotal, index.nlist, index.nprobe, index.code_size
    (2000, 8, 8, 16)
    >>> int(index.search(x[:1], 1)[1][0, 0])
    0
    >>> round(bytes_per_unit(index_type="ivfsq8", dim=1024, num_vectors=25_000_000))
    1033
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

#: The index type name (``retrieval.dense_index``, ``averitec index dense --index-type``).
IVFSQ = "ivfsq8"
#: Share of the lists a query scans (from the benchmark's nprobe sweep: docs/r2vc.md).
IVFSQ_SCAN_SHARE = 0.15
#: Fewest lists a query scans.
IVFSQ_MIN_NPROBE = 16
#: Training rows per list (FAISS warns below 39).
TRAIN_PER_LIST = 64
#: The host RAM the FEVER recipe's index must fit in (issue 25).
HOST_RAM_BUDGET = 64 * 1024**3


def ivfsq_nlist(num_vectors: int) -> int:
    """Lists of an ``ivfsq8`` index over ``num_vectors`` units: ``⌊√N⌋`` (at least 1).

    Example:
        >>> ivfsq_nlist(200_000), ivfsq_nlist(25_000_000)
        (447, 5000)
    """
    return max(1, int(math.isqrt(max(0, num_vectors))))


def ivfsq_nprobe(nlist: int) -> int:
    """Lists a query scans: ``⌈IVFSQ_SCAN_SHARE · nlist⌉``, at least ``IVFSQ_MIN_NPROBE``, at most ``nlist``.

    Example:
        >>> ivfsq_nprobe(447), ivfsq_nprobe(5000), ivfsq_nprobe(8)
        (68, 750, 8)
    """
    return min(nlist, max(IVFSQ_MIN_NPROBE, math.ceil(IVFSQ_SCAN_SHARE * nlist)))


def training_rows(*, total: int, nlist: int, seed: int = 0) -> np.ndarray:
    """Sorted, seeded row ids of the training sample (``TRAIN_PER_LIST`` per list, at most ``total``)."""
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(total, size=min(total, nlist * TRAIN_PER_LIST), replace=False))


def new_ivfsq_index(*, dim: int, nlist: int, seed: int = 0, faiss_module: Any = None) -> Any:
    """An untrained inner-product IVF index of 8-bit scalar codes, ``nprobe`` set."""
    if faiss_module is None:
        import faiss as faiss_module
    faiss = faiss_module
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, nlist, faiss.ScalarQuantizer.QT_8bit,
                                          faiss.METRIC_INNER_PRODUCT)
    index.own_fields = True
    quantizer.this.disown()
    index.cp.seed = seed
    index.nprobe = ivfsq_nprobe(nlist)
    return index


def build_ivfsq(*, dim: int, sample: np.ndarray, chunks: Iterable[np.ndarray], nlist: int, seed: int = 0,
                on_chunk: Callable[[int], None] | None = None, threads: int | None = None) -> Any:
    """Train on ``sample`` and add ``chunks`` in order, on the fixed build thread count.

    Args:
        dim: Vector dimension.
        sample: Training rows (``float32``, L2-normalised), e.g. ``x[training_rows(...)]``.
        chunks: Every row of the corpus in row order, in blocks.
        nlist: Lists (:func:`ivfsq_nlist` of the corpus size).
        seed: k-means seed.
        on_chunk: Called with each block's row count after it is added (a progress bar).
        threads: Build threads (default: every core given; the file does not depend on it).
    """
    import faiss

    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import (
        build_threads_for,
        fixed_build_threads,
    )

    index = new_ivfsq_index(dim=dim, nlist=nlist, seed=seed, faiss_module=faiss)
    with fixed_build_threads(faiss, threads=build_threads_for(IVFSQ, requested=threads)):
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        for block in chunks:
            index.add(np.ascontiguousarray(block, dtype=np.float32))
            if on_chunk is not None:
                on_chunk(len(block))
    return index


def build_ivfsq_from_store(*, store: Any, encode: Callable[[list[str]], np.ndarray], include_title: bool,
                           chunk_size: int, seed: int = 0, on_chunk: Callable[[int], None] | None = None) -> Any:
    """:func:`build_ivfsq` over a paragraph store: the sample rows are encoded first, then every chunk."""
    from averitec_tools.baselines.r2vc.corpus.store import index_text

    total = len(store)
    nlist = ivfsq_nlist(total)
    rows = training_rows(total=total, nlist=nlist, seed=seed)
    sample = encode([index_text(p, include_title=include_title) for p in store.passages(rows.tolist())])
    chunks = (encode(texts) for texts in store.iter_texts(batch_size=chunk_size, include_title=include_title))
    return build_ivfsq(dim=int(sample.shape[1]), sample=sample, chunks=chunks, nlist=nlist, seed=seed,
                       on_chunk=on_chunk)


def index_params(index: Any, index_type: str) -> dict[str, Any]:
    """What the saved index's metadata records about its parameters."""
    if index_type == "hnsw":  # level 0 keeps 2M links, every other level M
        return {"hnsw_m": int(index.hnsw.nb_neighbors(1)), "ef_construction": int(index.hnsw.efConstruction)}
    if index_type == IVFSQ:
        from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import build_threads_for

        return {"nlist": int(index.nlist), "nprobe": int(index.nprobe), "quantizer": "QT_8bit",
                "build_threads": build_threads_for(IVFSQ),
                "train_per_list": TRAIN_PER_LIST, "departure": "Table G.1: HNSW M = 64 (flat vectors)"}
    return {}


#: ``benchmarks/bench_fever_index.py --units 200000 --queries 1000`` (synthetic 1024-d vectors, FAISS 1.15.1,
#: the shared 2-core machine at load average ≈ 20): the figures :func:`full_corpus_estimate` scales.
#: ``search_ms_per_query`` is that run's wall time (inflated by the load); ``search_cpu_ms_per_query``
#: is the CPU time of one batched ``search`` of 600 queries at nprobe 68 on 2 threads with per-query
#: distances (as ``DenseRetriever`` searches ``ivfsq8``; the same vectors, load ≈ 7; docs/r2vc.md, "The FEVER
#: index"): the plans charge CPU time, which the load does not inflate.
MEASURED: dict[str, float] = {"units": 200_000, "dim": 1024, "nlist": 447, "nprobe": 68, "recall_at_24": 0.9715,
                              "build_cpu_seconds": 8.22, "search_ms_per_query": 58.9, "search_threads": 2,
                              "search_cpu_ms_per_query": 7.4, "bytes_per_unit": 1041.21}


def full_corpus_estimate(*, num_vectors: int, dim: int = 1024) -> dict[str, Any]:
    """The ``ivfsq8`` index of ``num_vectors`` units, extrapolated from :data:`MEASURED` (for the plans).

    Memory is :func:`bytes_per_unit`; the build's CPU time scales as ``N^1.5`` (√N lists × N
    rows assigned) and with ``dim``; a query's time (wall on the loaded benchmark machine, and
    CPU time, which the plans use) with the vectors it scans (``N / nlist · nprobe``) and ``dim``.

    Example:
        >>> e = full_corpus_estimate(num_vectors=25_000_000)
        >>> e["index_gib"], e["hnsw_m64_gib"], e["nlist"], e["nprobe"], e["fits_host_ram"]
        (24.0, 107.7, 5000, 750, True)
        >>> e["search_cpu_seconds_per_query"], e["vectors_scanned_ratio"]
        (0.912, 123.3)
    """
    nlist = ivfsq_nlist(num_vectors)
    nprobe = ivfsq_nprobe(nlist)
    m = MEASURED
    scanned = (num_vectors / nlist * nprobe) / (m["units"] / m["nlist"] * m["nprobe"]) * dim / m["dim"]
    index = bytes_per_unit(index_type=IVFSQ, dim=dim, num_vectors=num_vectors) * num_vectors
    hnsw = bytes_per_unit(index_type="hnsw", dim=dim, num_vectors=num_vectors) * num_vectors
    return {
        "index_type": IVFSQ, "units": num_vectors, "dim": dim, "nlist": nlist, "nprobe": nprobe,
        "index_gib": round(index / 1024**3, 1), "hnsw_m64_gib": round(hnsw / 1024**3, 1),
        "fits_host_ram": index < HOST_RAM_BUDGET,
        "build_cpu_hours": round(m["build_cpu_seconds"] * (num_vectors / m["units"]) ** 1.5 * dim / m["dim"] / 3600, 1),
        "search_seconds_per_query": round(m["search_ms_per_query"] * scanned / 1000, 2),
        "search_cpu_seconds_per_query": round(m["search_cpu_ms_per_query"] * scanned / 1000, 3),
        "vectors_scanned_ratio": round(scanned * m["dim"] / dim, 1),
        "search_threads": int(m["search_threads"]), "measured_recall_at_24": m["recall_at_24"],
        "measured": dict(m),
        "formula": "GiB = bytes_per_unit·N; build = build_cpu_s·(N/200k)^1.5; search = ms/query·(N/nlist·nprobe)/30,425 "
                   "(CPU: cpu_ms/query, the same ratio)",
    }


def bytes_per_unit(*, index_type: str, dim: int, num_vectors: int, hnsw_m: int = 64, pq_m: int | None = None) -> float:
    """Host RAM per unit of a FAISS inner-product index (the serialised size; the plans use it).

    ``flat``: ``4·dim``. ``hnsw`` (``IndexHNSWFlat``): ``4·dim`` + ``2M`` level-0 links of 4 B
    + the upper levels' ``M`` links (a unit reaches level ≥ 1 with probability ``1/M``) + a
    level and an offset (12 B). ``ivfsq8``: ``dim`` + an 8 B id + the centroids
    (``nlist·dim·4/N``). ``ivfpq``: ``pq_m`` + 8 + the centroids.

    Example:
        >>> round(bytes_per_unit(index_type="hnsw", dim=1024, num_vectors=25_000_000))
        4624
    """
    nlist = ivfsq_nlist(num_vectors)
    centroids = nlist * dim * 4 / max(1, num_vectors)
    per_type: dict[str, Callable[[], float]] = {
        "flat": lambda: 4.0 * dim,
        "hnsw": lambda: 4.0 * dim + 8.0 * hnsw_m + 4.0 * hnsw_m / (hnsw_m - 1) + 12.0,
        IVFSQ: lambda: dim + 8.0 + centroids,
        "ivfpq": lambda: float(pq_m or dim // 8) + 8.0 + centroids,
    }
    if index_type not in per_type:
        raise ValueError(f"unknown index type {index_type!r}")
    return per_type[index_type]()


__all__ = ["HOST_RAM_BUDGET", "IVFSQ", "full_corpus_estimate", "TRAIN_PER_LIST", "build_ivfsq",
           "build_ivfsq_from_store", "bytes_per_unit", "index_params", "ivfsq_nlist", "ivfsq_nprobe", "training_rows"]
