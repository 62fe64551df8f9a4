"""Preparing a download: the location that serves a source, and the plan made there.

:func:`prepare` tries a source's locations in order (its mirrors, or the user's ``--repo``;
``--from DIR`` replaces them) until one answers for every file, and refuses, one line each,
a source with no hub copy, no pinned revision, or the hub disabled. The plan it returns is
run by :func:`~averitec_tools.downloads.fetch.execute`.

Example:
    >>> import pathlib, tempfile
    >>> from averitec_tools.downloads.sources import DataSource, RemoteFile
    >>> have = pathlib.Path(tempfile.mkdtemp()); _ = (have / "dev.json").write_text("[]")
    >>> src = DataSource(name="demo", split="dev", title="Demo", license="cc0-1.0", hub=None,
    ...     dest="demo", files=(RemoteFile("data/dev.json"),))
    >>> p = prepare(src, out=pathlib.Path(tempfile.mkdtemp()), from_dir=have)
    >>> [pf.size for pf in p.files], p.notes[0].startswith("installing from")
    ([2], True)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from averitec_tools import models
from averitec_tools.downloads.plan import FreeSpace, Plan, PlannedFile, disk_free, plan
from averitec_tools.downloads.sources import (
    OFF_HUB_TYPES,
    DataSource,
    HubLocation,
    require_revision,
)
from averitec_tools.errors import UserError


def hub_offline() -> bool:
    """Whether downloads must not contact the hub (:func:`averitec_tools.models.hub_offline`
    for dataset files: ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` or ``HF_DATASETS_OFFLINE``)."""
    return models.hub_offline(datasets=True)


def local_copy(from_dir: Path, pf: PlannedFile) -> Path:
    """Where ``from_dir`` (``--from``) holds the planned file: its hub path, its name, or its installed name."""
    for candidate in (from_dir / pf.spec.path, from_dir / pf.spec.path.rsplit("/", 1)[-1], from_dir / pf.dest.name):
        if candidate.is_file():
            return candidate
    raise UserError(f"{from_dir}: no {pf.spec.path} (or {pf.dest.name}) to install")


def on_github(source: Any) -> bool:
    """The source's first location is off the Hugging Face hub (GitHub, a plain HTTPS folder)."""
    return source.hub is not None and source.hub.repo_type in OFF_HUB_TYPES


def _check_fetchable(source: DataSource, *, online: bool) -> None:
    """Refuse a download with no hub copy, no pinned revision, or the hub disabled (one line each)."""
    if source.hub is None:
        raise UserError(f"{source.key}: no hub copy of these files is known",
                        hint="name a mirror with --repo OWNER/NAME, or install files you have with --from DIR")
    require_revision(source.key, source.hub)
    if not online:
        raise UserError(f"{source.key}: the hub is disabled (HF_HUB_OFFLINE=1)",
                        hint="unset HF_HUB_OFFLINE, or install files you have with --from DIR")


def prepare(
    source: DataSource,
    *,
    out: str | os.PathLike[str],
    dry_run: bool = False,
    reserve: int = 0,
    from_dir: str | os.PathLike[str] | None = None,
    repo: HubLocation | None = None,
    free_space: FreeSpace = disk_free,
    reachable: bool = True,
) -> Plan:
    """The plan of downloading ``source`` (see :func:`~averitec_tools.downloads.fetch.download_all` for the arguments;
    ``reachable=False``: the hub did not answer, plan from the package's records).

    A source with mirrors (:attr:`DataSource.mirrors`) is tried at each location in order until
    one answers for every file; the plan's notes name the locations that did not. ``repo`` (the
    user's ``--repo``) and ``from_dir`` replace them.

    Raises:
        UserError: no hub copy known or the hub disabled (unless ``dry_run`` or ``from_dir``),
            or every location refused a metadata request (each one named).
    """
    if repo is not None:
        source = source.with_hub(repo)
    candidates = source.locations() if from_dir is None else [source]
    if not reachable:  # the Hugging Face hub did not answer: only off-hub locations are worth a request
        candidates = [c for c in candidates if on_github(c)] or candidates[:1]
    failed: list[str] = []
    for i, candidate in enumerate(candidates):
        try:
            p = _prepare_at(candidate, out=out, dry_run=dry_run and i == len(candidates) - 1, reserve=reserve,
                            from_dir=from_dir, free_space=free_space, reachable=reachable)
        except UserError as exc:
            if i == len(candidates) - 1:
                if not failed:
                    raise
                raise UserError(f"{source.key}: no location served the files: {'; '.join([*failed, str(exc)])}",
                                hint="install files you have with --from DIR, or name another mirror with --repo") \
                    from None
            failed.append(f"{candidate.hub.describe() if candidate.hub else '(none)'}: {exc}")
            continue
        p.notes.extend(f"tried first, not served: {f}" for f in failed)
        return p
    raise AssertionError("unreachable")  # pragma: no cover - locations() is never empty


def _prepare_at(source: DataSource, *, out: str | os.PathLike[str], dry_run: bool, reserve: int,
                from_dir: str | os.PathLike[str] | None, free_space: FreeSpace, reachable: bool) -> Plan:
    """:func:`prepare` at one location (``reachable``: the Hugging Face hub answers; off-hub locations
    are asked whatever it says)."""
    local = Path(from_dir) if from_dir is not None else None
    unpinned = source.hub is not None and source.hub.revision is None and not source.hub.unversioned
    if unpinned and dry_run and local is None and source.hub is not None:
        source = source.with_hub(source.hub.at("main"))  # sizes as the repository holds them today
    online = local is None and not hub_offline() and (reachable or on_github(source))
    if not dry_run and local is None:
        _check_fetchable(source, online=online)
    try:
        p = plan(source, out=Path(out), online=online, reserve=reserve, free_space=free_space, local=local)
    except UserError as exc:
        if not (dry_run and online):
            raise
        # a dry run over many names reports a refusing source instead of stopping at it
        p = plan(source, out=Path(out), online=False, reserve=reserve, free_space=free_space)
        p.notes.append(f"the hub was not consulted for this source: {exc}")
    _finish_plan(p, source, unpinned=unpinned, local=local)
    return p


def _finish_plan(p: Plan, source: DataSource, *, unpinned: bool, local: Path | None) -> None:
    """The notes of a prepared plan, and the sizes of what ``local`` (``--from``) holds."""
    if unpinned and local is None:
        repo = source.hub.repo_id  # type: ignore[union-attr]
        p.notes.append(f"no commit of {repo} is pinned: sizes are those of main today; downloading needs --revision")
    if local is not None:
        p.notes.append(f"installing from {local}")
        for pf in (pf for pf in p.files if not pf.present):
            pf.size = local_copy(local, pf).stat().st_size


__all__ = ["hub_offline", "local_copy", "on_github", "prepare"]
