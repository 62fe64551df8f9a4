"""Date extraction (URL path, tweet ids, page metadata) and URL handling for the audit."""

from __future__ import annotations

import datetime as dt

import pytest

from averitec_tools.leakage.dates import date_from_metadata, date_from_url, parse_date_string
from averitec_tools.leakage.urls import DomainEntry, DomainList, parse_url, same_page


def _url(raw: str):  # type: ignore[no-untyped-def]
    parsed = parse_url(raw)
    assert parsed is not None, raw
    return parsed


@pytest.mark.parametrize(
    ("url", "iso", "precision"),
    [
        ("https://www.aljazeera.com/news/2020/10/26/french-president", "2020-10-26", "day"),
        ("https://site.org/2020/10/", "2020-10", "month"),
        ("https://site.org/2020/10/story.html", "2020-10", "month"),
        ("https://site.org/news/2020-10-11-title", "2020-10-11", "day"),
        ("https://site.org/news/story_2020_10_11.html", "2020-10-11", "day"),
        ("https://site.org/x/11-10-2020/y", "2020-10-11", "day"),
        ("https://www.theguardian.com/world/2020/oct/11/story", "2020-10-11", "day"),
        ("https://site.org/2020/1/5/story", "2020-01-05", "day"),
        ("https://twitter.com/ImranKhanPTI/status/1320286665785704448", "2020-10-25", "day"),
        # the capture time of an archived URL is never the publication date
        ("https://web.archive.org/web/20201101145631/https://nypost.com/2020/10/30/x/", "2020-10-30", "day"),
    ],
)
def test_date_from_url(url: str, iso: str, precision: str) -> None:
    date = date_from_url(_url(url))
    assert date is not None
    assert (date.iso(), date.precision) == (iso, precision)


@pytest.mark.parametrize(
    "url",
    [
        "https://web.archive.org/web/20201101145631/https://nypost.com/news/story",
        "https://site.org/item/123456789",
        "https://site.org/2020/13/40/",  # invalid month/day
        "https://site.org/3020/10/11/",  # implausible year
        "https://site.org/products/20201011",  # bare digit runs are ids, not dates
        "https://twitter.com/user/status/12345",  # pre-snowflake id
    ],
)
def test_no_date_from_url(url: str) -> None:
    assert date_from_url(_url(url)) is None


def test_month_precision_is_after_only_if_whole_month_is() -> None:
    month = date_from_url(_url("https://s.org/2020/10/x"))
    assert month is not None
    assert not month.after(dt.date(2020, 10, 15))
    assert month.after(dt.date(2020, 9, 30))


def test_metadata_dates() -> None:
    html = (
        "<html><head><meta property='article:published_time' content='2020-11-02T10:00:00Z'>"
        '<script type="application/ld+json">{"@graph": [{"datePublished": "2020-10-30"}]}</script>'
        "</head><body><time itemprop='datePublished' datetime='2020-11-05'>x</time></body></html>"
    )
    found = date_from_metadata(html=html)
    assert found.date is not None and found.date.iso() == "2020-10-30"  # the earliest
    assert found.date.source == "metadata:datepublished"
    meta = date_from_metadata(metadata={"article:published_time": "Mon, 02 Nov 2020 10:00:00 GMT", "other": "x"})
    assert meta.date is not None and meta.date.iso() == "2020-11-02"
    bad = date_from_metadata(metadata={"datePublished": "last Tuesday"}, html="<meta name='pubdate' content='??'>")
    assert bad.date is None and bad.unparseable == ("last Tuesday", "??")
    assert date_from_metadata(html="<p>no metadata</p>").date is None
    assert parse_date_string("2020-02") == (dt.date(2020, 2, 1), "month")
    assert parse_date_string("2020-02-30") is None


def test_parse_url_unwraps_archives_and_rejects_non_urls() -> None:
    p = _url("https://web.archive.org/web/20201129141238/https://www.Scoopertino.com/exposed/")
    assert (p.host, p.path, p.snapshot) == ("scoopertino.com", "/exposed/", dt.date(2020, 11, 29))
    assert _url("https://web.archive.org/web/20210310020652im_/https://healthfeedback.org/a.png").host == "healthfeedback.org"
    assert _url("abc.net.au/news/2019-05-04/x").host == "abc.net.au"
    assert _url("https://web.archive.org/web/20200408020723/https:/blacklives.org/x").host == "blacklives.org"
    for raw in ("Metadata", "", "ftp://a.org/x", "http://", "https://exa mple.com", "javascript:alert(1)"):
        assert parse_url(raw) is None, raw
    assert same_page(_url("http://www.snopes.com/fact-check/x/"), _url("https://snopes.com/fact-check/x"))
    assert not same_page(_url("https://snopes.com/fact-check/x"), _url("https://snopes.com/fact-check/y"))


def test_domain_lists_match_subdomains_and_path_prefixes() -> None:
    lst = DomainList.from_lines(["# comment", "", "Snopes.com", "cato.org/blog", "centerforsecuritypolicy.org/#articles", "www.x.co/"], name="t")
    assert len(lst) == 4
    assert str(lst.match(_url("https://media.snopes.com/a"))) == "snopes.com"
    assert lst.match(_url("https://notsnopes.com/a")) is None
    assert lst.match(_url("https://cato.org/blog/post")) is not None
    assert lst.match(_url("https://cato.org/blogger")) is None
    assert lst.match(_url("https://cato.org/about")) is None
    assert lst.match(_url("https://centerforsecuritypolicy.org/anything")) is not None
    assert DomainEntry.parse("https://www.X.co/Path/") == DomainEntry("x.co", "/path")
    raw = DomainList.from_lines(["r.com/article/fc-*"], name="t")
    assert raw.match(_url("https://r.com/article/fc-abc")) is not None
    assert raw.match(_url("https://r.com/article/other")) is None


def test_remembered_matches_are_the_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    # DomainList.match remembers answers per (host, path); a full memo starts over.
    monkeypatch.setattr(DomainList, "MEMO_ENTRIES", 2)
    lst = DomainList.from_lines(["snopes.com", "cato.org/blog"], name="t")
    urls = ["https://media.snopes.com/a", "https://cato.org/blog/p", "https://cato.org/about", "https://x.org/" + "p" * 2000]
    fresh = [DomainList.from_lines(["snopes.com", "cato.org/blog"], name="t")._match(_url(u)) for u in urls]
    for _ in range(3):
        assert [lst.match(_url(u)) for u in urls] == fresh
        assert len(lst._memo) <= 2


def test_shipped_lists_load() -> None:
    from averitec_tools.leakage.sources import shipped_fact_checkers, shipped_misinfo

    misinfo = shipped_misinfo()
    assert len(misinfo) > 1500
    assert misinfo.match(_url("https://americasfreedomfighters.com/x")) is not None
    checkers = shipped_fact_checkers()
    assert checkers.match(_url("https://www.politifact.com/factchecks/2020/oct/1/x/")) is not None
    assert checkers.match(_url("https://www.reuters.com/article/uk-factcheck-5g-idUSKBN1")) is not None
    assert checkers.match(_url("https://www.usatoday.com/story/news/factcheck/2020/10/21/x/")) is not None
    assert checkers.match(_url("https://www.usatoday.com/story/news/politics/x/")) is None
    assert checkers.match(_url("https://www.reuters.com/world/x")) is None


@pytest.mark.shared_data
def test_shipped_misinfo_list_is_the_upstream_copy(shared_data) -> None:  # type: ignore[no-untyped-def]
    from importlib import resources

    shipped = resources.files("averitec_tools").joinpath("data", "misinfo_list.txt").read_text(encoding="utf-8")
    assert shipped == (shared_data / "averitec" / "misinfo_list.txt").read_text(encoding="utf-8")


def test_memoised_parsing_is_bounded_and_returns_what_a_fresh_parse_does() -> None:
    from averitec_tools.leakage import urls
    from averitec_tools.leakage.dates import _date_from_path, date_from_url

    short = "https://web.archive.org/web/20201101145631/https://www.nypost.com/2020/10/30/x/"
    long = "https://a.org/2019/01/02/" + "y" * urls.MEMO_MAX_CHARS  # past the memo's bound: parsed each time
    for raw in (short, long, "not a url"):
        assert urls.parse_url(raw) == urls.parse_url(raw) == urls._parse_url(raw)
    for raw in (short, long):
        parsed = urls.parse_url(raw)
        assert parsed is not None and date_from_url(parsed) == _date_from_path(parsed.host, parsed.path)
    before = urls._parse_url_memo.cache_info().currsize
    urls.parse_url(long)
    assert urls._parse_url_memo.cache_info().currsize == before  # long strings are not kept
    assert urls._parse_url_memo.cache_info().maxsize == urls.MEMO_ENTRIES
