"""Export a split to a folder that ``datasets.load_dataset(folder)`` reads back identically.

Layout (the Hugging Face hub's, no loading script — datasets ≥ 4 dropped those)::

    OUT/
      README.md                       # dataset card: YAML configs, features, license, citation
      data/<split>-00000-of-0000N.parquet

Exporting several splits of the same dataset into one folder accumulates them; the card
lists every split present. Each file is written to a temporary name and renamed, so an
interrupted export never leaves a partial shard or card.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer
from averitec_tools.loaders import r2vc
from averitec_tools.loaders.api import load, provenance
from averitec_tools.loaders.base import DATA_DIR_ENV, FAMILIES, find_local_file, resolve
from averitec_tools.loaders.hf_compat import DATASETS_FLOOR, has_media, write_parquet
from averitec_tools.outputs import check_output_dir, umask

#: Rows per parquet shard; with embedded images (AVerImaTeC), claims per shard (~a few hundred MB).
SHARD_ROWS = 100_000
MEDIA_SHARD_ROWS = 200
_SHARD_RE = re.compile(r"^(?P<split>[A-Za-z0-9_.]+)-(?P<i>\d{5})-of-(?P<n>\d{5})\.parquet$")


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_hf` wrote."""

    out_dir: str
    dataset: str
    split: str
    n_rows: int
    shards: tuple[str, ...]
    card: str
    source: str = "unknown"


def _dataset_key(name: str, split: str | None) -> tuple[str, str]:
    """(config/pretty id, family) for the card; views get their own pretty name."""
    entry, _ = resolve(name, split)
    family = FAMILIES.get(entry.family)
    if entry.view == r2vc.VIEW:
        return f"{family.pretty_name} (R2VC standardised)", family.name
    return family.pretty_name, family.name


def _card(*, pretty_name: str, family_name: str, view: bool, features_yaml: list[Any], splits: dict[str, int],
          sources: dict[str, str]) -> str:
    family = FAMILIES.get(family_name)
    meta: dict[str, Any] = {
        "pretty_name": pretty_name,
        "license": family.license,
        "language": ["en"],
        "task_categories": ["text-classification"],
        "tags": ["fact-checking", "averitec-tools"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": s, "path": f"data/{s}-*.parquet"} for s in sorted(splits)],
            }
        ],
        "dataset_info": {
            "features": features_yaml,
        },
        # which bytes each split was exported from (a provenance's signature value: repo@commit or sha256)
        "source_data": {split: sources[split] for split in sorted(sources)},
    }
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    body = [
        f"# {pretty_name}",
        "",
        family.description,
        "",
        f"Homepage: {family.homepage}",
        "",
        f"License: {family.license}. Exported by averitec-tools {__version__} "
        f"(`averitec export-hf`); load with `datasets.load_dataset(\"<this folder>\")`.",
        "",
    ]
    if view:
        body += [
            "Rows are standardised as in the R2VC paper: `{claim, evidence_text, label}` with "
            "labels in SUPPORTS / REFUTES / NEI, empty claims removed, NOT ENOUGH INFO kept.",
            "",
        ]
    body += ["## Splits", ""] + [f"- `{s}`: {n} rows (from {sources.get(s, 'unknown')})" for s, n in sorted(splits.items())]
    body += ["", "## Reading it", "", f"Parquet shards and this card load with `datasets` >= {DATASETS_FLOOR} "
             "(tested with 2.19, 3.6 and the release that wrote them): the shards carry their features in the "
             "encoding every release reads, and images are embedded in the shards."]
    body += ["", "## Citation", "", "```bibtex", family.citation, "```", ""]
    return f"---\n{front}---\n\n" + "\n".join(body)


def _existing_sources(card_path: Path) -> dict[str, str]:
    """``source_data`` of an existing card's YAML (``{}`` when none)."""
    if not card_path.is_file():
        return {}
    text = card_path.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        return {}
    try:
        meta = yaml.safe_load(text[4:text.index("\n---", 4)])
    except yaml.YAMLError:
        return {}
    found = meta.get("source_data") if isinstance(meta, dict) else None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _existing_splits(data_dir: Path) -> dict[str, int]:
    """Rows per split already exported in ``data_dir`` (read from parquet metadata)."""
    import pyarrow.parquet as pq

    out: dict[str, int] = {}
    for path in sorted(data_dir.glob("*.parquet")):
        m = _SHARD_RE.match(path.name)
        if m:
            out[m["split"]] = out.get(m["split"], 0) + pq.ParquetFile(path).metadata.num_rows
    return out


def _source_folders(entry: Any, split: str, data_dir: str | os.PathLike[str] | None) -> list[Path]:
    """Folders holding the local upstream file(s) of ``split`` (an export must not land there)."""
    roots = [data_dir] if data_dir is not None else [os.environ.get(DATA_DIR_ENV) or None]
    folders: list[Path] = []
    family = FAMILIES.get(entry.family)
    for root in roots:
        if root is None or split not in family.split_files:
            continue
        try:
            found = find_local_file(family, split, root)
        except UserError:
            continue
        folders += [found.parent, Path(root)]
    return folders


def export_hf(
    name: str,
    *,
    split: str | None = None,
    out_dir: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    hub_id: str | None = None,
    wiki_dir: str | os.PathLike[str] | None = None,
    revision: str | None = None,
) -> ExportResult:
    """Write ``name``/``split`` as parquet shards plus a dataset card into ``out_dir``.

    Shards load with every ``datasets`` release from :data:`~averitec_tools.loaders.hf_compat.DATASETS_FLOOR`
    on (:mod:`~averitec_tools.loaders.hf_compat`), images embedded; the card's ``source_data``
    names the bytes each split came from (repository and commit, or sha256).

    Raises:
        UserError: bad id/split/source, or ``out_dir`` holds a different dataset or a file.

    Example:
        >>> import json, pathlib, tempfile, datasets
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.jsonl").write_text(json.dumps({"claim": "c", "evidence": "e", "label": "SUPPORTS"}))
        >>> r = export_hf("vitaminc", split="dev", data_dir=d, out_dir=d / "hf")
        >>> datasets.load_dataset(str(d / "hf"), split="dev")[0]["label"]
        'SUPPORTS'
    """
    entry, concrete = resolve(name, split)
    out = check_output_dir(
        out_dir, option="--out", inputs=[data_dir, wiki_dir, hub_id if hub_id and os.path.isdir(hub_id) else None],
        files=["README.md", "data"],
    )
    _check_out(out, _source_folders(entry, concrete, data_dir))
    pretty, family_name = _dataset_key(name, split)
    card_path = out / "README.md"
    _check_card(card_path, out=out, pretty=pretty)
    ds = load(name, split=split, data_dir=data_dir, hub_id=hub_id, wiki_dir=wiki_dir, revision=revision)
    check_images(ds, where=f"{entry.id} ({concrete})")  # before any byte is embedded
    prov = provenance(name, split=split, data_dir=data_dir, hub_id=hub_id, revision=revision)
    sources = {**_existing_sources(card_path), concrete: prov.signature_value()}
    data = out / "data"
    written = _write_shards(ds, data=data, split=concrete)
    card = _card(pretty_name=pretty, family_name=family_name, view=entry.view == r2vc.VIEW,
                 features_yaml=ds.features._to_yaml_list(), splits=_existing_splits(data), sources=sources)
    with atomic_writer(card_path) as fh:
        fh.write(card)
    return ExportResult(
        out_dir=str(out),
        dataset=entry.id,
        split=concrete,
        n_rows=len(ds),
        shards=tuple(str(p) for p in written),
        card=str(card_path),
        source=sources[concrete],
    )



def _check_out(out: Path, source_folders: list[Path]) -> None:
    """Refuse an ``out`` that is an input folder, whose ``data``/``README.md`` has the wrong kind,
    or that holds anything but an export (its card, its shards)."""
    for folder in source_folders:
        if out.is_dir() and os.path.samefile(out, folder):
            raise UserError(
                f"--out {out}: is the folder of the input data; the export would write into it",
                hint="export into a new folder",
            )
    if (out / "data").exists() and not (out / "data").is_dir():
        raise UserError(f"{out / 'data'}: exists and is not a directory")
    if (out / "README.md").is_dir():
        raise UserError(f"{out / 'README.md'}: is a directory, expected the dataset card")
    if not out.is_dir():
        return
    foreign = sorted(p.name for p in out.iterdir() if p.name not in ("README.md", "data"))
    if (out / "data").is_dir():
        foreign += sorted(f"data/{p.name}" for p in (out / "data").iterdir() if not _SHARD_RE.match(p.name))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise UserError(f"--out {out}: is not empty and not an export (holds {shown}); refusing to write into it",
                        hint="export into a new or empty folder")


def _check_card(card_path: Path, *, out: Path, pretty: str) -> None:
    """An existing card must be an export's card of the same dataset (``pretty`` name)."""
    if not card_path.exists():
        return
    text = card_path.read_text(encoding="utf-8", errors="replace")
    m = re.search(r"^pretty_name:\s*(.+)$", text, flags=re.MULTILINE)
    existing = yaml.safe_load(m.group(1)) if m else None
    if existing is None:
        raise UserError(
            f"--out {out}: has a README.md that is not a dataset card of an export; refusing to overwrite it",
            hint="export into a new folder",
        )
    if existing != pretty:
        raise UserError(
            f"{out}: already holds an export of {existing!r}, not {pretty!r}",
            hint="export each dataset into its own folder",
        )


def _image_paths(value: Any, found: dict[str, None]) -> None:
    """Collect the file paths of undecoded image values (``{"bytes": None, "path": P}``) in ``value``."""
    if isinstance(value, dict):
        if set(value) == {"bytes", "path"}:
            if value["bytes"] is None and value["path"]:
                found[value["path"]] = None
            return
        for v in value.values():
            _image_paths(v, found)
    elif isinstance(value, list):
        for v in value:
            _image_paths(v, found)


def check_images(ds: Any, *, where: str) -> int:
    """Verify every image file ``ds`` refers to (:func:`averitec_tools.images.verify_file`); returns how many.

    Raises:
        UserError: an image that cannot be read, is not an image, is too large or is damaged (naming it).
    """
    from averitec_tools.images import verify_file

    if not has_media(ds.features):
        return 0
    found: dict[str, None] = {}
    for row in ds.with_format("arrow")[:].to_pylist():  # undecoded: {bytes, path} structs
        _image_paths(row, found)
    for path in found:
        verify_file(path, where=where)
    return len(found)


def _write_shards(ds: Any, *, data: Path, split: str) -> list[Path]:
    """Write ``ds`` as ``data/<split>-0000i-of-0000N.parquet``; returns the shards written.

    Every shard goes to a temporary file first; the split's old shards are replaced only
    once every new one is complete, and no temporary file survives a failure.
    """
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{data}: cannot create: {exc.strerror or exc}") from None
    per_shard = MEDIA_SHARD_ROWS if has_media(ds.features) else SHARD_ROWS
    n_shards = max(1, math.ceil(len(ds) / per_shard))
    written: list[Path] = []
    tmp_paths: list[Path] = []
    try:
        for i in range(n_shards):
            shard = ds.shard(num_shards=n_shards, index=i, contiguous=True)
            fd, tmp = tempfile.mkstemp(dir=data, prefix=f".{split}-{i}.", suffix=".tmp")
            os.close(fd)
            tmp_paths.append(Path(tmp))
            write_parquet(shard, tmp)
        # replace this split's old shards only once every new shard is complete
        for old in data.glob(f"{split}-*.parquet"):
            match = _SHARD_RE.match(old.name)
            if match is not None and match["split"] == split:
                old.unlink()
        for i, tmp_path in enumerate(tmp_paths):
            final = data / f"{split}-{i:05d}-of-{n_shards:05d}.parquet"
            os.chmod(tmp_path, 0o666 & ~umask())  # what open() would give
            os.replace(tmp_path, final)
            written.append(final)
    except OSError as exc:
        raise UserError(f"{data}: cannot write the parquet shards: {exc.strerror or exc}") from None
    finally:
        for tmp_path in tmp_paths:
            tmp_path.unlink(missing_ok=True)
    return written


__all__ = ["export_hf"]
