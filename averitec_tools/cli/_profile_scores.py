"""Shared by ``averitec calibration`` and ``averitec compare``: the ``--profile`` option.

Kept free of heavy imports at module level (the CLI imports every subcommand on start).
"""

from __future__ import annotations

import argparse


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    from averitec_tools.scoring.profiles import DEFAULT_PROFILE, PROFILES

    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"scoring profile that reads the files (one of: {', '.join(PROFILES.names())}; "
        f"default {DEFAULT_PROFILE})",
    )


__all__ = ["add_profile_argument"]
