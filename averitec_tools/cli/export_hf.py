"""``averitec export-hf NAME --split S --out DIR``: a folder ``datasets.load_dataset(DIR)`` reads.

Writes parquet shards under DIR/data/ and a dataset card DIR/README.md (YAML configs,
features, license, citation). Exporting more splits of the same dataset into DIR adds
them to the card. Files are written atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from averitec_tools.cli._command import add_command, add_dataset_arguments, add_json_flag


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "export-hf", doc=__doc__, func=run,
                         help="export a dataset split as parquet + dataset card for datasets.load_dataset")
    add_dataset_arguments(parser, examples="averitec, fever/paper_dev, vitaminc/r2vc")
    parser.add_argument("--wiki-dir", help="FEVER only: wiki-pages folder to fill in evidence sentences")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    from averitec_tools.loaders.export import export_hf

    if args.json or not sys.stderr.isatty():  # progress bars only on a terminal
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
    result = export_hf(
        args.name, split=args.split, out_dir=args.out, data_dir=args.data_dir, hub_id=args.hub_id, wiki_dir=args.wiki_dir
    )
    if args.json:
        json.dump(
            {
                "dataset": result.dataset,
                "split": result.split,
                "n_rows": result.n_rows,
                "out_dir": result.out_dir,
                "shards": list(result.shards),
                "card": result.card,
            },
            sys.stdout,
        )
        sys.stdout.write("\n")
    else:
        print(f"wrote {result.n_rows} rows of {result.dataset} ({result.split}) to {result.out_dir}: "
              f"{len(result.shards)} shard(s) + README.md; load with datasets.load_dataset({result.out_dir!r})")
    return 0
