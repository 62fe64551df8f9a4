"""Pausing Python's cyclic garbage collector around scoring.

Scoring allocates many small, mostly acyclic objects (token tuples, prepared strings,
matrices) next to large long-lived ones (WordNet, caches). Collections triggered by those
allocations walk every tracked object again and again, and a warm leaderboard worker's
caches make each walk longer (``make bench-leaderboard`` measures the worker; see
docs/leaderboard.md). Reference counting still frees everything that is not in a cycle;
the collector resumes (and catches up) when the block ends.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nested pauses are fine).

    Example:
        >>> import gc
        >>> with paused_gc():
        ...     gc.isenabled()
        False
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


__all__ = ["paused_gc"]
