"""Shared by ``averitec calibration`` and ``averitec compare``: score a submission with a
profile and check the per-claim scores these commands rely on.

Kept free of heavy imports at module level (the CLI imports every subcommand on start).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ProfileResult


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    from averitec_tools.scoring.profiles import DEFAULT_PROFILE, PROFILES

    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"scoring profile that reads the files (one of: {', '.join(PROFILES.names())}; "
        f"default {DEFAULT_PROFILE})",
    )


def score_with_profile(*, profile: str, predictions: str, references: str) -> ProfileResult:
    """Run ``profile`` on the files and return its result, with per-claim scores present."""
    from averitec_tools.scoring import profiles

    try:
        scorer = profiles.get_profile(profile)
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


__all__ = ["add_profile_argument", "score_with_profile"]
