"""fever8 profile: Ev2R against a real local OpenAI-compatible server, cache, retries, dry run.

The server (tests/_judge_server.py) is a separate process on 127.0.0.1 answering from the
fixtures below; the 3-claim aggregation is checked by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _judge_server import requests_sent, running
from _score_fixtures import GOLD, make_files

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.metrics.ev2r import JudgePrompt, parse_judgement
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.profiles import get_profile

QA = "question-answer pairs written"  # only in the [qa] prompt
QUESTIONS = "Reference questions"  # only in the [questions] prompt


def reply(pred: int, sup_pred: int, ref: int, sup_ref: int, kind: str = "evidence") -> str:
    return json.dumps({f"facts count predicted {kind}": pred, f"support predicted {kind}": sup_pred,
                       f"facts count reference {kind}": ref, f"support reference {kind}": sup_ref})


FIXTURES: dict[str, Any] = {
    "rules": [
        # claim 0: well-formed (qa), JSON inside prose and a code fence (questions)
        {"match": [GOLD[0]["claim"], QA], "responses": [{"content": reply(4, 3, 2, 1)}]},
        {"match": [GOLD[0]["claim"], QUESTIONS],
         "responses": [{"content": "Here you go:\n```json\n" + reply(2, 2, 2, 2, "questions") + "\n```"}]},
        # claim 1: HTTP 500 then success (qa); malformed reply (questions)
        {"match": [GOLD[1]["claim"], QA], "responses": [{"status": 500}, {"content": reply(1, 1, 1, 1)}]},
        {"match": [GOLD[1]["claim"], QUESTIONS], "responses": [{"content": "I think the evidence is fine."}]},
        # claim 2: 429 then partial JSON (qa); a timeout then success (questions)
        {"match": [GOLD[2]["claim"], QA],
         "responses": [{"status": 429, "retry_after": 0}, {"content": '{"facts count predicted evidence": 12, "support'}]},
        {"match": [GOLD[2]["claim"], QUESTIONS],
         "responses": [{"delay": 3.0, "content": "late"}, {"content": reply(12, 6, 1, 1, "questions")}]},
    ],
    "default": {"status": 200, "content": reply(3, 2, 4, 3)},
}


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with running(FIXTURES, tmp_path) as (url, log):
        yield url, log


def judge_options(url: str, cache: Path, **extra: Any) -> dict[str, Any]:
    return {"judge_url": url, "judge_model": "fixture-judge", "judge_cache": str(cache), "judge_timeout": 1.0,
            "judge_backoff": 0.01, "judge_concurrency": 3, **extra}


def test_three_claims_by_hand_then_cache(tmp_path: Path, server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    url, log = server
    files = make_files(tmp_path)
    monkeypatch.setenv("AVERITEC_JUDGE_API_KEY", "secret-from-env")
    opts = judge_options(url, tmp_path / "cache")
    r = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1, **opts)
    s = r.summary
    # Hand-derived: qa (P, R) = (3/4, 1/2), (1, 1), unparseable (0, 0);
    # questions (P, R) = (1, 1), unparseable (0, 0), (6/12, 1/1).
    assert s["ev2r"]["questions_answers"] == pytest.approx({"precision": (0.75 + 1 + 0) / 3, "recall": (0.5 + 1 + 0) / 3})
    assert s["ev2r"]["questions_only"] == pytest.approx({"precision": (1 + 0 + 0.5) / 3, "recall": (1 + 0 + 1) / 3})
    # Labels: claim 0 right but recall 0.5 is not > 0.5 (the leaderboard's rule), claim 1 wrong,
    # claim 2 right but recall 0.
    assert s["averitec_score_ev2r"] == {"0.5": 0.0}
    assert s["threshold"]["preset"] == "leaderboard" and s["threshold"]["comparison"] == ">"
    assert s["veracity"]["accuracy"] == pytest.approx(2 / 3)
    judge = s["judge"]
    assert judge["unparseable"] == {"questions_answers": 1, "questions_only": 1}
    assert (judge["calls"], judge["from_cache"], judge["sent"], judge["retries"]) == (6, 0, 6, 3)
    assert r.warnings[0] == "2 of 6 judge replies could not be parsed; they score 0, as in the official code"
    assert "is not the organisers'" in r.warnings[1] and len(r.warnings) == 2
    sent = requests_sent(log)
    assert len(sent) == 9  # 6 judgements + the 500, the 429 and the timed-out request
    assert {e["model"] for e in sent} == {"fixture-judge"} and {e["temperature"] for e in sent} == {0}
    assert {e["authorization"] for e in sent} == {"Bearer secret-from-env"}
    sig = parse_signature(r.signature)
    assert sig.render() == r.signature and sig.head is None  # round trip
    assert sig["judge"] == "openai:fixture-judge" and sig["thr"] == "0.5(>)" and sig["thr_preset"] == "leaderboard"
    assert sig["failures"] == "raise" and sig["max_tokens"] == "3000"
    assert {e["request"]["max_tokens"] for e in sent} == {3000}
    assert sig["prompt"] == f"ev2r_prompt_v1.txt+sha256.{JudgePrompt.load().sha256[:12]}"
    # Hungarian METEOR alongside equals the averitec2024 profile on the same files.
    hu = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1).summary
    assert s["hu_meteor"]["questions_answers"] == pytest.approx(hu["questions_answers"], abs=1e-12)
    assert s["hu_meteor"]["questions_only"] == pytest.approx(hu["questions_only"], abs=1e-12)
    assert s["hu_meteor"]["averitec_score"]["0.25"] == pytest.approx(hu["averitec_score"]["0.25"])

    # Second run: everything from the cache, not one request.
    again = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1, **opts)
    assert len(requests_sent(log)) == 9
    assert again.summary["judge"]["from_cache"] == 6 and again.summary["judge"]["sent"] == 0
    assert {k: v for k, v in again.summary.items() if k != "judge"} == {k: v for k, v in s.items() if k != "judge"}

    # The EvalAI copy's `>=` (a preset) comes from the cache too and changes only the score.
    evalai = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1,
                                         **opts, ev2r_preset="evalai-2025-04")
    assert evalai.summary["averitec_score_ev2r"] == {"0.5": pytest.approx(1 / 3)}
    assert evalai.summary["judge"]["sent"] == 0
    sig = parse_signature(evalai.signature)
    assert (sig["thr"], sig["thr_preset"]) == ("0.5(>=)", "evalai-2025-04")
    custom = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1,
                                         **opts, ev2r_comparison=">=", ev2r_threshold=0.5)
    assert parse_signature(custom.signature)["thr_preset"] == "custom"
    assert custom.summary["averitec_score_ev2r"] == evalai.summary["averitec_score_ev2r"]


def test_dry_run_needs_no_network(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    argv = ["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever8", "--json", "--dry-run",
            "--judge-cache", str(tmp_path / "cache"), "--judge-url", "http://127.0.0.1:9/v1"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["judge_calls"] == 6 and out["prompt_tokens"] > 6 * 100 and out["cached_calls"] == 0


def test_cli_end_to_end_and_resume(tmp_path: Path, server: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    url, log = server
    files = make_files(tmp_path)
    base = ["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever8", "--json", "--jobs", "1",
            "--judge-url", url, "--judge-model", "fixture-judge", "--judge-cache", str(tmp_path / "cache"),
            "--judge-timeout", "1", "--judge-backoff", "0.01"]
    # No retries allowed: the first failure stops the run with one line naming the failed
    # requests; finished judgements stay cached.
    assert main([*base, "--judge-retries", "0"]) == 2
    err = capsys.readouterr().err
    assert "the judge failed for" in err and "after 1 attempt(s)" in err and err.count("\n") == 1
    assert main([*base, "--dry-run"]) == 0
    left = json.loads(capsys.readouterr().out)["judge_calls"]
    assert 0 < left < 6
    assert main(base) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["judge"]["from_cache"] == 6 - left and out["judge"]["sent"] == left
    assert "could not be parsed" in captured.err
    assert main([*base, "--dry-run"]) == 0
    assert json.loads(capsys.readouterr().out)["judge_calls"] == 0


def test_judge_options_rejected_for_other_profiles(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--judge-url", "http://x/v1"]) == 2
    assert "profile 'averitec2024': --judge-url: not an option of this profile" in capsys.readouterr().err


def test_fever8_needs_a_judge(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    with pytest.raises(UserError, match="needs a judge"):
        get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], judge_cache=str(tmp_path))


def test_other_prompt_file_changes_the_hash_and_the_cache_key(tmp_path: Path) -> None:
    custom = tmp_path / "mine.txt"
    custom.write_text("[qa]\n{claim} {reference} {prediction}\n[questions]\n{reference} / {prediction}\n", encoding="utf-8")
    mine = JudgePrompt.load(custom)
    assert mine.name == "mine.txt" and mine.sha256 != JudgePrompt.load().sha256
    assert mine.render("questions", claim="c", reference="R", prediction="P") == "R / P"
    bad = tmp_path / "bad.txt"
    bad.write_text("[qa]\n{reference} {prediction}\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing questions"):
        JudgePrompt.load(bad)


@pytest.mark.parametrize(
    ("text", "parsed", "recall"),
    [
        ('{"facts count predicted evidence": 2, "support predicted evidence": 1, '
         '"facts count reference evidence": 4, "support reference evidence": 3}', True, 0.75),
        ('{"facts count predicted evidence": 0, "support predicted evidence": 0, '
         '"facts count reference evidence": 4, "support reference evidence": 3}', False, 0.0),  # zero division
        ('{"facts count predicted evidence": 2}', False, 0.0),  # missing keys
        ("no JSON at all", False, 0.0),
        ("", False, 0.0),
    ],
)
def test_parse_judgement(text: str, parsed: bool, recall: float) -> None:
    j = parse_judgement(text, "qa")
    assert (j.parsed, j.recall) == (parsed, recall)


@pytest.mark.shared_data
def test_dev_end_to_end_and_cached_rerun(shared_data: Path, tmp_path: Path, server: tuple[str, Path]) -> None:
    """The full dev set against the local server; the second run sends no request."""
    url, log = server
    base = shared_data / "averitec"
    opts = judge_options(url, tmp_path / "cache", judge_concurrency=8)
    first = get_profile("fever8").score(predictions=base / "baseline_dev_predictions.json", references=base / "dev.json", **opts)
    n = first.n_claims
    assert n == 500 and len(requests_sent(log)) == 2 * n
    # Every reply is the default (3 predicted facts, 2 supported; 4 reference facts, 3 supported).
    assert first.summary["ev2r"]["questions_answers"] == pytest.approx({"precision": 2 / 3, "recall": 0.75})
    correct = first.summary["veracity"]["accuracy"]
    assert first.summary["averitec_score_ev2r"]["0.5"] == pytest.approx(correct)  # recall 0.75 > 0.5 everywhere
    second = get_profile("fever8").score(predictions=base / "baseline_dev_predictions.json", references=base / "dev.json", **opts)
    assert len(requests_sent(log)) == 2 * n and second.summary["judge"]["sent"] == 0
    assert second.summary["ev2r"] == first.summary["ev2r"]


UNSCORED_FIXTURES: dict[str, Any] = {
    "rules": [
        {"match": [GOLD[0]["claim"], QA], "responses": [{"content": reply(4, 3, 2, 1)}]},
        {"match": [GOLD[0]["claim"], QUESTIONS], "responses": [{"content": reply(2, 2, 2, 2, "questions")}]},
        {"match": [GOLD[1]["claim"], QA], "responses": [{"status": 500}]},  # fails on every try
        {"match": [GOLD[2]["claim"], QA], "responses": [{"content": reply(2, 2, 4, 4)}]},
        {"match": [GOLD[2]["claim"], QUESTIONS], "responses": [{"content": "no counts here"}]},
    ],
    "default": {"status": 200, "content": reply(3, 2, 4, 3, "questions")},
}


def test_unscored_mode_excludes_only_judge_side_failures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--judge-unscored: claim 1's request fails on the judge's side (HTTP 500 on every
    try): unscored (NaN, out of the judge means, counted by reason, the result incomplete).
    Claim 2's questions reply does not parse: that is the content's doing and scores 0, as
    in the organisers' code (issue 39: an unscored unparseable reply could be provoked to
    raise a mean). The zero mode on the same replies scores the failure 0 too."""
    import math

    files = make_files(tmp_path)
    with running(UNSCORED_FIXTURES, tmp_path) as (url, _):
        opts = judge_options(url, tmp_path / "cache", judge_retries=0)
        r = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1,
                                        judge_unscored=True, **opts)
        zero = get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1,
                                           official_failure_mode=True, **opts)
        with pytest.raises(UserError, match="exclude each other"):
            get_profile("fever8").score(predictions=files["pred2024"], references=files["gold"], jobs=1,
                                        judge_unscored=True, official_failure_mode=True, **opts)
        base = ["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever8", "--json", "--jobs", "1",
                "--judge-url", url, "--judge-model", "fixture-judge", "--judge-cache", str(tmp_path / "cache"),
                "--judge-retries", "0", "--judge-timeout", "1"]
        assert main([*base, "--judge-unscored"]) == 0
        cli = json.loads(capsys.readouterr().out)
        assert main([*base, "--judge-unscored", "--official-failure-mode"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "exclude each other" in err[0]
    s = r.summary
    # Claims 0 and 2 are scored by the judge: qa (P, R) = (3/4, 1/2) and (1, 1); questions (1, 1)
    # and the unparseable reply's (0, 0). Claim 0's label is right but recall 1/2 is not > 0.5;
    # claim 2's is right with recall 1. Label accuracy stays over all three claims (2/3).
    assert s["ev2r"]["questions_answers"] == pytest.approx({"precision": 0.875, "recall": 0.75})
    assert s["ev2r"]["questions_only"] == pytest.approx({"precision": 0.5, "recall": 0.5})
    assert s["averitec_score_ev2r"] == {"0.5": 0.5}
    assert s["veracity"]["accuracy"] == pytest.approx(2 / 3)
    assert s["judge"]["unscored"] == {"count": 1, "reasons": {"judge_request_failed": 1}}
    assert s["judge"]["complete"] is False and s["judge"]["unparseable"]["questions_only"] == 1
    assert [c.unscored for c in r.per_claim] == [None, "judge_request_failed", None]
    assert math.isnan(r.per_claim[1].values["ev2r_qa_recall"]) and r.per_claim[1].values["label_accuracy"] == 0.0
    sig = parse_signature(r.signature)
    assert sig["failures"] == "unscored(1)" and sig["unparseable"] == "0" and sig["judge_snapshot"].startswith("sha256.")
    assert any("failed on the judge's side" in w for w in r.warnings)
    # The official mode: the same replies, failures and unparseable replies score 0 over all claims.
    assert zero.summary["ev2r"]["questions_answers"]["recall"] == pytest.approx((0.5 + 0 + 1) / 3)
    assert zero.summary["judge"]["unscored"] == {"count": 0, "reasons": {}}
    assert parse_signature(zero.signature)["failures"] == "zero(1)"
    assert cli["judge"]["unscored"]["count"] == 1 and parse_signature(cli["signature"])["failures"] == "unscored(1)"
