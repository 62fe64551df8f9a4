"""``averitec baseline r2vc ablations``: Table 2 rows from one stored decoding.

Reads the candidate store that ``averitec baseline r2vc --candidates DIR`` wrote for the
same configuration and claims, and computes every ablation row that needs no new
decoding (:data:`~averitec_tools.baselines.r2vc.experiments.ablations.ABLATION_ROWS`), writing one
prediction file per row and ``ablations.json`` into ``--out`` (replaced whole, at the
end). Registered under ``averitec baseline r2vc`` by :mod:`averitec_tools.cli.baseline`.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="r2vc")
    >>> def common(p, required=True):
    ...     p.add_argument("--config", required=required)
    ...     p.add_argument("--candidates")
    >>> add_ablations_subcommand(parser.add_subparsers(dest="cmd"), common=common)
    >>> args = parser.parse_args(["ablations", "--config", "c.yaml", "--candidates", "s", "--out", "o"])
    >>> args.rows, args.func.__name__
    ('full,no_calibration,no_verifier_selection,single_candidate,nli_only,gates_off', 'run_ablations_cli')
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from averitec_tools.jsonio import print_json

DEFAULT_ROWS = "full,no_calibration,no_verifier_selection,single_candidate,nli_only,gates_off"


def add_ablations_subcommand(sub: Any, *, common: Callable[..., None]) -> None:
    """Add ``ablations`` to the ``r2vc`` subcommand group ``sub``."""
    p = sub.add_parser(
        "ablations",
        help="Table 2 ablation rows computed from stored candidates (no new decoding)",
        description="Compute the R2VC ablation rows that need no new decoding (no calibration, no verifier "
        "selection, single candidate, NLI-only, gates off) from the candidates that `averitec baseline r2vc "
        "--candidates DIR` stored for the same --config and --claims. Writes ROW.json (ROW.jsonl for FEVER "
        "claims) per row and ablations.json into --out.",
    )
    common(p)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the row predictions and ablations.json")
    p.add_argument("--rows", default=DEFAULT_ROWS, metavar="ROW,...", help=f"rows to compute (default: {DEFAULT_ROWS})")
    p.add_argument("--format", choices=("auto", "averitec2024", "ternary"), default="auto",
                   help="output format (default: averitec2024 for AVeriTeC claims, ternary for FEVER/VitaminC)")
    p.set_defaults(func=run_ablations_cli)


def run_ablations_cli(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.r2vc.run import R2VCSpec, ablations
    from averitec_tools.cli._baseline_shared import quiet_models

    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    result, n_claims = ablations(R2VCSpec(config=args.config, claims=args.claims, out=args.out,
                                          output_format=args.format, limit=args.limit, progress=progress,
                                          corpus=args.corpus, evidence=args.evidence, candidates=args.candidates),
                                 rows=rows)
    if args.json:
        print_json(result)
        return 0
    print(f"{len(rows)} ablation rows from {result['store']} ({n_claims} claims) written to {args.out}")
    for name, row in result["rows"].items():
        d = row["decision"] or {}
        acc = row.get("accuracy")
        f1 = row.get("macro_f1")
        print(f"  {name:22s} accuracy {acc if acc is None else f'{acc:.4f}'}  macro-F1 "
              f"{f1 if f1 is None else f'{f1:.4f}'}  coverage {d.get('coverage')}  ({row['description']})")
        if "gated_paper" in row:
            g, u = row["gated_paper"], row["ungated"]
            print(f"  {'':22s} gated_paper acc {g['accuracy']:.4f} macro-F1 {g['macro_f1']:.4f}  "
                  f"ungated acc {u['accuracy']:.4f} macro-F1 {u['macro_f1']:.4f}")
    if result["rows"]:
        print(f"signature: {next(iter(result['rows'].values())).get('signature')}")
    return 0


__all__ = ["add_ablations_subcommand"]
