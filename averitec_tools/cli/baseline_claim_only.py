"""``averitec baseline claim-only``: the claim-only probe, the trivial reference (issue 37).

``averitec baseline claim-only --claims FILE --out PREDICTIONS [--train FILE] [--json]``
fits the probe (the packaged MiniLM claim embedding + logistic regression, no evidence) on
AVeriTeC's ``train.json`` minus the scored claims' twins and the pseudo-test — once, then
read from the cache — and writes a 2024-format prediction file that ``averitec score``
reads. ``--claims`` defaults to ``$AVERITEC_DATA_DIR/averitec/dev.json``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from averitec_tools.argtypes import POSITIVE
from averitec_tools.cli._baseline_shared import quiet_models
from averitec_tools.cli._command import add_json_flag
from averitec_tools.jsonio import print_json


def add_parser(sub: Any) -> None:
    p = sub.add_parser("claim-only", help="the claim-only probe: a verdict from the claim's words, no evidence",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--claims", metavar="FILE", help="AVeriTeC claims (default: $AVERITEC_DATA_DIR/averitec/dev.json)")
    p.add_argument("--out", required=True, metavar="PREDICTIONS", help="prediction file to write (2024 format)")
    p.add_argument("--train", metavar="FILE",
                   help="training claims (default: $AVERITEC_DATA_DIR/averitec/train.json; its pseudo-test is held out)")
    p.add_argument("--limit", type=POSITIVE, metavar="N", help="only the first N claims")
    p.add_argument("--write-gold-subset", metavar="GOLD", help="also write the gold items of the claims run here")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from OUT.partial.jsonl")
    p.add_argument("--overwrite", action="store_true", help="discard an interrupted run's progress and start over")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_json_flag(p)
    p.set_defaults(func=run_claim_only)


def run_claim_only(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.claim_only import ClaimOnlySpec, run

    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    summary = run(ClaimOnlySpec(claims=args.claims, out=args.out, train=args.train, limit=args.limit,
                                write_gold_subset=args.write_gold_subset, resume=args.resume,
                                overwrite=args.overwrite, progress=progress))
    result = summary.to_dict()
    if args.json:
        print_json(result)
        return 0
    print(f"wrote {result['n_claims']} predictions to {summary.out} (format 2024; config {result['config']})")
    print(f"labels: {result['labels']}")
    print(f"probe: {result['probe']}")
    if "accuracy" in result:
        print(f"accuracy {result['accuracy']:.4f}  macro-F1 {result['macro_f1']:.4f}")
    for note in result.get("notes", []):
        print(f"note: {note}")
    return 0
