"""``averitec compare A.json B.json REFERENCES``: paired significance tests of two systems.

Both submissions are scored with the same profile on the same references; claims are
aligned by id. For every metric that is a mean of per-claim values (the profile's per-claim
``values``) the per-claim values are resampled; accuracy and macro-F1 are recomputed from
the resampled (gold, predicted) label pairs. For each metric it prints A, B, the difference
A − B with its paired-bootstrap confidence interval, the p-value of the chosen test
(paired bootstrap or approximate randomisation), the effect size, and whether the
difference is significant at ``--alpha``. No correction for multiple comparisons is
applied: with many metrics, expect some false positives at α = 0.05.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.argtypes import LEVEL, POSITIVE, SEED
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.cli._profile_scores import add_profile_argument, print_report


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "compare", doc=__doc__, func=run,
                         help="paired significance tests between two submissions on the same claims")
    parser.add_argument("a", metavar="A", help="submission of system A")
    parser.add_argument("b", metavar="B", help="submission of system B")
    parser.add_argument("references", help="gold file")
    add_profile_argument(parser)
    parser.add_argument(
        "--metric", action="append", metavar="NAME",
        help="compare only this metric (repeatable; default: every per-claim metric of the "
        "profile plus accuracy and macro_f1)",
    )
    parser.add_argument("--n-resamples", type=POSITIVE, default=2000,
                        help="bootstrap resamples / randomisation rounds (default 2000)")
    parser.add_argument("--seed", type=SEED, default=0, help="random seed (default 0)")
    parser.add_argument("--test", choices=("bootstrap", "randomization"), default="bootstrap",
                        help="paired bootstrap (default) or approximate randomisation")
    parser.add_argument("--alpha", type=LEVEL, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--confidence-level", type=LEVEL, default=0.95,
                        help="level of the CI of the difference (default 0.95)")
    parser.add_argument("--ci-method", choices=("percentile", "BCa", "basic"), default="percentile",
                        help="bootstrap interval method (default percentile)")
    add_json_flag(parser)


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _print_text(report: dict[str, Any]) -> None:
    from averitec_tools.cli._tables import print_rows

    rows = []
    for name, r in report["metrics"].items():
        rows.append([
            name, _fmt(r["a"]), _fmt(r["b"]), f"{r['difference']:+.4f}",
            f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]", f"{r['p_value']:.4f}",
            "n/a" if r["effect_size"] is None else f"{r['effect_size']:+.3f}",
            "yes" if r["significant"] else "no",
        ])
    print(f"A = {report['a']}")
    print(f"B = {report['b']}")
    notes = [f"skipped {name}: {why}" for name, why in report["skipped"].items()]
    notes.append("effect: Cohen's d_z for per-claim means, δ/(√N·SE*) for macro-F1")
    print_rows(title=f"{report['n']} claims, profile {report['profile']}, {report['test']} test, "
                     f"{report['n_resamples']} resamples, α = {report['alpha']:g}",
               header=["metric", "A", "B", "A−B", "CI of A−B", "p", "effect", "sig."], rows=rows,
               caption="\n".join(notes))  # fits the terminal: the table, or one block per metric
    print(f"signature: {report['signature']}")


def run(args: argparse.Namespace) -> int:
    from averitec_tools.scoring.compare import compare_submissions

    report = compare_submissions(
        a=args.a, b=args.b, references=args.references, profile=args.profile, metrics=args.metric,
        n_resamples=args.n_resamples, seed=args.seed, test=args.test, alpha=args.alpha,
        confidence_level=args.confidence_level, ci_method=args.ci_method,
    )
    return print_report(report.to_dict(), as_json=args.json, text=_print_text)


__all__ = ["add_parser", "run"]
