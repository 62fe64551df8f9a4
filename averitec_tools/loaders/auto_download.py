"""Loading a split that is not on this machine: fetch its official file, verified, then read it.

``loaders.load("averitec", split="dev")`` with no local files downloads ``data/dev.json``
from the organisers' hub repository into the download root (see
:mod:`averitec_tools.loaders.locate`), checks its sha256 against the checksum in
:mod:`~averitec_tools.loaders.catalogue`, records it in the manifest and reads it; the next
call finds it there. The download is announced on stderr (what, how big, from where, to
where). VitaminC's source is the hub dataset's own data files, read with
``datasets.load_dataset`` from the downloaded folder. Knowledge stores are never fetched
implicitly (tens of gigabytes): ``averitec data download averitec-store --split S``.

Example:
    >>> from averitec_tools.loaders.base import FAMILIES
    >>> import averitec_tools.loaders  # registers the families
    >>> snapshot_dir(FAMILIES.get("averitec"), "dev") is None
    True
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.loaders import base
from averitec_tools.loaders.base import (
    DATA_DIR_ENV,
    DatasetFamily,
    find_local_file,
    iter_hub_records,
)


def _command(source: Any) -> str:
    split = f" --split {source.split}" if source.split else ""
    return f"averitec data download {source.name}{split}"


def snapshot_dir(family: DatasetFamily, split: str) -> Path | None:
    """A downloaded hub-layout folder (VitaminC's) holding ``split``, if there is one."""
    from averitec_tools.loaders.catalogue import source_for
    from averitec_tools.loaders.locate import data_roots

    source = source_for(family.name, split)
    if source is None or source.listing is None or not source.listing.keep_paths:
        return None
    return next((root / source.dest for root in data_roots() if (root / source.dest).is_dir()), None)


def downloaded_records(family: DatasetFamily, split: str) -> Iterator[Any] | None:
    """Records of ``split`` from a download (made now if needed), or ``None`` when no source exists.

    Raises:
        UserError: offline, hub unreachable, no hub copy known, or the download failed.
    """
    from averitec_tools.downloads import download, human
    from averitec_tools.loaders.catalogue import source_for
    from averitec_tools.loaders.locate import download_root

    source = source_for(family.name, split)
    if source is None:
        return None
    snapshot = snapshot_dir(family, split)
    if snapshot is not None:
        return iter_hub_records(family, split, str(snapshot))
    names = " or ".join(family.split_files[split])
    if source.hub is None:
        raise UserError(
            f"{family.name}/{split}: no local files, and no hub copy of {family.pretty_name}'s files is known",
            hint=f"pass --data-dir with the upstream {names}, or: {_command(source)} --repo MIRROR",
        )
    if base.offline():
        raise UserError(
            f"{family.name}/{split}: no local files found and the hub is disabled (HF_HUB_OFFLINE)",
            hint=f"pass --data-dir with the upstream files, or unset HF_HUB_OFFLINE to fetch {source.hub.repo_id}",
        )
    if not base.hub_reachable():
        raise UserError(
            f"{family.name}/{split}: no local files found and the Hugging Face hub is unreachable",
            hint=f"set {DATA_DIR_ENV} to the folder holding {names} (e.g. {DATA_DIR_ENV}=../shared/data) "
            "or pass --data-dir",
        )
    out = download_root()
    size = sum(f.size or 0 for f in source.files)
    print(f"averitec: {family.name}/{split} is not on this machine: downloading {source.key} "
          f"({human(size) if size else 'size from the hub'}) from {source.hub.describe()} into {out} "
          f"({'sha256-verified' if source.verified else 'no checksum recorded: unverified'}; "
          f"later: {_command(source)})", file=sys.stderr)
    download(source, out=out, progress=sys.stderr.isatty())
    snapshot = snapshot_dir(family, split)
    if snapshot is not None:
        return iter_hub_records(family, split, str(snapshot))
    return family.read_file(find_local_file(family, split, out))


__all__ = ["downloaded_records"]
