"""The OpenMP thread count FAISS builds indexes with, decided inside the code.

FAISS's HNSW build inserts points from all its threads at once, so with the machine's default
thread count (cores, ``OMP_NUM_THREADS``, scheduling) the index file would depend on the
machine: HNSW, flat and IVF-PQ builds run inside :func:`fixed_build_threads` on one thread.
The ``ivfsq8`` build (FEVER's 25 M-unit index: ~3 CPU-hours on one thread) is byte-identical on
any thread count — k-means assigns each point on its own and sums each centroid's points in
row order, and the lists are filled in row order — so it runs on every core this process is
given (:func:`build_threads_for`; ``tests/test_index_threads.py`` builds it on 1, 2 and 4
threads in fresh processes and compares the bytes). Searching keeps the caller's thread count, and
:func:`per_query_distances` keeps a batched search's results equal to one query at a time
(so the batched retrieval pass of the paper runs does not depend on the batch or the threads).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: OpenMP threads FAISS builds (trains and fills) indexes with: one, so the index file
#: does not depend on the machine (an HNSW build with more threads is not reproducible).
FAISS_BUILD_THREADS = 1
#: Index types whose files are byte-identical on any build thread count (module docs): built on every core.
PARALLEL_BUILDS: tuple[str, ...] = ("ivfsq8",)


def build_threads_for(index_type: str, *, requested: int | None = None) -> int:
    """Threads an ``index_type`` build runs on: ``requested`` (else every core this process may use)
    for :data:`PARALLEL_BUILDS`, :data:`FAISS_BUILD_THREADS` for the others.

    Example:
        >>> build_threads_for("hnsw", requested=16), build_threads_for("ivfsq8", requested=16)
        (1, 16)
    """
    import os

    if index_type not in PARALLEL_BUILDS:
        return FAISS_BUILD_THREADS
    if requested:
        return max(1, int(requested))
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else max(1, os.cpu_count() or 1)


@contextmanager
def fixed_build_threads(faiss_module: Any = None, *, threads: int = FAISS_BUILD_THREADS) -> Iterator[int]:
    """Run the block with FAISS on ``threads`` OpenMP threads; the caller's count is restored.

    Example:
        >>> import faiss
        >>> before = faiss.omp_get_max_threads()
        >>> with fixed_build_threads(faiss) as n:
        ...     (n, faiss.omp_get_max_threads())
        (1, 1)
        >>> faiss.omp_get_max_threads() == before
        True
    """
    if faiss_module is None:
        import faiss as faiss_module
    set_threads = getattr(faiss_module, "omp_set_num_threads", None)
    if set_threads is None:  # a stand-in faiss namespace (tests)
        yield threads
        return
    saved = int(faiss_module.omp_get_max_threads())
    set_threads(threads)
    try:
        yield threads
    finally:
        set_threads(saved)


#: ``faiss.cvar.distance_compute_blas_threshold`` while searching (the largest C int): above any batch, so
#: every query's distances to the coarse centroids are computed on their own, not by one BLAS product.
NO_BLAS = (1 << 31) - 1


@contextmanager
def per_query_distances(faiss_module: Any = None) -> Iterator[None]:
    """Search with FAISS computing each query's exact distances on its own (no BLAS over the batch).

    Above ``distance_compute_blas_threshold`` FAISS computes a batch's distances by one BLAS
    matrix product, whose float rounding depends on the batch (and BLAS's thread count)
    (measured on the 200,000-unit ``ivfsq8`` benchmark: scores up to 3.6e-7 away from one query
    at a time's; with the threshold at 20 a search on 4 threads did not reproduce 2 threads'). Inside this block a batched search returns exactly what one query at a
    time returns, on any thread count; the setting is put back after.

    Example:
        >>> import faiss
        >>> with per_query_distances(faiss):
        ...     faiss.cvar.distance_compute_blas_threshold == NO_BLAS
        True
        >>> faiss.cvar.distance_compute_blas_threshold < NO_BLAS
        True
    """
    if faiss_module is None:
        import faiss as faiss_module
    cvar = getattr(faiss_module, "cvar", None)
    if cvar is None or not hasattr(cvar, "distance_compute_blas_threshold"):  # a stand-in namespace
        yield
        return
    saved = int(cvar.distance_compute_blas_threshold)
    cvar.distance_compute_blas_threshold = NO_BLAS
    try:
        yield
    finally:
        cvar.distance_compute_blas_threshold = saved


__all__ = ["FAISS_BUILD_THREADS", "build_threads_for", "fixed_build_threads", "per_query_distances"]
