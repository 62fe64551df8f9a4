"""What a named download is: hub location, files with recorded checksums, destination.

A :class:`DataSource` is one downloadable unit (``averitec/dev``, ``averitec-store/dev``):
where its files live on the Hugging Face hub (repository id *and type*, revision, paths, or
a folder whose files are listed at download time), the sha256 and size recorded for each
file with where that checksum comes from, its licence, where it goes under the output
folder and whether it is an archive to unpack. Sources are registered by key in
:data:`SOURCES` (the project's :class:`~averitec_tools.registry.Registry`), so unknown names
get suggestions; the dataset catalogue lives in :mod:`averitec_tools.loaders.catalogue`.

Example:
    >>> src = DataSource(name="demo", split="dev", title="Demo", license="cc0-1.0",
    ...     hub=HubLocation("someone/demo", repo_type="dataset"), dest="demo",
    ...     files=(RemoteFile("data/dev.json", sha256="0" * 64, size=3),))
    >>> src.key, src.hub.repo_type, src.files[0].verified, src.files[0].target_name
    ('demo/dev', 'dataset', True, 'dev.json')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
#: Hugging Face repository types, ``"github"`` (a public GitHub repository at a pinned commit) and
#: ``"url"`` (a plain HTTPS folder: ``repo_id`` is its URL, files are ``<repo_id>/<path>``).
REPO_TYPES: tuple[str, ...] = ("model", "dataset", "space", "github", "url")
#: Location types not on the Hugging Face hub (fetched with plain HTTPS requests).
OFF_HUB_TYPES: tuple[str, ...] = ("github", "url")


@dataclass(frozen=True)
class HubLocation:
    """A repository on the Hugging Face hub.

    Attributes:
        repo_id: ``owner/name``.
        repo_type: ``"model"``, ``"dataset"`` or ``"space"`` (the organisers' AVeriTeC files
            live in a *model* repository).
        revision: Branch, tag or commit; ``None``: no commit is pinned for it (a download then
            needs ``--revision``, see :func:`require_revision`).
    """

    repo_id: str
    repo_type: str = "model"
    revision: str | None = "main"

    def __post_init__(self) -> None:
        if self.repo_type not in REPO_TYPES:
            raise ValueError(f"repo_type must be one of {REPO_TYPES}, got {self.repo_type!r}")

    @property
    def pinned(self) -> bool:
        """The revision is a commit (40 hex digits): the same bytes every time."""
        return self.revision is not None and _COMMIT.fullmatch(self.revision) is not None

    def describe(self) -> str:
        """``repo_id (type, revision)`` (``unpinned`` when no revision is recorded; a URL folder: the URL alone)."""
        if self.unversioned:
            return self.repo_id
        return f"{self.repo_id} ({self.repo_type}, {self.revision or 'unpinned'})"

    @property
    def unversioned(self) -> bool:
        """A plain HTTPS folder: it has no revisions, its files are held to their recorded sha256 alone."""
        return self.repo_type == "url"

    def at(self, revision: str) -> HubLocation:
        """The same repository at another revision."""
        return replace(self, revision=revision)


def require_revision(key: str, hub: HubLocation) -> None:
    """Refuse to download from ``hub`` when no revision is recorded for it (a plain HTTPS folder has none:
    its files are held to their recorded sha256).

    Raises:
        UserError: one line naming the fix (``--revision``).

    Example:
        >>> require_revision("x/dev", HubLocation("o/n", revision=None))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: x/dev: no commit of o/n is pinned in this version of averitec-tools, so what it holds today is unverified (pass --revision COMMIT, or --revision main to read the current files)
    """
    if hub.revision is None and not hub.unversioned:
        raise UserError(f"{key}: no commit of {hub.repo_id} is pinned in this version of averitec-tools, so what it "
                        "holds today is unverified",
                        hint="pass --revision COMMIT, or --revision main to read the current files")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a source.

    Attributes:
        path: Path inside the repository.
        sha256: The checksum recorded in the package, or ``None`` (then the file is
            *unverified*: its sha256 is recorded in the manifest on first download).
        size: Size in bytes, when recorded.
        checksum_source: Where ``sha256`` (and ``size``) come from.
        dest: File name under the source's destination folder (default: the base name).
        unpacked_size: Bytes the archive's selected members take unpacked, when recorded.
    """

    path: str
    sha256: str | None = None
    size: int | None = None
    checksum_source: str = ""
    dest: str | None = None
    unpacked_size: int | None = None

    def __post_init__(self) -> None:
        if self.sha256 is not None and not _SHA256.fullmatch(self.sha256):
            raise ValueError(f"{self.path}: sha256 must be 64 lowercase hex digits")

    @property
    def verified(self) -> bool:
        """Whether the package records a checksum for this file."""
        return self.sha256 is not None

    @property
    def target_name(self) -> str:
        return self.dest or self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class FolderListing:
    """Files of a repository folder resolved when the download runs (names not known here).

    Attributes:
        folder: Folder inside the repository (``""`` for the root).
        patterns: ``fnmatch`` patterns on the path inside the folder; a file matching any is taken.
        keep_paths: Keep the paths relative to ``folder`` under the destination (else base names).
    """

    folder: str
    patterns: tuple[str, ...] = ("*",)
    keep_paths: bool = False


class Layout(Protocol):
    """Where a store's files go, for archives and for unpacked copies (dataset knowledge: the
    loaders define these)."""

    def target(self, member: str) -> str | None:
        """The path under :attr:`Unpack.into` of an archive member (or a file of an unpacked tree,
        relative to its root); ``None`` skips it."""
        ...

    def find_tree(self, folder: Path) -> Path | None:
        """An unpacked copy of the store in ``folder`` (``--from DIR``), if there is one."""
        ...


@dataclass(frozen=True)
class Unpack:
    """Unpack downloaded zip archives into one folder.

    Attributes:
        into: Folder (relative to the source's destination) that receives the members.
        members: ``fnmatch`` pattern on a member's base name; others are skipped and counted.
        flatten: Write members by base name (archives nest them differently: ``output_dev/0.json``,
            ``data_store/train/2000.json``); two members with one base name are an error.
        layout: Places members instead (and finds unpacked copies a user has); ``None``: flat.
    """

    into: str
    members: str = "*"
    flatten: bool = True
    layout: Layout | None = field(default=None, compare=False)

    def target(self) -> Callable[[str], str | None]:
        """The target function of this unpacking (:mod:`~averitec_tools.downloads.archive`)."""
        from averitec_tools.downloads.archive import flat

        return self.layout.target if self.layout is not None else flat(self.members)


@dataclass(frozen=True)
class DataSource:
    """One downloadable unit: a named dataset file set (one split, or the whole dataset).

    Attributes:
        name: The name users type (``averitec-store``).
        split: The split, or ``None`` for a source without splits.
        title: One line for listings.
        license: SPDX-style licence id.
        hub: Where the files live, or ``None`` when no hub copy is known (``--repo`` names one).
        dest: Folder under the output root (``averitec``); loaders look there.
        files: Files with known paths.
        listing: A folder whose files are listed at download time.
        unpack: How archives are unpacked (``None``: files are kept as they are).
        homepage: Where the dataset is described.
        notes: What a user should know (provenance, departures, known problems).
        check: Parses a fetched file (the loaders' reader) and says what it holds
            (``"500 claims"``); a file it refuses is not installed.
        mirrors: Further locations of the same files, tried in order when ``hub`` cannot
            serve them (unreachable, refused, missing); the recorded checksums hold for each.
    """

    name: str
    split: str | None
    title: str
    license: str
    hub: HubLocation | None
    dest: str
    files: tuple[RemoteFile, ...] = ()
    listing: FolderListing | None = None
    unpack: Unpack | None = None
    homepage: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    check: Callable[[Path], str] | None = field(default=None, compare=False, repr=False)
    mirrors: tuple[HubLocation, ...] = ()

    @property
    def key(self) -> str:
        return self.name if self.split is None else f"{self.name}/{self.split}"

    @property
    def verified(self) -> bool:
        """Every file has a checksum recorded in the package (a listing never does)."""
        return self.listing is None and bool(self.files) and all(f.verified for f in self.files)

    def with_hub(self, hub: HubLocation) -> DataSource:
        """The same source read from another repository (a mirror): checksums still apply."""
        return replace(self, hub=hub, mirrors=())

    def locations(self) -> list[DataSource]:
        """This source at its own location, then at each mirror, in the order they are tried.

        Example:
            >>> src = DataSource(name="d", split=None, title="D", license="cc0-1.0", dest="d",
            ...     hub=HubLocation("https://example.org/d", repo_type="url"), files=(RemoteFile("a.zip"),),
            ...     mirrors=(HubLocation("o/d", repo_type="dataset"),))
            >>> [s.hub.describe() for s in src.locations()]
            ['https://example.org/d', 'o/d (dataset, main)']
        """
        return [self, *(self.with_hub(m) for m in self.mirrors)] if self.hub is not None else [self]


#: Every registered source, by key (``name/split`` or ``name``).
SOURCES: Registry[DataSource] = Registry("data source")
_ORDER: list[str] = []  # registration order: the catalogue lists sources as users read them


def register_source(source: DataSource) -> DataSource:
    """Add ``source`` under its key (a duplicate key is a bug)."""
    if not source.files and source.listing is None:
        raise ValueError(f"{source.key}: a source needs files or a listing")
    SOURCES.add(source.key, source)
    _ORDER.append(source.key)
    return source


def source_names() -> list[str]:
    """Registered names (without splits), in registration order."""
    return list(dict.fromkeys(SOURCES.get(k).name for k in _keys_in_order()))


def _keys_in_order() -> Iterable[str]:
    return list(_ORDER)


def all_sources() -> list[DataSource]:
    """Every registered source, in registration order."""
    return [SOURCES.get(k) for k in _keys_in_order()]


def splits_of(name: str) -> list[str | None]:
    """The splits registered for ``name`` (``[None]`` for a source without splits)."""
    return [SOURCES.get(k).split for k in _keys_in_order() if SOURCES.get(k).name == name]


def get_sources(name: str, split: str | None = None) -> list[DataSource]:
    """The sources ``name`` (``--split S`` or ``all``) refers to.

    Raises:
        UserError: unknown name (with suggestions), a split the name lacks, or no split
            given for a name that has several.

    Example:
        >>> import averitec_tools.loaders.catalogue  # registers the dataset sources
        >>> [s.key for s in get_sources("averitec", "dev")], [s.key for s in get_sources("averitec/dev")]
        (['averitec/dev'], ['averitec/dev'])
        >>> [s.key for s in get_sources("averitec", "all")]
        ['averitec/train', 'averitec/dev', 'averitec/test']
    """
    if "/" in name and name in SOURCES:
        full = SOURCES.get(name)
        if split not in (None, full.split):
            raise UserError(f"{name!r} is the {full.split!r} split; got --split {split}")
        return [full]
    splits = splits_of(name)
    if not splits:
        names = Registry.of_names("data source", source_names())
        raise UserError(names.unknown_message(name), hint="averitec data list shows every name")
    if splits == [None]:
        if split not in (None, "all"):
            raise UserError(f"{name} has no splits; drop --split {split}")
        return [SOURCES.get(name)]
    listed = ", ".join(str(s) for s in splits)
    if split is None:
        if len(splits) == 1:
            return [SOURCES.get(f"{name}/{splits[0]}")]
        raise UserError(f"{name} has several splits: pass --split", hint=f"one of: {listed}, or all")
    if split == "all":
        return [SOURCES.get(f"{name}/{s}") for s in splits]
    if split not in splits:
        raise UserError(f"{name} has no split {split!r}", hint=f"splits: {listed}")
    return [SOURCES.get(f"{name}/{split}")]


__all__ = [
    "OFF_HUB_TYPES", "SOURCES", "DataSource", "FolderListing", "HubLocation", "RemoteFile", "Unpack", "all_sources",
    "get_sources", "register_source", "require_revision", "source_names", "splits_of",
]
