"""Run a command-line ``main`` the way a shell sees it: its exit code, whether it returned one
or argparse ended it (a range-checked option is argparse's usage error, exit 2, before any work)."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def exit_code(main: Callable[[list[str]], int], argv: Sequence[str]) -> int:
    """``main(argv)``'s return value, or the code of the ``SystemExit`` argparse raised."""
    try:
        return main(list(argv))
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 1


def usage_error(err: str) -> str:
    """The last line of an argparse usage error, checked to be one (no traceback)."""
    assert "Traceback" not in err and err.startswith("usage:"), err
    return err.strip().splitlines()[-1]
