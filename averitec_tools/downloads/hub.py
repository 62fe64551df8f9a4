"""The Hugging Face hub side of a download, through ``huggingface_hub``'s own HTTP layer.

Metadata comes from :func:`huggingface_hub.get_hf_file_metadata` (``HEAD .../resolve/...``:
size, ETag, commit), folder listings from :meth:`huggingface_hub.HfApi.list_repo_tree`, and
bytes from ``huggingface_hub.file_download.http_get`` into a ``.part`` file this package
keeps between runs. ``hf_hub_download`` itself is not used for the bytes because recent
``huggingface_hub`` releases download into a per-process temporary file that is deleted on
failure, so an interrupted multi-gigabyte knowledge store would start again from zero; here
the next run sends ``Range: bytes=N-`` and continues. ``HF_ENDPOINT`` is read at call time,
so a mirror (or the tests' local hub) is used without re-importing anything; ``HF_TOKEN`` /
a login is honoured as by ``huggingface_hub``.

Example:
    >>> import os
    >>> from averitec_tools.downloads.sources import HubLocation
    >>> saved = os.environ.get("HF_ENDPOINT")
    >>> os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
    >>> file_url(HubLocation("chenxwh/AVeriTeC"), "data/dev.json")
    'http://127.0.0.1:9/chenxwh/AVeriTeC/resolve/main/data/dev.json'
    >>> file_url(HubLocation("tals/vitaminc", repo_type="dataset"), "README.md")
    'http://127.0.0.1:9/datasets/tals/vitaminc/resolve/main/README.md'
    >>> _ = os.environ.pop("HF_ENDPOINT") if saved is None else os.environ.update(HF_ENDPOINT=saved)
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from averitec_tools.downloads.sources import OFF_HUB_TYPES, FolderListing, HubLocation
from averitec_tools.errors import UserError

DEFAULT_ENDPOINT = "https://huggingface.co"
_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "requests", "urllib3", "h11")


def endpoint() -> str:
    """``$HF_ENDPOINT`` (read now, not at import), else ``https://huggingface.co``."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def file_url(hub: HubLocation, path: str) -> str:
    """The ``.../resolve/<revision>/<path>`` URL of a file (dataset repos under ``/datasets``)."""
    from huggingface_hub import hf_hub_url

    if hub.repo_type in OFF_HUB_TYPES:
        from averitec_tools.downloads.github import raw_url

        return raw_url(hub, path)
    return str(hf_hub_url(hub.repo_id, path, repo_type=hub.repo_type, revision=hub.revision, endpoint=endpoint()))


@dataclass(frozen=True)
class RemoteInfo:
    """What the hub says about one file before it is fetched.

    Attributes:
        url: Where the bytes are (after the hub's redirects).
        size: Size in bytes (``None`` when the server did not say).
        etag: The hub's content hash: the sha256 for Git LFS files, the git blob id otherwise.
        commit: The commit the revision resolved to.
    """

    url: str
    size: int | None
    etag: str | None
    commit: str | None

    @property
    def lfs_sha256(self) -> str | None:
        e = self.etag or ""
        return e if len(e) == 64 and all(c in "0123456789abcdef" for c in e) else None

    @property
    def git_blob(self) -> str | None:
        e = self.etag or ""
        return e if len(e) == 40 and all(c in "0123456789abcdef" for c in e) else None


def is_network_error(exc: BaseException) -> bool:
    """An error of the connection (or of the HTTP client library), not of this package."""
    if isinstance(exc, OSError):
        return True
    return any(type(exc).__module__.split(".")[0] == m for m in _CLIENT_MODULES) or any(
        c.__module__.split(".")[0] in _CLIENT_MODULES for c in type(exc).__mro__
    )


@contextlib.contextmanager
def hub_errors(what: str, hub: HubLocation | None = None) -> Iterator[None]:
    """Turn ``huggingface_hub`` and connection errors into one-line :class:`UserError` s."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:  # classified below; anything else is a bug and propagates
        from huggingface_hub import utils as hf_utils

        repo = f" in {hub.describe()}" if hub else ""
        if isinstance(exc, hf_utils.RevisionNotFoundError):
            raise UserError(f"{what}: revision not found{repo}", hint="pass --revision with an existing one") from None
        if isinstance(exc, hf_utils.RepositoryNotFoundError):
            raise UserError(f"{what}: repository not found{repo} at {endpoint()}",
                            hint="check --repo/--repo-type, or log in if it is gated") from None
        if isinstance(exc, hf_utils.EntryNotFoundError):
            raise UserError(f"{what}: no such file{repo} at {endpoint()}",
                            hint="name a mirror with --repo OWNER/NAME (same layout), or install files you have "
                            "with --from DIR") from None
        if isinstance(exc, hf_utils.OfflineModeIsEnabled):
            raise UserError(f"{what}: the hub is disabled (HF_HUB_OFFLINE=1)",
                            hint="unset HF_HUB_OFFLINE to download") from None
        if isinstance(exc, hf_utils.HfHubHTTPError) or is_network_error(exc):
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise UserError(f"{what}: {type(exc).__name__}: {first}") from None
        raise


def unreachable(*, timeout: float = 5.0) -> str | None:
    """Why the hub's endpoint cannot be reached (one request, no retries), or ``None``.

    Any HTTP answer counts as reachable; only a connection error (DNS, refused, timeout)
    does not. Asked once per download run, so an offline machine is told at once instead
    of after ``huggingface_hub``'s retries for every file.
    """
    import urllib.error
    import urllib.request

    request = urllib.request.Request(endpoint(), method="HEAD")
    try:
        urllib.request.urlopen(request, timeout=timeout).close()  # noqa: S310 (the hub's https/http endpoint)
    except urllib.error.HTTPError:
        return None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return str(reason).strip() or type(exc).__name__
    return None


def remote_info(hub: HubLocation, path: str) -> RemoteInfo:
    """``HEAD`` one file: its download URL, size, content hash and resolved commit."""
    from huggingface_hub import get_hf_file_metadata

    url = file_url(hub, path)
    if hub.repo_type in OFF_HUB_TYPES:
        from averitec_tools.downloads.github import head

        with hub_errors(f"{hub.repo_id}/{path}", hub):
            location, size = head(hub, path)
        return RemoteInfo(url=location, size=size, etag=None,
                          commit=hub.revision if hub.repo_type == "github" else None)
    with hub_errors(f"{hub.repo_id}/{path}", hub):
        meta = get_hf_file_metadata(url)
    return RemoteInfo(url=str(meta.location or url), size=meta.size, etag=meta.etag, commit=meta.commit_hash)


@dataclass(frozen=True)
class ListedFile:
    """A file found by a folder listing."""

    path: str
    size: int
    lfs_sha256: str | None


def list_folder(hub: HubLocation, listing: FolderListing) -> list[ListedFile]:
    """The files of ``listing.folder`` (recursively) that match its patterns, sorted by path."""
    from huggingface_hub import HfApi

    prefix = listing.folder.strip("/")
    api = HfApi(endpoint=endpoint())
    with hub_errors(f"{hub.repo_id}/{prefix or '.'}", hub):
        entries = list(api.list_repo_tree(hub.repo_id, path_in_repo=prefix or None, recursive=True,
                                          repo_type=hub.repo_type, revision=hub.revision))
    found = []
    for entry in entries:
        size = getattr(entry, "size", None)
        if size is None:  # a folder
            continue
        rel = entry.path[len(prefix) + 1:] if prefix else entry.path
        if any(fnmatch.fnmatchcase(rel, p) for p in listing.patterns):
            lfs = getattr(entry, "lfs", None)
            found.append(ListedFile(entry.path, int(size), getattr(lfs, "sha256", None) if lfs else None))
    return sorted(found, key=lambda f: f.path)


def _headers_for(url: str) -> dict[str, str]:
    from huggingface_hub.utils import build_hf_headers

    headers: dict[str, str] = dict(build_hf_headers())
    if urlsplit(url).netloc != urlsplit(endpoint()).netloc:
        headers.pop("authorization", None)  # never send the hub token to a CDN
        headers.pop("Authorization", None)
    return headers


@contextlib.contextmanager
def progress_bars(enabled: bool) -> Iterator[None]:
    """``huggingface_hub``'s progress bars on (a terminal) or off (``--json``, pipes) for a block."""
    from huggingface_hub.utils import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    was_disabled = are_progress_bars_disabled()
    if enabled and was_disabled and not os.environ.get("HF_HUB_DISABLE_PROGRESS_BARS"):
        enable_progress_bars()
    elif not enabled:
        disable_progress_bars()
    try:
        yield
    finally:
        (disable_progress_bars if was_disabled else enable_progress_bars)()


def fetch_to_part(info: RemoteInfo, part: Path, *, label: str) -> None:
    """Download ``info.url`` into ``part``, continuing from the bytes ``part`` already holds.

    Raises:
        UserError: the connection failed; ``part`` keeps what arrived, so the next call resumes.
    """
    from huggingface_hub.file_download import http_get

    part.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.exists() else 0
    if info.size is not None and have > info.size:  # not a prefix of this file: start again
        part.unlink()
        have = 0
    if info.size is not None and have == info.size:
        return
    import logging

    hf_logger = logging.getLogger("huggingface_hub")
    level = hf_logger.level
    hf_logger.setLevel(logging.ERROR)  # its retry warnings are multi-line; the outcome is reported below
    try:
        with hub_errors(label), open(part, "ab") as fh:
            http_get(info.url, fh, resume_size=have, headers=_headers_for(info.url), expected_size=info.size,
                     displayed_filename=label)
    except UserError as exc:
        kept = part.stat().st_size if part.exists() else 0
        total = f" of {info.size}" if info.size is not None else ""
        raise UserError(f"download interrupted: {exc.message} ({kept}{total} bytes kept in {part})",
                        hint="run the same command again to resume") from None
    finally:
        hf_logger.setLevel(level)


class RangeFile:
    """A read-only, seekable view of a remote file that fetches only the ranges read.

    ``zipfile.ZipFile(RangeFile(url, size))`` reads an archive's directory (its last few
    kilobytes) without downloading the archive, which is how the unpacked size of a
    knowledge store is known before it is fetched.
    """

    def __init__(self, url: str, size: int) -> None:
        self.url, self.size, self.pos = url, size, 0

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        data = _get_range(self.url, self.pos, end - 1)
        self.pos += len(data)
        return data


def _get_range(url: str, start: int, last: int) -> bytes:
    from huggingface_hub import get_session

    headers = {**_headers_for(url), "Range": f"bytes={start}-{last}", "Accept-Encoding": "identity"}
    for _ in range(5):  # follow the hub's redirects to its storage by hand (clients differ)
        response: Any = get_session().get(url, headers=headers)
        if response.status_code in (301, 302, 303, 307, 308) and response.headers.get("Location"):
            from urllib.parse import urljoin

            url = urljoin(url, response.headers["Location"])
            headers = {**_headers_for(url), "Range": headers["Range"], "Accept-Encoding": "identity"}
            continue
        if response.status_code not in (200, 206):
            raise OSError(f"HTTP {response.status_code} reading bytes {start}-{last} of {url}")
        data = bytes(response.content)
        return data[start:last + 1] if response.status_code == 200 else data
    raise OSError(f"too many redirects reading {url}")


__all__ = [
    "RangeFile", "RemoteInfo", "endpoint", "fetch_to_part", "hub_errors", "is_network_error", "list_folder",
    "progress_bars", "remote_info",
]
