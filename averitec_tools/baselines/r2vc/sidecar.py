"""The crash-safe sidecar of a run: finished claims appended to ``<out>.partial.jsonl``.

``resume=True`` reads it back (:func:`read_sidecar`), dropping a torn last line; a
sidecar written with another configuration or output format is refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError

SIDECAR_VERSION = 1


def sidecar_path(out: str | os.PathLike[str]) -> Path:
    """Where a run writes its finished claims before the final output exists."""
    p = Path(out)
    return p.with_name(p.name + ".partial.jsonl")


def sidecar_key(claim_id: Any) -> str:
    return json.dumps(claim_id)


def read_sidecar(path: Path, header: dict[str, Any], *, what: str = "partial-run file") -> dict[str, Any]:
    """Read a partial run; drops a torn last line (truncating the file to the last good one).

    ``what`` names the file in error messages (the candidate store reuses this format).
    """
    done: dict[str, Any] = {}
    good_end = 0
    with path.open("rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    pos = 0
    for i, raw in enumerate(lines):
        end = pos + len(raw) + 1
        if not raw.strip():
            pos = end
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if i >= len(lines) - 2:  # torn last line from an interrupted write
                break
            raise UserError(f"{path}:{i + 1}: corrupt {what}", hint="delete it and rerun without --resume") from None
        if i == 0:
            if not isinstance(obj, dict) or obj.get("_r2vc_sidecar") != SIDECAR_VERSION:
                raise UserError(f"{path}:1: not an R2VC {what}", hint="delete it or choose another --out")
            if obj.get("config") != header["config"] or obj.get("format") != header["format"]:
                raise UserError(
                    f"{path}: the {what} was written with a different configuration or output format",
                    hint="rerun without --resume to start over",
                )
        else:
            if not isinstance(obj, dict) or "key" not in obj or "record" not in obj:
                raise UserError(f"{path}:{i + 1}: corrupt {what}", hint="delete it and rerun without --resume")
            done[obj["key"]] = obj["record"]
        good_end = min(end, len(data))
        pos = end
    if good_end < len(data):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
            if good_end and not data[:good_end].endswith(b"\n"):
                fh.seek(good_end)
                fh.write(b"\n")
    if good_end == 0:
        raise UserError(f"{path}: {what} has no header", hint="delete it and rerun without --resume")
    return done


__all__ = ["SIDECAR_VERSION", "read_sidecar", "sidecar_key", "sidecar_path"]
