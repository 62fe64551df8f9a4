"""Writing a baseline's prediction file: every record at once, atomically, as a JSON array
or as JSON lines (each baseline's ``write_predictions(records, *, out, output_format)``
turns its records into rows and calls :func:`write_rows`).

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "p.jsonl"
    >>> write_rows([{"label": "Refuted"}, {"label": "Supported"}], out=out, json_lines=True)
    >>> out.read_text().splitlines()
    ['{"label": "Refuted"}', '{"label": "Supported"}']
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from averitec_tools.jsonio import atomic_writer


def write_rows(rows: Iterable[Any], *, out: str | os.PathLike[str], json_lines: bool) -> None:
    """Write ``rows`` to ``out`` atomically (never half-written): one per line, or an indented JSON array."""
    with atomic_writer(out) as fh:
        if json_lines:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            json.dump(list(rows), fh, ensure_ascii=False, indent=1)
            fh.write("\n")


__all__ = ["write_rows"]
