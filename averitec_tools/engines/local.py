"""The local engine: one worker in this process, batches in input order.

Example:
    >>> list(LocalEngine().map_batches([1, 2, 3], worker=lambda: (lambda xs: [-x for x in xs]), batch_size=2))
    [-1, -2, -3]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from averitec_tools.engines import Engine, Worker, chunked


class LocalEngine(Engine):
    """Runs a worker built once, batch after batch, in this process."""

    name = "local"

    def run_batches(self, items: Iterable[Any], worker: Callable[[], Worker], batch_size: int,
                    concurrency: int | None, num_gpus: float | None) -> Iterator[Any]:
        fn: Worker | None = None
        for batch in chunked(items, batch_size):
            if fn is None:  # built lazily: no model load when there is nothing to do
                fn = worker()
            out = fn(batch)
            if len(out) != len(batch):
                raise RuntimeError(f"worker returned {len(out)} results for {len(batch)} items")
            yield from out

    def describe(self) -> dict[str, Any]:
        return {"engine": "local"}


__all__ = ["LocalEngine"]
