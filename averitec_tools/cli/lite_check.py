"""``averitec lite-check``: does the lite subset rank your submissions as the full set does?

Scores every ``--submission`` (at least 3, on the same claims) against ``REFERENCES`` with
the profile, ranks them by a per-claim metric's mean over all claims and over the lite
subset (``--size`` claims; the rule of ``averitec meta-eval --lite``), and prints Kendall
τ-b between the two rankings with a percentile interval from resampling the claims, each
system's two means and, with ``--json``, the subset's claim ids (what an Ev2R judge would
then be asked).

Examples::

    averitec lite-check dev.json --submission a.json --submission b.json --submission c.json
    averitec lite-check dev.json --submission a.json --submission b.json --submission c.json --size 100 --json
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.argtypes import LEVEL, POSITIVE, SEED
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.jsonio import print_json


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "lite-check", doc=__doc__, func=run,
                         help="Kendall tau between the full and the lite-subset ranking of your submissions")
    parser.add_argument("references", metavar="REFERENCES", help="gold file of the claims")
    parser.add_argument("--submission", action="append", required=True, metavar="FILE",
                        help="a submission (repeat; at least 3)")
    parser.add_argument("--size", type=POSITIVE, default=None, metavar="N",
                        help="lite subset size (default: 100, or every claim when there are fewer)")
    parser.add_argument("--profile", default="averitec2024", help="scoring profile (default averitec2024)")
    parser.add_argument("--metric", metavar="KEY",  # default: the library's (imported only when run)
                        help="per-claim metric to rank by (default averitec_score@0.25, the leaderboard's)")
    parser.add_argument("--resamples", type=POSITIVE, default=1000, metavar="N", help="claim resamples (default 1000)")
    parser.add_argument("--confidence-level", type=LEVEL, default=0.95, metavar="L", help="default 0.95")
    parser.add_argument("--seed", type=SEED, default=0, help="resampling seed (default 0)")
    add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from averitec_tools.cli._tables import print_rows
    from averitec_tools.scoring.lite_check import DEFAULT_METRIC, lite_check

    report = lite_check(references=args.references, submissions=args.submission, size=args.size,
                        profile=args.profile, metric=args.metric or DEFAULT_METRIC, resamples=args.resamples,
                        level=args.confidence_level, seed=args.seed)
    if args.json:
        print_json(report)
        return 0
    ci = report["ci"]
    tau = ("undefined (the systems tie in one ranking)" if report["kendall_tau"] is None else
           f"{report['kendall_tau']:.3f}, {ci['level']:.0%} CI {ci['low']:.3f} to {ci['high']:.3f} "
           f"({ci['resamples']} claim resamples)")
    print_rows(title=f"lite subset: {report['size']} of {report['of']} claims",
               header=["submission", "full", "lite"],
               rows=[[s["submission"], f"{s['full']:.4f}", f"{s['lite']:.4f}"] for s in report["systems"]],
               caption=f"Kendall tau-b, full vs lite ranking by {report['metric']}: {tau}\nrule: {report['rule']}\n"
                       f"signature: {report['signature']}")
    return 0
