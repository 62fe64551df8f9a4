"""Each audit rule on hand-made fixtures, split-level checks, and the shared-data audit."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from averitec_tools.errors import UserError
from averitec_tools.leakage import RULE_ORDER, run_audit
from averitec_tools.leakage.html_report import render_html
from averitec_tools.leakage.inputs import read_audit_input

REPO = Path(__file__).resolve().parents[1]


def _answer(url: str | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"answer": "a", "answer_type": "Extractive" if url else "Unanswerable", **extra}
    if url:
        out["source_url"] = url
    return out


def _claim(date: str | None, urls: list[str | None], *, fca: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "claim": "c",
        "label": "Refuted",
        "claim_date": date,
        "fact_checking_article": fca,
        "questions": [{"question": "q", "answers": [_answer(u) for u in urls]}],
        **extra,
    }


def _write(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


GOLD = [
    # 0: URL dated after the claim (day precision) and one before
    _claim("10-10-2020", ["https://news.example.com/2020/10/12/story", "https://news.example.com/2020/10/01/story"]),
    # 1: archived after the claim, but the original URL has no date -> archive rule only
    _claim("10-10-2020", ["https://web.archive.org/web/20201201000000/https://blog.example.org/post"]),
    # 2: fact-checker evidence, the claim's own fact-check, a misinformation domain
    _claim(
        "10-10-2020",
        [
            "https://www.politifact.com/factchecks/2020/oct/01/x/",
            "https://web.archive.org/web/20201111000000/https://www.leadstories.com/hoax-alert/2020/10/own.html",
            "https://americasfreedomfighters.com/some-story",
        ],
        fca="https://web.archive.org/web/20201111000000/https://leadstories.com/hoax-alert/2020/10/own.html",
    ),
    # 3: unparseable claim date, invalid URL, unanswerable (no URL)
    _claim("sometime", ["Metadata", None, "https://news.example.com/2030/01/01/x"]),
    # 4: domain of another claim's fact-checking article (not in the shipped list)
    _claim("10-10-2020", ["https://regional-checker.example.net/about"], fca="https://regional-checker.example.net/fc/1"),
]


@pytest.fixture()
def report(tmp_path: Path):  # type: ignore[no-untyped-def]
    return run_audit(_write(tmp_path / "dev.json", GOLD))


def _rows(report, rule: str) -> list[tuple[int, str | None]]:  # type: ignore[no-untyped-def]
    return [(r.claim_index, r.date) for r in report.rules[rule].rows]


def test_counts(report) -> None:  # type: ignore[no-untyped-def]
    assert report.n_claims == 5
    assert report.n_evidence == 9  # every evidence item with a URL field, valid or not
    assert report.n_evidence_without_url == 1
    assert report.n_claims_without_date == 1
    # claim 0: two URL dates; claim 2: /2020/oct/01/ and /2020/10/; claim 3: /2030/01/01/
    assert report.n_evidence_with_publication_date == 5


def test_published_after_claim(report) -> None:  # type: ignore[no-untyped-def]
    rows = report.rules["published_after_claim"].rows
    # claim 2's "/2020/oct/01/" is before the claim; its "/2020/10/" month is not wholly after it
    assert [(r.claim_index, r.date) for r in rows] == [(0, "2020-10-12")]
    assert "2 day(s) after the claim date 2020-10-10" in rows[0].detail
    assert report.rules["published_after_claim"].rate == pytest.approx(1 / 9)


def test_archive_dates_are_an_upper_bound_only(report) -> None:  # type: ignore[no-untyped-def]
    assert _rows(report, "archived_after_claim") == [(1, "2020-12-01"), (2, "2020-11-11")]
    assert "upper bound" in report.rules["archived_after_claim"].rows[0].detail
    assert 1 not in {i for i, _ in _rows(report, "published_after_claim")}


def test_source_rules(report) -> None:  # type: ignore[no-untyped-def]
    fc = report.rules["fact_checker_source"].rows
    assert [(r.claim_index, r.url.split("/")[2]) for r in fc] == [
        (2, "www.politifact.com"),
        (2, "web.archive.org"),
        (4, "regional-checker.example.net"),
    ]
    assert "shipped list" in fc[0].detail and "loaded splits" in fc[2].detail
    assert _rows(report, "own_fact_check_article") == [(2, None)]
    misinfo = report.rules["misinfo_source"].rows
    assert [(r.claim_index, r.detail) for r in misinfo] == [(2, "misinformation domain americasfreedomfighters.com")]


def test_bad_dates_and_urls_are_reported_not_fatal(report) -> None:  # type: ignore[no-untyped-def]
    assert [(r.claim_index, r.url) for r in report.invalid_urls] == [(3, "Metadata")]
    assert [(r.claim_index, r.date) for r in report.unparseable_dates] == [(3, "sometime")]
    assert 3 not in {i for i, _ in _rows(report, "published_after_claim")}  # no claim date, no verdict


def test_json_shape(report) -> None:  # type: ignore[no-untyped-def]
    out = report.to_json()
    assert list(out)[:3] == ["n_claims", "n_evidence", "rules"]
    assert list(out["rules"]) == list(RULE_ORDER)
    for rule in out["rules"].values():
        assert set(rule) == {"count", "rate", "rows"}
        assert all(set(r) == {"claim_index", "url", "date", "detail"} for r in rule["rows"])
    json.dumps(out)


def test_submission_with_metadata_and_references(tmp_path: Path) -> None:
    gold = _write(tmp_path / "dev.json", GOLD)
    sub = [
        {"claim_id": 0, "claim": "c", "pred_label": "Refuted", "evidence": [
            {"question": "q", "answer": "a", "url": "https://x.org/story", "metadata": {"article:published_time": "2020-10-20T00:00:00Z"}},
            {"question": "q", "answer": "a", "url": "https://y.org/story",
             "scraped_text": '<script type="application/ld+json">{"datePublished": "2020-10-05"}</script>'},
            {"question": "q", "answer": "a", "url": "https://z.org/s", "metadata": {"datePublished": "garbage"}},
        ]},
        {"claim_id": 2, "claim": "c", "pred_label": "Refuted", "evidence": [
            {"question": "q", "answer": "a", "url": "https://leadstories.com/hoax-alert/2020/10/own.html/"},
        ]},
    ]
    report = run_audit(_write(tmp_path / "sub.json", sub), references=[gold])
    assert report.kind == "submission"
    assert [(r.claim_index, r.date) for r in report.rules["published_after_claim"].rows] == [(0, "2020-10-20")]
    assert report.rules["published_after_claim"].rows[0].detail.startswith("published 2020-10-20 (metadata:article:published_time")
    assert [r.claim_index for r in report.rules["own_fact_check_article"].rows] == [2]
    assert [r.date for r in report.unparseable_dates] == ["garbage", "sometime"]
    without_refs = run_audit(tmp_path / "sub.json")
    assert without_refs.n_claims_without_date == 2
    assert without_refs.rules["published_after_claim"].count == 0


def test_split_level_checks(tmp_path: Path) -> None:
    train = _write(tmp_path / "train.json", [_claim("01-01-2020", []), _claim("15-09-2020", [])])
    dev = _write(tmp_path / "dev.json", [_claim("01-09-2020", []), _claim("31-10-2020", [])])
    report = run_audit(dev, references=[train])
    ranges = {r.split: (str(r.first), str(r.last)) for r in report.split_ranges}
    assert ranges == {"train": ("2020-01-01", "2020-09-15"), "dev": ("2020-09-01", "2020-10-31")}
    (overlap,) = report.split_overlaps
    assert (overlap.a, overlap.b, str(overlap.start), str(overlap.end), overlap.n_claims_in_overlap) == (
        "train", "dev", "2020-09-01", "2020-09-15", 2)
    assert report.fired("split_overlap")
    clean = run_audit(dev, references=[_write(tmp_path / "train2.json", [_claim("01-01-2020", [])])])
    assert clean.split_overlaps == () and not clean.fired("split_overlap")


def test_reference_domains_live_with_the_gold_file(tmp_path: Path) -> None:
    """The fact-checking domains of a reference are built once per gold file version and
    kept with its claims (a worker audits every submission against one gold file)."""
    gold = _write(tmp_path / "dev.json", GOLD)
    sub = _write(tmp_path / "sub.json", [{"claim_id": 4, "evidence": [{"url": "https://regional-checker.example.net/x"}]}])
    first, again = (read_audit_input(sub, references=[gold]) for _ in range(2))
    assert first.split_fact_checkers is again.split_fact_checkers
    assert sorted(map(str, first.split_fact_checkers.entries())) == ["leadstories.com", "regional-checker.example.net"]
    both = read_audit_input(sub, references=[gold, _write(tmp_path / "train.json", [_claim("01-01-2020", [], fca="https://b.example/f")])])
    assert sorted(map(str, both.split_fact_checkers.entries())) == ["b.example", "leadstories.com", "regional-checker.example.net"]
    report = run_audit(sub, references=[gold])
    assert [r.detail for r in report.rules["fact_checker_source"].rows] == [
        "regional-checker.example.net: domain of a fact_checking_article in the loaded splits"]


def test_reference_date_range_lives_with_the_gold_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One reference's claim-date range is computed once per gold file version (named
    after the path it is read through); several splits are compared on every call."""
    from averitec_tools.leakage import inputs, splits

    calls: list[list[str]] = []

    def counted(claims_by_split: Any) -> Any:
        calls.append(list(claims_by_split))
        return splits.split_ranges(claims_by_split)

    monkeypatch.setattr(inputs, "split_ranges", counted)
    gold = _write(tmp_path / "dev.json", GOLD)
    (tmp_path / "test.json").symlink_to(gold)
    sub = _write(tmp_path / "sub.json", [{"claim_id": 4, "evidence": []}])
    first, again, linked = (read_audit_input(sub, references=[p]) for p in (gold, gold, tmp_path / "test.json"))
    assert first.split_ranges == again.split_ranges == splits.split_ranges(first.splits) and first.split_overlaps == ()
    assert [r.split for r in linked.split_ranges] == ["test"] and linked.split_ranges[0].last == first.split_ranges[0].last
    assert len(calls) == 1
    read_audit_input(sub, references=[gold, tmp_path / "test.json"])
    assert calls[1:] == [["dev", "test"]]


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ([{"id": 0, "label": "Refuted", "evidence": ["q a"]}], "EvalAI format"),
        ([{"foo": 1}], "neither an AVeriTeC gold claim"),
        ([{"claim_id": "x", "evidence": []}], "'claim_id' must be an integer"),
        # {"url": 5} is read as `averitec score` reads it (an invalid URL): tests/test_hostile_inputs.py
        ([], "no claims to audit"),
    ],
)
def test_bad_input(tmp_path: Path, content: Any, match: str) -> None:
    with pytest.raises(UserError, match=match):
        run_audit(_write(tmp_path / "f.json", content))


def test_claim_id_outside_references(tmp_path: Path) -> None:
    gold = _write(tmp_path / "dev.json", GOLD[:1])
    sub = _write(tmp_path / "s.json", [{"claim_id": 7, "evidence": []}])
    with pytest.raises(UserError, match=r"claim_id 7 is not in the references \(1 claims\)"):
        run_audit(sub, references=[gold])


def test_html_escapes_and_lists_rules(report) -> None:  # type: ignore[no-untyped-def]
    page = render_html(report)
    for rule in RULE_ORDER:
        assert rule in page
    assert "upper bound" in page and "<script" not in page.split("<style>")[0]


def _plain_host(url: str) -> str:
    url = re.sub(r"^https?://web\.archive\.org/web/[^/]*/", "", url)  # a Wayback capture: the page it holds
    host = (urlsplit(url).hostname or "").lower()
    return host.removeprefix("www.")


def _plain_page(url: str) -> str:
    url = re.sub(r"^https?://web\.archive\.org/web/[^/]*/", "", url)
    return _plain_host(url) + urlsplit(url).path.rstrip("/")


def _independent_counts(urls_per_claim: list[list[str]], gold: list[dict[str, Any]]) -> dict[str, int]:
    """What the simple rules must find, recomputed with urllib and the shipped misinformation list."""
    lines = (REPO / "averitec_tools" / "data" / "misinfo_list.txt").read_text(encoding="utf-8").splitlines()
    misinfo = {line.strip().lower().removeprefix("www.") for line in lines if line.strip()}
    counts = {"n_evidence": 0, "own_fact_check_article": 0, "misinfo_source": 0, "placeholders": 0}
    for urls, claim in zip(urls_per_claim, gold, strict=True):
        fca = claim["fact_checking_article"]
        for url in urls:
            counts["n_evidence"] += 1
            counts["placeholders"] += url == "Metadata"
            host = _plain_host(url)
            counts["own_fact_check_article"] += bool(fca and host and _plain_page(url) == _plain_page(fca))
            labels = host.split(".")
            counts["misinfo_source"] += any(".".join(labels[i:]) in misinfo for i in range(len(labels) - 1))
    return counts


@pytest.mark.shared_data
def test_audit_on_dev_gold(shared_data: Path) -> None:
    gold = json.loads((shared_data / "averitec" / "dev.json").read_text(encoding="utf-8"))
    urls = [[a.get("source_url") or a.get("cached_source_url") for q in c["questions"] for a in q["answers"]
             if a.get("source_url") or a.get("cached_source_url")] for c in gold]
    expected = _independent_counts(urls, gold)
    report = run_audit(shared_data / "averitec" / "dev.json")
    r = report.rules
    assert (report.n_claims, report.n_evidence) == (len(gold), expected["n_evidence"]) == (500, 1360)
    assert r["own_fact_check_article"].count == expected["own_fact_check_article"] == 4
    assert r["misinfo_source"].count == expected["misinfo_source"] == 18
    assert len(report.invalid_urls) == expected["placeholders"] == 79  # "Metadata" placeholders
    assert {row.url for row in report.invalid_urls} == {"Metadata"}
    # Snapshot (URL-date parsing and the fact-checker list; not derived independently), from
    # `averitec audit $AVERITEC_DATA_DIR/averitec/dev.json --json` (rules.<name>.count):
    assert r["published_after_claim"].count == 30 and r["published_after_claim"].n_claims == 21
    assert r["fact_checker_source"].count == 87
    assert sum("shipped list" in row.detail for row in r["fact_checker_source"].rows) == 50
    # nearly every snapshot postdates the claim: why capture dates are not publication dates
    assert r["archived_after_claim"].rate > 0.85
    assert [(s.split, str(s.first), str(s.last)) for s in report.split_ranges] == [("dev", "2020-08-26", "2020-10-31")]


@pytest.mark.shared_data
def test_audit_on_baseline_predictions(shared_data: Path) -> None:
    gold = json.loads((shared_data / "averitec" / "dev.json").read_text(encoding="utf-8"))
    preds = json.loads((shared_data / "averitec" / "baseline_dev_predictions.json").read_text(encoding="utf-8"))
    assert [p["claim_id"] for p in preds] == list(range(len(gold)))
    expected = _independent_counts([[e["url"] for e in p["evidence"] if e.get("url")] for p in preds], gold)
    report = run_audit(
        shared_data / "averitec" / "baseline_dev_predictions.json", references=[shared_data / "averitec" / "dev.json"]
    )
    r = report.rules
    assert (report.kind, report.n_claims, report.n_evidence) == ("submission", 500, expected["n_evidence"])
    assert expected["n_evidence"] == 1500
    assert r["own_fact_check_article"].count == expected["own_fact_check_article"] == 9
    assert r["misinfo_source"].count == expected["misinfo_source"] == 16
    # Snapshot, from `averitec audit $AVERITEC_DATA_DIR/averitec/baseline_dev_predictions.json
    # --references $AVERITEC_DATA_DIR/averitec/dev.json --json` (rules.<name>.count):
    assert r["published_after_claim"].count == 12
    assert r["fact_checker_source"].count == 121
