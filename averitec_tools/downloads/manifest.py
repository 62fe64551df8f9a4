"""The manifest of what was fetched: ``<out>/averitec-data-manifest.json``.

One entry per source key: repository, revision and the commit it resolved to, when, with
which package version, and per file its destination, size, sha256, the checksum it was
checked against and the verdict (``verified`` against a checksum recorded in the package,
or ``unverified`` with the sha256 recorded here on first download, which later downloads
must then match), plus what unpacking wrote. Written atomically after every file, so an
interrupted run keeps the record of what did finish.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> update(root, "demo/dev", {"name": "demo", "files": [{"path": "dev.json", "sha256": "ab"}]})
    >>> load(root)["sources"]["demo/dev"]["files"][0]["sha256"]
    'ab'
    >>> recorded_sha256(root, repo="x/y", path="dev.json") is None
    True
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer

MANIFEST_NAME = "averitec-data-manifest.json"
FORMAT = 1


def path_of(root: str | os.PathLike[str]) -> Path:
    return Path(root) / MANIFEST_NAME


def load(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The manifest under ``root`` (an empty one when there is none).

    Raises:
        UserError: the file exists but is not a manifest.
    """
    path = path_of(root)
    if not path.is_file():
        return {"format": FORMAT, "sources": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: unreadable download manifest: {exc}", hint="move it away to start a new one") from None
    if not isinstance(data, dict) or not isinstance(data.get("sources"), dict):
        raise UserError(f"{path}: not a download manifest (no 'sources' object)")
    return data


def update(root: str | os.PathLike[str], key: str, entry: dict[str, Any]) -> None:
    """Record (replace) the entry of source ``key``."""
    data = load(root)
    data["format"] = FORMAT
    data["sources"][key] = {**entry, "package_version": __version__}
    with atomic_writer(path_of(root)) as fh:
        json.dump(data, fh, indent=1, ensure_ascii=False)
        fh.write("\n")


def recorded_sha256(root: str | os.PathLike[str], *, repo: str, path: str) -> dict[str, Any] | None:
    """The manifest's record of ``repo``/``path`` from an earlier download (any source key), if any."""
    for entry in load(root)["sources"].values():
        if entry.get("repo") != repo:
            continue
        for f in entry.get("files", []):
            if f.get("path") == path and f.get("sha256"):
                return {**f, "fetched_at": entry.get("fetched_at")}
    return None



def entry(report: Any, *, complete: bool, from_dir: Path | None) -> dict[str, Any]:
    """The manifest entry of a :class:`~averitec_tools.downloads.fetch.DownloadReport` (``complete``: every file done)."""
    src = report.plan.source
    commits = sorted({f.commit for f in report.files if f.commit})
    return {
        "name": src.name, "split": src.split, "title": src.title, "license": src.license,
        "repo": src.hub.repo_id if src.hub else None, "repo_type": src.hub.repo_type if src.hub else None,
        "revision": src.hub.revision if src.hub else None, "commit": commits[0] if len(commits) == 1 else commits or None,
        "from": str(from_dir) if from_dir else "hub",
        "fetched_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
        "dest": str(report.plan.out / src.dest), "complete": complete,
        "status": "verified" if report.verified else "unverified",
        "files": [f.to_dict() for f in report.files],
        "unpacked": None if report.unpacked is None else dict(report.unpacked.__dict__),
    }

__all__ = ["FORMAT", "entry", "load", "path_of", "recorded_sha256", "update"]
