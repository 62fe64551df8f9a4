"""AVerImaTeC's knowledge store: ``averimatec/knowledge_store`` (text) and ``averimatec/knowledge_store_images``.

Layout per split (what the organisers' baseline reads from its ``DATASTORE_PATH``, and what
``averitec data download averimatec-store --split S --from DIR`` installs)::

    <root>/averimatec/Knowledge_Store/<split>/
        text_related/text_related_store_text_<split>/<i>.json    # pages found by text search
        text_related/image_related_store_text_<split>/<i>.json   # pages found by reverse image search
        image_related/image_related_store_image_<split>/<i>/*    # images found by text search

``<i>`` is the claim's position in its split file; the ``.json`` files are JSON lines with at
least ``url`` and ``url2text`` (the organisers' code reads no other field). The distributed
val and test archives unpack to ``converted_datastore/`` (which the organisers ask users to
rename); the install does the rename. Text rows: ``claim_id, store (text | image), type,
query, url, url2text``; image rows: ``claim_id, file (the path), image`` (a
``datasets.Image()`` of that file, so a user keeps either).

Example:
    >>> from averitec_tools.loaders.base import STORES
    >>> STORES.get("averimatec/knowledge_store").folder, STORES.get("averimatec/knowledge_store_images").splits
    ('Knowledge_Store/{split}', ('train', 'val', 'test'))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.loaders.averimatec import AVerImaTeCFamily
from averitec_tools.loaders.base import STORES
from averitec_tools.loaders.store_layouts import (
    AVERIMATEC_SPLITS,
    SUB_STORE,
    TOP_FOLDERS,
)
from averitec_tools.loaders.stores import (
    Shard,
    StoreSpec,
    claim_id_of,
    document_features,
    read_documents,
)

if TYPE_CHECKING:
    import datasets

SPLITS = AVERIMATEC_SPLITS
#: Sub-store folder → the ``store`` value of its rows.
TEXT_STORES = {"text_related_store_text": "text", "image_related_store_text": "image"}
IMAGE_STORE = "image_related_store_image"


class AVerImaTeCTextStore(StoreSpec):
    """The two text stores of a split, one row per page."""

    id: ClassVar[str] = "averimatec/knowledge_store"
    dataset: ClassVar[str] = "averimatec"
    folder: ClassVar[str] = "Knowledge_Store/{split}"
    splits: ClassVar[tuple[str, ...]] = SPLITS
    install: ClassVar[str] = "averitec data download averimatec-store --split {split} --from DIR"
    pretty_name: ClassVar[str] = "AVerImaTeC knowledge store"
    description: ClassVar[str] = ("The AVerImaTeC shared task's knowledge store: for every claim, the web pages found "
                                  "by text search (store=text) and by reverse image search (store=image).")
    license: ClassVar[str] = AVerImaTeCFamily.license
    homepage: ClassVar[str] = "https://github.com/abril4416/AVerImaTec_Shared_Task"
    citation: ClassVar[str] = AVerImaTeCFamily.citation

    def looks_like_split(self, folder: Path) -> bool:
        return any((folder / top).is_dir() for top in TOP_FOLDERS)

    def features(self) -> datasets.Features:
        import datasets

        base = document_features()
        return datasets.Features({"claim_id": base["claim_id"], "store": datasets.Value("string"),
                                  **{k: v for k, v in base.items() if k != "claim_id"}})

    def _folders(self, folder: Path) -> dict[str, Path]:
        """The split's text sub-stores, text search first (the order of :data:`TEXT_STORES`)."""
        split = folder.name if folder.name in SPLITS else None
        subs = sorted((folder / "text_related").glob("*")) if (folder / "text_related").is_dir() else []
        found = {}
        for prefix, store in TEXT_STORES.items():
            for sub in subs:
                match = SUB_STORE.match(sub.name)
                if match and match.group(1) == prefix and (split is None or match.group(2) == split):
                    found[store] = sub
        return found

    def shards(self, folder: Path, claim_ids: Iterable[int] | None) -> list[Shard]:
        stores = self._folders(folder)
        if claim_ids is None:
            ids = sorted({claim_id_of(p.name, folder=d) for d in stores.values() for p in d.iterdir()
                          if p.name.endswith(".json")})
        else:
            ids = list(claim_ids)
        shards = [Shard(i, tuple(str(d / f"{i}.json") for d in stores.values() if (d / f"{i}.json").is_file()))
                  for i in ids]
        missing = [s.claim_id for s in shards if not s.paths]
        if missing:
            raise UserError(f"{folder}: no knowledge-store file for claim {missing[0]} in "
                            f"{', '.join(str(d.relative_to(folder)) for d in stores.values())}")
        return shards

    def rows(self, shard: Shard) -> Iterator[dict[str, Any]]:
        for path in shard.paths:
            store = TEXT_STORES[SUB_STORE.match(Path(path).parent.name).group(1)]  # type: ignore[union-attr]
            for doc in read_documents(Path(path), claim_id=shard.claim_id):
                yield {"claim_id": doc.claim_id, "store": store, **{k: v for k, v in doc.to_dict().items()
                                                                    if k != "claim_id"}}

    def to_row(self, record: Any) -> dict[str, Any]:
        return {"store": None, **record.to_dict()}


class AVerImaTeCImageStore(AVerImaTeCTextStore):
    """The images found for each claim, one row per image file."""

    id: ClassVar[str] = "averimatec/knowledge_store_images"
    description: ClassVar[str] = ("The AVerImaTeC shared task's knowledge store: the images text search found for "
                                  "each claim (file: the path; image: the same file as a datasets.Image).")

    def features(self) -> datasets.Features:
        import datasets

        return datasets.Features({"claim_id": datasets.Value("int64"), "file": datasets.Value("string"),
                                  "image": datasets.Image()})

    def _image_root(self, folder: Path) -> Path | None:
        roots = sorted((folder / "image_related").glob(f"{IMAGE_STORE}_*")) if (folder / "image_related").is_dir() \
            else []
        return roots[0] if roots else None

    def shards(self, folder: Path, claim_ids: Iterable[int] | None) -> list[Shard]:
        root = self._image_root(folder)
        if root is None:
            raise UserError(f"{folder}: no image_related/{IMAGE_STORE}_<split> folder")
        ids = sorted(int(p.name) for p in root.iterdir() if p.is_dir() and p.name.isdigit()) \
            if claim_ids is None else list(claim_ids)
        return [Shard(i, tuple(sorted(str(p) for p in (root / str(i)).glob("*") if p.is_file()))) for i in ids]

    def rows(self, shard: Shard) -> Iterator[dict[str, Any]]:
        for path in shard.paths:
            yield {"claim_id": shard.claim_id, "file": path, "image": {"path": path, "bytes": None}}

    def records(self, shard: Shard) -> Iterator[Any]:
        yield from shard.paths

    def to_row(self, record: Any) -> dict[str, Any]:
        return {"file": record}

    def from_row(self, row: Mapping[str, Any]) -> Any:
        return row["file"]


TEXT_STORE, IMAGE_STORE_SPEC = AVerImaTeCTextStore(), AVerImaTeCImageStore()
STORES.add(TEXT_STORE.id, TEXT_STORE)
STORES.add(IMAGE_STORE_SPEC.id, IMAGE_STORE_SPEC)

__all__: list[str] = []
