"""Scoring profiles, one module each. ``PROFILES.get(name)`` returns the profile class.

Profiles are registered lazily by name → module so that importing this package stays
cheap; see :func:`get_profile`.
"""

from __future__ import annotations

import importlib

from averitec_tools.registry import Registry
from averitec_tools.scoring.profiles.base import ClaimScore, ProfileResult, ScoringProfile

#: Profile name → module path (the module defines exactly one ScoringProfile subclass
#: named ``Profile``).
PROFILES: Registry[str] = Registry("scoring profile")
for _name, _module in (
    ("averitec2024", "averitec_tools.scoring.profiles.averitec2024"),
    ("averitec2023", "averitec_tools.scoring.profiles.averitec2023"),
    ("evalai", "averitec_tools.scoring.profiles.evalai"),
    ("fever", "averitec_tools.scoring.profiles.fever"),
    ("fever8", "averitec_tools.scoring.profiles.fever8"),
):
    PROFILES.add(_name, _module)

DEFAULT_PROFILE = "averitec2024"


def get_profile(name: str) -> ScoringProfile:
    """Instantiate the profile registered as ``name`` (UserError with suggestions if unknown)."""
    module = importlib.import_module(PROFILES.get(name))
    profile: ScoringProfile = module.Profile()
    return profile


__all__ = ["DEFAULT_PROFILE", "PROFILES", "ClaimScore", "ProfileResult", "ScoringProfile", "get_profile"]
