"""The FEVER recipe's dense index (``ivfsq8``) against an exact flat index: bytes, build time, recall@24.

Vectors: *synthetic*, 1024-d (``BAAI/bge-large-en-v1.5``'s dimension, the FEVER recipe's
encoder), L2-normalised, built to look like sentence embeddings of a Wikipedia dump rather
than like uniform noise: a shared mean direction (anisotropy: random pairs have cosine
≈ 0.3), a 256-dim latent space with a decaying spectrum, topics, pages of 5 sentences per
topic, sentence noise, and a little isotropic noise. Queries are perturbed corpus units
(a claim paraphrasing a sentence). They are not real text: real bge-large embeddings of
FEVER's sentences cannot be made here (no model hub, no wiki-pages, no GPU), so the recall
measured is a check of the index settings, to be re-measured on the real corpus
(``--vectors FILE.npy``, e.g. encoding shards, repeats the measurement on real vectors).

Measured with the recipe's settings: :func:`compact.build_ivfsq` (``√N`` lists, 64 training
rows per list, 8-bit codes, one FAISS build thread), recall@24 (``top_m``) against
``IndexFlatIP`` for an ``nprobe`` sweep, bytes per unit (the serialised index / N), build
seconds; the extrapolation to FEVER's ≈ 25 M sentence units uses
:func:`compact.bytes_per_unit` and the build's scaling (training ∝ N, assignment ∝ N^1.5
with √N lists).

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_fever_index.py [--units 200000] [--queries 1000] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from averitec_tools.baselines.r2vc.stages.retrieval import compact  # noqa: E402

DIM = 1024
TOP_M = 24  # RetrievalConfig.top_m (Table G.1's M)
FEVER_UNITS = 25_000_000  # issue 25's figure for FEVER's wiki-pages sentence units (not counted here)
LATENT = 256


def _normalise(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def synthetic(*, units: int, queries: int, seed: int = 0, chunk: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """``(corpus, queries)``: the embedding-like vectors described in the module docs."""
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((DIM, LATENT)))
    spectrum = (np.arange(1, LATENT + 1) ** -0.5).astype(np.float32)
    mean = _normalise(rng.standard_normal((1, DIM)))[0] * 2.5
    topics = rng.standard_normal((max(64, units // 200), LATENT)).astype(np.float32)
    pages = topics[rng.integers(0, len(topics), size=units // 5 + 1)] + 0.7 * rng.standard_normal(
        (units // 5 + 1, LATENT)).astype(np.float32)
    out = np.empty((units, DIM), dtype=np.float32)
    for start in range(0, units, chunk):
        stop = min(units, start + chunk)
        z = pages[np.arange(start, stop) // 5] + 0.6 * rng.standard_normal((stop - start, LATENT))
        x = (z * spectrum) @ basis.T + mean + 0.02 * rng.standard_normal((stop - start, DIM))
        out[start:stop] = _normalise(x)
    picks = rng.choice(units, size=queries, replace=False)
    noise = (0.5 * rng.standard_normal((queries, LATENT)) * spectrum) @ basis.T
    return out, _normalise(out[picks] + noise.astype(np.float32))


def recall_at(exact: np.ndarray, approx: np.ndarray) -> float:
    """Mean share of the exact top-k rows found in the approximate top-k."""
    return float(np.mean([len(set(e) & set(a)) / len(e) for e, a in zip(exact, approx, strict=True)]))


def batched_vs_single(index: Any, queries: np.ndarray, *, nprobe: int, k: int = 200, single: int = 200
                      ) -> dict[str, Any]:
    """The paper runs' batched pass (one ``search`` of every query, per-query distances) against one query
    per call: CPU-ms per query, queries/s, and whether the rows and scores are identical."""
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import per_query_distances

    index.nprobe = nprobe
    with per_query_distances():
        c0, t0 = time.process_time(), time.perf_counter()
        scores, rows = index.search(queries, k)
        c1, t1 = time.process_time(), time.perf_counter()
        one = [index.search(queries[i:i + 1], k) for i in range(min(single, len(queries)))]
        c2, t2 = time.process_time(), time.perf_counter()
    n = len(one)
    return {"nprobe": nprobe, "k": k, "batch_cpu_ms_per_query": round(1000 * (c1 - c0) / len(queries), 2),
            "batch_queries_per_s": round(len(queries) / (t1 - t0), 1),
            "single_cpu_ms_per_query": round(1000 * (c2 - c1) / n, 2), "single_queries_per_s": round(n / (t2 - t1), 1),
            "identical": all(np.array_equal(r, rows[i:i + 1]) and np.array_equal(s, scores[i:i + 1])
                             for i, (s, r) in enumerate(one))}


def measure(corpus: np.ndarray, queries: np.ndarray, *, nprobes: list[int], seed: int = 0) -> dict[str, Any]:
    import faiss

    n, dim = corpus.shape
    flat = faiss.IndexFlatIP(dim)
    flat.add(corpus)
    _, exact = flat.search(queries, TOP_M)
    del flat
    pair = corpus[np.random.default_rng(seed).choice(n, size=(2000, 2))]
    nlist = compact.ivfsq_nlist(n)
    t0 = time.perf_counter()
    c0 = time.process_time()
    sample = corpus[compact.training_rows(total=n, nlist=nlist, seed=seed)]
    index = compact.build_ivfsq(dim=dim, sample=sample, chunks=(corpus[i:i + 8192] for i in range(0, n, 8192)),
                                nlist=nlist, seed=seed)
    build_s, build_cpu_s = time.perf_counter() - t0, time.process_time() - c0
    size = len(faiss.serialize_index(index))
    sweep = []
    for nprobe in nprobes:
        index.nprobe = min(nprobe, nlist)
        t1 = time.perf_counter()
        _, got = index.search(queries, TOP_M)
        sweep.append({"nprobe": int(index.nprobe), "recall_at_24": round(recall_at(exact, got), 4),
                      "search_ms_per_query": round(1000 * (time.perf_counter() - t1) / len(queries), 3)})
    import resource

    return {
        "units": n, "dim": dim, "queries": len(queries), "nlist": nlist, "train_rows": len(sample),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "search_threads": faiss.omp_get_max_threads(),
        "build_threads": 1, "build_seconds": round(build_s, 2), "build_cpu_seconds": round(build_cpu_s, 2),
        "bytes_per_unit": round(size / n, 2),
        "bytes_per_unit_formula": round(compact.bytes_per_unit(index_type="ivfsq8", dim=dim, num_vectors=n), 2),
        "random_pair_cosine": round(float(np.mean(np.sum(pair[:, 0] * pair[:, 1], axis=1))), 3),
        "nprobe_sweep": sweep, "default_nprobe": compact.ivfsq_nprobe(nlist),
        "batched_vs_single": batched_vs_single(index, queries, nprobe=compact.ivfsq_nprobe(nlist)),
    }


def extrapolate(result: dict[str, Any], *, units: int = FEVER_UNITS) -> dict[str, Any]:
    """The full corpus: bytes from the formula, build time scaled N^1.5 (√N lists × N rows)."""
    per_unit = compact.bytes_per_unit(index_type="ivfsq8", dim=result["dim"], num_vectors=units)
    hnsw = compact.bytes_per_unit(index_type="hnsw", dim=result["dim"], num_vectors=units)
    scale = (units / result["units"]) ** 1.5
    nlist, nprobe = compact.ivfsq_nlist(units), compact.ivfsq_nprobe(compact.ivfsq_nlist(units))
    row = next(r for r in result["nprobe_sweep"] if r["nprobe"] == result["default_nprobe"])
    scanned = (units / nlist * nprobe) / (result["units"] / result["nlist"] * row["nprobe"])
    return {
        "search_ms_per_query": round(row["search_ms_per_query"] * scanned, 1),
        "search_formula": f"measured ms/query at the default nprobe x vectors scanned ratio ({scanned:.1f}), "
                          f"{result['search_threads']} threads",
        "units": units, "nlist": nlist, "nprobe": nprobe, "bytes_per_unit": round(per_unit, 1),
        "index_gib": round(per_unit * units / 1024**3, 1), "hnsw_m64_gib": round(hnsw * units / 1024**3, 1),
        "host_ram_budget_gib": compact.HOST_RAM_BUDGET // 1024**3,
        "build_hours_one_thread": round(result["build_cpu_seconds"] * scale / 3600, 1),
        "build_formula": f"build_cpu_seconds x (N / {result['units']})^1.5",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--nprobe", default="8,16,32,64,default,96", help="comma-separated; default: the recipe's")
    ap.add_argument("--vectors", help="a .npy of real L2-normalised embeddings instead of the synthetic ones")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.vectors:
        corpus = np.load(args.vectors, mmap_mode="r")[: args.units].astype(np.float32)
        rng = np.random.default_rng(args.seed)
        queries = corpus[rng.choice(len(corpus), size=args.queries, replace=False)]
        kind = f"real vectors from {args.vectors} (queries: corpus rows)"
    else:
        corpus, queries = synthetic(units=args.units, queries=args.queries, seed=args.seed)
        kind = "synthetic embedding-like vectors (module docs)"
    default = compact.ivfsq_nprobe(compact.ivfsq_nlist(len(corpus)))
    nprobes = [default if x == "default" else int(x) for x in args.nprobe.split(",")]
    result = measure(corpus, queries, nprobes=nprobes, seed=args.seed)
    report = {"vectors": kind, "measured": result, "extrapolated": extrapolate(result)}
    if args.json:
        print(json.dumps(report, indent=1))
    else:
        m, e = result, report["extrapolated"]
        print(f"{kind}: {m['units']} units x {m['dim']} d, nlist {m['nlist']}: build {m['build_seconds']} s "
              f"({m['build_cpu_seconds']} CPU s, 1 thread), {m['bytes_per_unit']} B/unit")
        for row in m["nprobe_sweep"]:
            print(f"  nprobe {row['nprobe']:>4}: recall@24 {row['recall_at_24']:.4f}, "
                  f"{row['search_ms_per_query']} ms/query")
        b = m["batched_vs_single"]
        print(f"  batched (nprobe {b['nprobe']}, k {b['k']}): {b['batch_cpu_ms_per_query']} CPU-ms/query, "
              f"{b['batch_queries_per_s']} q/s; one per call: {b['single_cpu_ms_per_query']} CPU-ms/query, "
              f"{b['single_queries_per_s']} q/s; identical: {b['identical']}")
        print(f"FEVER ({e['units']} units): {e['bytes_per_unit']} B/unit, {e['index_gib']} GiB "
              f"(HNSW M=64: {e['hnsw_m64_gib']} GiB; budget {e['host_ram_budget_gib']} GiB), "
              f"build ~{e['build_hours_one_thread']} h on one thread")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
