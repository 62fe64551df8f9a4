"""The public loading functions: typed records, ``datasets.Dataset``, polars, statistics."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from averitec_tools.errors import UserError
from averitec_tools.loaders import r2vc
from averitec_tools.loaders.base import (
    FAMILIES,
    DatasetEntry,
    DatasetFamily,
    find_local_file,
    iter_hub_records,
    resolve,
)

if TYPE_CHECKING:
    import datasets
    import polars

PathArg = str | os.PathLike[str] | None


def _records(
    entry: DatasetEntry,
    family: DatasetFamily,
    split: str,
    *,
    data_dir: PathArg,
    hub_id: str | None,
    wiki_dir: PathArg,
) -> Iterator[Any]:
    records: Iterable[Any] = iter_family_records(family, split, data_dir=data_dir, hub_id=hub_id)
    if wiki_dir is not None:
        if family.name != "fever":
            raise UserError(f"wiki_dir only applies to FEVER, not {family.name}")
        from averitec_tools.loaders.fever import iter_with_wiki

        records = iter_with_wiki(records, wiki_dir)
    if entry.view == r2vc.VIEW:
        yield from r2vc.standardize_all(family, records, source=f"{family.name}/{split}")
    else:
        yield from records


def iter_dataset(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
) -> Iterator[Any]:
    """Iterate a dataset as typed records (no ``datasets`` needed).

    Records are :class:`~averitec_tools.records.AVeriTeCClaim`,
    :class:`~averitec_tools.records.FeverClaim`, :class:`~averitec_tools.records.VitaminCClaim`
    or, for ``*/r2vc`` views, :class:`~averitec_tools.records.StandardizedExample`.

    Args:
        name: A dataset id (``"averitec/dev"``, ``"fever/r2vc"``) or family (``"averitec"``).
        split: The split (needed for a family name or a view).
        data_dir: Folder (or file) with the upstream files; defaults to
            ``$AVERITEC_DATA_DIR`` when it has them, else the hub.
        hub_id: Hub repository (or local folder in hub layout) to read instead.
        wiki_dir: FEVER only: ``wiki-pages`` folder to fill in evidence sentences.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "REFUTES"}))
        >>> [r.label for r in iter_dataset("vitaminc/r2vc", split="dev", data_dir=d)]
        ['REFUTES']
    """
    entry, concrete = resolve(name, split)
    family = FAMILIES.get(entry.family)
    return _records(entry, family, concrete, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir)


def features_for(name: str, *, split: str | None = None) -> datasets.Features:
    """The explicit ``Features`` of ``load(name, split=...)``."""
    entry, _ = resolve(name, split)
    if entry.view == r2vc.VIEW:
        return r2vc.features()
    return FAMILIES.get(entry.family).features()


def _converters(name: str, split: str | None) -> tuple[Any, Any]:
    entry, _ = resolve(name, split)
    if entry.view == r2vc.VIEW:
        return r2vc.to_row, r2vc.from_row
    family = FAMILIES.get(entry.family)
    return family.to_row, family.from_row


def load(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
) -> datasets.Dataset:
    """Load a dataset split as a ``datasets.Dataset`` with explicit nested ``Features``.

    Args: see :func:`iter_dataset`.

    Raises:
        UserError: unknown id (with suggestions), missing split or files, malformed lines.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.json").write_text(json.dumps([{"claim": "c", "label": "Refuted",
        ...     "claim_date": "31-10-2020", "questions": []}]))
        >>> ds = load("averitec", split="dev", data_dir=d)
        >>> (ds[0]["claim_date_parsed"].year, ds.features["questions"].feature["answers"].feature["answer_type"].dtype)
        (2020, 'string')
    """
    import datasets

    to_row, _ = _converters(name, split)
    features = features_for(name, split=split)
    rows = [to_row(r) for r in iter_dataset(name, split=split, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir)]
    if not rows:
        return datasets.Dataset.from_dict({k: [] for k in features}, features=features)
    return datasets.Dataset.from_list(rows, features=features)


def records_from_dataset(dataset: datasets.Dataset, *, name: str, split: str | None = None) -> Iterator[Any]:
    """Typed records back from a ``Dataset`` produced by :func:`load` (or an export)."""
    _, from_row = _converters(name, split)
    for row in dataset:
        yield from_row(row)


def to_polars(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
) -> polars.DataFrame:
    """The dataset as a polars ``DataFrame`` (nested lists/structs kept as polars types).

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "SUPPORTS"}))
        >>> to_polars("vitaminc", split="dev", data_dir=d).shape
        (1, 9)
    """
    import polars as pl

    ds = load(name, split=split, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir)
    frame = pl.from_arrow(ds.data.table)
    assert isinstance(frame, pl.DataFrame)
    return frame


def dataset_stats(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
) -> dict[str, Any]:
    """Statistics of one split (AVeriTeC: the paper's §5 figures; see each family's ``stats``).

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "SUPPORTS"}))
        >>> dataset_stats("vitaminc/dev", data_dir=d)["labels"]
        {'SUPPORTS': 1}
    """
    entry, concrete = resolve(name, split)
    records = iter_dataset(name, split=split, data_dir=data_dir, hub_id=hub_id)
    body = r2vc.stats(records) if entry.view == r2vc.VIEW else FAMILIES.get(entry.family).stats(records)
    return {"dataset": entry.id if entry.split else f"{entry.id}:{concrete}", "split": concrete, **body}


def iter_family_records(
    family: DatasetFamily,
    split: str,
    *,
    data_dir: str | os.PathLike[str] | None,
    hub_id: str | None,
) -> Iterator[Any]:
    """Typed records of one split, from the first of: ``hub_id``; ``data_dir``;
    ``$AVERITEC_DATA_DIR``; the download root (:mod:`~averitec_tools.loaders.locate`); a
    verified download of the official file made now
    (:mod:`~averitec_tools.loaders.auto_download`); the family's default hub repository."""
    if split not in family.split_files:
        raise UserError(f"{family.name} has no split {split!r}", hint=f"splits: {', '.join(family.split_files)}")
    if hub_id is None:
        if data_dir is not None:
            yield from family.read_file(find_local_file(family, split, data_dir))
            return
        from averitec_tools.loaders.auto_download import downloaded_records
        from averitec_tools.loaders.locate import data_roots

        for root in data_roots():
            try:
                path = find_local_file(family, split, root)
            except UserError:
                continue
            yield from family.read_file(path)
            return
        records = downloaded_records(family, split)
        if records is not None:
            yield from records
            return
    yield from iter_hub_records(family, split, hub_id)


__all__ = ["dataset_stats", "features_for", "iter_dataset", "load", "records_from_dataset", "to_polars"]
