"""The OpenMP thread count FAISS builds indexes with, fixed inside the code.

FAISS's HNSW build inserts points from all its threads at once, and k-means sums in thread
order, so with the machine's default thread count (cores, ``OMP_NUM_THREADS``, scheduling)
the index file would depend on the machine. Every build (HNSW, flat, IVF-PQ, ``ivfsq8``)
runs inside :func:`fixed_build_threads`; searching keeps the caller's thread count, and
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


__all__ = ["FAISS_BUILD_THREADS", "fixed_build_threads", "per_query_distances"]
