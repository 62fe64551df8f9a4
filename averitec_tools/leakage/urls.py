"""URL handling for the audits: validation, archive.org unwrapping, domain lists.

AVeriTeC evidence URLs are often Wayback Machine captures
(``https://web.archive.org/web/20201129141238/https://site/...``): the *original* URL
gives the domain and any date in the path; the capture timestamp is only an upper bound
on the publication date, kept separately.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from urllib.parse import urlsplit

_ARCHIVE = re.compile(
    r"^https?://(?:web\.)?archive\.org/web/(?P<ts>\d{4,14})(?:[a-z_]{2,4})?/+(?P<url>.+)$",
    re.IGNORECASE,
)

_BARE_HOST = re.compile(r"^[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?:[/:?#]|$)", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedUrl:
    """An evidence URL, unwrapped.

    Attributes:
        raw: The URL as given.
        url: The original URL (the archived one for a Wayback capture).
        host: Lower-case host without ``www.`` and port.
        path: The original URL's path (``/`` when empty).
        snapshot: The Wayback capture date, if ``raw`` is a capture.
    """

    raw: str
    url: str
    host: str
    path: str
    snapshot: dt.date | None


def _snapshot_date(ts: str) -> dt.date | None:
    if len(ts) < 8:
        return None
    try:
        return dt.date(int(ts[:4]), int(ts[4:6]), int(ts[6:8]))
    except ValueError:
        return None


def parse_url(raw: str) -> ParsedUrl | None:
    """Parse and unwrap ``raw``; ``None`` if it is not an http(s) URL with a host.

    Example:
        >>> p = parse_url("https://web.archive.org/web/20201101145631/https://www.nypost.com/2020/10/30/x/")
        >>> (p.host, p.path, p.snapshot.isoformat())
        ('nypost.com', '/2020/10/30/x/', '2020-11-01')
        >>> parse_url("not a url") is None
        True
    """
    if not isinstance(raw, str):
        return None
    if len(raw) <= MEMO_MAX_CHARS:
        return _parse_url_memo(raw)
    return _parse_url(raw)


#: URLs up to this long are parsed once per process (:func:`parse_url` is a pure function
#: of the string, and a board's submissions cite the same knowledge-store pages again and
#: again); the memo holds at most ``MEMO_ENTRIES``, so at most ~MEMO_ENTRIES × a few
#: copies of MEMO_MAX_CHARS characters.
MEMO_MAX_CHARS = 1024
MEMO_ENTRIES = 8192


def _parse_url(raw: str) -> ParsedUrl | None:
    text = raw.strip()
    snapshot = None
    inner = text
    m = _ARCHIVE.match(text)
    if m:
        snapshot = _snapshot_date(m["ts"])
        inner = m["url"]
    # tolerate "https:/host" (a slash lost in archive URLs) and scheme-less "host.tld/path"
    inner = re.sub(r"^(https?):/(?!/)", r"\1://", inner, flags=re.IGNORECASE)
    if _BARE_HOST.match(inner):
        inner = "http://" + inner
    try:
        parts = urlsplit(inner)
        host = parts.hostname or ""
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host or " " in inner or "." not in host:
        return None
    host = host.lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    return ParsedUrl(raw=raw, url=inner, host=host, path=parts.path or "/", snapshot=snapshot)


_parse_url_memo = lru_cache(maxsize=MEMO_ENTRIES)(_parse_url)


def same_page(a: ParsedUrl, b: ParsedUrl) -> bool:
    """Whether two URLs name the same page (host, and path up to a trailing slash).

    Example:
        >>> same_page(parse_url("https://web.archive.org/web/2020/https://snopes.com/fact-check/x/"),
        ...           parse_url("http://www.snopes.com/fact-check/x"))
        True
    """
    return a.host == b.host and a.path.rstrip("/").lower() == b.path.rstrip("/").lower()


@dataclass(frozen=True)
class DomainEntry:
    """A list entry: a domain, optionally restricted to a path prefix.

    ``cato.org/blog`` matches ``/blog`` and everything under ``/blog/``; a trailing ``*``
    (``reuters.com/article/uk-factcheck-*``) matches any path starting with the prefix.
    """

    host: str
    path_prefix: str = ""
    raw_prefix: bool = False

    @classmethod
    def parse(cls, line: str) -> DomainEntry | None:
        text = line.strip().split("#", 1)[0].strip()
        if not text:
            return None
        text = re.sub(r"^[a-z]+://", "", text, flags=re.IGNORECASE)
        host, _, path = text.partition("/")
        host = host.lower().rstrip(".")
        if host.startswith("www."):
            host = host[4:]
        if not host or "." not in host:
            return None
        raw_prefix = path.endswith("*")
        path = path.rstrip("*") if raw_prefix else path.strip("/")
        return cls(host=host, path_prefix=f"/{path.lower()}" if path else "", raw_prefix=raw_prefix)

    def matches(self, url: ParsedUrl) -> bool:
        if not (url.host == self.host or url.host.endswith("." + self.host)):
            return False
        if not self.path_prefix:
            return True
        path = url.path.lower()
        if self.raw_prefix:
            return path.startswith(self.path_prefix)
        return path == self.path_prefix or path.startswith(self.path_prefix + "/")

    def __str__(self) -> str:
        return self.host + self.path_prefix + ("*" if self.raw_prefix else "")


class DomainList:
    """A set of :class:`DomainEntry` with subdomain and path-prefix matching.

    Example:
        >>> lst = DomainList.from_lines(["snopes.com", "cato.org/blog"], name="demo")
        >>> str(lst.match(parse_url("https://media.snopes.com/a")))
        'snopes.com'
        >>> lst.match(parse_url("https://cato.org/about")) is None
        True
    """

    #: Answers of :meth:`match` kept per list (host and path: all it reads), at most this many.
    MEMO_ENTRIES = 8192

    def __init__(self, entries: Iterable[DomainEntry], *, name: str) -> None:
        self.name = name
        self._by_host: dict[str, list[DomainEntry]] = {}
        for e in entries:
            self._by_host.setdefault(e.host, []).append(e)
        self._memo: dict[tuple[str, str], DomainEntry | None] = {}

    @classmethod
    def from_lines(cls, lines: Iterable[str], *, name: str) -> DomainList:
        return cls((e for e in (DomainEntry.parse(line) for line in lines) if e is not None), name=name)

    @classmethod
    def packaged(cls, filename: str, *, name: str) -> DomainList:
        """A list shipped in ``averitec_tools/data/``."""
        text = resources.files("averitec_tools").joinpath("data", filename).read_text(encoding="utf-8")
        return cls.from_lines(text.splitlines(), name=name)

    def __len__(self) -> int:
        return sum(len(v) for v in self._by_host.values())

    def entries(self) -> list[DomainEntry]:
        return [e for group in self._by_host.values() for e in group]

    def match(self, url: ParsedUrl) -> DomainEntry | None:
        """The first entry matching ``url`` (checking the host and each parent domain)."""
        key = (url.host, url.path)
        if key in self._memo:
            return self._memo[key]
        found = self._match(url)
        if len(url.path) <= 1024:  # bounded: at most MEMO_ENTRIES short keys
            if len(self._memo) >= self.MEMO_ENTRIES:
                self._memo.clear()
            self._memo[key] = found
        return found

    def _match(self, url: ParsedUrl) -> DomainEntry | None:
        labels = url.host.split(".")
        for i in range(len(labels) - 1):
            for entry in self._by_host.get(".".join(labels[i:]), ()):
                if entry.matches(url):
                    return entry
        return None


__all__ = ["DomainEntry", "DomainList", "ParsedUrl", "parse_url", "same_page"]
