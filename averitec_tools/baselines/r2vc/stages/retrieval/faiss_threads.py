"""The OpenMP thread count FAISS builds indexes with, fixed inside the code.

FAISS's HNSW build inserts points from all its threads at once, and k-means sums in thread
order, so with the machine's default thread count (cores, ``OMP_NUM_THREADS``, scheduling)
the index file would depend on the machine. Every build (HNSW, flat, IVF-PQ, ``ivfsq8``)
runs inside :func:`fixed_build_threads`; searching keeps the caller's setting.
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


__all__ = ["FAISS_BUILD_THREADS", "fixed_build_threads"]
