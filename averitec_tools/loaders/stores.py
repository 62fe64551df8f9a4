"""Knowledge stores as ``datasets``: one row per retrieved document, streamed file by file.

A store is a folder per split holding one file per claim (``<claim_id>.json``, JSON lines),
tens of gigabytes in all: :func:`load_store` with ``streaming=True`` returns a
``datasets.IterableDataset`` that reads one line at a time (each line and each file
bounded, :data:`STORE_LIMITS`), sharded by claim file (``n_shards`` = files, so a
``DataLoader`` with workers splits the claims between them); without ``streaming`` it
builds a ``Dataset`` in memory, for selections (``claim_ids=``) up to ``max_bytes`` of
store files. A bad line is a :class:`~averitec_tools.errors.UserError` naming the file
and the line. Stores are never downloaded implicitly: ``averitec data download``.

A store is a :class:`StoreSpec` registered in :data:`~averitec_tools.loaders.base.STORES`
(``averitec/knowledge_store`` here, AVerImaTeC's in its own module).

Example:
    >>> import json, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp()); store = root / "averitec" / "knowledge_store" / "dev"
    >>> store.mkdir(parents=True)
    >>> _ = (store / "7.json").write_text(json.dumps({"claim_id": 7, "type": "claim", "query": "q",
    ...                                               "url": "https://e.org", "url2text": ["A.", "B."]}) + "\\n")
    >>> ds = load_store("averitec/knowledge_store", split="dev", data_dir=root, streaming=True)
    >>> next(iter(ds))["url2text"], ds.n_shards
    (['A.', 'B.'], 1)
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.jsonbounds import ReadLimits
from averitec_tools.jsonio import iter_jsonl
from averitec_tools.loaders.base import STORES, list_of
from averitec_tools.loaders.store_layouts import CLAIM_FILE
from averitec_tools.records.knowledge_store import StoreDocument

if TYPE_CHECKING:
    import datasets

PathArg = str | os.PathLike[str] | None

#: Bounds of one store file: a line (one page) and a whole claim file. Streaming keeps one line
#: in memory; the file bound only stops an endless input (``/dev/zero``), far above real claims.
STORE_LIMITS = ReadLimits(max_bytes=64 << 30, max_line_bytes=64 << 20)
#: Store bytes a non-streaming ``load`` reads into memory at most (``max_bytes=`` raises it).
DEFAULT_MAX_BYTES = 1 << 30



@dataclass(frozen=True)
class Shard:
    """The files of one claim that one generator call reads (``datasets`` shards on these)."""

    claim_id: int
    paths: tuple[str, ...]

    @property
    def size(self) -> int:
        return sum(os.path.getsize(p) for p in self.paths)


class StoreSpec(ABC):
    """One knowledge store: where its split folders live, its rows and features."""

    #: The id users pass to ``loaders.load`` (``averitec/knowledge_store``).
    id: ClassVar[str]
    #: The dataset folder under a data root (``averitec``).
    dataset: ClassVar[str]
    #: The split folder under ``<root>/<dataset>``, with ``{split}`` (``knowledge_store/{split}``).
    folder: ClassVar[str]
    splits: ClassVar[tuple[str, ...]]
    #: The command that installs a split (``{split}`` filled in).
    install: ClassVar[str]
    pretty_name: ClassVar[str]
    description: ClassVar[str]
    license: ClassVar[str]
    homepage: ClassVar[str]
    citation: ClassVar[str]

    @abstractmethod
    def features(self) -> datasets.Features:
        """The explicit ``Features`` of :meth:`rows`."""

    @abstractmethod
    def shards(self, folder: Path, claim_ids: Iterable[int] | None) -> list[Shard]:
        """The claims' files under the split ``folder`` (all claims when ``claim_ids`` is None)."""

    @abstractmethod
    def rows(self, shard: Shard) -> Iterator[dict[str, Any]]:
        """The rows of one claim."""

    def records(self, shard: Shard) -> Iterator[Any]:
        """Typed records of one claim (the text stores: :class:`StoreDocument`)."""
        for path in shard.paths:
            yield from read_documents(Path(path), claim_id=shard.claim_id)

    def to_row(self, record: Any) -> dict[str, Any]:
        """A row of :meth:`features` from a typed record."""
        return dict(record.to_dict())

    def from_row(self, row: Mapping[str, Any]) -> Any:
        """The typed record back from a row."""
        return StoreDocument(claim_id=row["claim_id"], type=row.get("type"), query=row.get("query"),
                             url=row["url"], url2text=tuple(row.get("url2text") or ()))

    def looks_like_split(self, folder: Path) -> bool:
        """Whether ``folder`` is itself a split folder of this store."""
        return folder.is_dir() and any(CLAIM_FILE.match(p.name) for p in folder.iterdir())


def read_documents(path: Path, *, claim_id: int) -> Iterator[StoreDocument]:
    """The documents of one store file, one line at a time (bounded by :data:`STORE_LIMITS`).

    Raises:
        UserError: a malformed line, naming the file and the line.
    """
    for loc in iter_jsonl(path, limits=STORE_LIMITS):
        yield StoreDocument.from_dict(loc.value, where=loc.where, claim_id=claim_id)


def claim_id_of(name: str, *, folder: Path) -> int:
    """The claim id a store file's name gives (``17.json`` → 17).

    Raises:
        UserError: the name is not ``<digits>.json``.
    """
    match = CLAIM_FILE.match(name)
    if match is None:
        raise UserError(f"{folder / name}: not a knowledge-store file (expected <claim_id>.json)",
                        hint="move other files out of the store folder")
    return int(match.group(1))


def normalise_ids(claim_ids: Iterable[Any]) -> list[int]:
    """Claim ids as non-negative ints, in the order given, without repeats.

    Example:
        >>> normalise_ids([3, "1", 3])
        [3, 1]
    """
    if isinstance(claim_ids, str | bytes):
        raise UserError("claim_ids must be a list of claim ids, not a string")
    out: dict[int, None] = {}
    for raw in claim_ids:
        text = str(raw).strip()
        if isinstance(raw, bool) or not text.isdigit():
            raise UserError(f"claim_ids: {raw!r} is not a claim id (a non-negative integer)")
        out[int(text)] = None
    return list(out)


def flat_shards(folder: Path, claim_ids: Iterable[int] | None) -> list[Shard]:
    """One shard per ``<claim_id>.json`` file of ``folder`` (sorted by id), or of ``claim_ids``.

    Raises:
        UserError: a requested claim has no file, or a ``*.json`` file is not named by a claim id.
    """
    if claim_ids is None:
        ids = sorted(claim_id_of(p.name, folder=folder) for p in folder.iterdir() if p.name.endswith(".json"))
        return [Shard(i, (str(folder / f"{i}.json"),)) for i in ids]
    shards = []
    for i in claim_ids:
        path = folder / f"{i}.json"
        if not path.is_file():
            raise UserError(f"{folder}: no knowledge-store file for claim {i} ({path.name})")
        shards.append(Shard(i, (str(path),)))
    return shards


def find_split_folder(spec: StoreSpec, split: str, data_dir: PathArg) -> Path:
    """The split folder: ``data_dir`` itself, or ``<data_dir>/[<dataset>/]<folder>`` (or
    ``<data_dir>/<split>``); without ``data_dir``, the data roots
    (:func:`~averitec_tools.loaders.locate.data_roots`).

    Raises:
        UserError: unknown split, or no folder found (saying how to install one).
    """
    if split not in spec.splits:
        raise UserError(f"{spec.id} has no split {split!r}", hint=f"splits: {', '.join(spec.splits)}")
    rel = spec.folder.format(split=split)
    if data_dir is not None:
        root = Path(data_dir)
        if not root.is_dir():
            raise UserError(f"{root}: no such directory (data_dir for {spec.id}, split {split})")
        candidates = [root / spec.dataset / rel, root / rel, root / split, root]
    else:
        from averitec_tools.loaders.locate import data_roots

        candidates = [r / spec.dataset / rel for r in data_roots()]
    for folder in candidates:
        if spec.looks_like_split(folder):
            return folder
    where = str(Path(data_dir)) if data_dir is not None else "the data roots ($AVERITEC_DATA_DIR, the download root)"
    raise UserError(f"{spec.id}: no {split} store in {where} (looked for {spec.dataset}/{rel})",
                    hint=f"install it: {spec.install.format(split=split)}; or pass data_dir= the split folder")


def generate_rows(store: str, shards: list[Shard]) -> Iterator[dict[str, Any]]:
    """The rows of ``shards`` (the generator ``datasets`` runs; module level, so it pickles)."""
    spec = STORES.get(store)
    for shard in shards:
        yield from spec.rows(shard)


def _info(spec: StoreSpec, split: str, folder: Path) -> datasets.DatasetInfo:
    import datasets

    from averitec_tools.loaders.provenance import store_provenance

    prov = store_provenance(f"{spec.id}:{split}", folder)
    return datasets.DatasetInfo(
        description=f"{spec.description}\n\n{prov.describe()}", citation=spec.citation, homepage=spec.homepage,
        license=spec.license, features=spec.features(), dataset_name=spec.id.replace("/", "-"),
        config_name=split, download_checksums=prov.checksums() or None,
    )


def load_store(
    name: str,
    *,
    split: str | None,
    data_dir: PathArg = None,
    streaming: bool = False,
    claim_ids: Iterable[Any] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> datasets.Dataset | datasets.IterableDataset:
    """A knowledge store split as rows (see the module docstring).

    Args:
        name: The store id (``averitec/knowledge_store``).
        split: Its split.
        data_dir: The split folder, or a data root holding ``<dataset>/<folder>``.
        streaming: Return an ``IterableDataset`` that reads as it is iterated.
        claim_ids: Only these claims (their files are looked up directly, not listed).
        max_bytes: Without ``streaming``, refuse selections whose files hold more bytes.

    Raises:
        UserError: unknown store or split, no store found, a requested claim without a file,
            a selection too large to hold in memory, or (when read) a bad line.
    """
    import datasets

    spec = STORES.get(name)
    if split is None:
        raise UserError(f"{name} needs a split", hint=f"split= one of: {', '.join(spec.splits)}")
    folder = find_split_folder(spec, split, data_dir)
    shards = spec.shards(folder, None if claim_ids is None else normalise_ids(claim_ids))
    info = _info(spec, split, folder)
    if streaming:
        ds = datasets.IterableDataset.from_generator(generate_rows, features=spec.features(),
                                                     gen_kwargs={"store": spec.id, "shards": shards})
        ds.info.update(info)
        return ds
    total = sum(s.size for s in shards)
    if total > max_bytes:
        from averitec_tools.downloads import human

        raise UserError(f"{name} ({split}): the selection holds {human(total)} of store files, more than "
                        f"{human(max_bytes)} to read into memory",
                        hint="pass streaming=True, fewer claim_ids, or a larger max_bytes")
    rows = list(generate_rows(spec.id, shards))
    if not rows:
        return datasets.Dataset.from_dict({k: [] for k in spec.features()}, features=spec.features(), info=info)
    return datasets.Dataset.from_list(rows, features=spec.features(), info=info)


def iter_store(name: str, *, split: str | None, data_dir: PathArg = None,
               claim_ids: Iterable[Any] | None = None) -> Iterator[Any]:
    """The store's typed records (:class:`StoreDocument` for text stores), claim by claim."""
    spec = STORES.get(name)
    if split is None:
        raise UserError(f"{name} needs a split", hint=f"split= one of: {', '.join(spec.splits)}")
    folder = find_split_folder(spec, split, data_dir)
    for shard in spec.shards(folder, None if claim_ids is None else normalise_ids(claim_ids)):
        yield from spec.records(shard)


def document_features() -> datasets.Features:
    """``claim_id, type, query, url, url2text`` (a list of sentences)."""
    import datasets

    string = datasets.Value("string")
    return datasets.Features({"claim_id": datasets.Value("int64"), "type": string, "query": string,
                              "url": string, "url2text": list_of(string)})


__all__ = ["DEFAULT_MAX_BYTES", "STORE_LIMITS", "Shard", "StoreSpec", "claim_id_of", "document_features", "find_split_folder", "flat_shards", "generate_rows", "iter_store", "load_store", "read_documents"]
