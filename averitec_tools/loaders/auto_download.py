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
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.loaders import base
from averitec_tools.loaders.base import DATA_DIR_ENV, DatasetFamily, find_local_file


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


def download_now(family: DatasetFamily, split: str, *, revision: str | None = None) -> Path | None:
    """Download ``split``'s official file now (at the catalogue's pinned revision, or ``revision``)
    into the download root and return what was installed (the file, or VitaminC's hub-layout
    folder); ``None`` when the catalogue has no source for it.

    Raises:
        UserError: offline, hub unreachable, no hub copy known, no pinned revision, or the download failed.
    """
    from averitec_tools.downloads import HubLocation, download_all, human
    from averitec_tools.loaders.catalogue import companions_of, source_for
    from averitec_tools.loaders.locate import download_root

    source = source_for(family.name, split)
    if source is None:
        return None
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
    repo = None if revision is None else HubLocation(source.hub.repo_id, repo_type=source.hub.repo_type,
                                                     revision=revision)
    out = download_root()
    size = sum(f.size or 0 for f in source.files)
    print(f"averitec: {family.name}/{split} is not on this machine: downloading {source.key} "
          f"({human(size) if size else 'size from the hub'}) from {(repo or source.hub).describe()} into {out} "
          f"({'sha256-verified' if source.verified else 'no checksum recorded: unverified'}; "
          f"later: {_command(source)})", file=sys.stderr)
    download_all([source, *companions_of(family.name, split)], out=out, progress=sys.stderr.isatty(),
                 repo=repo)
    snapshot = snapshot_dir(family, split)
    if snapshot is not None:
        return snapshot
    return find_local_file(family, split, out)


__all__ = ["download_now", "snapshot_dir"]
