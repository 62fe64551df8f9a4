"""Warm scoring state a long-lived scorer (the leaderboard server) lends to the profiles.

A profile builds its METEOR engine with :func:`averitec_tools.scoring.engine.make_engine`
and parses gold with :func:`averitec_tools.scoring.submission.load_gold_claims`. Both
consult this module: inside :func:`warm_scoring` they return the lent engine and the parsed
gold kept from earlier calls instead of building them anew. Context variables keep the
lending to the calling thread, so concurrent cold scoring is unaffected.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_ENGINE: ContextVar[Any | None] = ContextVar("averitec_warm_engine", default=None)
_GOLD_CACHE: ContextVar[dict[Any, Any] | None] = ContextVar("averitec_warm_gold", default=None)


@contextmanager
def warm_scoring(*, engine: Any, gold_cache: dict[Any, Any]) -> Iterator[None]:
    """Lend ``engine`` and ``gold_cache`` to every profile scored inside the block.

    Args:
        engine: A :class:`~averitec_tools.metrics.meteor.MeteorEngine` (its caches only
            ever hold what it would compute, so scores are unchanged).
        gold_cache: A dict the gold loader fills, keyed by (path, content hash, profile).

    Example:
        >>> with warm_scoring(engine="E", gold_cache={}):
        ...     lent_engine()
        'E'
        >>> lent_engine() is None
        True
    """
    tokens = (_ENGINE.set(engine), _GOLD_CACHE.set(gold_cache))
    try:
        yield
    finally:
        _ENGINE.reset(tokens[0])
        _GOLD_CACHE.reset(tokens[1])


def lent_engine() -> Any | None:
    """The engine lent by an enclosing :func:`warm_scoring`, or ``None``."""
    return _ENGINE.get()


def lent_gold_cache() -> dict[Any, Any] | None:
    """The parsed-gold cache lent by an enclosing :func:`warm_scoring`, or ``None``."""
    return _GOLD_CACHE.get()


__all__ = ["lent_engine", "lent_gold_cache", "warm_scoring"]
