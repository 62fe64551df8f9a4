"""``averitec stats NAME --split S``: dataset statistics.

For AVeriTeC the AVeriTeC paper's figures: claims, questions per claim, answers per
question, answer-type shares, unanswerable questions, labels, claim types and strategies
(shown next to the paper's whole-dataset numbers); label and evidence statistics for
FEVER and VitaminC and for the R2VC views.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.cli._command import add_command, add_dataset_arguments, add_json_flag
from averitec_tools.jsonio import print_json


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "stats", doc=__doc__, func=run,
                         help="dataset statistics (AVeriTeC paper figures, label distributions)")
    add_dataset_arguments(parser, examples="averitec, averitec/dev, fever/r2vc")
    add_json_flag(parser)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return " .. ".join(map(str, value)) if len(value) == 2 else ", ".join(map(str, value))
    return str(value)


#: stats key -> key of the paper's whole-dataset figure shown beside it
_PAPER_KEYS = {
    "questions_per_claim": "questions_per_claim",
    "answers_per_question": "answers_per_question",
    "unanswerable_questions": "unanswerable_questions",
    "answer_types.Extractive": "extractive",
    "answer_types.Abstractive": "abstractive",
    "answer_types.Boolean": "boolean",
}


def _print(stats: dict[str, Any]) -> None:
    from averitec_tools.cli._tables import print_rows

    paper = stats.get("paper_whole_dataset", {})
    rows: list[list[str]] = []
    notes = []
    for key, value in stats.items():
        if key in ("dataset", "paper_whole_dataset", "source"):
            continue
        if isinstance(value, dict):  # a group: its name, then its entries indented
            rows.append([key, "", ""])
            items = [(f"  {sub}", f"{key}.{sub}", v) for sub, v in value.items()]
        elif isinstance(value, int | float):
            items = [(key, key, value)]
        else:  # the split, the claim date range: beside the title, not in a number column
            notes.append(f"{key}: {_fmt(value)}")
            continue
        for label, name, v in items:
            ref = paper.get(_PAPER_KEYS.get(name, ""))
            rows.append([label, _fmt(v), "" if ref is None else _fmt(ref)])
    header = ["statistic", "value", "paper"]
    if not paper:
        header, rows = header[:2], [r[:2] for r in rows]
    title = f"{stats['dataset']} statistics"
    if "source" in stats:
        notes.append(f"data: {stats['source']['data']}")
    caption = "; ".join(notes)
    if paper:
        caption += ("; " if caption else "") + "paper: the AVeriTeC paper's figures for the whole dataset"
    print_rows(title=title, header=header, rows=rows, caption=caption or None)


def run(args: argparse.Namespace) -> int:
    from averitec_tools.loaders import dataset_stats

    stats = dataset_stats(args.name, split=args.split, data_dir=args.data_dir, hub_id=args.hub_id,
                          revision=args.revision)
    if args.json:
        print_json(stats)
    else:
        _print(stats)
    return 0
