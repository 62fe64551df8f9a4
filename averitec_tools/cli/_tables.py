"""Terminal tables that stay readable in an 80-column terminal: no number is ever cut.

rich shrinks every column of a table wider than the terminal and ends cut cells with
``…``, so a score became ``0.…``. Here numeric columns never wrap or shrink, text columns
wrap (long words fold), and a table that still cannot fit (many columns, as a leaderboard)
is printed as one block of ``header  value`` lines per row instead.

Example:
    >>> from rich.console import Console
    >>> console = Console(width=40, force_terminal=False, color_system=None)
    >>> print_rows(title="t", header=["metric", "value"], rows=[["questions answers", "0.2128"]],
    ...            console=console)  # doctest: +NORMALIZE_WHITESPACE
                  t
    ┏━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┓
    ┃ metric            ┃  value ┃
    ┡━━━━━━━━━━━━━━━━━━━╇━━━━━━━━┩
    │ questions answers │ 0.2128 │
    └───────────────────┴────────┘
    >>> print_rows(title="t", header=["name", "score", "95% CI"], rows=[["a", "0.16", "[0.06, 0.26]"]],
    ...            console=Console(width=20, color_system=None))
    t
    name    a
    score   0.16
    95% CI  [0.06, 0.26]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: A cell that reads as a number, a percentage or an interval of them ("0.1600", "12.3%", "[0.06, 0.26]").
_NUMERIC = re.compile(r"^\s*[\[(]?\s*[-+]?(\d[\d,]*(\.\d*)?|\.\d+|nan|inf)(e[-+]?\d+)?%?"
                      r"(\s*,\s*[-+]?(\d[\d,]*(\.\d*)?|\.\d+|nan|inf)(e[-+]?\d+)?%?)*\s*[\])]?\s*$", re.I)


def is_numeric_column(cells: Sequence[str]) -> bool:
    """Whether every non-empty cell of a column is a number (or an interval of numbers).

    Example:
        >>> is_numeric_column(["0.5", "", "[0.1, 0.9]"]), is_numeric_column(["0.5", "bm25"])
        (True, False)
    """
    filled = [c for c in cells if c.strip()]
    return bool(filled) and all(_NUMERIC.match(c) for c in filled)


def _min_width(header: Sequence[str], columns: Sequence[Sequence[str]], numeric: Sequence[bool]) -> int:
    """Terminal columns the table needs: numbers whole, text at its longest word (up to 16)."""
    total = 1  # the left border; each column adds its padding (2) and a separator (1)
    for name, cells, is_number in zip(header, columns, numeric, strict=True):
        if is_number:
            width = max([len(name), *(len(c) for c in cells)])
        else:
            width = min(16, max((len(w) for c in (name, *cells) for w in c.split()), default=1))
        total += width + 3
    return total


def print_rows(
    *,
    title: str,
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    caption: str | None = None,
    console: Any | None = None,
) -> None:
    """Print ``rows`` (strings, printed as they are: no rich markup) under ``header``.

    Numeric columns are right-aligned at their full width; text columns wrap. If the
    table cannot fit the terminal that way, each row becomes a block of lines.
    ``caption`` (notes on the rows) is printed below.
    """
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    numeric = [is_numeric_column(cells) for cells in columns]
    table = Table(title=title)
    for name, cells, is_number in zip(header, columns, numeric, strict=True):
        if is_number:
            width = max([len(name), *(len(c) for c in cells)])
            table.add_column(Text(name), justify="right", no_wrap=True, min_width=width)
        else:
            table.add_column(Text(name), overflow="fold")
    for row in rows:
        table.add_row(*(Text(c) for c in row))
    if _min_width(header, columns, numeric) <= console.width:
        console.print(table)
        if caption:  # below the table at the terminal's width (a rich caption wraps at the table's)
            console.print(Text(caption))
        return
    pad = max((len(h) for h in header), default=0) + 2
    console.print(Text(title, style="bold"))
    for i, row in enumerate(rows):
        if i:
            console.print()
        for name, cell in zip(header, row, strict=True):
            console.print(Text(f"{name:<{pad}}{cell}".rstrip()))
    if caption:
        console.print(Text(caption))


__all__ = ["print_rows"]
