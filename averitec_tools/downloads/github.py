"""Files of a public GitHub repository at a pinned commit, as a download location.

A :class:`~averitec_tools.downloads.sources.HubLocation` with ``repo_type="github"`` names
``owner/name`` at ``revision`` (a commit); its files are fetched from the raw-content host
(``https://raw.githubusercontent.com/<owner>/<name>/<revision>/<path>``, or the base URL in
``$AVERITEC_GITHUB_RAW``, read at call time, for a mirror or the tests' local server).
Metadata is one ``HEAD`` request (``urllib``): the size; the commit is the pinned revision.
The bytes then go through the same resumable fetch and sha256 checks as hub files.

    >>> import os
    >>> from averitec_tools.downloads.sources import HubLocation
    >>> saved = os.environ.pop(GITHUB_RAW_ENV, None)
    >>> raw_url(HubLocation("o/r", repo_type="github", revision="abc"), "data/x.csv")
    'https://raw.githubusercontent.com/o/r/abc/data/x.csv'
    >>> _ = os.environ.update({GITHUB_RAW_ENV: saved}) if saved else None
"""

from __future__ import annotations

import os
import urllib.request
from urllib.parse import quote

from averitec_tools.downloads.sources import HubLocation

GITHUB_RAW_ENV = "AVERITEC_GITHUB_RAW"
DEFAULT_RAW = "https://raw.githubusercontent.com"


def raw_url(hub: HubLocation, path: str) -> str:
    """The raw-content URL of ``path`` in ``hub`` at its revision."""
    base = (os.environ.get(GITHUB_RAW_ENV) or DEFAULT_RAW).rstrip("/")
    return f"{base}/{hub.repo_id}/{hub.revision}/{quote(path)}"


def head(hub: HubLocation, path: str, *, timeout: float = 30.0) -> tuple[str, int | None]:
    """``(url, size)`` from a ``HEAD`` request (urllib errors propagate, as ``OSError``)."""
    url = raw_url(hub, path)
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "averitec-tools"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        length = response.headers.get("Content-Length")
        return response.geturl(), int(length) if length and length.isdigit() else None


__all__ = ["head", "raw_url"]
