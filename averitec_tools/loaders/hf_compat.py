"""Parquet shards that every supported ``datasets`` release reads, images embedded.

``datasets`` 4 and later write list features as ``{"_type": "List", ...}`` into a parquet
file's ``huggingface`` schema metadata; 2.x and 3.x do not know that type, so a file written
by a new release fails to load with an older one without a card ("Feature type 'List' not
found" on 3.6; a ``TypeError`` on 2.19), e.g. with ``load_dataset("parquet", data_files=...)``
or ``Dataset.from_parquet``. The shards here carry the features in the older encoding
(a list feature as a one-element JSON list), which every release from
:data:`DATASETS_FLOOR` on reads as the same features; the card's YAML (``list:``) is read
by all of them. ``tests/test_export_readers.py`` loads an export with the floor, 3.6 and the
installed release. Image columns are embedded (the files' bytes go into the parquet, the
path keeps only the base name), as ``push_to_hub`` does, so an export is self-contained.

Example:
    >>> import datasets
    >>> legacy_features(datasets.Features({"q": [{"a": datasets.Value("string")}]}))
    {'q': [{'a': {'dtype': 'string', '_type': 'Value'}}]}
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datasets

#: The oldest ``datasets`` release an export is tested with (``pyproject.toml``'s floor).
DATASETS_FLOOR = "2.19"
#: Rows per row group for tables with media (images): what ``datasets`` itself uses.
MEDIA_ROW_GROUP = 100


def _legacy(obj: Any) -> Any:
    if isinstance(obj, dict):
        if obj.get("_type") in ("List", "Sequence") and obj.get("length", -1) == -1 and \
                set(obj) <= {"_type", "feature", "length"} and not _dict_sequence(obj):
            return [_legacy(obj["feature"])]
        return {k: _legacy(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_legacy(v) for v in obj]
    return obj


def _dict_sequence(obj: dict[str, Any]) -> bool:
    """An old-style ``Sequence`` of a dict means a dict of lists: it keeps its own encoding."""
    return obj.get("_type") == "Sequence" and isinstance(obj.get("feature"), dict) and "_type" not in obj["feature"]


def legacy_features(features: datasets.Features) -> dict[str, Any]:
    """``features.to_dict()`` with every variable-length list as a one-element JSON list."""
    return {k: _legacy(v) for k, v in features.to_dict().items()}


def has_media(features: datasets.Features) -> bool:
    """Whether any column (at any depth) is an ``Image`` (or ``Audio``) feature."""
    return any(t in json.dumps(features.to_dict()) for t in ('"_type": "Image"', '"_type": "Audio"'))


def compatible_table(ds: datasets.Dataset) -> Any:
    """``ds`` as an Arrow table with media embedded and the older features encoding in its metadata."""
    from datasets.table import embed_table_storage

    table = ds.with_format("arrow")[:]
    if has_media(ds.features) and table.num_rows:  # (an empty table has nothing to embed; pyarrow refuses it)
        table = embed_table_storage(table)
    meta = dict(table.schema.metadata or {})
    meta[b"huggingface"] = json.dumps({"info": {"features": legacy_features(ds.features)}}).encode()
    return table.replace_schema_metadata(meta)


def write_parquet(ds: datasets.Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``ds`` to one parquet file any supported ``datasets`` reads (see the module docstring)."""
    import pyarrow.parquet as pq

    table = compatible_table(ds)
    with pq.ParquetWriter(Path(path), table.schema) as writer:
        if table.num_rows:  # an empty split has no row group (one of 0 rows breaks readers' batching)
            writer.write_table(table, row_group_size=MEDIA_ROW_GROUP if has_media(ds.features) else None)


__all__ = ["DATASETS_FLOOR", "has_media", "write_parquet"]
