"""NLTK resource resolution (``punkt_tab``, ``wordnet``) that never downloads silently.

Resolution order for each resource:

1. data NLTK already finds (``NLTK_DATA``, ``~/nltk_data``, the system folders);
2. ``nltk.download`` -- only when allowed, and always announced on stderr;
3. otherwise a :class:`~averitec_tools.errors.ResourceError` saying how to fix it.

Downloads are forbidden by ``allow_download=False`` (the CLI's ``--no-download``) or by
the environment variable ``AVERITEC_NO_DOWNLOAD=1``.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from averitec_tools.environment import env_flag
from averitec_tools.errors import ResourceError


@dataclass(frozen=True)
class NltkResource:
    """One NLTK data package the scorer needs.

    Attributes:
        package: The name ``nltk.download`` knows it by.
        path: Its path inside an ``nltk_data`` folder, as ``nltk.data.find`` takes it.
    """

    package: str
    path: str


PUNKT_TAB = NltkResource("punkt_tab", "tokenizers/punkt_tab/english/")
WORDNET = NltkResource("wordnet", "corpora/wordnet")

RESOURCES: dict[str, NltkResource] = {r.package: r for r in (PUNKT_TAB, WORDNET)}


def downloads_allowed(*, allow_download: bool = True) -> bool:
    """Whether a missing resource may be downloaded.

    Example:
        >>> downloads_allowed(allow_download=False)
        False
    """
    if not allow_download:
        return False
    return not env_flag("AVERITEC_NO_DOWNLOAD")


class DirPointer:
    """A folder of NLTK data, with the ``join(name).open()`` interface of NLTK's pointers.

    Used for unpacked data: NLTK 3.8.1's ``nltk.data.find`` rewrites any path containing
    ``punkt`` (to its old pickle layout), so it cannot return ``punkt_tab`` itself.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def join(self, name: str) -> DirPointer:
        return DirPointer(self.path / name)

    def open(self, encoding: str | None = None) -> IO[Any]:
        return self.path.open("rb") if encoding is None else self.path.open(encoding=encoding)

    def __repr__(self) -> str:
        return f"DirPointer({str(self.path)!r})"


def _search_path() -> list[str]:
    """NLTK's data search path, without importing ``nltk.data`` (which imports much of NLTK).

    The same folders, in the same order, as ``nltk.data.path`` on POSIX; once ``nltk.data``
    is imported (it may have been extended), or on Windows, its own list is used.
    """
    if "nltk.data" in sys.modules or sys.platform.startswith("win"):
        import nltk.data

        return list(nltk.data.path)
    path = [d for d in os.environ.get("NLTK_DATA", "").split(os.pathsep) if d]
    if "APPENGINE_RUNTIME" not in os.environ and os.path.expanduser("~/") != "~/":
        path.append(os.path.expanduser("~/nltk_data"))
    path += [
        os.path.join(sys.prefix, "nltk_data"),
        os.path.join(sys.prefix, "share", "nltk_data"),
        os.path.join(sys.prefix, "lib", "nltk_data"),
        "/usr/share/nltk_data",
        "/usr/local/share/nltk_data",
        "/usr/lib/nltk_data",
        "/usr/local/lib/nltk_data",
    ]
    return path


def _find(resource: NltkResource) -> Any | None:
    for base in _search_path():
        folder = Path(base) / resource.path
        if folder.is_dir():
            return DirPointer(folder)
    try:
        import nltk.data

        # find() also looks inside ``<name>.zip`` (what nltk.download may leave for wordnet).
        return nltk.data.find(resource.path)
    except (LookupError, OSError):
        return None


def _fix_hint(resource: NltkResource) -> str:
    return (
        f"set NLTK_DATA to a folder that contains {resource.path.rstrip('/')}, "
        f"or run: python -m nltk.downloader {resource.package}"
    )


def find_resource(name: str, *, allow_download: bool = True) -> Any:
    """Return an NLTK path pointer to resource ``name``, downloading it only if allowed.

    Args:
        name: ``"punkt_tab"`` or ``"wordnet"``.
        allow_download: ``False`` forbids ``nltk.download`` (so does
            ``AVERITEC_NO_DOWNLOAD=1``).

    Returns:
        An ``nltk.data`` path pointer (folder or zip member) with ``join``/``open``.

    Raises:
        ResourceError: the resource is missing and cannot (or may not) be downloaded.

    Example:
        >>> ptr = find_resource("wordnet", allow_download=False)
        >>> with ptr.join("lexnames").open() as fh:
        ...     fh.readline().split()[1]
        b'adj.all'
    """
    resource = RESOURCES[name]
    found = _find(resource)
    if found is not None:
        return found
    if not downloads_allowed(allow_download=allow_download):
        raise ResourceError(
            f"NLTK resource {resource.package!r} ({resource.path.rstrip('/')}) not found "
            "and downloads are disabled (--no-download / AVERITEC_NO_DOWNLOAD)",
            hint=_fix_hint(resource),
        )
    import nltk

    print(
        f"averitec: NLTK resource {resource.package!r} not found; "
        f"downloading it with nltk.download({resource.package!r})",
        file=sys.stderr,
    )
    captured = io.StringIO()
    ok = False
    reason = ""
    try:
        # nltk prints progress on stdout; keep stdout clean for --json.
        with contextlib.redirect_stdout(captured):
            ok = bool(nltk.download(resource.package, quiet=True, raise_on_error=True))
    except Exception as exc:  # network errors come in many types
        reason = f": {type(exc).__name__}: {exc}".splitlines()[0]
    found = _find(resource) if ok else None
    if found is None:
        raise ResourceError(
            f"NLTK resource {resource.package!r} not found and could not be downloaded{reason}",
            hint=_fix_hint(resource),
        )
    return found


__all__ = ["downloads_allowed", "find_resource"]
