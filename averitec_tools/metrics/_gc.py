"""Pausing Python's cyclic garbage collector around scoring.

Scoring allocates many small, mostly acyclic objects (token tuples, prepared strings,
matrices) next to large long-lived ones (WordNet, caches). Collections triggered by those
allocations walk every tracked object again and again, and a warm leaderboard worker's
caches make each walk longer (``make bench-leaderboard`` measures the worker; see
docs/leaderboard.md). Reference counting still frees everything that is not in a cycle;
the collector resumes when the block ends.

What survives a pause is mostly what the scorer keeps (the strings it prepared, their
words' caches, which a warm scorer trims later). Left young, it would cost a collection of
the youngest generation right after the block -- walking every one of those objects and
every entry of the caches they re-entered, about 10 ms after a new 500-claim submission
(``benchmarks/bench_warm.py``) -- that frees nothing. So the outermost pause ends by
*aging* the survivors: every tracked object moves to the oldest generation
(``gc.freeze()`` then ``gc.unfreeze()``, two list splices), where only full collections
look. So that cyclic garbage among them cannot pile up in a process whose own
allocations rarely trigger a full collection, every :data:`FULL_EVERY`-th aging is a full
collection instead. Where objects are frozen already, nothing is unfrozen: the pause ends
as a plain one.

A leaderboard worker freezes its warm state with :func:`freeze_kept` instead of
``gc.freeze()``: its pauses then end as plain ones without asking ``gc.get_freeze_count()``,
which walks the whole frozen list (~14 ms per new 500-claim submission in a worker). They
still end with the young collection over the job's survivors (~10-20 ms, freeing little):
freezing those survivors instead would leave their cycles uncollectable, and collecting
them now and then would mean unfreezing -- and walking -- the warm state, which stays
frozen so that the pages the worker shares with its forked helpers stay shared.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Every this many outermost pauses, the survivors are collected (a full collection) instead of aged.
FULL_EVERY = 50
_AGED = [0]
#: Whether :func:`freeze_kept` froze this process's kept state (so the frozen list need not be walked).
_KEPT = [False]


def freeze_kept() -> None:
    """Collect, then freeze every object the collector tracks, as kept for the process's
    life; later pauses end as plain ones (see the module's text)."""
    gc.collect()
    gc.freeze()
    _KEPT[0] = True


def age_survivors() -> bool:
    """Move every object the collector tracks to its oldest generation, or every
    :data:`FULL_EVERY`-th call run a full collection; whether it aged them (not when
    objects are frozen: those stay frozen, and the youngest generation is left as it is).

    Example:
        >>> import gc
        >>> gc.disable(); kept = [[]]; aged = age_survivors(); gc.enable()
        >>> not aged or any(o is kept for o in gc.get_objects(generation=2))  # aged: in the oldest generation
        True
    """
    if _KEPT[0] or gc.get_freeze_count():
        return False
    _AGED[0] += 1
    if _AGED[0] % FULL_EVERY == 0:
        gc.collect()
        return False
    gc.freeze()  # all generations into the permanent one ...
    gc.unfreeze()  # ... and the permanent one into the oldest: O(1) either way
    return True


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (nested pauses are fine); the
    outermost pause ends by :func:`age_survivors`.

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
            age_survivors()
            gc.enable()


__all__ = ["FULL_EVERY", "age_survivors", "freeze_kept", "paused_gc"]
