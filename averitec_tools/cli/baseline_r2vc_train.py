"""``averitec baseline r2vc train sft|dpo``: train the R2VC generator (SFT, then DPO).

Usage::

    averitec baseline r2vc train sft --config sft.yaml --data vitaminc_train.jsonl --out runs/sft
    averitec baseline r2vc train dpo --config dpo.yaml --data vitaminc_train.jsonl --model runs/sft --out runs/dpo

(``python -m averitec_tools.baselines.r2vc.training sft|dpo ...`` is the same command.)
``--config`` is optional (Table G.1 defaults); ``--model``, ``--max-steps`` and
``--limit`` override the file. By default only ``train``-split rows are used
(``--all-splits`` keeps every split, the paper's recipe, with a warning);
``--exclude-claims FILE`` (repeatable) drops rows whose claim appears in FILE
(:mod:`averitec_tools.baselines.r2vc.training.run`). ``--json`` prints one JSON object
(the run report) on stdout. Bad input exits 2 with one line on stderr. See
``docs/r2vc_training.md``; registered under ``averitec baseline r2vc`` by
:mod:`averitec_tools.cli.baseline`.

Example:
    >>> parser = argparse.ArgumentParser(prog="r2vc")
    >>> _ = add_train_subcommand(parser)
    >>> args = parser.parse_args(["train", "sft", "--data", "d.jsonl", "--out", "runs/sft"])
    >>> (args.stage, args.data, args.func.__name__)
    ('sft', 'd.jsonl', 'run_train')
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from averitec_tools.argtypes import POSITIVE
from averitec_tools.baselines.r2vc.training.run import STAGES
from averitec_tools.cli._command import add_allow_cpu_flag
from averitec_tools.cli.main import run_command
from averitec_tools.errors import UserError

PROG = "averitec baseline r2vc train"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the training arguments (stage, config, data, output, overrides) to ``parser``."""
    parser.add_argument("stage", choices=STAGES, help="training stage: sft or dpo")
    parser.add_argument("--config", help="YAML settings (flat, or under an sft:/dpo: key)")
    parser.add_argument(
        "--data", required=True, help="JSONL/JSON rows {claim, evidence_text, label[, title]}"
    )
    parser.add_argument("--out", required=True, help="output directory for the trained model")
    parser.add_argument("--model", help="model id or directory (overrides the config)")
    parser.add_argument("--max-steps", type=POSITIVE, help="stop after N optimizer steps")
    parser.add_argument("--limit", type=POSITIVE, help="use only the first N data rows")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    parser.add_argument("--all-splits", action="store_true",
                        help="keep rows of every split (the paper's SFT recipe; contaminates VitaminC "
                        "dev/test evaluation and calibration slices drawn from them)")
    parser.add_argument("--exclude-claims", action="append", default=[], metavar="FILE",
                        help="drop rows whose claim appears in FILE (JSON/JSONL with 'claim'); repeatable")
    parser.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    add_allow_cpu_flag(parser)


def add_train_subcommand(r2vc_parser: argparse.ArgumentParser) -> Any:
    """Add ``train {sft,dpo}`` under the ``r2vc`` parser; returns the sub-command group."""
    sub = r2vc_parser.add_subparsers(dest="r2vc_command", metavar="COMMAND")
    train = sub.add_parser(
        "train",
        help="train the R2VC generator: sft (supervised) then dpo (preference)",
        description="Train the R2VC generator (Table G.1 defaults). Bad input exits 2 with one line.",
    )
    add_arguments(train)
    train.set_defaults(func=run_train)
    return sub


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


def run_train(args: argparse.Namespace) -> int:
    """Run the training stage selected in ``args`` and print its report; returns the exit code."""
    from averitec_tools.baselines.r2vc.training.run import train_stage
    from averitec_tools.doctor import TARGETS, refuse_cpu

    settings = _settings(args)
    refuse_cpu(what=f"r2vc train {args.stage}", models=[settings.model], allow_cpu=getattr(args, "allow_cpu", False),
               gpu=TARGETS.get("r2vc-paper").gpu_text, target="r2vc-paper")
    summary = train_stage(stage=args.stage, settings=settings, data=args.data, out=args.out,
                          config=args.config, overwrite=args.overwrite,
                          all_splits=getattr(args, "all_splits", False),
                          exclude_claims=getattr(args, "exclude_claims", []))
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
    """``averitec baseline r2vc train`` alone: parse ``argv`` and run; bad input →
    one line on stderr and exit code 2."""
    parser = argparse.ArgumentParser(prog=PROG, description="Train the R2VC generator (SFT, DPO).")
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(f"{PROG} {args.stage}", run_train, args)


__all__ = ["add_train_subcommand", "main", "run_train"]
