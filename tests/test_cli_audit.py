"""``averitec audit``: arguments, JSON output, HTML report, --fail-on exit codes, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.cli.main import main

GOLD = [
    {"claim": "c0", "label": "Refuted", "claim_date": "10-10-2020", "fact_checking_article": "https://snopes.com/fact-check/c0/",
     "questions": [{"question": "q", "answers": [
         {"answer": "a", "source_url": "https://news.example.com/2020/10/12/after"},
         {"answer": "a", "source_url": "https://snopes.com/fact-check/c0"}]}]},
    {"claim": "c1", "label": "Supported", "claim_date": "10-10-2020",
     "questions": [{"question": "q", "answers": [{"answer": "a", "source_url": "https://news.example.com/2020/09/01/before"}]}]},
]


@pytest.fixture()
def gold(tmp_path: Path) -> Path:
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(GOLD), encoding="utf-8")
    return path


def test_json_output(gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(gold), "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["n_claims"] == 2 and out["n_evidence"] == 3
    assert set(out["rules"]) == {"published_after_claim", "archived_after_claim", "fact_checker_source", "own_fact_check_article", "misinfo_source"}
    assert out["rules"]["published_after_claim"] == {
        "count": 1,
        "rate": pytest.approx(1 / 3),
        "rows": [{"claim_index": 0, "url": "https://news.example.com/2020/10/12/after", "date": "2020-10-12",
                  "detail": "published 2020-10-12 (URL path '2020/10/12'), 2 day(s) after the claim date 2020-10-10"}],
    }
    assert out["rules"]["own_fact_check_article"]["count"] == 1
    assert captured.err == ""


def test_table_output(gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(gold)]) == 0
    out = capsys.readouterr().out
    assert "published_after_claim" in out and "upper bound" in out and "split dev" in out


def test_html_report(gold: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "reports" / "audit.html"
    assert main(["audit", str(gold), "--html", str(report), "--json"]) == 0
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "own_fact_check_article" in page
    json.loads(capsys.readouterr().out)  # stdout is still exactly one JSON object


def test_fail_on(gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(gold), "--json", "--fail-on", "published_after_claim"]) == 1
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert "--fail-on rule(s) fired: published_after_claim" in captured.err
    assert main(["audit", str(gold), "--fail-on", "misinfo_source", "split_overlap"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fail-on", "publishd_after_claim"], "unknown --fail-on rule 'publishd_after_claim' (did you mean: published_after_claim"),
        (["--references", "missing.json"], "missing.json: no such file"),
    ],
)
def test_bad_arguments(gold: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(gold), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1
    with pytest.raises(SystemExit) as info:  # a number out of range: refused when parsed (issue 39)
        main(["audit", str(gold), "--max-rows", "-1"])
    assert info.value.code == 2 and "--max-rows: expected a whole number of at least 0" in capsys.readouterr().err


def test_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"claim": "x", "questions": [', encoding="utf-8")
    assert main(["audit", str(bad), "--json"]) == 2
    captured = capsys.readouterr()
    assert "bad.json:1:" in captured.err and "truncated JSON" in captured.err and captured.out == ""
    html = tmp_path / "r.html"
    assert main(["audit", str(tmp_path / "nope.json"), "--html", str(html)]) == 2
    assert not html.exists()


def test_missing_argument_is_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit"]) == 2
    assert "missing FILE" in capsys.readouterr().err


def test_fail_on_does_not_swallow_file(gold: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--fail-on RULE FILE` (issue 12): FILE is the file, not a rule."""
    assert main(["audit", "--fail-on", "published_after_claim", str(gold), "--json"]) == 1
    assert main(["audit", "--json", "--fail-on", "misinfo_source,split_overlap", str(gold)]) == 0
    assert main(["audit", "--fail-on", "misinfo_source", "split_overlap", "--", str(gold)]) == 0
    capsys.readouterr()


@pytest.mark.shared_data
def test_cli_on_baseline_predictions(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = shared_data / "averitec" / "baseline_dev_predictions.json"
    code = main(["audit", str(preds), "--references", str(shared_data / "averitec" / "dev.json"), "--json", "--fail-on", "own_fact_check_article"])
    assert code == 1
    out = json.loads(capsys.readouterr().out)
    # 9 and 1,500: recomputed from the raw files with urllib in
    # test_leakage_rules.py::test_audit_on_baseline_predictions (this checks the CLI passes them on).
    assert out["rules"]["own_fact_check_article"]["count"] == 9 and out["n_evidence"] == 1500
