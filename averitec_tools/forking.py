"""When this process may fork helper processes (the METEOR scorer's pools and warm helpers).

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
import sys
from collections.abc import Mapping
from typing import Any

#: Modules whose presence means a Java VM runs in this process.
JVM_MODULES = ("jnius",)


def fork_is_safe(*, modules: Mapping[str, Any] | None = None) -> bool:
    """True where ``os.fork`` exists and no Java VM was started in this process."""
    loaded = sys.modules if modules is None else modules
    return hasattr(os, "fork") and not any(name in loaded for name in JVM_MODULES)


__all__ = ["fork_is_safe"]
