"""Text a command prints, folded at the terminal's width (issue 39: ``doctor``, the plans and
``data download --dry-run`` printed lines of 400-800 columns).

A line longer than the width is folded at spaces, its continuation lines indented four
columns past the line's own indent; a single word longer than the width (a path, a URL, a
signature) is never cut, so it can still be copied. ``--json`` prints the full record.
The width is ``$COLUMNS`` when set, else the terminal's; output that goes to a file or a
pipe is not folded (no width to fold at; a script reads whole lines).
"""

from __future__ import annotations

import io
import shutil
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout


def terminal_width() -> int | None:
    """The width to fold at (at least 40 columns); ``None`` when stdout is no terminal and ``$COLUMNS`` is unset."""
    import os

    if not os.environ.get("COLUMNS") and not sys.stdout.isatty():
        return None
    return max(40, shutil.get_terminal_size((100, 24)).columns)


def wrap_text(text: str, *, width: int | None = None) -> str:
    """``text`` with every line longer than ``width`` folded (see the module docstring).

    Example:
        >>> print(wrap_text("  missing  GPU: none; needs one CUDA GPU with 40 GiB", width=30))
          missing  GPU: none; needs
              one CUDA GPU with 40 GiB
    """
    width = width or terminal_width()
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width or not line.strip():
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip())]
        out.append(textwrap.fill(line.strip(), width=width, initial_indent=lead, subsequent_indent=lead + "    ",
                                 break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)


@contextmanager
def wrapped_output(width: int | None = None) -> Iterator[None]:
    """What the block prints on stdout, folded by :func:`wrap_text` when the block ends."""
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        yield
    sys.stdout.write(wrap_text(buffer.getvalue(), width=width))


__all__ = ["terminal_width", "wrap_text", "wrapped_output"]
