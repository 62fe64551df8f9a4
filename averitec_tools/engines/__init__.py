"""Execution engines: run a batched, model-holding map over many items locally or on Ray.

Every scale-out path of the project (dense encoding, sparse tokenisation, the baselines'
per-claim stages — each owned by its baseline) is written once as a *worker factory* — a picklable callable that
loads what it needs (a model, a memory-mapped corpus) and returns a function from a batch
of items to a batch of results — and handed to an engine:

* ``local`` (the default): one worker in this process, batches in order.
* ``ray``: a Ray Data pipeline ``map_batches`` over an actor pool, each actor built once
  from the factory (so weights load once per worker), ``num_gpus=1`` per actor where
  the cluster has GPUs; results come back streamed and in input order.

Example:
    >>> engine = get_engine("local")
    >>> list(engine.map_batches(range(5), worker=lambda: (lambda xs: [x * x for x in xs]), batch_size=2))
    [0, 1, 4, 9, 16]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from averitec_tools.registry import Registry

#: A worker: turns a batch of items into a batch of results (same length, same order).
Worker = Callable[[list[Any]], list[Any]]


class Engine(ABC):
    """What every engine offers: :meth:`map_batches`, checked here, over the engine's own
    :meth:`run_batches`, and :meth:`describe`."""

    name: str

    def map_batches(
        self,
        items: Iterable[Any],
        *,
        worker: Callable[[], Worker],
        batch_size: int,
        concurrency: int | None = None,
        num_gpus: float | None = None,
    ) -> Iterator[Any]:
        """Apply ``worker()`` to ``items`` in batches; yield results in input order.

        Args:
            items: What to map.
            worker: Builds the batch function once per worker (it may load a model).
            batch_size: Items per batch (at least 1).
            concurrency: Workers at the most (default: the engine's choice).
            num_gpus: GPUs per worker (default: the engine's choice).

        Raises:
            ValueError: ``batch_size`` below 1.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        return self.run_batches(items, worker, batch_size, concurrency, num_gpus)

    @abstractmethod
    def run_batches(self, items: Iterable[Any], worker: Callable[[], Worker], batch_size: int,
                    concurrency: int | None, num_gpus: float | None) -> Iterator[Any]:
        """The engine's map (:meth:`map_batches` checked the arguments)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """What ran (for run summaries)."""


ENGINES: Registry[Callable[..., Engine]] = Registry("engine")
ENGINE_NAMES: tuple[str, ...] = ("local", "ray")


def _local(**_: Any) -> Engine:
    from averitec_tools.engines.local import LocalEngine

    return LocalEngine()


def _ray(**kwargs: Any) -> Engine:
    from averitec_tools.engines.ray_engine import RayEngine

    return RayEngine(**kwargs)


ENGINES.add("local", _local)
ENGINES.add("ray", _ray)


def get_engine(name: str, *, address: str | None = None, num_cpus: int | None = None,
               concurrency: int | None = None) -> Engine:
    """The engine called ``name`` (``address``/``num_cpus``/``concurrency`` apply to Ray)."""
    return ENGINES.get(name)(address=address, num_cpus=num_cpus, concurrency=concurrency)


def add_engine_arguments(parser: Any) -> None:
    """Add ``--engine``, ``--ray-address`` and ``--ray-workers`` to an argparse parser."""
    parser.add_argument("--engine", choices=ENGINE_NAMES, default="local",
                        help="where the work runs: in this process (local, default) or on Ray")
    parser.add_argument("--ray-address", metavar="HOST:PORT", default=None,
                        help="join this Ray cluster (default: start a local Ray runtime); with --engine ray")
    from averitec_tools.argtypes import POSITIVE

    parser.add_argument("--ray-workers", type=POSITIVE, metavar="N", default=None,
                        help="actors in the Ray pool (default: one per GPU, else per CPU)")


def engine_from_args(args: Any) -> Engine:
    """The engine an argparse namespace (see :func:`add_engine_arguments`) asks for."""
    from averitec_tools.errors import UserError

    if args.engine != "ray" and args.ray_address:
        raise UserError("--ray-address needs --engine ray")
    if args.ray_workers is not None and args.ray_workers < 1:
        raise UserError(f"--ray-workers must be at least 1, got {args.ray_workers}")
    return get_engine(args.engine, address=args.ray_address, concurrency=args.ray_workers)


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive lists of ``size`` items (the last may be shorter).

    Example:
        >>> list(chunked(range(5), 2))
        [[0, 1], [2, 3], [4]]
    """
    buf: list[Any] = []
    for item in items:
        buf.append(item)
        if len(buf) == size:
            yield buf
            buf = []
    if buf:
        yield buf


#: Claims per batch handed to a worker by :func:`engine_predictor`.
CLAIM_BATCH = 4


def engine_predictor(engine: Engine, *, worker: Callable[[], Worker],
                     batch_size: int = CLAIM_BATCH) -> Callable[[list[Any]], Iterator[Any]]:
    """A ``predict_many`` callable running ``worker`` on ``engine`` over claim batches.

    Example:
        >>> predict = engine_predictor(get_engine("local"), worker=lambda: (lambda cs: [c.upper() for c in cs]))
        >>> list(predict(["a", "b"]))
        ['A', 'B']
    """

    def predict_many(claims: list[Any]) -> Iterator[Any]:
        return engine.map_batches(claims, worker=worker, batch_size=batch_size)

    return predict_many


def as_list(items: Iterable[Any]) -> Sequence[Any]:
    return items if isinstance(items, Sequence) else list(items)


__all__ = ["Engine", "Worker", "add_engine_arguments", "chunked", "engine_from_args", "engine_predictor", "get_engine"]
