"""Publication dates of evidence: from the URL path, tweet ids and page metadata.

Never from an archive.org capture time (see :mod:`averitec_tools.leakage.urls`): a capture
only bounds the publication date from above.

A date may be known to the day or only to the month (``/2020/10/``); a month-precision
date counts as "after the claim" only if the whole month is after the claim date.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any

from averitec_tools.leakage.urls import MEMO_ENTRIES, MEMO_MAX_CHARS, ParsedUrl

#: Plausible publication years (guards against ids that look like dates).
MIN_YEAR, MAX_YEAR = 1990, 2035


@dataclass(frozen=True)
class EvidenceDate:
    """A publication date with its precision and where it was found.

    Attributes:
        date: The earliest day the evidence can have been published.
        precision: ``"day"`` or ``"month"``.
        source: ``"url-path"``, ``"tweet-id"`` or ``"metadata:<key>"``.
        text: The matched text (for the report).
    """

    date: dt.date
    precision: str
    source: str
    text: str

    def after(self, claim_date: dt.date) -> bool:
        """Whether the evidence was certainly published after ``claim_date``."""
        return self.date > claim_date

    def iso(self) -> str:
        return self.date.isoformat() if self.precision == "day" else self.date.strftime("%Y-%m")


def _valid(y: int, m: int, d: int | None) -> dt.date | None:
    if not (MIN_YEAR <= y <= MAX_YEAR):
        return None
    try:
        return dt.date(y, m, d or 1)
    except ValueError:
        return None


_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
         ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")]
    )
    for m in names
}

# Ordered most to least specific; each yields (year, month, day|None).
_PATH_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)/(?P<m>[01]?\d)/(?P<d>[0-3]?\d)(?=/|$|[^\d])"), "day"),
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)[-_.](?P<m>[01]\d)[-_.](?P<d>[0-3]\d)(?!\d)"), "day"),
    (re.compile(r"(?<!\d)(?P<d>[0-3]\d)[-_.](?P<m>[01]\d)[-_.](?P<y>(?:19|20)\d\d)(?!\d)"), "day"),
    (re.compile(r"(?<![\da-z])(?P<y>(?:19|20)\d\d)/(?P<mon>[a-z]{3,9})/(?P<d>[0-3]?\d)(?=/|$)", re.I), "day"),
    (re.compile(r"(?<!\d)(?P<y>(?:19|20)\d\d)/(?P<m>[01]?\d)(?=/|$)"), "month"),
)


def date_from_url(url: ParsedUrl) -> EvidenceDate | None:
    """Date embedded in the original URL's path, or in a tweet id.

    Recognises ``/2020/10/11/``, ``/2020/10/``, ``2020-10-11``, ``2020_10_11``,
    ``11-10-2020``, ``/2020/oct/11/`` and Twitter status ids (whose top bits are the
    creation time in ms since 2010-11-04, "snowflake" ids).

    Example:
        >>> from averitec_tools.leakage.urls import parse_url
        >>> date_from_url(parse_url("https://x.com/news/2020/10/26/story")).iso()
        '2020-10-26'
        >>> date_from_url(parse_url("https://x.com/2020/10/story")).iso()
        '2020-10'
        >>> date_from_url(parse_url("https://twitter.com/a/status/1320286665785704448")).iso()
        '2020-10-25'
    """
    if len(url.host) + len(url.path) <= MEMO_MAX_CHARS:  # a pure function of host and path: once per process (bounded, urls.py)
        return _date_from_path_memo(url.host, url.path)
    return _date_from_path(url.host, url.path)


def _date_from_path(host: str, path: str) -> EvidenceDate | None:
    tweet = _tweet_date(host, path)
    if tweet is not None:
        return tweet
    for pattern, precision in _PATH_PATTERNS:
        for m in pattern.finditer(path):
            groups = m.groupdict()
            month = _MONTHS.get(groups["mon"].lower()) if groups.get("mon") else int(groups["m"])
            if month is None:
                continue
            day = int(groups["d"]) if groups.get("d") else None
            date = _valid(int(groups["y"]), month, day)
            if date is not None:
                return EvidenceDate(date, precision, "url-path", m.group(0))
    return None


_date_from_path_memo = lru_cache(maxsize=MEMO_ENTRIES)(_date_from_path)


_TWITTER_EPOCH_MS = 1288834974657
_TWEET = re.compile(r"/status(?:es)?/(?P<id>\d{15,20})")


def _tweet_date(host: str, path: str) -> EvidenceDate | None:
    if host not in ("twitter.com", "mobile.twitter.com", "x.com"):
        return None
    m = _TWEET.search(path)
    if not m:
        return None
    ms = (int(m["id"]) >> 22) + _TWITTER_EPOCH_MS
    date = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).date()
    if date.year < 2010:  # pre-snowflake ids carry no time
        return None
    return EvidenceDate(date, "day", "tweet-id", m["id"])


_ISO = re.compile(r"^\s*(?P<y>\d{4})-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2}))?")


def parse_date_string(text: str) -> tuple[dt.date, str] | None:
    """Parse an ISO-8601 date/datetime (``2020-10-11T08:00:00Z``, ``2020-10``) or RFC 2822.

    Example:
        >>> parse_date_string("2020-10-11T08:00:00+00:00")
        (datetime.date(2020, 10, 11), 'day')
        >>> parse_date_string("soon") is None
        True
    """
    if not isinstance(text, str):
        return None
    m = _ISO.match(text)
    if m:
        date = _valid(int(m["y"]), int(m["m"]), int(m["d"]) if m["d"] else None)
        return (date, "day" if m["d"] else "month") if date else None
    from email.utils import parsedate_to_datetime

    try:
        return parsedate_to_datetime(text.strip()).date(), "day"
    except (TypeError, ValueError, IndexError):
        return None


#: Metadata keys holding a publication date (page ``<meta>`` names and JSON-LD keys).
PUBLISHED_KEYS: tuple[str, ...] = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "date_published",
    "published_time",
    "publication_date",
    "pubdate",
    "publishdate",
    "publish-date",
    "dc.date.issued",
    "dcterms.created",
    "sailthru.date",
)


class _MetaParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []
        self._in_ld = False
        self._ld: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            key = (a.get("property") or a.get("name") or a.get("itemprop") or "").lower()
            if key in PUBLISHED_KEYS and a.get("content"):
                self.found.append((key, a["content"]))
        elif tag == "time" and a.get("itemprop", "").lower() == "datepublished" and a.get("datetime"):
            self.found.append(("datepublished", a["datetime"]))
        elif tag == "script" and a.get("type", "").lower() == "application/ld+json":
            self._in_ld = True
            self._ld = []

    def handle_data(self, data: str) -> None:
        if self._in_ld:
            self._ld.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._in_ld:
            self._in_ld = False
            with contextlib.suppress(json.JSONDecodeError):  # broken JSON-LD: no date from it
                self.found.extend(("datepublished", v) for v in _ld_dates(json.loads("".join(self._ld))))


def _ld_dates(obj: Any) -> list[str]:
    out: list[str] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if k == "datePublished" and isinstance(v, str):
                out.append(v)
            else:
                out.extend(_ld_dates(v))
    elif isinstance(obj, list):
        for v in obj:
            out.extend(_ld_dates(v))
    return out


@dataclass(frozen=True)
class MetadataDates:
    """Dates found in an evidence item's metadata, and the strings that did not parse."""

    date: EvidenceDate | None
    unparseable: tuple[str, ...] = ()


def date_from_metadata(*, metadata: Mapping[str, Any] | None = None, html: str | None = None) -> MetadataDates:
    """The earliest publication date in a metadata dict and/or stored HTML.

    Example:
        >>> html = '<meta property="article:published_time" content="2020-11-02T10:00:00Z">'
        >>> date_from_metadata(html=html).date.iso()
        '2020-11-02'
        >>> date_from_metadata(metadata={"datePublished": "yesterday"}).unparseable
        ('yesterday',)
    """
    candidates: list[tuple[str, str]] = []
    if metadata:
        for key, value in metadata.items():
            if str(key).lower() in PUBLISHED_KEYS and isinstance(value, str):
                candidates.append((str(key).lower(), value))
    if html and ("<meta" in html or "ld+json" in html or "<time" in html):
        parser = _MetaParser()
        try:
            parser.feed(html)
            parser.close()
        except (AssertionError, ValueError):
            pass
        candidates.extend(parser.found)
    best: EvidenceDate | None = None
    bad: list[str] = []
    for key, value in candidates:
        parsed = parse_date_string(value)
        if parsed is None:
            bad.append(value)
            continue
        date, precision = parsed
        if best is None or date < best.date:
            best = EvidenceDate(date, precision, f"metadata:{key}", value)
    return MetadataDates(best, tuple(bad))


__all__ = ["PUBLISHED_KEYS", "EvidenceDate", "date_from_metadata", "date_from_url", "parse_date_string"]
