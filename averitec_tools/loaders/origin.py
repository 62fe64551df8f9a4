"""Where a split is read from, decided once: a local file, a download made now, or the hub.

:func:`find_origin` looks, in order, at ``hub_id``; ``data_dir``; ``$AVERITEC_DATA_DIR`` and
the download root (:mod:`~averitec_tools.loaders.locate`); a verified download of the
official file at the catalogue's pinned revision, made now
(:mod:`~averitec_tools.loaders.auto_download`); the family's default hub repository. The
:class:`Origin` it returns reads the records and says which bytes they are
(:class:`~averitec_tools.loaders.provenance.Provenance`). ``revision`` applies to what is
fetched; a local file known (from the download manifest or the catalogue's checksums) to hold
another commit than the one asked for is refused rather than read as if it were that commit.

Example:
    >>> import json, pathlib, tempfile
    >>> import averitec_tools.loaders  # registers the families
    >>> from averitec_tools.loaders.base import FAMILIES
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "dev.json").write_text("[]")
    >>> o = find_origin(FAMILIES.get("averitec"), "dev", data_dir=d)
    >>> o.path.name, o.provenance.origin, list(o.records())
    ('dev.json', 'local', [])
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.loaders.base import DatasetFamily, find_local_file, iter_hub_records
from averitec_tools.loaders.provenance import Provenance, file_provenance, hub_provenance

PathArg = str | os.PathLike[str] | None


@dataclass(frozen=True)
class Origin:
    """A split's source: a local upstream file (``path``) or a hub repository / hub-layout folder (``hub``)."""

    family: DatasetFamily
    split: str
    provenance: Provenance
    path: Path | None = None
    hub: str | None = None
    revision: str | None = None

    def records(self) -> Iterator[Any]:
        """The split's typed records."""
        if self.path is not None:
            return self.family.read_file(self.path)
        return iter_hub_records(self.family, self.split, self.hub, revision=self.revision)


def _what(family: DatasetFamily, split: str) -> str:
    return f"{family.name}/{split}"


def _local(family: DatasetFamily, split: str, path: Path, revision: str | None) -> Origin:
    prov = file_provenance(_what(family, split), path)
    if revision is not None and prov.revision is not None and not _same(prov.revision, revision):
        raise UserError(f"{path}: holds {prov.what} at {prov.repo}@{prov.revision}, not the revision {revision} asked for",
                        hint=f"download that revision: averitec data download ... --revision {revision} --out DIR, "
                        "then data_dir=DIR")
    return Origin(family, split, prov, path=path)


def _same(have: str, want: str) -> bool:
    """Whether the commit ``have`` is the revision ``want``; a branch or tag name (not hex) cannot
    be told from here, so it is taken as the same (the provenance then says which commit was read)."""
    is_commit = len(want) >= 7 and all(c in "0123456789abcdef" for c in want)
    return have == want or not is_commit or have.startswith(want)


def _hub(family: DatasetFamily, split: str, repo: str | None, revision: str | None) -> Origin:
    if repo is not None and Path(repo).is_dir():
        return Origin(family, split, Provenance(_what(family, split), "local"), hub=repo)
    name = repo or family.hub_id or ""
    return Origin(family, split, hub_provenance(_what(family, split), name, revision), hub=repo, revision=revision)


def _snapshot(family: DatasetFamily, split: str, folder: Path) -> Origin:
    """A downloaded hub-layout folder (VitaminC's), identified by its split file's manifest record."""
    files = sorted(folder.glob(f"{split}.*")) or sorted(folder.glob(f"{family.hub_splits.get(split, split)}.*"))
    prov = file_provenance(_what(family, split), files[0]) if files else Provenance(_what(family, split), "local")
    return Origin(family, split, prov, hub=str(folder))


def find_origin(family: DatasetFamily, split: str, *, data_dir: PathArg = None, hub_id: str | None = None,
                revision: str | None = None) -> Origin:
    """The source of ``split`` (see the module docstring).

    Raises:
        UserError: no such split, no local file under ``data_dir``, a local file of another
            revision, or nothing local and no way to fetch it (offline, unreachable).
    """
    if split not in family.split_files:
        raise UserError(f"{family.name} has no split {split!r}", hint=f"splits: {', '.join(family.split_files)}")
    if hub_id is not None:
        return _hub(family, split, hub_id, revision)
    if data_dir is not None:
        return _local(family, split, find_local_file(family, split, data_dir), revision)
    from averitec_tools.loaders.auto_download import download_now, snapshot_dir
    from averitec_tools.loaders.locate import data_roots

    for root in data_roots():
        try:
            path = find_local_file(family, split, root)
        except UserError:
            continue
        return _local(family, split, path, revision)
    snapshot = snapshot_dir(family, split)
    if snapshot is not None:
        return _snapshot(family, split, snapshot)
    fetched = download_now(family, split, revision=revision)
    if fetched is not None:
        return _snapshot(family, split, fetched) if fetched.is_dir() else _local(family, split, fetched, None)
    return _hub(family, split, None, revision)


__all__ = ["Origin", "find_origin"]
