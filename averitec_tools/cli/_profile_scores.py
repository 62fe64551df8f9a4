"""Shared by ``averitec calibration`` and ``averitec compare``: the ``--profile`` option and
printing the report.

Kept free of heavy imports at module level (the CLI imports every subcommand on start).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from averitec_tools.jsonio import print_json


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    from averitec_tools.scoring.profiles import DEFAULT_PROFILE, PROFILES

    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"scoring profile that reads the files (one of: {', '.join(PROFILES.names())}; "
        f"default {DEFAULT_PROFILE})",
    )


def print_report(report: dict[str, Any], *, as_json: bool, text: Callable[[dict[str, Any]], None]) -> int:
    """The report as one JSON object (``--json``) or as text; the command's exit code."""
    if as_json:
        print_json(report)
    else:
        text(report)
    return 0


__all__ = ["add_profile_argument", "print_report"]
