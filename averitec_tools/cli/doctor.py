"""``averitec doctor [--for r2vc-paper|averitec-paper] [--json]``: what this machine has
(torch and CUDA, each GPU's memory, host RAM, free disk, hub reachability, installed
extras) against what a paper target needs, each need ``ok`` / ``missing`` with its fix.

Exit code 0, or 1 when ``--for`` names a target that is not ready. The library is
:mod:`averitec_tools.doctor`; this module only parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.argtypes import SECONDS
from averitec_tools.cli._command import add_json_flag
from averitec_tools.jsonio import print_json

TARGET_NAMES = ("r2vc-paper", "averitec-paper")


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("doctor", help="this machine against what the paper targets need (GPU, RAM, disk, hub)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--for", dest="target", choices=TARGET_NAMES, help="one target (default: every target)")
    p.add_argument("--no-hub", action="store_true", help="do not try to reach the hub")
    p.add_argument("--hub-timeout", type=SECONDS, default=3.0, help="seconds the hub connection may take (default 3)")
    add_json_flag(p)
    p.set_defaults(func=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from averitec_tools.doctor import diagnose, render

    report = diagnose(targets=[args.target] if args.target else None, probe_hub=not args.no_hub,
                      hub_timeout=args.hub_timeout)
    if args.json:
        print_json(report)
    else:
        from averitec_tools.cli._wrap import wrap_text

        print(wrap_text(render(report)))
    return 1 if args.target and not report["targets"][args.target]["ready"] else 0


__all__ = ["add_parser"]
