"""Warm scoring state a long-lived scorer (the leaderboard server) lends to one profile.

A :class:`WarmScoring` is passed explicitly to ``ScoringProfile.score(..., warm=...)``:
the profile then uses its METEOR engine (whose caches only ever hold what the engine
would compute, so scores are unchanged) and its parsed-gold cache instead of building
them anew. It names the profile it is lent to; any other profile refuses it, so a warm
engine prepared for one profile's gold strings is never used by another by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class WarmScoring:
    """The warm engine and parsed-gold cache lent to the profile named ``profile``.

    Attributes:
        profile: The one profile this state is lent to.
        engine: A :class:`~averitec_tools.metrics.meteor.MeteorEngine`.
        gold_cache: A dict the gold loader fills, keyed by (path, content hash, profile).

    Example:
        >>> warm = WarmScoring(profile="averitec2024", engine="E")
        >>> warm.for_profile("averitec2024").engine
        'E'
        >>> warm.for_profile("evalai")
        Traceback (most recent call last):
        ...
        ValueError: warm scoring state lent to profile 'averitec2024' was given to profile 'evalai'
    """

    profile: str
    engine: Any
    gold_cache: dict[Any, Any] = field(default_factory=dict)

    def for_profile(self, profile: str) -> WarmScoring:
        """This state, checked to be lent to ``profile`` (a mismatch is a programming error)."""
        if profile != self.profile:
            raise ValueError(f"warm scoring state lent to profile {self.profile!r} was given to profile {profile!r}")
        return self


def warm_engine(warm: WarmScoring | None, *, profile: str) -> Any | None:
    """The engine ``warm`` lends to ``profile``, or ``None`` when scoring cold.

    Example:
        >>> warm_engine(None, profile="evalai") is None
        True
    """
    return None if warm is None else warm.for_profile(profile).engine


def warm_gold_cache(warm: WarmScoring | None, *, profile: str) -> dict[Any, Any] | None:
    """The parsed-gold cache ``warm`` lends to ``profile``, or ``None`` when scoring cold.

    Example:
        >>> cache = {}
        >>> warm_gold_cache(WarmScoring(profile="fever", engine=None, gold_cache=cache), profile="fever") is cache
        True
    """
    return None if warm is None else warm.for_profile(profile).gold_cache


__all__ = ["WarmScoring", "warm_engine", "warm_gold_cache"]
