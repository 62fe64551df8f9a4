"""``averitec export-hf NAME --split S --out DIR [--push-to-hub OWNER/NAME]``: a folder
``datasets.load_dataset(DIR)`` reads, with every ``datasets`` release from 2.19 on.

Writes parquet shards under DIR/data/ (images embedded) and a dataset card DIR/README.md
(YAML configs, features, license, citation, the source commit of each split). Exporting more
splits of the same dataset into DIR adds them to the card. Files are written atomically.
``--push-to-hub`` then uploads DIR to that hub dataset repository (one commit, whose id is
printed).
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
    parser.add_argument("--push-to-hub", metavar="OWNER/NAME",
                        help="then upload the export to this hub dataset repository (created if missing)")
    parser.add_argument("--private", action="store_true", help="with --push-to-hub: create the repository private")
    add_json_flag(parser)


def run(args: argparse.Namespace) -> int:
    if args.push_to_hub is not None:  # checked before any work (and before importing datasets)
        from averitec_tools.loaders.push import check_can_push, check_repo_id

        check_repo_id(args.push_to_hub)
        check_can_push()
    from averitec_tools.loaders.export import export_hf

    if args.json or not sys.stderr.isatty():  # progress bars only on a terminal
        from datasets.utils.logging import disable_progress_bar

        disable_progress_bar()
    result = export_hf(
        args.name, split=args.split, out_dir=args.out, data_dir=args.data_dir, hub_id=args.hub_id,
        wiki_dir=args.wiki_dir, revision=args.revision,
    )
    pushed = None
    if args.push_to_hub is not None:
        from averitec_tools.loaders.push import push_export

        pushed = push_export(result.out_dir, repo_id=args.push_to_hub, private=args.private,
                             message=f"averitec export-hf {result.dataset} ({result.split}, from {result.source})")
    if args.json:
        json.dump(
            {
                "dataset": result.dataset,
                "split": result.split,
                "n_rows": result.n_rows,
                "out_dir": result.out_dir,
                "shards": list(result.shards),
                "card": result.card,
                "source": result.source,
                "pushed": None if pushed is None else {"repo": pushed.repo_id, "commit": pushed.commit,
                                                       "url": pushed.url},
            },
            sys.stdout,
        )
        sys.stdout.write("\n")
    else:
        print(f"wrote {result.n_rows} rows of {result.dataset} ({result.split}) to {result.out_dir}: "
              f"{len(result.shards)} shard(s) + README.md; load with datasets.load_dataset({result.out_dir!r})")
        if pushed is not None:
            print(f"pushed to {pushed.repo_id} at commit {pushed.commit} ({pushed.url}); "
                  f"load with datasets.load_dataset({pushed.repo_id!r}, revision={pushed.commit!r})")
    return 0
