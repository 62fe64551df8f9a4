"""Download a source: check space, fetch (resuming), verify, install, unpack, record.

:func:`download` runs a :class:`~averitec_tools.downloads.plan.Plan`: it refuses before the
first byte when the disk is too small, fetches each missing file into a ``.part`` file
(a later run continues where an interrupted one stopped), checks its sha256 against the
checksum recorded in the package (``verified``) or, where none is recorded, against the
sha256 the manifest recorded on the first download (``unverified``; the first download
records it), and against the hub's own content hash (the Git LFS sha256, or the git blob
id of small files) to catch a damaged transfer. A file that fails any check is deleted
and nothing is installed. Claims files are then parsed once with the loaders' reader.
Archives are unpacked together into one folder, swapped in atomically, then deleted
unless ``keep_archives``. ``from_dir`` installs files a user already has (same checks,
inputs never modified). Where the files come from, and the plan itself, is
:func:`~averitec_tools.downloads.prepare.prepare`'s.

Example:
    >>> import json, pathlib, tempfile
    >>> from averitec_tools.downloads.sources import DataSource, RemoteFile
    >>> have = pathlib.Path(tempfile.mkdtemp()); _ = (have / "dev.json").write_text("[]")
    >>> src = DataSource(name="demo", split="dev", title="Demo", license="cc0-1.0", hub=None,
    ...     dest="demo", files=(RemoteFile("data/dev.json"),))
    >>> out = pathlib.Path(tempfile.mkdtemp())
    >>> report = download(src, out=out, from_dir=have)
    >>> [(f.status, f.action) for f in report.files], (out / "demo" / "dev.json").read_text()
    ([('unverified', 'copied')], '[]')
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.downloads import manifest
from averitec_tools.downloads.archive import Extracted, extract_all, install_tree
from averitec_tools.downloads.hub import fetch_to_part, progress_bars
from averitec_tools.downloads.plan import FreeSpace, Plan, PlannedFile, check_space, disk_free
from averitec_tools.downloads.prepare import hub_offline, local_copy, on_github, prepare
from averitec_tools.downloads.sources import DataSource, HubLocation
from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256

_GIT_BLOB_MAX = 64 << 20  # the hub keeps files above 10 MB in LFS; hash small ones as git does


@dataclass
class FileResult:
    """One file after download: where it is, its sha256 and the verdict."""

    path: str
    dest: str
    size: int
    sha256: str
    expected_sha256: str | None
    checksum_source: str | None
    status: str  # "verified" (package checksum) or "unverified" (manifest-recorded)
    hub_hash_match: bool | None
    action: str  # "downloaded", "resumed", "copied", "present"
    commit: str | None = None
    contents: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class DownloadReport:
    """What :func:`download` did (or, for a dry run, would do)."""

    plan: Plan
    dry_run: bool
    files: list[FileResult] = field(default_factory=list)
    unpacked: Extracted | None = None
    manifest: str | None = None

    @property
    def verified(self) -> bool:
        return bool(self.files) and all(f.status == "verified" for f in self.files)

    def to_dict(self) -> dict[str, Any]:
        out = self.plan.to_dict()
        out.update({"dry_run": self.dry_run, "manifest": self.manifest,
                    "results": [f.to_dict() for f in self.files],
                    "unpacked": None if self.unpacked is None else dict(self.unpacked.__dict__)})
        if not self.dry_run:
            out["status"] = "verified" if self.verified else "unverified"
        return out


def _refuse(pf: PlannedFile, source: DataSource, got: str, expected: str, against: str, *,
            delete: Path | None, installed: bool) -> None:
    if delete is not None:
        delete.unlink(missing_ok=True)
    if installed:
        raise UserError(f"{source.key}: the installed {pf.dest} has sha256 {got}, not {expected} ({against})",
                        hint="delete it to download it again")
    gone = "; the download was deleted" if delete is not None else ""
    raise UserError(f"{source.key}: {pf.spec.path}: sha256 {got} does not match {expected} ({against}){gone}; "
                    "nothing was installed", hint="run again to download it afresh, or report the changed file")


def _verify(pf: PlannedFile, path: Path, source: DataSource, out: Path, *, delete: bool,
            installed: bool = False) -> tuple[str, str, bool | None]:
    """(sha256, status, hub_hash_match) of ``path``, or a refusal (deleting ``path`` if ``delete``)."""
    bad = path if delete else None
    got = file_sha256(path)
    if pf.spec.sha256 is not None:
        if got != pf.spec.sha256:
            _refuse(pf, source, got, pf.spec.sha256, f"recorded in the package: {pf.spec.checksum_source}",
                    delete=bad, installed=installed)
        status = "verified"
    else:
        prior = manifest.recorded_sha256(out, repo=source.hub.repo_id if source.hub else "", path=pf.spec.path)
        if prior is not None and prior["sha256"] != got:
            _refuse(pf, source, got, prior["sha256"], f"recorded on the first download, {prior.get('fetched_at')}",
                    delete=bad, installed=installed)
        status = "unverified"
    match: bool | None = None
    if pf.info is not None and pf.info.lfs_sha256:
        match = got == pf.info.lfs_sha256
        if not match:
            _refuse(pf, source, got, pf.info.lfs_sha256, "the hub's Git LFS sha256: the transfer was damaged",
                    delete=bad, installed=installed)
    elif pf.info is not None and pf.info.git_blob and path.stat().st_size <= _GIT_BLOB_MAX:
        data = path.read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
        match = blob == pf.info.git_blob
        if not match:
            _refuse(pf, source, f"(git blob {blob})", pf.info.git_blob,
                    "the hub's git blob id: the transfer was damaged", delete=bad, installed=installed)
    return got, status, match


def _copy_into(src: Path, dest: Path) -> None:
    from averitec_tools.jsonio import atomic_writer

    with src.open("rb") as fh, atomic_writer(dest, "wb") as out:
        shutil.copyfileobj(fh, out, 1 << 20)


def _check(source: DataSource, path: Path, *, delete: bool) -> str | None:
    """Parse a fetched claims file with the loaders' reader before it is installed."""
    if source.check is None or source.unpack is not None:
        return None
    try:
        return source.check(path)
    except UserError:
        if delete:
            path.unlink(missing_ok=True)
        raise


def _result(pf: PlannedFile, path: Path, verdict: tuple[str, str, bool | None], action: str,
            contents: str | None) -> FileResult:
    sha, status, match = verdict
    return FileResult(pf.spec.path, str(path), path.stat().st_size, sha, pf.spec.sha256,
                      pf.spec.checksum_source or None, status, match, action,
                      pf.info.commit if pf.info else None, contents)


def _fetch(pf: PlannedFile, source: DataSource, out: Path, from_dir: Path | None) -> tuple[Path, FileResult]:
    """Bring one file to where it is used (an archive: where it waits to be unpacked), verified."""
    if from_dir is not None:
        local = local_copy(from_dir, pf)
        verdict = _verify(pf, local, source, out, delete=False)
        contents = _check(source, local, delete=False)
        if pf.archive:
            return local, _result(pf, local, verdict, "copied", contents)
        _copy_into(local, pf.dest)
        return pf.dest, _result(pf, pf.dest, verdict, "copied", contents)
    if pf.archive and pf.dest.is_file():  # fetched by an earlier run that stopped before unpacking
        return pf.dest, _result(pf, pf.dest, _verify(pf, pf.dest, source, out, delete=True), "present", None)
    assert pf.info is not None
    resumed = pf.partial > 0
    fetch_to_part(pf.info, pf.part, label=f"{source.key}: {pf.spec.path}")
    verdict = _verify(pf, pf.part, source, out, delete=True)
    contents = _check(source, pf.part, delete=True)
    pf.dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(pf.part, pf.dest)
    return pf.dest, _result(pf, pf.dest, verdict, "resumed" if resumed else "downloaded", contents)


def _present(pf: PlannedFile, source: DataSource, out: Path) -> FileResult:
    verdict = _verify(pf, pf.dest, source, out, delete=False, installed=True)
    return _result(pf, pf.dest, verdict, "present", _check(source, pf.dest, delete=False))


def execute(p: Plan, *, progress: bool = False, from_dir: str | os.PathLike[str] | None = None,
            keep_archives: bool = False) -> DownloadReport:
    """Run a plan made by :func:`prepare` (space is checked by the caller: :func:`check_space`)."""
    source, root = p.source, p.out
    local = Path(from_dir) if from_dir is not None else None
    report = DownloadReport(plan=p, dry_run=False)
    if p.tree is not None:  # an unpacked store a user has: checked and copied through its layout
        assert source.unpack is not None and source.unpack.layout is not None and p.unpack_dir is not None
        report.unpacked = install_tree(p.tree, p.unpack_dir, target=source.unpack.layout.target, progress=progress)
        report.manifest = str(manifest.path_of(root))
        manifest.update(root, source.key, manifest.entry(report, complete=True, from_dir=local))
        return report
    waiting: list[Path] = []
    with progress_bars(progress):
        for pf in p.files:
            if pf.present and not pf.archive:
                report.files.append(_present(pf, source, root))
                continue
            if pf.present:
                continue
            path, result = _fetch(pf, source, root, local)
            report.files.append(result)
            if pf.archive:
                waiting.append(path)
            manifest.update(root, source.key, manifest.entry(report, complete=False, from_dir=local))
    if source.unpack is not None and waiting:
        assert p.unpack_dir is not None
        report.unpacked = extract_all(waiting, p.unpack_dir, target=source.unpack.target(), progress=progress)
        if not keep_archives and local is None:
            for path in waiting:
                path.unlink(missing_ok=True)
    report.manifest = str(manifest.path_of(root))
    fresh = any(f.action != "present" for f in report.files) or report.unpacked is not None
    if fresh or source.key not in manifest.load(root)["sources"]:  # a re-check keeps the first record
        manifest.update(root, source.key, manifest.entry(report, complete=True, from_dir=local))
    return report


def download_all(
    sources: list[DataSource],
    *,
    out: str | os.PathLike[str],
    dry_run: bool = False,
    reserve: int = 0,
    progress: bool = False,
    from_dir: str | os.PathLike[str] | None = None,
    keep_archives: bool = False,
    repo: HubLocation | None = None,
    free_space: FreeSpace = disk_free,
    on_plan: Callable[[list[Plan]], None] | None = None,
) -> list[DownloadReport]:
    """Download (or with ``dry_run`` only plan) ``sources`` into the output root ``out``.

    All sources are planned first and must fit together before any byte is fetched.

    Args:
        sources: What to fetch.
        out: Output root; files go to ``out/<source.dest>/``, the manifest to ``out``.
        dry_run: Plan only (the hub is still asked for sizes unless offline); write nothing.
        reserve: Bytes that must stay free after the download.
        progress: Progress bars (a terminal).
        from_dir: Install from files already here instead of the hub.
        keep_archives: Keep downloaded archives after unpacking.
        repo: Read from this repository instead (a mirror); recorded checksums still apply.
        free_space: Free bytes of the file system holding a path (injectable for tests).
        on_plan: Called with the plans before anything is fetched (to show them).

    Raises:
        UserError: no space, offline, the hub refused, a checksum mismatch, an unreadable
            claims file; nothing is installed for a file that fails.
    """
    down = None
    # Only Hugging Face sources need the hub; a GitHub source (meta-eval) has its own host.
    on_hub = [s for s in sources if not on_github(s)]
    if from_dir is None and on_hub and not hub_offline():
        from averitec_tools.downloads.hub import endpoint, unreachable

        down = unreachable()  # once, fast: not huggingface_hub's retries for every file
        if down is not None and not dry_run:
            raise UserError(f"the hub at {endpoint()} is unreachable ({down}): nothing was downloaded",
                            hint="check the network (or HF_ENDPOINT), or install files you have with --from DIR")
    plans = [prepare(s, out=out, dry_run=dry_run, reserve=reserve, from_dir=from_dir, repo=repo,
                     free_space=free_space, reachable=down is None) for s in sources]
    if down is not None and plans:
        plans[0].notes.append(f"the hub at {endpoint()} is unreachable ({down}): every source planned from "
                              "the package's records")
    if on_plan is not None:
        on_plan(plans)
    if dry_run:
        return [DownloadReport(plan=p, dry_run=True) for p in plans]
    check_space(*plans)
    return [execute(p, progress=progress, from_dir=from_dir, keep_archives=keep_archives) for p in plans]


def download(source: DataSource, **options: Any) -> DownloadReport:
    """:func:`download_all` for one source (the same keyword arguments)."""
    return download_all([source], **options)[0]


__all__ = ["DownloadReport", "FileResult", "download", "download_all", "execute"]
