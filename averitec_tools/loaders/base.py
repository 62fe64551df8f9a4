"""Dataset families, registry entries and source resolution shared by every loader.

A *family* (AVeriTeC, FEVER, VitaminC) knows its upstream files, how to parse a line into
a typed record, its ``datasets.Features`` and how to turn records into rows and back.
A registry *entry* is one hierarchical id: ``averitec/dev`` (a family and a split) or a
view such as ``fever/r2vc`` (the R2VC-standardised rows of any FEVER split).

Nothing here imports ``datasets`` at module level.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.jsonio import iter_records
from averitec_tools.models import hub_offline
from averitec_tools.records.standardized import StandardizedExample
from averitec_tools.registry import Registry

if TYPE_CHECKING:
    import datasets

#: Environment variable naming a local data root (``<root>/<family>/<file>``).
DATA_DIR_ENV = "AVERITEC_DATA_DIR"


def list_of(feature: Any) -> Any:
    """``datasets.List(feature)`` where available (datasets ≥ 4), else ``[feature]``."""
    import datasets

    list_type = getattr(datasets, "List", None)
    return list_type(feature) if list_type is not None else [feature]


class DatasetFamily(ABC):
    """One dataset's formats: upstream files, typed records, features and rows."""

    name: ClassVar[str]
    pretty_name: ClassVar[str]
    license: ClassVar[str]
    citation: ClassVar[str]
    homepage: ClassVar[str]
    description: ClassVar[str]
    #: Split → upstream file names to look for (first found wins).
    split_files: ClassVar[Mapping[str, tuple[str, ...]]]
    #: Default Hugging Face hub repository whose rows carry the upstream fields (or None).
    hub_id: ClassVar[str | None] = None
    #: Our split name → the hub repository's split name, where they differ.
    hub_splits: ClassVar[Mapping[str, str]] = {}
    #: Claims per split as the dataset's authors published them (``stats`` compares), where known.
    published_sizes: ClassVar[Mapping[str, int]] = {}

    @abstractmethod
    def parse(self, obj: Any, *, where: str, index: int) -> Any:
        """Parse one upstream JSON object into the family's typed record."""

    @abstractmethod
    def features(self) -> datasets.Features:
        """The explicit ``datasets.Features`` of :meth:`to_row` rows."""

    def undecoded_features(self) -> datasets.Features:
        """:meth:`features` with media columns (images) left undecoded, as :meth:`from_row` reads them."""
        return self.features()

    @abstractmethod
    def to_row(self, record: Any) -> dict[str, Any]:
        """A row matching :meth:`features`."""

    @abstractmethod
    def from_row(self, row: Mapping[str, Any]) -> Any:
        """The typed record back from a row (``from_row(to_row(r)) == r``)."""

    @abstractmethod
    def stats(self, records: Iterable[Any]) -> dict[str, Any]:
        """Dataset statistics (JSON-serialisable)."""

    def standardize(self, record: Any, *, source: str) -> StandardizedExample | None:
        """The R2VC-standardised example (``None`` = filtered out); families with an
        ``r2vc`` view override this."""
        raise UserError(f"{self.name} has no R2VC-standardised view")

    def rows(self, records: Iterable[Any], *, source: Path | None) -> Iterator[dict[str, Any]]:
        """Rows of ``records`` read from the upstream file ``source`` (``None``: the hub); a family
        whose rows point at files beside it (AVerImaTeC's images) resolves them there."""
        for record in records:
            yield self.to_row(record)

    def read_file(self, path: Path) -> Iterator[Any]:
        """Typed records of one upstream file (JSON array or JSONL)."""
        for loc in iter_records(path):
            yield self.parse(loc.value, where=loc.where, index=loc.index)


@dataclass(frozen=True)
class DatasetEntry:
    """A registered dataset id.

    Attributes:
        id: Hierarchical id (``"averitec/dev"``, ``"fever/r2vc"``).
        family: The family's registry name.
        split: The fixed split, or ``None`` for a view that takes ``split=``.
        view: ``"full"`` (typed upstream records) or ``"r2vc"`` (standardised rows).
    """

    id: str
    family: str
    split: str | None
    view: str = "full"


FAMILIES: Registry[DatasetFamily] = Registry("dataset family")
DATASETS: Registry[DatasetEntry] = Registry("dataset")
#: Knowledge stores by id (``averitec/knowledge_store``): :class:`~averitec_tools.loaders.stores.StoreSpec` s.
STORES: Registry[Any] = Registry("knowledge store")


def register_family(family: DatasetFamily, *, views: tuple[str, ...] = ()) -> DatasetFamily:
    """Register a family, one ``family/split`` entry per split and one entry per view."""
    FAMILIES.add(family.name, family)
    for split in family.split_files:
        DATASETS.add(f"{family.name}/{split}", DatasetEntry(f"{family.name}/{split}", family.name, split))
    for view in views:
        DATASETS.add(f"{family.name}/{view}", DatasetEntry(f"{family.name}/{view}", family.name, None, view))
    return family


def resolve(name: str, split: str | None) -> tuple[DatasetEntry, str]:
    """Map ``(name, split)`` to a registry entry and the concrete split.

    Accepts ``("averitec/dev", None)``, ``("averitec", "dev")``, ``("averitec/dev", "dev")``
    and views ``("fever/r2vc", "paper_dev")``.

    Example:
        >>> import averitec_tools.loaders  # registers the datasets
        >>> entry, split = resolve("averitec", "dev")
        >>> (entry.id, split)
        ('averitec/dev', 'dev')
    """
    if name in DATASETS:
        entry = DATASETS.get(name)
        if entry.split is not None:
            if split not in (None, entry.split):
                raise UserError(f"dataset {name!r} is the {entry.split!r} split; got split={split!r}")
            return entry, entry.split
        family = FAMILIES.get(entry.family)
        if split is None:
            raise UserError(
                f"dataset {name!r} needs a split",
                hint=f"--split one of: {', '.join(family.split_files)}",
            )
        if split not in family.split_files:
            raise UserError(
                f"{entry.family} has no split {split!r}",
                hint=f"splits: {', '.join(family.split_files)}",
            )
        return entry, split
    if name in FAMILIES:
        family = FAMILIES.get(name)
        if split is None:
            raise UserError(
                f"dataset {name!r} needs a split", hint=f"--split one of: {', '.join(family.split_files)}"
            )
        if f"{name}/{split}" not in DATASETS:
            raise UserError(f"{name} has no split {split!r}", hint=f"splits: {', '.join(family.split_files)}")
        return DATASETS.get(f"{name}/{split}"), split
    if name in STORES:
        raise UserError(f"{name} is a knowledge store: read it with loaders.load({name!r}, split=..., streaming=True)",
                        hint="stats and export-hf cover the claims datasets")
    full = f"{name}/{split}" if split and "/" not in name else name
    raise UserError(Registry.of_names("dataset", [*DATASETS, *STORES]).unknown_message(full))


def find_local_file(family: DatasetFamily, split: str, data_dir: str | os.PathLike[str]) -> Path:
    """The upstream file for ``split`` under ``data_dir`` (or ``data_dir`` itself if a file).

    Looks in ``data_dir`` and ``data_dir/<family>``.

    Raises:
        UserError: naming the directory and the file names looked for.
    """
    root = Path(data_dir)
    if root.is_file():
        return root
    if not root.exists():
        raise UserError(f"{root}: no such file or directory (data_dir for {family.name}/{split})")
    names = family.split_files[split]
    for folder in (root, root / family.name):
        for fname in names:
            if (folder / fname).is_file():
                return folder / fname
    raise UserError(
        f"{root}: no {' or '.join(names)} for {family.name}/{split} (looked in {root} and {root / family.name})",
        hint="pass --data-dir pointing at the folder of the upstream files",
    )


def offline() -> bool:
    """Whether dataset files must not be fetched from the hub (:func:`averitec_tools.models.hub_offline`)."""
    return hub_offline(datasets=True)


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the hub's host accepts a TCP connection (one quick try, no retries).

    Behind a proxy (``HTTPS_PROXY``) the direct connection says nothing, so it answers True.
    """
    import socket
    from urllib.parse import urlparse

    if os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy"):
        return True
    endpoint = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    host = endpoint.hostname or "huggingface.co"
    port = endpoint.port or (443 if endpoint.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def iter_hub_records(family: DatasetFamily, split: str, hub_id: str | None, *,
                     revision: str | None = None) -> Iterator[Any]:
    """Typed records from a hub repository (or a local folder in hub layout).

    The repository's rows must carry the upstream field names (as the upstream files do);
    ``hub_id`` may be a local directory, which ``datasets.load_dataset`` reads the same way.
    ``revision`` (a commit, branch or tag) is passed to ``datasets.load_dataset``.

    Raises:
        UserError: no hub id known, offline, or the repository/split is unavailable.
    """
    repo = hub_id or family.hub_id
    if repo is None:
        raise UserError(
            f"{family.name}/{split}: no local files and no default hub repository",
            hint="pass --data-dir with the upstream files, or hub_id=",
        )
    is_local = Path(repo).is_dir()
    if not is_local and offline():
        raise UserError(
            f"{family.name}/{split}: no local files found and the hub is disabled (HF_HUB_OFFLINE)",
            hint=f"pass --data-dir with the upstream files, or unset HF_HUB_OFFLINE to fetch {repo}",
        )
    if not is_local and not hub_reachable():
        raise UserError(
            f"{family.name}/{split}: no local files found and the Hugging Face hub is unreachable",
            hint=f"set {DATA_DIR_ENV} to the folder holding {' or '.join(family.split_files[split])} "
            f"(e.g. {DATA_DIR_ENV}=../shared/data) or pass --data-dir",
        )
    import datasets

    hub_split = family.hub_splits.get(split, split)
    try:
        ds = datasets.load_dataset(repo, split=hub_split, **({"revision": revision} if revision else {}))
    except ValueError as exc:  # unknown split
        raise UserError(f"{repo}: cannot load split {hub_split!r}: {exc}") from None
    except (FileNotFoundError, ConnectionError, OSError) as exc:
        raise UserError(f"{repo}: cannot load dataset: {exc}") from None
    for i, row in enumerate(ds):
        yield family.parse(row, where=f"{repo}[{hub_split}][{i}]", index=i)


#: Field names only prediction files carry; a "gold" record holding them is a mix-up.
PREDICTION_FIELDS: tuple[str, ...] = ("pred_label", "predicted_label", "predicted_evidence", "pred_evidence")


def reject_predictions(obj: Any, *, where: str, dataset: str, gold_fields: tuple[str, ...]) -> None:
    """Refuse a predictions record where gold data is expected, saying what the file looks like.

    Example:
        >>> reject_predictions({"claim": "c", "label": "Refuted"}, where="dev.json[0]",
        ...                    dataset="AVeriTeC", gold_fields=("label", "questions"))
        >>> reject_predictions({"claim": "c", "pred_label": "Refuted"}, where="p.json[0]",
        ...                    dataset="AVeriTeC", gold_fields=("label", "questions"))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json[0]: this looks like a predictions file ...
    """
    if not isinstance(obj, Mapping):
        return
    if any(k in obj for k in PREDICTION_FIELDS) and not any(k in obj for k in gold_fields):
        raise UserError(
            f"{where}: this looks like a predictions file (fields: {', '.join(map(str, list(obj)[:8]))}), "
            f"not {dataset} gold data (which has {', '.join(gold_fields)})",
            hint="pass the gold file; predictions go to `averitec score`",
        )


def by_count(counts: Mapping[str, int]) -> dict[str, int]:
    """The counts, most frequent first (ties by name)."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def ratio(part: float, whole: float) -> float:
    """``part / whole``, 0.0 when ``whole`` is 0 (a statistic of an empty split)."""
    return part / whole if whole else 0.0


def share(counts: Mapping[str, int], total: int) -> dict[str, float]:
    """``count / total`` per key (0.0 when total is 0), keys sorted by count then name."""
    return {k: ratio(v, total) for k, v in by_count(counts).items()}


def label_stats(labels: Mapping[str, int], total: int) -> dict[str, Any]:
    """The ``labels`` (counts) and ``label_shares`` entries every family's ``stats`` reports.

    Example:
        >>> label_stats({"REFUTES": 1, "SUPPORTS": 3}, 4)
        {'labels': {'SUPPORTS': 3, 'REFUTES': 1}, 'label_shares': {'SUPPORTS': 0.75, 'REFUTES': 0.25}}
    """
    return {"labels": by_count(labels), "label_shares": share(labels, total)}


__all__ = [
    "reject_predictions", "DATASETS", "DATA_DIR_ENV", "FAMILIES", "STORES", "DatasetEntry", "DatasetFamily",
    "find_local_file", "iter_hub_records", "label_stats", "list_of", "ratio", "register_family", "resolve",
    "share",
]
