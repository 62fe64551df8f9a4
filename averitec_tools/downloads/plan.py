"""What a download would do, before it does anything: files, sizes, disk needed, free space.

:func:`plan` resolves a :class:`~averitec_tools.downloads.sources.DataSource` against the
output folder and, when ``online``, against the hub: one ``HEAD`` per file (size, content
hash, commit), a listing for folders whose file names are not recorded, and, for archives
whose unpacked size is not recorded, a read of the archive's directory through ranged
requests (a few kilobytes, not the archive). Offline it uses what the package records.

Disk needed is the peak: every file still to download plus, for archives, every member
unpacked (archives are unpacked together once all have arrived, then deleted unless kept).

Example:
    >>> import tempfile, pathlib
    >>> from averitec_tools.downloads.sources import DataSource, HubLocation, RemoteFile
    >>> src = DataSource(name="demo", split="dev", title="Demo", license="cc0-1.0",
    ...     hub=HubLocation("someone/demo"), dest="demo", files=(RemoteFile("data/dev.json", size=2048),))
    >>> p = plan(src, out=pathlib.Path(tempfile.mkdtemp()), online=False)
    >>> p.download_bytes, p.disk_needed, p.files[0].dest.name
    (2048, 2048, 'dev.json')
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.downloads import manifest
from averitec_tools.downloads.hub import RangeFile, RemoteInfo, list_folder, remote_info
from averitec_tools.downloads.sources import DataSource, RemoteFile
from averitec_tools.errors import UserError

PARTIAL_DIR = ".partial"
FreeSpace = Callable[[Path], int]


def nearest_existing(path: Path) -> Path:
    current = path.absolute()
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def disk_free(path: Path) -> int:
    """Free bytes on the file system that ``path`` (or its nearest existing ancestor) is on."""
    return shutil.disk_usage(nearest_existing(path)).free


def _known_sum(sizes: Iterable[int | None]) -> int | None:
    """The sum of ``sizes``, or ``None`` when any is unknown."""
    known = list(sizes)
    return None if any(s is None for s in known) else sum(s for s in known if s is not None)


@dataclass
class PlannedFile:
    """One file of a plan.

    Attributes:
        spec: The file as recorded (checksum, size, provenance).
        dest: Where it ends up (for an archive: where it waits to be unpacked).
        part: The partial download a later run resumes from.
        size: Bytes (recorded, else what the hub said, else ``None``).
        info: The hub's answer (``None`` offline or from a local folder).
        archive: Whether it is unpacked.
        unpacked_size: Bytes its selected members take unpacked (``None``: unknown).
        unpacked_measured: ``unpacked_size`` was read from the archive's directory now.
        present: The final file (or the unpacked folder) is already there.
        partial: Bytes already in ``part``.
    """

    spec: RemoteFile
    dest: Path
    part: Path
    size: int | None
    info: RemoteInfo | None = None
    archive: bool = False
    unpacked_size: int | None = None
    unpacked_measured: bool = False
    present: bool = False
    partial: int = 0

    @property
    def remaining(self) -> int | None:
        if self.present:
            return 0
        return None if self.size is None else max(0, self.size - self.partial)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.spec.path, "dest": str(self.dest), "size": self.size, "sha256": self.spec.sha256,
            "verified": self.spec.verified, "checksum_source": self.spec.checksum_source or None,
            "hub_sha256": self.info.lfs_sha256 if self.info else None,
            "commit": self.info.commit if self.info else None, "archive": self.archive,
            "unpacked_size": self.unpacked_size, "unpacked_measured": self.unpacked_measured,
            "present": self.present, "partial_bytes": self.partial,
        }


@dataclass
class Plan:
    """A resolved source: its files and the disk they need, before anything is fetched."""

    source: DataSource
    out: Path
    files: list[PlannedFile]
    online: bool
    free: int | None = None
    reserve: int = 0
    notes: list[str] = field(default_factory=list)
    unresolved: bool = False  # a folder listing not resolved (offline): more files than shown
    tree: Path | None = None  # an unpacked store a user has (``--from DIR``), installed by copying
    tree_bytes: int = 0

    @property
    def unpack_dir(self) -> Path | None:
        if self.source.unpack is None:
            return None
        return self.out / self.source.dest / self.source.unpack.into

    @property
    def complete(self) -> bool:
        return self.tree is None and not self.unresolved and bool(self.files) and all(f.present for f in self.files)

    @property
    def download_bytes(self) -> int | None:
        return None if self.unresolved else _known_sum(f.remaining for f in self.files)

    @property
    def total_bytes(self) -> int | None:
        return None if self.unresolved else _known_sum(f.size for f in self.files)

    @property
    def unpacked_bytes(self) -> int | None:
        if self.unresolved and self.source.unpack is not None:
            return None
        if self.tree is not None:
            return self.tree_bytes
        arch = [f for f in self.files if f.archive]
        if not arch:
            return 0
        return _known_sum(f.unpacked_size for f in arch)

    @property
    def disk_needed(self) -> int | None:
        """Peak bytes still to be written: downloads plus, unless already unpacked, members unpacked."""
        down, unpacked = self.download_bytes, self.unpacked_bytes
        if down is None or unpacked is None:
            return None
        return down + (0 if self.complete else unpacked)

    def to_dict(self) -> dict[str, Any]:
        src = self.source
        return {
            "source": src.key, "name": src.name, "split": src.split, "title": src.title, "license": src.license,
            "repo": src.hub.repo_id if src.hub else None, "repo_type": src.hub.repo_type if src.hub else None,
            "revision": src.hub.revision if src.hub else None, "verified": src.verified,
            "online": self.online, "out": str(self.out / src.dest),
            "unpack_into": str(self.unpack_dir) if self.unpack_dir else None,
            "total_bytes": self.total_bytes, "download_bytes": self.download_bytes,
            "unpacked_bytes": self.unpacked_bytes, "disk_needed": self.disk_needed,
            "free_bytes": self.free, "reserve_bytes": self.reserve, "complete": self.complete,
            "files_listed_at_download": self.unresolved, "tree": None if self.tree is None else str(self.tree),
            "files": [f.to_dict() for f in self.files], "notes": list(src.notes) + self.notes,
        }


def _partial_path(out: Path, source: DataSource, rel: str) -> Path:
    return out / PARTIAL_DIR / source.key.replace("/", "--") / (rel + ".part")


def _safe_rel(rel: str, source: DataSource) -> str:
    """A listed path kept under the destination: no absolute paths, no ``..`` (a hostile mirror)."""
    parts = rel.replace("\\", "/").split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UserError(f"{source.key}: refusing the listed path {rel!r} (it would leave the destination folder)")
    return rel


def _dest(out: Path, source: DataSource, spec: RemoteFile, rel: str) -> Path:
    if source.unpack is not None:
        return out / PARTIAL_DIR / source.key.replace("/", "--") / rel
    return out / source.dest / (rel if source.listing and source.listing.keep_paths else spec.target_name)


def _local_listing(source: DataSource, local: Path) -> list[tuple[RemoteFile, str]]:
    """A listing resolved against files a user has: in the repository's layout, or flat."""
    import fnmatch

    assert source.listing is not None
    folder = source.listing.folder.strip("/")
    for base in (local / folder, local) if folder else (local,):
        found = []
        for path in sorted(p for p in base.rglob("*") if p.is_file()):
            rel = path.relative_to(base).as_posix()
            if any(fnmatch.fnmatchcase(rel, pat) for pat in source.listing.patterns):
                repo_path = f"{folder}/{rel}" if folder else rel
                found.append((RemoteFile(repo_path, size=path.stat().st_size),
                              rel if source.listing.keep_paths else path.name))
        if found:
            return found
    raise UserError(f"{local}: no file matching {'|'.join(source.listing.patterns)} to install for {source.key}")


def _specs(source: DataSource, *, online: bool, local: Path | None = None) -> tuple[list[tuple[RemoteFile, str]], bool]:
    """(file, path relative to the destination) pairs, and whether a listing was left unresolved (offline)."""
    specs = [(f, f.target_name) for f in source.files]
    named = {f.path for f in source.files}  # a listed file the source also names keeps its recorded checksum
    unresolved = False
    if source.listing is not None and local is not None:
        specs += [(f, rel) for f, rel in _local_listing(source, local) if f.path not in named]
    elif source.listing is not None:
        if not online or source.hub is None:
            unresolved = True
        else:
            prefix = source.listing.folder.strip("/")
            for found in list_folder(source.hub, source.listing):
                if found.path in named:
                    continue
                rel = found.path[len(prefix) + 1:] if prefix else found.path
                specs.append((RemoteFile(found.path, size=found.size), rel if source.listing.keep_paths
                              else found.path.rsplit("/", 1)[-1]))
            if len(specs) == len(source.files):
                raise UserError(f"{source.key}: no file in {source.hub.describe()} matches "
                                f"{source.listing.folder}/{{{','.join(source.listing.patterns)}}}")
    return specs, unresolved


def _unpacked_size(pf: PlannedFile, source: DataSource) -> tuple[int | None, bool]:
    from averitec_tools.downloads.archive import members

    if source.unpack is None:
        return None, False
    target = source.unpack.target()
    local = pf.dest if pf.dest.is_file() else (pf.part if pf.size is not None and pf.partial == pf.size else None)
    if local is not None:
        with local.open("rb") as fh:
            return members(fh, where=str(local), target=target).unpacked_size, True
    if pf.spec.unpacked_size is not None:
        return pf.spec.unpacked_size, False
    if pf.info is not None and pf.size:
        from averitec_tools.downloads.hub import hub_errors

        with hub_errors(f"{pf.spec.path}: reading the archive's directory"):
            return members(RangeFile(pf.info.url, pf.size), where=pf.spec.path, target=target).unpacked_size, True
    return None, False


def _already_unpacked(out: Path, source: DataSource) -> bool:
    entry = manifest.load(out)["sources"].get(source.key)
    if source.unpack is None or not entry or not entry.get("complete"):
        return False
    target = out / source.dest / source.unpack.into
    return target.is_dir() and sum(1 for _ in target.iterdir()) == entry.get("unpacked", {}).get("files", -1)


def _tree_plan(source: DataSource, root: Path, local: Path, *, reserve: int, free_space: FreeSpace) -> Plan | None:
    """The plan of installing an unpacked store a user has in ``local`` (``None``: there is none)."""
    layout = source.unpack.layout if source.unpack is not None else None
    tree = layout.find_tree(local) if layout is not None else None
    if layout is None or tree is None:
        return None
    from averitec_tools.downloads.archive import tree_files

    chosen, _ = tree_files(tree, layout.target)
    return Plan(source=source, out=root, files=[], online=False, reserve=reserve, tree=tree,
                tree_bytes=sum(p.stat().st_size for p, _ in chosen), free=free_space(root),
                notes=[f"installing the unpacked store {tree} ({len(chosen)} files)"])


def _planned_file(source: DataSource, root: Path, spec: RemoteFile, rel: str, *, online: bool,
                  unpacked_already: bool, notes: list[str]) -> PlannedFile:
    """One file of a plan: where it goes, what is already there, what the hub says (when online)."""
    rel = _safe_rel(rel, source)
    dest = _dest(root, source, spec, rel)
    part = _partial_path(root, source, rel)
    archive = source.unpack is not None
    present = unpacked_already if archive else dest.is_file()
    info = remote_info(source.hub, spec.path) if online and source.hub is not None and not present else None
    size = spec.size if spec.size is not None else (info.size if info else None)
    if size is None and present and not archive:
        size = dest.stat().st_size
    if info is not None and spec.size is not None and info.size is not None and info.size != spec.size:
        notes.append(f"{spec.path}: the hub reports {info.size} bytes, the package records {spec.size}")
    have = part.stat().st_size if part.is_file() else 0
    if archive and dest.is_file():  # fetched by an earlier run, not unpacked yet
        have = dest.stat().st_size
    pf = PlannedFile(spec=spec, dest=dest, part=part, size=size, info=info, archive=archive, present=present,
                     partial=have)
    if pf.archive and not unpacked_already:
        pf.unpacked_size, pf.unpacked_measured = _unpacked_size(pf, source)
    elif pf.archive:
        pf.unpacked_size = spec.unpacked_size
    return pf


def plan(source: DataSource, *, out: str | os.PathLike[str], online: bool, reserve: int = 0,
         free_space: FreeSpace = disk_free, local: str | os.PathLike[str] | None = None) -> Plan:
    """Resolve ``source`` for the output root ``out`` (see the module docstring).

    ``local`` (a folder of files the user has) resolves listings against its files; an unpacked
    store in it (found by the source's layout) is planned as a copy of that folder.

    Raises:
        UserError: the hub refuses or cannot be reached (online), or a listing finds nothing.
    """
    root = Path(out)
    online = online and source.hub is not None
    tree = _tree_plan(source, root, Path(local), reserve=reserve, free_space=free_space) if local is not None else None
    if tree is not None:
        return tree
    specs, unresolved = _specs(source, online=online, local=Path(local) if local is not None else None)
    notes: list[str] = []
    unpacked_already = _already_unpacked(root, source)
    files = [_planned_file(source, root, spec, rel, online=online, unpacked_already=unpacked_already, notes=notes)
             for spec, rel in specs]
    result = Plan(source=source, out=root, files=files, online=online, reserve=reserve, notes=notes,
                  unresolved=unresolved)
    result.free = free_space(root)
    return result


def check_space(*plans: Plan) -> None:
    """Refuse, before any byte is fetched, downloads that together do not fit (keeping ``reserve`` free).

    Sizes the hub did not report count as zero (the plan says which are unknown).

    Raises:
        UserError: naming bytes needed, free and where.
    """
    if not plans:
        return
    need = 0
    for p in plans:
        known = p.disk_needed
        if known is None:
            known = sum(f.remaining or 0 for f in p.files)
            if not p.complete:
                known += sum(f.unpacked_size or 0 for f in p.files if f.archive)
        need += known
    first = plans[0]
    if first.free is not None and need + first.reserve > first.free:
        what = first.source.key if len(plans) == 1 else f"{len(plans)} sources"
        raise UserError(
            f"{what}: needs {human(need)} on disk ({human(first.reserve)} kept free), "
            f"but {nearest_existing(first.out)} has {human(first.free)} free; nothing was downloaded",
            hint="free space or pass --out on a larger disk",
        )


def human(n: int | None) -> str:
    """Bytes for people: ``human(11537899362) == '10.7 GiB'``.

    Example:
        >>> human(11537899362), human(1785475), human(None)
        ('10.7 GiB', '1.7 MiB', 'unknown')
    """
    if n is None:
        return "unknown"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - loop returns


__all__ = ["Plan", "PlannedFile", "check_space", "disk_free", "human", "plan"]
