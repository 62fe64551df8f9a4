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


AVERITEC_STORE = AVeriTeCStore()
STORES.add(AVERITEC_STORE.id, AVERITEC_STORE)

__all__: list[str] = []
