"""``averitec/knowledge_store``: the AVeriTeC 2024 shared task's per-claim web store (and FEVER-8's).

Layout (what ``averitec data download averitec-store --split S`` installs)::

    <root>/averitec/knowledge_store/<split>/<claim_id>.json     # JSON lines, one page each

each line ``{claim_id, type, query, url, url2text: [sentence, ...]}``; splits ``train``,
``dev``, ``test`` (the updated 2024 test store) and ``test_2025`` (FEVER-8's). One row per
line: ``claim_id`` (the file's name), ``type``, ``query``, ``url``, ``url2text``.

Example:
    >>> from averitec_tools.loaders.base import STORES
    >>> STORES.get("averitec/knowledge_store").splits
    ('train', 'dev', 'test', 'test_2025')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.loaders.averitec import AVeriTeCFamily
from averitec_tools.loaders.base import STORES
from averitec_tools.loaders.stores import (
    CLAIM_FILE,
    Shard,
    StoreSpec,
    document_features,
    flat_shards,
    read_documents,
)

if TYPE_CHECKING:
    import datasets


class AVeriTeCStore(StoreSpec):
    """The 2024 layout: one JSON-lines file per claim, flat in the split folder."""

    id: ClassVar[str] = "averitec/knowledge_store"
    dataset: ClassVar[str] = "averitec"
    folder: ClassVar[str] = "knowledge_store/{split}"
    splits: ClassVar[tuple[str, ...]] = ("train", "dev", "test", "test_2025")
    install: ClassVar[str] = "averitec data download averitec-store --split {split}"
    pretty_name: ClassVar[str] = "AVeriTeC knowledge store"
    description: ClassVar[str] = ("The AVeriTeC 2024 shared task's knowledge store: for every claim, the web pages "
                                  "its search queries found, one row per page (url2text: the page's sentences).")
    license: ClassVar[str] = AVeriTeCFamily.license
    homepage: ClassVar[str] = AVeriTeCFamily.homepage
    citation: ClassVar[str] = AVeriTeCFamily.citation

    def features(self) -> datasets.Features:
        return document_features()

    def shards(self, folder: Path, claim_ids: Iterable[int] | None) -> list[Shard]:
        return flat_shards(folder, claim_ids)

    def rows(self, shard: Shard) -> Iterator[dict[str, Any]]:
        for path in shard.paths:
            for doc in read_documents(Path(path), claim_id=shard.claim_id):
                yield doc.to_dict()


class FlatLayout:
    """The 2024 store in an archive or an unpacked folder: claim files (``<claim_id>.json``) by base name,
    however the archive nests them (``output_dev/0.json``, ``0.json``, ``data_store/train/2000.json``).

    Example:
        >>> FLAT_LAYOUT.target("output_dev/12.json"), FLAT_LAYOUT.target("output_dev/notes.json")
        ('12.json', None)
    """

    def target(self, member: str) -> str | None:
        parts = member.replace("\\", "/").split("/")
        return parts[-1] if parts[0] != "__MACOSX" and CLAIM_FILE.match(parts[-1]) else None

    def find_tree(self, folder: Path) -> Path | None:
        """``folder`` or a folder up to two levels below it holding claim files directly."""
        levels = [[folder]]
        for _ in range(2):
            levels.append([d for parent in levels[-1] for d in sorted(parent.iterdir()) if d.is_dir()])
        for candidate in (d for level in levels for d in level):
            if any(CLAIM_FILE.match(p.name) for p in candidate.iterdir() if p.is_file()):
                return candidate
        return None


FLAT_LAYOUT = FlatLayout()
AVERITEC_STORE = AVeriTeCStore()
STORES.add(AVERITEC_STORE.id, AVERITEC_STORE)

__all__ = ["AVERITEC_STORE", "FLAT_LAYOUT", "AVeriTeCStore", "FlatLayout"]
