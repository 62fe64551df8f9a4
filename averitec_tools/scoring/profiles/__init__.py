"""Scoring profiles, one module each: :func:`get_profile` returns one, ready to score.

:data:`PROFILES` maps a profile's name to the module that defines it (a module defines one
:class:`~averitec_tools.scoring.profiles.base.ScoringProfile` subclass named ``Profile``), so
importing this package stays cheap: a profile's module is imported only when it is asked for.
:func:`score_with_profile` is what ``averitec compare``, ``calibration`` and ``lite-check`` build
on (per-claim scores, each claim once).

    >>> get_profile("fever").name, PROFILES.get("fever")
    ('fever', 'averitec_tools.scoring.profiles.fever')
"""

from __future__ import annotations

import importlib

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry
from averitec_tools.scoring.profiles.base import ClaimScore, PathLike, ProfileResult, ScoringProfile

#: Profile name → module path (the module defines exactly one ScoringProfile subclass
#: named ``Profile``).
PROFILES: Registry[str] = Registry("scoring profile")
for _name, _module in (
    ("averitec2024", "averitec_tools.scoring.profiles.averitec2024"),
    ("averitec2023", "averitec_tools.scoring.profiles.averitec2023"),
    ("evalai", "averitec_tools.scoring.profiles.evalai"),
    ("fever", "averitec_tools.scoring.profiles.fever"),
    ("fever8", "averitec_tools.scoring.profiles.fever8"),
    ("averimatec", "averitec_tools.scoring.profiles.averimatec"),
):
    PROFILES.add(_name, _module)

DEFAULT_PROFILE = "averitec2024"


def get_profile(name: str) -> ScoringProfile:
    """Instantiate the profile registered as ``name`` (UserError with suggestions if unknown)."""
    module = importlib.import_module(PROFILES.get(name))
    profile: ScoringProfile = module.Profile()
    return profile


def score_with_profile(*, profile: str, predictions: PathLike, references: PathLike) -> ProfileResult:
    """Run ``profile`` on the files; the result has per-claim scores, each claim once.

    What ``averitec compare`` and ``averitec calibration`` build on: a profile missing from
    this installation, no per-claim scores or a claim scored twice is a :class:`UserError`.

    Example:
        >>> score_with_profile(profile="averitec2042", predictions="p.json", references="g.json")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: unknown scoring profile 'averitec2042' (did you mean: averitec2024, averitec2023, averimatec?)
    """
    try:
        scorer = get_profile(profile)
    except ModuleNotFoundError as exc:
        raise UserError(
            f"scoring profile {profile!r} is not available in this installation ({exc.name})"
        ) from None
    from averitec_tools.metrics._gc import paused_gc

    with paused_gc():
        result = scorer.score(predictions=predictions, references=references)
    if not result.per_claim:
        raise UserError(f"{predictions}: profile {profile!r} returned no per-claim scores")
    seen: set[str] = set()
    for claim in result.per_claim:
        key = repr(claim.claim_id)
        if key in seen:
            raise UserError(f"{predictions}: claim {claim.claim_id!r} appears twice")
        seen.add(key)
    return result


__all__ = [
    "DEFAULT_PROFILE", "PROFILES", "ClaimScore", "ProfileResult", "ScoringProfile", "get_profile",
    "score_with_profile",
]
