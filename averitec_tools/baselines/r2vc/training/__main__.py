"""Command line for R2VC generator training.

Usage::

    python -m averitec_tools.baselines.r2vc.training sft --config sft.yaml \\
        --data vitaminc_train.jsonl --out runs/sft
    python -m averitec_tools.baselines.r2vc.training dpo --config dpo.yaml \\
        --data vitaminc_train.jsonl --model runs/sft --out runs/dpo

``--config`` is optional (Table G.1 defaults); ``--model``, ``--max-steps`` and
``--limit`` override the file. ``--json`` prints one JSON object (the run report) on
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


def run(args: argparse.Namespace) -> int:
    """Run the stage selected in ``args``; returns the exit code."""
    from pathlib import Path

    from averitec_tools.baselines.r2vc.training.data import read_training_rows

    settings = _settings(args)
    out = Path(args.out)
    if out.exists() and not args.overwrite:
        raise UserError(f"{out}: output directory already exists", hint="pass --overwrite or another --out")
    rows = read_training_rows(args.data, limit=settings.limit)
    # Trainers print their logs on stdout; keep stdout for the report (--json: one object).
    with contextlib.redirect_stdout(sys.stderr):
        if args.stage == "sft":
            from averitec_tools.baselines.r2vc.training.sft import train_sft

            report, _ = train_sft(settings=settings, rows=rows, output_dir=out, overwrite=args.overwrite)
        else:
            from averitec_tools.baselines.r2vc.training.dpo import train_dpo

            report, _ = train_dpo(settings=settings, rows=rows, output_dir=out, overwrite=args.overwrite)
    summary = report.to_json()
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
