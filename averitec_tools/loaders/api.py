"""The public loading functions: typed records, ``datasets.Dataset``, polars, statistics."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from averitec_tools.errors import UserError
from averitec_tools.loaders import r2vc, stores
from averitec_tools.loaders.base import FAMILIES, STORES, DatasetEntry, DatasetFamily, resolve
from averitec_tools.loaders.origin import Origin, find_origin
from averitec_tools.loaders.provenance import Provenance

if TYPE_CHECKING:
    import datasets
    import polars

PathArg = str | os.PathLike[str] | None


def _records(
    entry: DatasetEntry,
    family: DatasetFamily,
    split: str,
    *,
    origin: Origin | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
    revision: str | None = None,
) -> Iterator[Any]:
    if origin is None:
        origin = find_origin(family, split, data_dir=data_dir, hub_id=hub_id, revision=revision)
    records: Iterable[Any] = origin.records()
    if wiki_dir is not None:
        if family.name != "fever":
            raise UserError(f"wiki_dir only applies to FEVER, not {family.name}")
        from averitec_tools.loaders.fever import iter_with_wiki

        records = iter_with_wiki(records, wiki_dir)
    if entry.view == r2vc.VIEW:
        yield from r2vc.standardize_all(family, records, source=f"{family.name}/{split}")
    else:
        yield from records


def _no_store_options(name: str, *, claim_ids: Any = None) -> None:
    if claim_ids is not None:
        raise UserError(f"claim_ids only applies to knowledge stores ({', '.join(STORES)}), not {name}")


def _no_family_options(name: str, **given: Any) -> None:
    wrong = [k for k, v in given.items() if v is not None]
    if wrong:
        raise UserError(f"{name}: {', '.join(wrong)} do not apply to a knowledge store",
                        hint="data_dir= names the store folder; install it with averitec data download")


def iter_dataset(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
    revision: str | None = None,
    claim_ids: Iterable[Any] | None = None,
) -> Iterator[Any]:
    """Iterate a dataset as typed records (no ``datasets`` needed).

    Records are :class:`~averitec_tools.records.AVeriTeCClaim`,
    :class:`~averitec_tools.records.FeverClaim`, :class:`~averitec_tools.records.VitaminCClaim`,
    for ``*/r2vc`` views :class:`~averitec_tools.records.StandardizedExample`, and for
    knowledge stores :class:`~averitec_tools.records.knowledge_store.StoreDocument`.

    Args:
        name: A dataset id (``"averitec/dev"``, ``"fever/r2vc"``, ``"averitec/knowledge_store"``)
            or family (``"averitec"``).
        split: The split (needed for a family name, a view or a store).
        data_dir: Folder (or file) with the upstream files; defaults to
            ``$AVERITEC_DATA_DIR`` when it has them, else the download root, else a download
            made now, else the hub.
        hub_id: Hub repository (or local folder in hub layout) to read instead.
        wiki_dir: FEVER only: ``wiki-pages`` folder to fill in evidence sentences.
        revision: The hub revision (commit, branch or tag) of what is fetched; default: the
            catalogue's pinned commit (see :mod:`~averitec_tools.loaders.origin`).
        claim_ids: Knowledge stores only: read these claims' files only.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "REFUTES"}))
        >>> [r.label for r in iter_dataset("vitaminc/r2vc", split="dev", data_dir=d)]
        ['REFUTES']
    """
    if name in STORES:
        _no_family_options(name, hub_id=hub_id, wiki_dir=wiki_dir, revision=revision)
        return stores.iter_store(name, split=split, data_dir=data_dir, claim_ids=claim_ids)
    _no_store_options(name, claim_ids=claim_ids)
    entry, concrete = resolve(name, split)
    family = FAMILIES.get(entry.family)
    return _records(entry, family, concrete, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir, revision=revision)


def features_for(name: str, *, split: str | None = None) -> datasets.Features:
    """The explicit ``Features`` of ``load(name, split=...)``."""
    if name in STORES:
        return STORES.get(name).features()
    entry, _ = resolve(name, split)
    if entry.view == r2vc.VIEW:
        return r2vc.features()
    return FAMILIES.get(entry.family).features()


def _converters(name: str, split: str | None) -> tuple[Any, Any]:
    if name in STORES:
        spec = STORES.get(name)
        return spec.to_row, spec.from_row
    entry, _ = resolve(name, split)
    if entry.view == r2vc.VIEW:
        return r2vc.to_row, r2vc.from_row
    family = FAMILIES.get(entry.family)
    return family.to_row, family.from_row


def dataset_info(name: str, split: str, provenance: Provenance) -> datasets.DatasetInfo:
    """The ``DatasetInfo`` of a loaded split: card fields, features, and which bytes were read
    (``description`` names the repository and commit; ``download_checksums`` the files' sha256)."""
    import datasets

    entry, _ = resolve(name, split)
    family = FAMILIES.get(entry.family)
    return datasets.DatasetInfo(
        description=f"{family.description}\n\n{provenance.describe()}", citation=family.citation,
        homepage=family.homepage, license=family.license, features=features_for(name, split=split),
        dataset_name=entry.id.replace("/", "-") if entry.split is None else family.name, config_name=split,
        download_checksums=provenance.checksums() or None,
    )


def generate_rows(name: str, split: str | None, origin: Origin, wiki_dir: PathArg) -> Iterator[dict[str, Any]]:
    """The rows of a split (the generator a streaming ``load`` hands to ``datasets``; it pickles)."""
    entry, concrete = resolve(name, split)
    family = FAMILIES.get(entry.family)
    records = _records(entry, family, concrete, origin=origin, wiki_dir=wiki_dir)
    if entry.view == r2vc.VIEW:
        yield from (r2vc.to_row(r) for r in records)
    else:
        yield from family.rows(records, source=origin.path)


def load(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
    revision: str | None = None,
    streaming: bool = False,
    claim_ids: Iterable[Any] | None = None,
    max_bytes: int = stores.DEFAULT_MAX_BYTES,
) -> datasets.Dataset | datasets.IterableDataset:
    """Load a split as a ``datasets.Dataset`` (``streaming``: an ``IterableDataset``) with
    explicit nested ``Features``; ``ds.info`` says which bytes were read (repository, commit,
    sha256: :func:`provenance`).

    Args: see :func:`iter_dataset`; knowledge stores (:mod:`~averitec_tools.loaders.stores`) also
        take ``max_bytes``, the most store bytes a non-streaming load reads into memory.

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
        >>> next(iter(load("averitec", split="dev", data_dir=d, streaming=True)))["claim"]
        'c'
    """
    import datasets

    if name in STORES:
        _no_family_options(name, hub_id=hub_id, wiki_dir=wiki_dir, revision=revision)
        return stores.load_store(name, split=split, data_dir=data_dir, streaming=streaming, claim_ids=claim_ids,
                                 max_bytes=max_bytes)
    _no_store_options(name, claim_ids=claim_ids)
    entry, concrete = resolve(name, split)
    origin = find_origin(FAMILIES.get(entry.family), concrete, data_dir=data_dir, hub_id=hub_id, revision=revision)
    features = features_for(name, split=split)
    info = dataset_info(name, concrete, origin.provenance)
    if streaming:
        ids = datasets.IterableDataset.from_generator(
            generate_rows, features=features,
            gen_kwargs={"name": name, "split": split, "origin": origin, "wiki_dir": wiki_dir})
        ids.info.update(info)
        return ids
    rows = list(generate_rows(name, split, origin, wiki_dir))
    if not rows:
        return datasets.Dataset.from_dict({k: [] for k in features}, features=features, info=info)
    return datasets.Dataset.from_list(rows, features=features, info=info)


def provenance(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    revision: str | None = None,
) -> Provenance:
    """Which bytes ``load(name, split=...)`` reads: repository, commit (when known), sha256.

    Example:
        >>> import pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "dev.json").write_text("[]")
        >>> provenance("averitec/dev", data_dir=d).signature_value()
        'sha256.4f53cda18c2b'
    """
    if name in STORES:
        _no_family_options(name, hub_id=hub_id, revision=revision)
        spec = STORES.get(name)
        folder = stores.find_split_folder(spec, split or "", data_dir)
        from averitec_tools.loaders.provenance import store_provenance

        return store_provenance(f"{name}:{split}", folder)
    entry, concrete = resolve(name, split)
    return find_origin(FAMILIES.get(entry.family), concrete, data_dir=data_dir, hub_id=hub_id,
                       revision=revision).provenance


def records_from_dataset(dataset: datasets.Dataset, *, name: str, split: str | None = None) -> Iterator[Any]:
    """Typed records back from a ``Dataset`` produced by :func:`load` (or an export); image
    columns are read undecoded (their file names are the records' image names)."""
    _, from_row = _converters(name, split)
    for row in _undecoded_rows(dataset, name=name, split=split):
        yield from_row(row)


def _undecoded_rows(dataset: Any, *, name: str, split: str | None) -> Iterator[Any]:
    """``dataset``'s rows, image columns as ``{"path", "bytes"}`` (not decoded to PIL images)."""
    entry = None if name in STORES else resolve(name, split)[0]
    family = None if entry is None or entry.view == r2vc.VIEW else FAMILIES.get(entry.family)
    if family is None or family.undecoded_features() == family.features():
        yield from dataset
        return
    import datasets

    if not isinstance(dataset, datasets.Dataset):
        yield from dataset.cast(family.undecoded_features())
        return
    for batch in dataset.with_format("arrow").iter(batch_size=256):
        yield from batch.to_pylist()


def to_polars(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    wiki_dir: PathArg = None,
    revision: str | None = None,
    claim_ids: Iterable[Any] | None = None,
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

    ds = load(name, split=split, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir, revision=revision,
              claim_ids=claim_ids)
    frame = pl.from_arrow(ds.data.table)  # type: ignore[union-attr]
    assert isinstance(frame, pl.DataFrame)
    return frame


def dataset_stats(
    name: str,
    *,
    split: str | None = None,
    data_dir: PathArg = None,
    hub_id: str | None = None,
    revision: str | None = None,
) -> dict[str, Any]:
    """Statistics of one split (AVeriTeC: the paper's §5 figures; see each family's ``stats``),
    and ``source``: which bytes were read (:func:`provenance`).

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "SUPPORTS"}))
        >>> dataset_stats("vitaminc/dev", data_dir=d)["labels"]
        {'SUPPORTS': 1}
    """
    entry, concrete = resolve(name, split)
    family = FAMILIES.get(entry.family)
    origin = find_origin(family, concrete, data_dir=data_dir, hub_id=hub_id, revision=revision)
    records = _records(entry, family, concrete, origin=origin)
    body = r2vc.stats(records) if entry.view == r2vc.VIEW else family.stats(records)
    published = family.published_sizes.get(concrete) if entry.view != r2vc.VIEW else None
    if published is not None:
        body["published_n_claims"] = published
        body["matches_published_size"] = body.get("n_claims") == published
    return {"dataset": entry.id if entry.split else f"{entry.id}:{concrete}", "split": concrete, **body,
            "source": origin.provenance.to_dict()}


__all__ = ["dataset_info", "dataset_stats", "features_for", "iter_dataset", "load", "provenance",
           "records_from_dataset", "to_polars"]
