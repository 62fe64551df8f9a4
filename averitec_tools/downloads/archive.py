"""Zip archives: what they hold (read from their directory alone) and safe unpacking.

The knowledge stores are zips of one JSON-lines file per claim, nested differently in
each archive (``output_dev/0.json``, ``0.json``, ``data_store/train/2000.json``). Unpacking
places each member with a *target* function: by default (:func:`flat`) members whose base name
matches a pattern, written flat under one folder (so every AVeriTeC store ends up
``<store>/<claim_id>.json``, the layout the baseline reads); a store layout may keep the paths
below its own root instead (AVerImaTeC's ``text_related/...``, ``image_related/...``). Two members
with one target are refused, nothing is written outside the target folder, and each member's
CRC is checked while extracting (``zipfile`` does). :func:`install_tree` installs a store a user
has already unpacked, through the same target function. The unpacked size is the sum
of the selected members' sizes in the archive's directory, which :class:`RangeFile` reads
remotely before anything is downloaded.

Example:
    >>> import io, zipfile, tempfile, pathlib
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as z:
    ...     z.writestr("output_dev/0.json", '{"url": "u"}\\n'); z.writestr("output_dev/", "")
    ...     z.writestr("README.txt", "skip me")
    >>> listing = members(buf, pattern="*.json")
    >>> [(m.name, m.size) for m in listing.selected], listing.skipped, listing.unpacked_size
    ([('output_dev/0.json', 13)], 1, 13)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "dev"
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.zip"; _ = path.write_bytes(buf.getvalue())
    >>> extract_all([path], out, pattern="*.json").files, sorted(p.name for p in out.iterdir())
    (1, ['0.json'])
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory

_CHUNK = 1 << 20


#: Where an archive member (or a file of an unpacked tree) goes under the target folder: a relative
#: path, or ``None`` to skip it. Default: :func:`flat`.
Target = Callable[[str], "str | None"]


def flat(pattern: str = "*") -> Target:
    """Members whose base name matches ``pattern``, by base name (macOS ``__MACOSX/`` debris skipped).

    Example:
        >>> f = flat("*.json"); f("output_dev/0.json"), f("README.txt"), f("__MACOSX/output_dev/._0.json")
        ('0.json', None, None)
    """
    def target(name: str) -> str | None:
        base = _base(name)
        if name.replace("\\", "/").startswith("__MACOSX/") or not fnmatch.fnmatchcase(base, pattern):
            return None
        return base

    return target


@dataclass(frozen=True)
class Member:
    name: str
    size: int
    target: str = ""


@dataclass
class Listing:
    """The members of an archive that unpacking would write, and how many it skips."""

    selected: list[Member] = field(default_factory=list)
    skipped: int = 0

    @property
    def unpacked_size(self) -> int:
        return sum(m.size for m in self.selected)


def _base(name: str) -> str:
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _safe(target: str, *, where: str, name: str) -> str:
    parts = target.split("/")
    if not target or target.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise UserError(f"{where}: member {name!r} would unpack outside the target folder ({target!r})")
    return target


def members(fileobj: IO[bytes] | Any, *, pattern: str = "*", where: str = "archive",
            target: Target | None = None) -> Listing:
    """The members of the zip in ``fileobj`` that unpacking writes (``target``; default: base names
    matching ``pattern``), directories skipped.

    Raises:
        UserError: not a zip archive, two selected members with one target, or a target outside the folder.
    """
    place = target or flat(pattern)
    try:
        with zipfile.ZipFile(fileobj) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise UserError(f"{where}: not a zip archive ({exc})") from None
    listing = Listing()
    seen: dict[str, str] = {}
    for info in infos:
        if info.is_dir() or not _base(info.filename):
            continue
        dest = place(info.filename)
        if dest is None:
            listing.skipped += 1
            continue
        dest = _safe(dest, where=where, name=info.filename)
        if dest in seen:
            raise UserError(f"{where}: members {seen[dest]!r} and {info.filename!r} would both unpack to {dest!r}")
        seen[dest] = info.filename
        listing.selected.append(Member(info.filename, info.file_size, dest))
    return listing


@dataclass(frozen=True)
class Extracted:
    """What :func:`extract` wrote."""

    into: str
    files: int
    bytes: int
    skipped: int


def extract_all(archives: list[Path], into: str | os.PathLike[str], *, pattern: str = "*",
                target: Target | None = None, progress: bool = False) -> Extracted:
    """Unpack the selected members of every archive into ``into`` (replaced whole, atomically);
    ``target`` places them (default: flat, base names matching ``pattern``).

    Raises:
        UserError: a corrupt archive or member (bad CRC), a clash within or across archives, or a
            write error; ``into`` is then left as it was.
    """
    listings = []
    owner: dict[str, str] = {}
    for path in archives:
        with Path(path).open("rb") as fh:
            listing = members(fh, pattern=pattern, where=str(path), target=target)
        for m in listing.selected:
            if m.target in owner:
                raise UserError(f"{path}: member {m.name!r} clashes with {owner[m.target]!r} (both unpack to "
                                f"{m.target!r})")
            owner[m.target] = f"{Path(path).name}:{m.name}"
        listings.append((Path(path), listing))
    from tqdm.auto import tqdm

    written = files = skipped = 0
    with atomic_directory(into) as tmp:
        for path, listing in listings:
            skipped += listing.skipped
            try:
                with zipfile.ZipFile(path) as archive:
                    for member in tqdm(listing.selected, desc=f"unpacking {path.name}", unit="file",
                                       disable=not progress):
                        dest = tmp / member.target
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        with archive.open(member.name) as src, open(dest, "wb") as dst:
                            shutil.copyfileobj(src, dst, _CHUNK)
                        written += member.size
                        files += 1
            except (zipfile.BadZipFile, EOFError) as exc:
                raise UserError(f"{path}: corrupt archive: {exc}") from None
    return Extracted(into=str(into), files=files, bytes=written, skipped=skipped)


def tree_files(tree: Path, target: Target) -> tuple[list[tuple[Path, str]], int]:
    """The files of an unpacked ``tree`` that installing it copies (source, target) and how many it skips.

    Raises:
        UserError: two files with one target, or a target outside the folder.
    """
    chosen: list[tuple[Path, str]] = []
    seen: dict[str, Path] = {}
    skipped = 0
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        rel = path.relative_to(tree).as_posix()
        dest = target(rel)
        if dest is None:
            skipped += 1
            continue
        dest = _safe(dest, where=str(tree), name=rel)
        if dest in seen:
            raise UserError(f"{tree}: {seen[dest]} and {path} would both be installed as {dest!r}")
        seen[dest] = path
        chosen.append((path, dest))
    return chosen, skipped


def install_tree(tree: Path, into: str | os.PathLike[str], *, target: Target, progress: bool = False) -> Extracted:
    """Copy an unpacked ``tree`` (a store a user unzipped) into ``into`` (replaced whole, atomically);
    the tree is read, never changed.

    Raises:
        UserError: a clash, a target outside the folder, or a write error (``into`` then left as it was).
    """
    from tqdm.auto import tqdm

    chosen, skipped = tree_files(tree, target)
    written = 0
    with atomic_directory(into) as tmp:
        for src, dest in tqdm(chosen, desc=f"installing {tree.name}", unit="file", disable=not progress):
            (tmp / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, tmp / dest)
            written += src.stat().st_size
    return Extracted(into=str(into), files=len(chosen), bytes=written, skipped=skipped)


__all__ = ["Extracted", "extract_all", "flat", "install_tree", "members", "tree_files"]
