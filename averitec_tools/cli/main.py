"""Entry point of the ``averitec`` command.

Each subcommand is a module in this package exposing ``add_parser(subparsers)``, which
registers an ``argparse`` sub-parser and sets ``func`` (a callable taking the parsed
namespace and returning an exit code). Subcommand modules must import nothing heavy at
module level, so that ``averitec score`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.errors import UserError

#: Subcommand modules, in the order they are listed in ``averitec --help``.
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "score",
    "convert",
    "compare",
    "judge_agreement",
    "meta_eval",
    "lite_check",
    "calibration",
    "stats",
    "export_hf",
    "data",
    "audit",
    "baseline",
    "index",
    "doctor",
    "leaderboard",
)


#: Commands whose module registers them alone, under the module's name: ``averitec score``
#: (the one a scoring loop starts many times) builds only its own parser.
_SINGLE_COMMAND_MODULES = frozenset({"score"})


def build_parser(*, only: str | None = None) -> argparse.ArgumentParser:
    """The ``averitec`` parser; ``only``: with the sub-parser of that one subcommand module (start-up
    time: ``averitec score`` need not import every other command's module)."""
    parser = argparse.ArgumentParser(
        prog="averitec",
        description="Load, score, audit and reproduce fact-checking benchmarks.",
    )
    parser.add_argument("--version", action="version", version=f"averitec-tools {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in SUBCOMMAND_MODULES if only is None else (only,):
        try:
            module = importlib.import_module(f"averitec_tools.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"averitec_tools.cli.{name}":
                continue  # subcommand not built yet
            raise
        module.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 a ``--fail-on`` rule hit, 2 bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # a command that is its module's name needs only that module (others' errors and help stay full)
    only = argv[0] if argv and argv[0] in _SINGLE_COMMAND_MODULES else None
    args = build_parser(only=only).parse_args(argv)
    return run_command(f"averitec {args.command}", args.func, args)


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: raised in the main thread so that every ``finally`` runs
    (an atomic writer removes its temporary file) before the command exits 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def _on_signals() -> dict[int, Any]:
    """Install :class:`Terminated` for SIGTERM and SIGHUP (main thread only); the old handlers."""
    import signal
    import threading

    from averitec_tools.forking import termination_signals

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {int(sig): signal.signal(sig, _raise_terminated) for sig in termination_signals()}


def run_command(label: str, func: Callable[[argparse.Namespace], int | None], args: argparse.Namespace) -> int:
    """``func(args)`` as a command: bad input (and a failed write) is one line on stderr
    starting with ``label``, exit code 2; Ctrl-C exits 130, SIGTERM/SIGHUP 128 + the signal,
    in both cases after partial outputs are removed; a closed stdout pipe ends quietly."""
    import signal

    old = _on_signals()
    try:
        code = func(args)
    except UserError as exc:
        print(f"{label}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print(f"{label}: interrupted", file=sys.stderr)
        return 130
    except Terminated as exc:
        print(f"{label}: terminated by signal {exc.signum}; partial outputs removed", file=sys.stderr)
        return 128 + exc.signum
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as exc:  # a write the output checks could not foresee (disk full, ...)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{label}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
    try:
        sys.stdout.flush()  # `averitec score ... | head`: a closed pipe ends quietly
    except BrokenPipeError:
        _silence_stdout()
    return int(code or 0)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot complain."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # pragma: no cover - stdout replaced (tests) or closed
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
