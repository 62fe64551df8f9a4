"""The Ray engine: Ray Data ``map_batches`` over a pool of worker actors.

The items stay on the driver side as one object-store reference; the dataset carries
only their positions, so a batch costs a few integers to ship. Each actor builds its
worker once (model weights load once per actor), results come back pickled and, with
``preserve_order``, in input order — streamed, so the driver never holds them all.
Ray Data restarts a dead actor and retries its batch (its defaults: unlimited
``max_restarts`` and ``max_task_retries``); workers must therefore be idempotent (the
encoder writes each shard atomically).

Example (needs a Ray runtime, so not run here)::

    engine = RayEngine(num_cpus=2)
    list(engine.map_batches(range(4), worker=make_squarer, batch_size=2))
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from averitec_tools.engines import Engine, Worker, as_list
from averitec_tools.engines.ray_runtime import ensure_ray
from averitec_tools.errors import UserError


class _BatchActor:
    """Ray Data callable class: builds the worker once, maps positions → pickled results."""

    def __init__(self, worker: Callable[[], Worker], items: Any) -> None:
        self.items = items
        self.fn = worker()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        positions = [int(i) for i in batch["i"]]
        try:
            out = self.fn([self.items[i] for i in positions])
        except UserError as exc:  # bad input: sent back as a result, raised by the driver
            out = [_BadInput(message=exc.message, hint=exc.hint)] * len(positions)
        if len(out) != len(positions):
            raise RuntimeError(f"worker returned {len(out)} results for {len(positions)} items")
        blobs = np.empty(len(out), dtype=object)
        blobs[:] = [pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL) for o in out]
        return {"i": np.asarray(positions, dtype=np.int64), "out": blobs}


@dataclass(frozen=True)
class _BadInput:
    """A :class:`UserError` raised by a worker, carried back as a result."""

    message: str
    hint: str | None


class RayEngine(Engine):
    """Runs workers as Ray actors (see module docs).

    Args:
        address: Cluster address, or ``None`` for a local runtime.
        num_cpus: CPUs of a local runtime.
        concurrency: Actors in the pool (default: one per GPU, else one per CPU but one).
    """

    name = "ray"

    def __init__(self, *, address: str | None = None, num_cpus: int | None = None,
                 concurrency: int | None = None) -> None:
        self.address = address
        self.ray = ensure_ray(address=address, num_cpus=num_cpus)
        resources = self.ray.cluster_resources()
        self.gpus = int(resources.get("GPU", 0))
        self.cpus = int(resources.get("CPU", 1))
        self.concurrency = concurrency

    def _pool(self, num_gpus: float | None) -> tuple[int, float]:
        gpus = (1.0 if self.gpus else 0.0) if num_gpus is None else num_gpus
        if self.concurrency is not None:
            return self.concurrency, gpus
        if gpus:
            return max(1, int(self.gpus / gpus)), gpus
        return max(1, self.cpus - 1), gpus

    def run_batches(self, items: Iterable[Any], worker: Callable[[], Worker], batch_size: int,
                    concurrency: int | None, num_gpus: float | None) -> Iterator[Any]:
        ray = self.ray
        seq = as_list(items)
        if not seq:
            return
        size, gpus = self._pool(num_gpus)
        size = min(concurrency or size, max(1, -(-len(seq) // batch_size)))
        ds = ray.data.from_items([{"i": i} for i in range(len(seq))])
        ds = ds.map_batches(
            _BatchActor,
            fn_constructor_kwargs={"worker": worker, "items": list(seq)},
            batch_size=batch_size,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=size),
            num_cpus=1,
            num_gpus=gpus,
        )
        expected = 0
        for row in ds.iter_rows():
            if int(row["i"]) != expected:  # preserve_order is set by ensure_ray
                raise RuntimeError(f"ray engine: result {row['i']} arrived at position {expected}")
            expected += 1
            value = pickle.loads(row["out"])
            if isinstance(value, _BadInput):
                raise UserError(value.message, hint=value.hint)
            yield value
        if expected != len(seq):
            raise RuntimeError(f"ray engine: {expected} results for {len(seq)} items")

    def describe(self) -> dict[str, Any]:
        return {"engine": "ray", "address": self.address or "local", "cpus": self.cpus, "gpus": self.gpus}


__all__ = ["RayEngine"]
