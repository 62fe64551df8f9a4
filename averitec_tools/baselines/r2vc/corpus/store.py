"""Stage 1: the paragraph store ``(doc_id, title, url, text)`` behind every retriever.

A store is a directory with two files:

- ``paragraphs.arrow``: an uncompressed Arrow IPC file, memory-mapped on open, so a
  store of millions of paragraphs opens instantly and only touched pages are read;
- ``corpus.json``: format version, number of rows and a fingerprint that indexes record,
  so an index built from another corpus is refused instead of returning wrong passages.

Rows are addressed by position (retrievers store row numbers) and by ``doc_id`` (unique;
the id → row map is built on first use). Input adapters: JSONL/JSON records with
``doc_id``/``title``/``url``/``text`` (``id`` is accepted for ``doc_id``) and
WikiExtractor-style article dumps (``{"id", "title", "url", "text"}`` per line), split
into paragraphs (:mod:`~averitec_tools.baselines.r2vc.corpus.wikipedia`).

Example:
    >>> store = build_corpus(passages=[
    ...     {"doc_id": "p1", "title": "T", "url": "https://x", "text": "First."},
    ...     {"doc_id": "p2", "title": "T", "url": "https://x", "text": "Second."},
    ... ])
    >>> len(store), store.get("p2").text, store.passage(0).doc_id
    (2, 'Second.', 'p1')
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer, iter_records
from averitec_tools.outputs import umask

if TYPE_CHECKING:
    import pyarrow as pa

FORMAT_VERSION = 1
DATA_FILE = "paragraphs.arrow"
META_FILE = "corpus.json"
FIELDS: tuple[str, ...] = ("doc_id", "title", "url", "text")
_WRITE_BATCH = 8192


def _schema() -> pa.Schema:
    import pyarrow as pa

    return pa.schema([(f, pa.string()) for f in FIELDS])


def _rebuild_hint(path: Path) -> str:
    return f"rebuild it with averitec_tools.baselines.r2vc.corpus.store.build_corpus(..., out_dir='{path}')"


class ParagraphStore:
    """Read-only paragraph store over an Arrow table (memory-mapped when opened from disk).

    Use :meth:`open` for a directory written by :func:`build_corpus`, or
    :func:`build_corpus` with ``out_dir=None`` for an in-memory store.

    Attributes:
        fingerprint: Identifies the corpus content; indexes record it.
        path: The store directory, or ``None`` for an in-memory store.
    """

    def __init__(self, table: pa.Table, *, fingerprint: str, path: Path | None = None) -> None:
        self._table = table
        self.fingerprint = fingerprint
        self.path = path
        self._row_of: dict[str, int] | None = None

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ParagraphStore:
        """Open a store directory, memory-mapping its Arrow file.

        Raises:
            UserError: The directory, its metadata or its data file is missing or corrupt.
        """
        import pyarrow as pa

        root = Path(path)
        meta_path = root / META_FILE
        data_path = root / DATA_FILE
        if not root.is_dir():
            raise UserError(f"{root}: corpus directory not found", hint=_rebuild_hint(root))
        if not meta_path.exists() or not data_path.exists():
            raise UserError(
                f"{root}: not a paragraph store (needs {META_FILE} and {DATA_FILE})",
                hint=_rebuild_hint(root),
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            fingerprint = str(meta["fingerprint"])
            n_rows = int(meta["num_paragraphs"])
            version = int(meta["format_version"])
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{meta_path}: corrupt corpus metadata ({exc})", hint=_rebuild_hint(root)) from None
        if version != FORMAT_VERSION:
            raise UserError(
                f"{meta_path}: corpus format version {version}, this version reads {FORMAT_VERSION}",
                hint=_rebuild_hint(root),
            )
        try:
            source = pa.memory_map(str(data_path), "r")
            table = pa.ipc.open_file(source).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise UserError(f"{data_path}: corrupt paragraph file ({exc})", hint=_rebuild_hint(root)) from None
        if table.num_rows != n_rows or table.schema.names != list(FIELDS):
            raise UserError(
                f"{data_path}: holds {table.num_rows} rows with columns {table.schema.names}, "
                f"metadata says {n_rows} rows with {list(FIELDS)}",
                hint=_rebuild_hint(root),
            )
        return cls(table, fingerprint=fingerprint, path=root)

    def __len__(self) -> int:
        return int(self._table.num_rows)

    def _row(self, row: int) -> Passage:
        values = [self._table.column(f)[row].as_py() for f in FIELDS]
        return Passage(*(v or "" for v in values))

    def passage(self, row: int) -> Passage:
        """The passage at ``row`` (0-based; negative indexes count from the end)."""
        n = len(self)
        if not -n <= row < n:
            raise IndexError(f"row {row} out of range for a corpus of {n} paragraphs")
        return self._row(row % n)

    def passages(self, rows: Sequence[int]) -> list[Passage]:
        """The passages at ``rows``, in that order (one vectorised ``take``)."""
        if len(rows) == 0:
            return []
        sub = self._table.take(list(rows))
        cols = [sub.column(f).to_pylist() for f in FIELDS]
        return [Passage(*(v or "" for v in vals)) for vals in zip(*cols, strict=True)]

    def row_of(self, doc_id: str) -> int:
        """Row number of ``doc_id``; raises ``KeyError`` if absent."""
        if self._row_of is None:
            ids = self._table.column("doc_id").to_pylist()
            self._row_of = {d: i for i, d in enumerate(ids)}
        return self._row_of[doc_id]

    def get(self, doc_id: str) -> Passage:
        """The passage with ``doc_id``; raises ``KeyError`` if absent."""
        return self._row(self.row_of(doc_id))

    def __contains__(self, doc_id: object) -> bool:
        if not isinstance(doc_id, str):
            return False
        try:
            self.row_of(doc_id)
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[Passage]:
        for batch in self.iter_batches(batch_size=_WRITE_BATCH):
            yield from batch

    def iter_batches(self, *, batch_size: int = _WRITE_BATCH) -> Iterator[list[Passage]]:
        """Yield the passages in row order, ``batch_size`` at a time."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        for start in range(0, len(self), batch_size):
            sub = self._table.slice(start, batch_size)
            cols = [sub.column(f).to_pylist() for f in FIELDS]
            yield [Passage(*(v or "" for v in vals)) for vals in zip(*cols, strict=True)]

    def iter_texts(self, *, batch_size: int = _WRITE_BATCH, include_title: bool = False) -> Iterator[list[str]]:
        """Yield the text to index for each row (``title\\ntext`` with ``include_title``)."""
        for batch in self.iter_batches(batch_size=batch_size):
            yield [index_text(p, include_title=include_title) for p in batch]


def index_text(passage: Passage, *, include_title: bool) -> str:
    """The string a retriever indexes for ``passage``.

    Example:
        >>> index_text(Passage("d", "Paris", "", "Capital."), include_title=True)
        'Paris\\nCapital.'
    """
    if include_title and passage.title:
        return f"{passage.title}\n{passage.text}"
    return passage.text


def _coerce(record: Any, *, where: str) -> Passage:
    if isinstance(record, Passage):
        p = record
    elif isinstance(record, Mapping):
        doc_id = record.get("doc_id", record.get("id"))
        if doc_id is None or (isinstance(doc_id, str) and not doc_id.strip()):
            raise UserError(f"{where}: paragraph has no 'doc_id' (or 'id')")
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
            raise UserError(f"{where}: 'doc_id' must be a string or integer, got {type(doc_id).__name__}")
        for field in ("title", "url", "text"):
            value = record.get(field)
            if value is not None and not isinstance(value, str):
                raise UserError(f"{where}: '{field}' must be a string, got {type(value).__name__}")
        p = Passage(
            doc_id=str(doc_id),
            title=record.get("title") or "",
            url=record.get("url") or "",
            text=record.get("text") or "",
        )
    else:
        raise UserError(f"{where}: expected a JSON object with doc_id/title/url/text, got {type(record).__name__}")
    if not p.text.strip():
        raise UserError(f"{where}: paragraph {p.doc_id!r} has empty 'text'")
    return p


def build_corpus(
    *,
    passages: Iterable[Passage | Mapping[str, Any]],
    out_dir: str | os.PathLike[str] | None = None,
    source: str = "<passages>",
) -> ParagraphStore:
    """Build a paragraph store from passages (``Passage`` objects or dicts), streaming.

    Args:
        passages: Paragraphs with unique ``doc_id`` and non-empty ``text``.
        out_dir: Directory to write (files replaced atomically); ``None`` keeps the store
            in memory.
        source: Name used in error messages (e.g. the input file).

    Returns:
        The store, memory-mapped from ``out_dir`` when given.

    Raises:
        UserError: Duplicate ``doc_id``, empty text, wrong field types, or no passages.

    Example:
        >>> store = build_corpus(passages=[{"id": 7, "text": "Hello."}])
        >>> store.get("7").text
        'Hello.'
    """
    import pyarrow as pa

    read = _PassageBatches(passages, source=source)
    if out_dir is None:
        table = pa.Table.from_batches(list(read), schema=read.schema)
        _check_nonempty(read.count, source)
        return ParagraphStore(table, fingerprint=f"{read.digest.hexdigest()[:16]}-{read.count}")
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=root, prefix=f".{DATA_FILE}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~umask())  # mkstemp's 0600 would outlive the rename: give open()'s mode
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, read.schema) as writer:
            for batch in read:
                writer.write_batch(batch)
        _check_nonempty(read.count, source)
        fingerprint = f"{read.digest.hexdigest()[:16]}-{read.count}-{uuid.uuid4().hex[:8]}"
        # Metadata goes last: a store with stale metadata fails the row-count check on open.
        (root / META_FILE).unlink(missing_ok=True)
        os.replace(tmp, root / DATA_FILE)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    with atomic_writer(root / META_FILE) as fh:
        json.dump(
            {"format_version": FORMAT_VERSION, "num_paragraphs": read.count, "fingerprint": fingerprint,
             "source": source},
            fh,
            indent=2,
        )
    return ParagraphStore.open(root)


class _PassageBatches:
    """The passages of :func:`build_corpus`, checked (unique ``doc_id``, non-empty text) and cut
    into Arrow record batches as they stream by; ``count`` and ``digest`` (of the ids, in order)
    grow with them. Iterate once."""

    def __init__(self, passages: Iterable[Passage | Mapping[str, Any]], *, source: str) -> None:
        self.passages = passages
        self.source = source
        self.schema = _schema()
        self.seen: set[str] = set()
        self.digest = hashlib.sha256()
        self.count = 0

    def __iter__(self) -> Iterator[Any]:
        buf: list[Passage] = []
        for i, record in enumerate(self.passages):
            where = getattr(record, "_where", None) or f"{self.source}[{i}]"
            p = _coerce(record, where=where)
            if p.doc_id in self.seen:
                raise UserError(f"{where}: duplicate doc_id {p.doc_id!r}", hint="doc_ids must be unique paragraph ids")
            self.seen.add(p.doc_id)
            self.digest.update(p.doc_id.encode("utf-8") + b"\0")
            buf.append(p)
            self.count += 1
            if len(buf) >= _WRITE_BATCH:
                yield _to_batch(buf, self.schema)
                buf = []
        if buf:
            yield _to_batch(buf, self.schema)


def _check_nonempty(count: int, source: str) -> None:
    if count == 0:
        raise UserError(f"{source}: no paragraphs to index")


def _to_batch(buf: list[Passage], schema: pa.Schema) -> pa.RecordBatch:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [pa.array([getattr(p, f) for p in buf], type=pa.string()) for f in FIELDS], schema=schema
    )


class _Where(dict):  # type: ignore[type-arg]
    """A dict that remembers its file:line for error messages."""

    _where: str


def _located(path: str | os.PathLike[str]) -> Iterator[Any]:
    for item in iter_records(path):
        value = item.value
        if isinstance(value, dict):
            wrapped = _Where(value)
            wrapped._where = item.where
            yield wrapped
        else:
            raise UserError(f"{item.where}: expected a JSON object with doc_id/title/url/text")


def build_corpus_from_jsonl(
    *, path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None
) -> ParagraphStore:
    """Build a store from a JSONL (or JSON array) file of paragraph records.

    Each record has ``doc_id`` (or ``id``), ``text`` and optional ``title`` and ``url``.
    Errors name the file and line.
    """
    return build_corpus(passages=_located(path), out_dir=out_dir, source=str(path))


__all__ = ["ParagraphStore", "build_corpus", "build_corpus_from_jsonl", "index_text"]
