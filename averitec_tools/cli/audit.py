"""``averitec audit FILE``: temporal-leakage and evidence-source audit.

FILE is an AVeriTeC gold file (dev.json) or a 2024-format submission (evidence items with
``url``, optionally ``scraped_text``/``metadata``). For a submission, pass the gold file
with --references to get claim dates and fact-checking articles. Exit status: 0, or 1 when
a --fail-on rule fired, or 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from averitec_tools.argtypes import NON_NEGATIVE
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.jsonio import print_json

RULE_HELP = (
    "published_after_claim, archived_after_claim, fact_checker_source, "
    "own_fact_check_article, misinfo_source, split_overlap"
)


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "audit", doc=__doc__, func=run,
                         help="audit evidence for temporal leakage and fact-checker / misinformation sources")
    parser.add_argument("file", metavar="FILE", nargs="?", help="gold file or 2024-format submission (JSON or JSONL)")
    parser.add_argument(
        "--references", action="append", default=[], metavar="GOLD",
        help="gold file(s): claim dates / fact-checking articles for a submission (the first is "
        "aligned on claim_id), fact-checker domains and split-level date checks (repeatable)",
    )
    parser.add_argument(
        "--fact-checker", action="append", default=[], metavar="DOMAIN",
        help="extra fact-checker domain, optionally with a path prefix (repeatable)",
    )
    add_json_flag(parser)
    parser.add_argument("--html", metavar="REPORT", help="also write an HTML report here")
    parser.add_argument(
        "--fail-on", nargs="+", action="extend", default=[], metavar="RULE",
        help=f"exit 1 if any of these rules fires (also comma-separated): {RULE_HELP}",
    )
    parser.add_argument("--max-rows", type=NON_NEGATIVE, default=10, help="rows shown per rule in the table (default 10)")


def _print_table(report: Any, max_rows: int) -> None:
    from rich.console import Console

    from averitec_tools.cli._tables import print_rows
    from averitec_tools.leakage import RULE_ORDER

    console = Console()
    rows = []
    for name in RULE_ORDER:
        r = report.rules[name]
        label = name + (" (upper bound only)" if name == "archived_after_claim" else "")
        rows.append([label, str(r.count), f"{r.rate:.2%}", str(r.n_claims)])
    print_rows(title=f"audit: {report.path} ({report.kind}, {report.n_claims} claims, {report.n_evidence} evidence URLs)",
               header=["rule", "flagged", "rate", "claims"], rows=rows, console=console)
    for sr in report.split_ranges:
        console.print(f"split {sr.split}: {sr.n_claims} claims, claim dates {sr.first} .. {sr.last}")
    for o in report.split_overlaps:
        console.print(f"[red]splits {o.a} and {o.b} overlap {o.start} .. {o.end} ({o.n_claims_in_overlap} claims)[/red]")
    console.print(
        f"invalid URLs: {len(report.invalid_urls)}; unparseable dates: {len(report.unparseable_dates)}; "
        f"claims without a usable date: {report.n_claims_without_date}"
    )
    for name in RULE_ORDER:
        rows = report.rules[name].rows
        if not rows or max_rows <= 0 or name == "archived_after_claim":
            continue
        console.print(f"\n[bold]{name}[/bold] (first {min(max_rows, len(rows))} of {len(rows)})")
        for row in rows[:max_rows]:
            console.print(f"  claim {row.claim_index}: {row.url}  {row.detail}", soft_wrap=True, markup=False)


def run(args: argparse.Namespace) -> int:
    from averitec_tools.errors import UserError
    from averitec_tools.leakage import check_fail_on, run_audit
    from averitec_tools.leakage.audit import fail_on_names

    rules = [rule.strip() for item in args.fail_on for rule in item.split(",") if rule.strip()]
    if args.file is None and rules and rules[-1] not in fail_on_names():
        args.file = rules.pop()  # `--fail-on RULE FILE`: nargs="+" swallowed FILE
    if args.file is None:
        raise UserError("missing FILE (the gold file or submission to audit)")
    fail_on = check_fail_on(rules)
    if args.max_rows < 0:
        raise UserError("--max-rows must be >= 0")
    if args.html:
        from averitec_tools.outputs import check_output_file

        check_output_file(args.html, option="--html", inputs=[args.file, *args.references])
    report = run_audit(args.file, references=args.references, extra_fact_checkers=args.fact_checker)
    if args.html:
        from averitec_tools.leakage.html_report import write_html

        write_html(report, args.html)
    if report.n_claims_without_date and (args.references or report.n_claims_without_date == report.n_claims):
        source = f"--references {args.references[0]}" if args.references else args.file
        print(
            f"averitec audit: warning: {report.n_claims_without_date} of {report.n_claims} claims have no usable "
            f"claim date in {source}; published_after_claim and archived_after_claim skip them",
            file=sys.stderr,
        )
    if args.json:
        print_json(report.to_json())
    else:
        _print_table(report, args.max_rows)
    fired = [name for name in fail_on if report.fired(name)]
    if fired:
        print(f"averitec audit: --fail-on rule(s) fired: {', '.join(fired)}", file=sys.stderr)
        return 1
    return 0
