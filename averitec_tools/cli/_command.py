"""The shapes every subcommand shares: its registration, ``--json``, a dataset, its output.

A subcommand module's ``add_parser(subparsers)`` calls :func:`add_command` with its own
docstring, so ``averitec X --help`` shows the module docstring after its first paragraph.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from averitec_tools.jsonio import print_json

JSON_HELP = "print one JSON object on stdout"


def add_command(subparsers: Any, name: str, *, help: str, doc: str | None,
                func: Callable[..., int] | None = None) -> argparse.ArgumentParser:
    """Register subcommand ``name`` (``func`` runs it) described by ``doc`` after its first paragraph."""
    parser = subparsers.add_parser(
        name,
        help=help,
        description=doc.split("\n\n", 1)[1] if doc else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if func is not None:
        parser.set_defaults(func=func)
    return parser


def add_json_flag(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--json``: the one JSON object on stdout every command can print instead of text."""
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


def add_allow_cpu_flag(parser: argparse.ArgumentParser) -> None:
    """``--allow-cpu``: run paper-scale models without a CUDA GPU (refused by default: :func:`~averitec_tools.doctor.refuse_cpu`)."""
    parser.add_argument("--allow-cpu", action="store_true",
                        help="run paper-scale models on CPU anyway (refused by default without a CUDA GPU)")


def add_dataset_arguments(parser: argparse.ArgumentParser, *, examples: str) -> None:
    """NAME, ``--split``, ``--data-dir``, ``--hub-id`` and ``--revision``: a dataset split as the loaders read it."""
    parser.add_argument("name", metavar="NAME", help=f"dataset id ({examples}, ...)")
    parser.add_argument("--split", help="split (needed unless NAME includes it)")
    parser.add_argument("--data-dir", help="folder (or file) with the upstream files")
    parser.add_argument("--hub-id", help="read from this hub repository / hub-layout folder instead")
    parser.add_argument("--revision", help="hub commit (or branch, tag) of what is fetched; default: the catalogue's "
                        "pinned commit; a local file of another commit is refused")


def silence_progress_bars() -> None:
    """No progress bars from the libraries a command loads (Hugging Face hub, transformers'
    "Loading weights", datasets): for ``--json`` runs and runs without a terminal, whose
    stderr is read by a program. Set before they are imported; switched off if they were."""
    import os
    import sys

    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    os.environ["HF_DATASETS_DISABLE_PROGRESS_BARS"] = "1"
    import importlib

    if "huggingface_hub" in sys.modules:
        importlib.import_module("huggingface_hub.utils").disable_progress_bars()
    if "transformers" in sys.modules:
        importlib.import_module("transformers.utils.logging").disable_progress_bar()


def emit(args: argparse.Namespace, result: Any, text: str) -> int:
    """Print ``result`` as the one JSON object under ``--json``, else the line ``text``; exit 0."""
    if args.json:
        print_json(result)
    else:
        print(text)
    return 0
