"""When this process may fork helper processes (the METEOR scorer's pools and warm helpers), and
the signals that end a command or its helpers.

A process that has started a Java VM (pyserini, through pyjnius) must not fork: the JVM's
own threads hold locks that the child inherits taken, and the forked helper blocks on the
first of them forever (seen in a test process that had run the pyserini tests before a
parallel METEOR score). Such a process scores in one process instead: the same figures,
computed serially.

Example:
    >>> import sys
    >>> fork_is_safe(modules={"numpy": sys})
    True
    >>> fork_is_safe(modules={"jnius": sys})
    False
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

#: Modules whose presence means a Java VM runs in this process.
JVM_MODULES = ("jnius",)


def fork_is_safe(*, modules: Mapping[str, Any] | None = None) -> bool:
    """True where ``os.fork`` exists and no Java VM was started in this process."""
    loaded = sys.modules if modules is None else modules
    return hasattr(os, "fork") and not any(name in loaded for name in JVM_MODULES)


def termination_signals() -> tuple[signal.Signals, ...]:
    """The signals that ask a command to stop: SIGTERM, and SIGHUP where the platform has it.

    Example:
        >>> signal.SIGTERM in termination_signals()
        True
    """
    hangup = getattr(signal, "SIGHUP", None)
    return (signal.SIGTERM,) if hangup is None else (signal.SIGTERM, hangup)


def default_termination_handlers() -> None:
    """Give a forked pool helper the default action for :func:`termination_signals` (it dies at
    once; ``Pool.terminate`` sends SIGTERM). A command's own handler, inherited through fork, would
    raise in the helper instead, and a helper waiting for the task queue's lock (which
    ``terminate`` holds) then outlived its pool and hung the caller's exit from the pool (seen
    once in a test run)."""
    for sig in termination_signals():
        signal.signal(sig, signal.SIG_DFL)


__all__ = ["default_termination_handlers", "fork_is_safe", "termination_signals"]
