"""Zip archives: what they hold (read from their directory alone) and safe unpacking.

The knowledge stores are zips of one JSON-lines file per claim, nested differently in
each archive (``output_dev/0.json``, ``0.json``, ``data_store/train/2000.json``). Unpacking
selects members by base name, writes them *flat* under one folder (so every store ends up
``<store>/<claim_id>.json``, the layout the baseline reads), refuses two members with one
base name, never writes outside the target (names come from the archive, not paths), and
checks each member's CRC while extracting (``zipfile`` does). The unpacked size is the sum
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory

_CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    name: str
    size: int


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


def members(fileobj: IO[bytes] | Any, *, pattern: str, where: str = "archive") -> Listing:
    """The members of the zip in ``fileobj`` whose base name matches ``pattern`` (directories skipped).

    Raises:
        UserError: not a zip archive, or two selected members share a base name.
    """
    try:
        with zipfile.ZipFile(fileobj) as archive:
            infos = archive.infolist()
    except zipfile.BadZipFile as exc:
        raise UserError(f"{where}: not a zip archive ({exc})") from None
    listing = Listing()
    seen: dict[str, str] = {}
    for info in infos:
        base = _base(info.filename)
        if info.is_dir() or not base:
            continue
        if not fnmatch.fnmatchcase(base, pattern):
            listing.skipped += 1
            continue
        if base in seen:
            raise UserError(f"{where}: members {seen[base]!r} and {info.filename!r} would both unpack to {base!r}")
        seen[base] = info.filename
        listing.selected.append(Member(info.filename, info.file_size))
    return listing


@dataclass(frozen=True)
class Extracted:
    """What :func:`extract` wrote."""

    into: str
    files: int
    bytes: int
    skipped: int


def extract_all(archives: list[Path], into: str | os.PathLike[str], *, pattern: str,
                progress: bool = False) -> Extracted:
    """Unpack the matching members of every archive flat into ``into`` (replaced whole, atomically).

    Raises:
        UserError: a corrupt archive or member (bad CRC), a base-name clash within or
            across archives, or a write error; ``into`` is then left as it was.
    """
    listings = []
    owner: dict[str, str] = {}
    for path in archives:
        with Path(path).open("rb") as fh:
            listing = members(fh, pattern=pattern, where=str(path))
        for m in listing.selected:
            base = _base(m.name)
            if base in owner:
                raise UserError(f"{path}: member {m.name!r} clashes with {owner[base]!r} (both unpack to {base!r})")
            owner[base] = f"{Path(path).name}:{m.name}"
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
                        with archive.open(member.name) as src, open(tmp / _base(member.name), "wb") as dst:
                            shutil.copyfileobj(src, dst, _CHUNK)
                        written += member.size
                        files += 1
            except (zipfile.BadZipFile, EOFError) as exc:
                raise UserError(f"{path}: corrupt archive: {exc}") from None
    return Extracted(into=str(into), files=files, bytes=written, skipped=skipped)


__all__ = ["Extracted", "extract_all", "members"]
