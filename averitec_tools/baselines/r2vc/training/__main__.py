"""Command line for R2VC generator training.

Usage::

    python -m averitec_tools.baselines.r2vc.training sft --config sft.yaml \\
        --data vitaminc_train.jsonl --out runs/sft
    python -m averitec_tools.baselines.r2vc.training dpo --config dpo.yaml \\
        --data vitaminc_train.jsonl --model runs/sft --out runs/dpo

``--config`` is optional (Table G.1 defaults); ``--model``, ``--max-steps`` and
``--limit`` override the file.

Split safety: the paper fine-tunes SFT on *all* VitaminC splits, which puts the VitaminC
dev/test claims — and any calibration slice drawn from them — into the generator's
training data. By default rows whose ``split`` field is not ``train`` are dropped
(counted as ``dropped_split``); ``--all-splits`` keeps them (the paper's recipe) with a
warning. ``--exclude-claims FILE`` (repeatable) drops rows whose claim appears in FILE
(e.g. the calibration slice), counted as ``dropped_excluded``. ``--json`` prints one JSON object (the run report) on
stdout. Bad input exits 2 with one line on stderr.

:func:`add_arguments` and :func:`run` let another CLI (``averitec baseline``) reuse
this command.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Sequence
from typing import Any

from averitec_tools.errors import UserError

STAGES: tuple[str, ...] = ("sft", "dpo")
PROG = "python -m averitec_tools.baselines.r2vc.training"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the training arguments (stage, config, data, output, overrides) to ``parser``."""
    parser.add_argument("stage", choices=STAGES, help="training stage: sft or dpo")
    parser.add_argument("--config", help="YAML settings (flat, or under an sft:/dpo: key)")
    parser.add_argument(
        "--data", required=True, help="JSONL/JSON rows {claim, evidence_text, label[, title]}"
    )
    parser.add_argument("--out", required=True, help="output directory for the trained model")
    parser.add_argument("--model", help="model id or directory (overrides the config)")
    parser.add_argument("--max-steps", type=int, help="stop after N optimizer steps")
    parser.add_argument("--limit", type=int, help="use only the first N data rows")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--all-splits", action="store_true",
                        help="keep rows of every split (the paper's SFT recipe; contaminates VitaminC "
                        "dev/test evaluation and calibration slices drawn from them)")
    parser.add_argument("--exclude-claims", action="append", default=[], metavar="FILE",
                        help="drop rows whose claim appears in FILE (JSON/JSONL with 'claim'); repeatable")
    parser.add_argument("--json", action="store_true", help="print the run report as one JSON object")


def _settings(args: argparse.Namespace) -> Any:
    from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings

    cls = SFTSettings if args.stage == "sft" else DPOSettings
    settings = cls.from_yaml(args.config) if args.config else cls()
    overrides: dict[str, Any] = {}
    if args.model:
        overrides["model"] = args.model
    if args.max_steps is not None:
        if args.max_steps < 1:
            raise UserError(f"--max-steps must be >= 1, got {args.max_steps}")
        overrides["max_steps"] = args.max_steps
    if args.limit is not None:
        if args.limit < 1:
            raise UserError(f"--limit must be >= 1, got {args.limit}")
        overrides["limit"] = args.limit
    return dataclasses.replace(settings, **overrides) if overrides else settings


def split_safe_rows(rows: list[Any], *, data: str, all_splits: bool, exclude: Sequence[str]) -> tuple[list[Any], dict[str, int]]:
    """Drop non-train rows (unless ``all_splits``) and rows whose claim is in ``exclude`` files.

    Returns the kept rows and ``{"dropped_split": n, "dropped_excluded": m}``.
    """
    from averitec_tools.jsonio import iter_records

    splits = [loc.value.get("split") if isinstance(loc.value, dict) else None
              for _, loc in zip(rows, iter_records(data), strict=False)]
    other = sorted({str(s) for s in splits if s is not None and str(s) != "train"})
    if other and all_splits:
        print(f"warning: {data}: training on splits {', '.join(other)} besides train (--all-splits, the "
              "paper's SFT recipe) contaminates VitaminC evaluation on those splits and any calibration "
              "slice drawn from them", file=sys.stderr)
    excluded: set[str] = set()
    for path in exclude:
        for loc in iter_records(path):
            if isinstance(loc.value, dict) and isinstance(loc.value.get("claim"), str):
                excluded.add(loc.value["claim"].strip())
    kept, n_split, n_excl = [], 0, 0
    for row, split in zip(rows, splits, strict=True):
        if not all_splits and split is not None and str(split) != "train":
            n_split += 1
        elif row.claim.strip() in excluded:
            n_excl += 1
        else:
            kept.append(row)
    return kept, {"dropped_split": n_split, "dropped_excluded": n_excl}


def run(args: argparse.Namespace) -> int:
    """Run the stage selected in ``args``; returns the exit code."""
    from pathlib import Path

    from averitec_tools.baselines.r2vc.training.data import read_training_rows

    settings = _settings(args)
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise UserError(f"{out}: output directory already exists", hint="pass --overwrite or another --out")
    rows = read_training_rows(args.data, limit=settings.limit)
    rows, dropped = split_safe_rows(rows, data=args.data, all_splits=getattr(args, "all_splits", False),
                                    exclude=getattr(args, "exclude_claims", []))
    if not rows:
        raise UserError(f"{args.data}: no training rows left after the split filter",
                        hint="pass --all-splits to keep every split")
    from averitec_tools.baselines.r2vc.manifest import run_manifest

    excludes = {f"exclude_claims[{i}]": path for i, path in enumerate(getattr(args, "exclude_claims", []))}
    seeds = {"seed": settings.seed, **({"pair_seed": settings.pair_seed} if hasattr(settings, "pair_seed") else {})}
    manifest = run_manifest(data={"data": args.data, "config": args.config, **excludes}, seeds=seeds)
    # Trainers print their logs on stdout; keep stdout for the report (--json: one object).
    with contextlib.redirect_stdout(sys.stderr):
        if args.stage == "sft":
            from averitec_tools.baselines.r2vc.training.sft import train_sft

            report, _ = train_sft(settings=settings, rows=rows, output_dir=out, overwrite=args.overwrite,
                                  manifest=manifest)
        else:
            from averitec_tools.baselines.r2vc.training.dpo import train_dpo

            report, _ = train_dpo(settings=settings, rows=rows, output_dir=out, overwrite=args.overwrite,
                                  manifest=manifest)
    summary = report.to_json() | dropped
    if args.json:
        print(json.dumps(summary))
    else:
        loss = "n/a" if summary["final_loss"] is None else f"{summary['final_loss']:.4f}"
        print(
            f"{summary['stage']}: {summary['global_steps']} steps on {summary['n_examples']} examples "
            f"({summary['device']}), final loss {loss}; saved to {summary['output_dir']}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run; bad input → one line on stderr and exit code 2."""
    parser = argparse.ArgumentParser(prog=PROG, description="Train the R2VC generator (SFT, DPO).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UserError as exc:
        print(f"{PROG} {args.stage}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{PROG} {args.stage}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
