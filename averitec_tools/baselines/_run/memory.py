"""Memory freed by construction: the one release step, and the models a run keeps resident.

A stage that drops its last reference to a model does not free it: trainers, pipelines and
their callbacks hold reference cycles that only Python's cyclic collector breaks, at a time
of its choosing, and CUDA's caching allocator keeps the freed blocks reserved. So every
stage that loaded a model ends with :func:`release_memory` (``gc.collect()`` then
``torch.cuda.empty_cache()``), after its own references are gone.

:class:`ResidentModels` lends the big models of a multi-stage run (a generator, a retriever
with its index, a verifier) to every stage that asks for the same one, keyed by what it was
built from: one resident per kind, so asking for another generator releases the first
before the second loads (two 8B generators never share the GPU), and every load is counted
(:attr:`ResidentModels.loads`) and reported to ``on_load`` (a run ledger).

Example:
    >>> models = ResidentModels()
    >>> a = models.get("generator", ("dpo",), lambda: ["weights of dpo"], label="dpo")
    >>> models.get("generator", ("dpo",), lambda: ["reloaded"], label="dpo") is a
    True
    >>> models.get("generator", ("sft",), lambda: ["weights of sft"], label="sft")
    ['weights of sft']
    >>> dict(models.loads), models.resident()
    ({('generator', 'dpo'): 1, ('generator', 'sft'): 1}, {'generator': 'sft'})
    >>> models.close(); models.resident()
    {}
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any


def release_memory() -> dict[str, float]:
    """Collect reference cycles, then hand CUDA's cached blocks back; returns what CUDA holds after (GiB).

    Call it after the last reference to a stage's models is gone (``del``): what is still
    referenced is not freed.

    Example:
        >>> sorted(release_memory())
        ['cuda_allocated_gib', 'cuda_reserved_gib']
    """
    gc.collect()
    torch = sys.modules.get("torch")  # a run that never imported torch has no CUDA memory to hand back
    if torch is None or not torch.cuda.is_available():
        return {"cuda_allocated_gib": 0.0, "cuda_reserved_gib": 0.0}
    torch.cuda.empty_cache()
    return {"cuda_allocated_gib": round(torch.cuda.memory_allocated() / 2**30, 2),
            "cuda_reserved_gib": round(torch.cuda.memory_reserved() / 2**30, 2)}


class ResidentModels:
    """At most one resident model per kind, lent to every stage that asks for the same key (module docs).

    Args:
        on_load: Called as ``on_load(kind, label)`` after each load (e.g. a ledger line).
    """

    def __init__(self, *, on_load: Callable[[str, str], None] | None = None) -> None:
        self._resident: dict[str, tuple[Hashable, str, Any]] = {}
        self.loads: Counter[tuple[str, str]] = Counter()
        self.on_load = on_load

    def get(self, kind: str, key: Hashable, load: Callable[[], Any], *, label: str = "") -> Any:
        """The resident ``kind`` built from ``key``, else ``load()`` (releasing the previous one first)."""
        held = self._resident.get(kind)
        if held is not None and held[0] == key:
            return held[2]
        self.drop(kind)
        value = load()
        name = label or str(key)
        self._resident[kind] = (key, name, value)
        self.loads[(kind, name)] += 1
        if self.on_load is not None:
            self.on_load(kind, name)
        return value

    def drop(self, kind: str) -> None:
        """Release the resident ``kind`` (if any)."""
        if self._resident.pop(kind, None) is not None:
            release_memory()

    def resident(self) -> dict[str, str]:
        """Kind → label of what is resident now."""
        return {kind: held[1] for kind, held in self._resident.items()}

    def close(self) -> None:
        """Release every resident model."""
        self._resident.clear()
        release_memory()


__all__ = ["ResidentModels", "release_memory"]
