"""Files of a public GitHub repository at a pinned commit, or of a plain HTTPS folder, as a download location.

A :class:`~averitec_tools.downloads.sources.HubLocation` with ``repo_type="github"`` names
``owner/name`` at ``revision`` (a commit); its files are fetched from the raw-content host
(``https://raw.githubusercontent.com/<owner>/<name>/<revision>/<path>``, or the base URL in
``$AVERITEC_GITHUB_RAW``, read at call time, for a mirror or the tests' local server).
A location with ``repo_type="url"`` is a plain HTTPS folder (``repo_id`` its URL: FEVER's files
at ``https://fever.ai/download/fever``), its files at ``<repo_id>/<path>``.
Metadata is one ``HEAD`` request (``urllib``): the size; the commit is the pinned revision.
The bytes then go through the same resumable fetch and sha256 checks as hub files.

    >>> import os
    >>> from averitec_tools.downloads.sources import HubLocation
    >>> _ = os.environ.pop(URL_ROOT_ENV, None)
    >>> saved = os.environ.pop(GITHUB_RAW_ENV, None)
    >>> raw_url(HubLocation("o/r", repo_type="github", revision="abc"), "data/x.csv")
    'https://raw.githubusercontent.com/o/r/abc/data/x.csv'
    >>> _ = os.environ.update({GITHUB_RAW_ENV: saved}) if saved else None
"""

from __future__ import annotations

import os
import urllib.request
from urllib.parse import quote, urlsplit

from averitec_tools.downloads.sources import HubLocation

GITHUB_RAW_ENV = "AVERITEC_GITHUB_RAW"
DEFAULT_RAW = "https://raw.githubusercontent.com"
#: Replaces the scheme and host of every ``url`` location (read at call time: a mirror, or the tests' local server).
URL_ROOT_ENV = "AVERITEC_URL_ROOT"


def raw_url(hub: HubLocation, path: str) -> str:
    """The raw-content URL of ``path`` in ``hub`` at its revision (a URL folder: ``<folder>/<path>``).

    Example:
        >>> raw_url(HubLocation("https://fever.ai/download/fever", repo_type="url"), "wiki-pages.zip")
        'https://fever.ai/download/fever/wiki-pages.zip'
    """
    if hub.repo_type == "url":
        url = f"{hub.repo_id.rstrip('/')}/{quote(path)}"
        root = os.environ.get(URL_ROOT_ENV)
        if root:
            parts = urlsplit(url)
            url = root.rstrip("/") + parts.path
        return url
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
