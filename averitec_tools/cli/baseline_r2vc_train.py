"""``averitec baseline r2vc train sft|dpo``: train the R2VC generator (SFT, then DPO).

The same command as ``python -m averitec_tools.baselines.r2vc.training``; see
``docs/r2vc_training.md``. Registered under ``averitec baseline r2vc`` by
:mod:`averitec_tools.cli.baseline`.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="r2vc")
    >>> _ = add_train_subcommand(parser)
    >>> args = parser.parse_args(["train", "sft", "--data", "d.jsonl", "--out", "runs/sft"])
    >>> (args.stage, args.data, args.func.__name__)
    ('sft', 'd.jsonl', 'run_train')
"""

from __future__ import annotations

import argparse
from typing import Any


def add_train_subcommand(r2vc_parser: argparse.ArgumentParser) -> Any:
    """Add ``train {sft,dpo}`` under the ``r2vc`` parser; returns the sub-command group."""
    from averitec_tools.baselines.r2vc.training.__main__ import add_arguments

    sub = r2vc_parser.add_subparsers(dest="r2vc_command", metavar="COMMAND")
    train = sub.add_parser(
        "train",
        help="train the R2VC generator: sft (supervised) then dpo (preference)",
        description="Train the R2VC generator (Table G.1 defaults). Bad input exits 2 with one line.",
    )
    add_arguments(train)
    train.set_defaults(func=run_train)
    return sub


def run_train(args: Any) -> int:
    """Run the training stage in ``args`` (the module entry point's ``run``)."""
    from averitec_tools.baselines.r2vc.training.__main__ import run

    return run(args)


__all__ = ["add_train_subcommand", "run_train"]
