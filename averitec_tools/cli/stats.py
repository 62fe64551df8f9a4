"""``averitec stats NAME --split S``: dataset statistics.

For AVeriTeC the AVeriTeC paper's figures: claims, questions per claim, answers per
question, answer-type shares, unanswerable questions, labels, claim types and strategies
(shown next to the paper's whole-dataset numbers); label and evidence statistics for
FEVER and VitaminC and for the R2VC views.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.cli._json import print_json


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="dataset statistics (AVeriTeC paper figures, label distributions)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("name", metavar="NAME", help="dataset id (averitec, averitec/dev, fever/r2vc, ...)")
    parser.add_argument("--split", help="split (needed unless NAME includes it)")
    parser.add_argument("--data-dir", help="folder (or file) with the upstream files")
    parser.add_argument("--hub-id", help="read from this hub repository / hub-layout folder instead")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _print(stats: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    paper = stats.get("paper_whole_dataset", {})
    table = Table(title=f"{stats['dataset']} statistics")
    table.add_column("statistic")
    table.add_column("value", justify="right")
    if paper:
        table.add_column("paper (whole dataset)", justify="right")
    paper_keys = {
        "questions_per_claim": "questions_per_claim",
        "answers_per_question": "answers_per_question",
        "unanswerable_questions": "unanswerable_questions",
        "answer_types.Extractive": "extractive",
        "answer_types.Abstractive": "abstractive",
        "answer_types.Boolean": "boolean",
    }
    for key, value in stats.items():
        if key in ("dataset", "paper_whole_dataset"):
            continue
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for sub, v in items:
            name = key if sub is None else f"{key}.{sub}"
            row = [name, _fmt(v)]
            if paper:
                ref = paper.get(paper_keys.get(name, ""))
                row.append("" if ref is None else _fmt(ref))
            table.add_row(*row)
    console.print(table)


def run(args: argparse.Namespace) -> int:
    from averitec_tools.loaders import dataset_stats

    stats = dataset_stats(args.name, split=args.split, data_dir=args.data_dir, hub_id=args.hub_id)
    if args.json:
        print_json(stats)
    else:
        _print(stats)
    return 0
