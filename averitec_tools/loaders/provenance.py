"""Which bytes a loader read: repository, commit and checksums, for dataset info and signatures.

A split read from a file installed by ``averitec data download`` is identified by the
download manifest (repository, the commit the pinned revision resolved to, sha256); any
other local file by its sha256, and, when that equals a checksum the catalogue records,
by the catalogue's pinned repository and revision; a split read from the hub by the
repository and the revision asked for. :meth:`Provenance.signature_value` is what a
signature's ``data:`` field holds (:func:`data_field`), so a score or a run names the
data it depends on.

Example:
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "dev.json"; _ = f.write_text("[]")
    >>> p = file_provenance("averitec/dev", f)
    >>> p.origin, p.revision, p.signature_value()
    ('local', None, 'sha256.4f53cda18c2b')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.hashing import file_sha256

COMMIT = re.compile(r"[0-9a-f]{40}")
_MANIFEST_DEPTH = 4  # <root>/<dataset>/<sub>/<split>/<file>: how far up a manifest is looked for


@dataclass(frozen=True)
class FileRecord:
    """One file read: where (a path or an ``hf://`` URL), its size and sha256 (when known)."""

    url: str
    size: int | None = None
    sha256: str | None = None


@dataclass(frozen=True)
class Provenance:
    """Where a split's bytes came from.

    Attributes:
        what: The dataset id (``averitec/dev``, ``averitec/knowledge_store:dev``).
        origin: ``download`` (a manifest records it), ``catalogue`` (a local file whose sha256 the
            catalogue records), ``hub`` (read through ``datasets.load_dataset``) or ``local``.
        repo: The hub repository, when known.
        repo_type: Its type (``model``, ``dataset``).
        revision: The commit (40 hex digits) when known; else the branch or tag asked for; else ``None``.
        files: The files read.
    """

    what: str
    origin: str
    repo: str | None = None
    repo_type: str | None = None
    revision: str | None = None
    files: tuple[FileRecord, ...] = field(default_factory=tuple)

    @property
    def pinned(self) -> bool:
        """The revision is a commit, so the same bytes are read again tomorrow."""
        return self.revision is not None and COMMIT.fullmatch(self.revision) is not None

    def describe(self) -> str:
        """One sentence for a dataset card or ``DatasetInfo.description``."""
        if self.repo is not None:
            at = (f"commit {self.revision}" if self.pinned else f"revision {self.revision} (not a commit)"
                  if self.revision else "no pinned revision")
            how = {"download": "downloaded from", "catalogue": "the bytes recorded for", "hub": "read from"}[self.origin]
            return f"Source: {how} {self.repo} ({self.repo_type}) at {at}."
        sha = next((f.sha256 for f in self.files if f.sha256), None)
        return f"Source: local files, revision unknown{f' (sha256 {sha})' if sha else ''}."

    def checksums(self) -> dict[str, dict[str, Any]]:
        """``DatasetInfo.download_checksums``: ``{url: {num_bytes, checksum}}`` of the files read."""
        return {f.url: {"num_bytes": f.size, "checksum": f.sha256} for f in self.files if f.sha256}

    def signature_value(self) -> str:
        """``repo@commit12`` (pinned), ``repo@branch`` (not pinned), ``sha256.<12>`` or ``unknown``."""
        if self.repo is not None and self.revision is not None:
            return f"{self.repo}@{self.revision[:12] if self.pinned else self.revision}"
        sha = next((f.sha256 for f in self.files if f.sha256), None)
        return f"sha256.{sha[:12]}" if sha else "unknown"

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.what, "origin": self.origin, "repo": self.repo, "repo_type": self.repo_type,
                "revision": self.revision, "pinned": self.pinned,
                "files": [dict(f.__dict__) for f in self.files], "data": self.signature_value()}


def data_field(provenance: Provenance) -> tuple[str, str]:
    """The ``("data", value)`` signature field of a provenance (for ``render_signature``).

    Example:
        >>> data_field(Provenance("averitec/dev", "hub", "o/n", "dataset", "a" * 40))
        ('data', 'averitec/dev=o/n@aaaaaaaaaaaa')
    """
    return "data", f"{provenance.what}={provenance.signature_value()}"


def hub_url(repo: str, repo_type: str | None, revision: str | None, path: str) -> str:
    """``hf://`` URL of a file at a revision, as ``datasets`` writes resolved data files.

    Example:
        >>> hub_url("chenxwh/AVeriTeC", "model", "main", "data/dev.json")
        'hf://chenxwh/AVeriTeC@main/data/dev.json'
    """
    kind = "" if repo_type in (None, "model") else f"{repo_type}s/"
    return f"hf://{kind}{repo}@{revision or 'main'}/{path}"


def _manifest_entry(path: Path, *, unpacked: bool) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The manifest entry that installed ``path`` (a file, or an unpacked folder), and its file record."""
    from averitec_tools.downloads import manifest

    target = os.path.abspath(path)
    for root in list(Path(target).parents)[:_MANIFEST_DEPTH]:
        if not manifest.path_of(root).is_file():
            continue
        for entry in manifest.load(root)["sources"].values():
            into = (entry.get("unpacked") or {}).get("into")
            if unpacked and into and os.path.abspath(into) == target:
                return entry, None
            for rec in entry.get("files", []):
                if not unpacked and os.path.abspath(rec.get("dest", "")) == target:
                    return entry, rec
    return None


def _from_manifest(what: str, entry: dict[str, Any], recs: list[dict[str, Any]]) -> Provenance:
    """The provenance a manifest entry gives ``recs`` (its file records)."""
    if entry.get("from", "hub") != "hub" and entry.get("status") != "verified":  # copies installed with --from
        return Provenance(what, "local", files=tuple(FileRecord(r.get("dest", r.get("path", "")), r.get("size"),
                                                                r.get("sha256")) for r in recs))
    commit = entry.get("commit")
    revision = commit if isinstance(commit, str) and COMMIT.fullmatch(commit) else entry.get("revision")
    repo = entry.get("repo")
    files = tuple(FileRecord(hub_url(repo, entry.get("repo_type"), revision, r["path"]) if repo else r["path"],
                             r.get("size"), r.get("sha256")) for r in recs)
    return Provenance(what, "download", repo, entry.get("repo_type"), revision, files)


def _catalogue_match(sha256: str) -> Any:
    """The registered source file whose recorded sha256 is ``sha256`` (and its source), if any."""
    import averitec_tools.loaders.catalogue  # noqa: F401  (registers the sources)
    from averitec_tools.downloads import all_sources

    for source in all_sources():
        for spec in source.files:
            if spec.sha256 == sha256 and source.hub is not None:
                return source, spec
    return None


def file_provenance(what: str, path: str | os.PathLike[str]) -> Provenance:
    """The provenance of one local file (see the module docstring)."""
    p = Path(path)
    found = _manifest_entry(p, unpacked=False)
    sha = file_sha256(p)
    size = p.stat().st_size
    if found is not None and found[1] is not None and found[1].get("sha256") == sha:  # not changed since
        return _from_manifest(what, found[0], [found[1]])
    match = _catalogue_match(sha)
    if match is not None:
        source, spec = match
        hub = source.hub
        return Provenance(what, "catalogue", hub.repo_id, hub.repo_type, hub.revision,
                          (FileRecord(hub_url(hub.repo_id, hub.repo_type, hub.revision, spec.path), size, sha),))
    return Provenance(what, "local", files=(FileRecord(str(p.absolute()), size, sha),))


def store_provenance(what: str, folder: str | os.PathLike[str]) -> Provenance:
    """The provenance of an unpacked store folder: the archives the manifest records, else unknown
    (a store is not hashed on load: tens of gigabytes)."""
    found = _manifest_entry(Path(folder), unpacked=True)
    if found is None:
        return Provenance(what, "local")
    entry, _ = found
    return _from_manifest(what, entry, list(entry.get("files", [])))


def hub_provenance(what: str, repo: str, revision: str | None) -> Provenance:
    """A split read from a hub dataset repository with ``datasets.load_dataset``."""
    return Provenance(what, "hub", repo, "dataset", revision or "main")


__all__ = ["COMMIT", "Provenance", "data_field", "file_provenance", "hub_provenance", "store_provenance"]
