"""averimatec profile end to end against a real local OpenAI-compatible judge process.

The case (tests/_averimatec_quirks.py) records a reply for every call and covers each
quirk of the organisers' evaluator; the expected figures come from an independent
restatement of their code (tests/_averimatec_reference.py, fed the same recorded replies)
and from hand-derived values, never from the code under test. The prompts are stand-in
"official" files served from a clone folder, their SHA-256 table patched for the test.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _averimatec_reference as ref
import pytest
from _averimatec_quirks import (
    BETWEEN,
    BY_HAND,
    INSTRUCTION,
    INTRO,
    J_OK,
    reference_rows,
    rules,
    write_case,
    write_clone,
)
from _judge_server import requests_sent, running

from averitec_tools.cli.main import main
from averitec_tools.metrics import averimatec_official
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.profiles import get_profile

FIXTURES = {"rules": rules(), "default": {"content": "UNEXPECTED"}}  # the reference answers from the same rules


@pytest.fixture()
def case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    clone = tmp_path / "clone"
    hashes = write_clone(clone)
    table = {role: dataclasses.replace(src, sha256=hashes[src.paths[0]])
             for role, src in averimatec_official.AVERIMATEC_SOURCES.items()}
    monkeypatch.setattr(averimatec_official, "AVERIMATEC_SOURCES", table)
    sub, val = write_case(tmp_path / "data")
    with running(FIXTURES, tmp_path / "server") as (url, log):
        yield {"sub": sub, "val": val, "url": url, "log": log, "clone": clone, "tmp": tmp_path,
               "base": ["score", str(sub), str(val), "--profile", "averimatec", "--judge-url", url, "--json",
                        "--judge-prompt", f"official:{clone}", "--judge-cache", str(tmp_path / "cache"),
                        "--judge-backoff", "0.01"]}


def test_matches_the_organisers_code_and_call_structure(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    pc = case["tmp"] / "claims.jsonl"
    assert main([*case["base"], "--per-claim", str(pc)]) == 0
    out = json.loads(capsys.readouterr().out)
    rows, ref_prompts = reference_rows(case["clone"], case["val"].parent / "images")
    per_claim = [json.loads(line) for line in pc.read_text().splitlines()]
    assert set(per_claim[0]) == {"claim_id", "gold_label", "pred_label", *get_profile("averimatec").per_claim_metrics}
    for i, (row, hand, got) in enumerate(zip(rows, BY_HAND, per_claim, strict=True)):
        # Where their code raises (None) the departures score 0; elsewhere the two agree exactly.
        expected = [0.0 if v is None else v for v in (row["ques_score"], row["evid_score"], row["verdict_score"],
                                                     row["justi_score"])]
        assert expected == pytest.approx([0.0 if v is None else v for v in hand], abs=1e-12), i
        assert got["question"] == pytest.approx(expected[0], abs=1e-12) and got["label_accuracy"] == expected[2]
        assert got["evidence"] == pytest.approx(expected[1], abs=1e-12), i
    assert [r["ques_score"] is None for r in rows] == [False, False, False, True, False, False, False]
    assert [r["justi_score"] is None for r in rows] == [False, True, False, False, False, False, False]
    assert [r["evid_score"] is None for r in rows] == [False, False, False, True, False, False, False]
    departed = [{**r, **{k: r[k] or 0.0 for k in ("ques_score", "evid_score", "justi_score")}} for r in rows]
    nb = ref.notebook(departed)
    assert [out[k] for k in ("question", "evidence", "verdict", "justification")] == pytest.approx(
        [nb[k] for k in ("question", "evidence", "verdict", "justification")], abs=1e-12)
    assert out["verdict"] == pytest.approx(2 / 7) and out["justification"] == pytest.approx((4 / 3) / 7)
    assert out["label_accuracy"] == pytest.approx(6 / 7) and out["claims_without_evidence_score"] == 1
    judge = out["judge"]
    assert judge["calls_by_kind"] == {"qa": 26, "questions": 6, "justification": 7, "evidence": 6, "image": 5}
    assert judge["unparseable"] == {"justification": 1, "questions": 1, "evidence": 1, "image": 2}
    sig = parse_signature(out["signature"])
    assert sig.render() == out["signature"] and sig["prompt"].startswith("averimatec-official@f6f361d+sha256.")
    assert (sig["thr"], sig["thr_preset"], sig["align"], sig["sampling"]) == ("0.4(>)", "notebook", "id", "greedy(t=0)")

    sent = requests_sent(case["log"])
    assert len(sent) == 50 and not [e for e in sent if e["rule"] < 0 or e["structure_error"]]
    for e in sent:
        body, content = e["request"], e["request"]["messages"][0]["content"]
        assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user" and body["temperature"] == 0
        assert "top_p" not in body and "top_k" not in body and isinstance(content, list)
        if e["flat"].startswith(INTRO):  # image rating: text, predicted images, text, gold images, text
            kinds = [p["type"] for p in content]
            assert kinds[0] == "text" and kinds[-1] == "text" and kinds.count("text") == 3
            assert content[kinds.index("text", 1)]["text"] == BETWEEN and content[-1]["text"] == INSTRUCTION
            assert all(p["image_url"]["url"].startswith(("data:image/png;base64,", "data:image/jpeg;base64,"))
                       for p in content if p["type"] == "image_url")
            assert body["max_tokens"] == 1024
        else:  # a text call: one text part, exactly the prompt the organisers' code builds
            assert len(content) == 1 and content[0]["text"] in ref_prompts, content[0]["text"][:200]
            assert body["max_tokens"] == (256 if "[QUES]: " in content[0]["text"] else 1024)
    image_calls = [e for e in sent if e["flat"].startswith(INTRO)]
    p0 = next(e for e in image_calls if "EVI" not in e["flat"] and e["flat"].count("<image:") == 3)
    assert [p["type"] for p in p0["request"]["messages"][0]["content"]] == [
        "text", "image_url", "image_url", "text", "image_url", "text"]  # claim 0: (P0b, P0c) then g0b


def test_cache_presets_and_dry_run(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*case["base"], "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["dry_run"] and dry["calls_by_kind"] == {"qa": 26, "questions": 6, "justification": 7, "evidence": 6}
    assert dry["image_calls_at_most"] == 5 and dry["cached_calls"] == 0  # gold items with images, claims 0, 1, 4
    assert main(case["base"]) == 0
    first = json.loads(capsys.readouterr().out)
    n = len(requests_sent(case["log"]))
    assert main([*case["base"], "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["judge_calls"] == 0 and dry["image_calls_at_most"] == 5  # exact now: the rated tuples (cached)
    for preset, verdict, justification in (("fork-0.3", 3 / 7, 2 / 7), ("at-least-0.3", 4 / 7, (2 + 2 / 3) / 7)):
        assert main([*case["base"], "--averimatec-preset", preset]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["verdict"], out["justification"]) == pytest.approx((verdict, justification), abs=1e-12)
        assert out["judge"]["sent"] == 0 and out["question"] == first["question"]
        assert parse_signature(out["signature"])["thr_preset"] == preset
    assert main([*case["base"], "--averimatec-threshold", "0.3", "--averimatec-comparison", ">="]) == 0
    assert parse_signature(json.loads(capsys.readouterr().out)["signature"])["thr_preset"] == "custom"
    assert len(requests_sent(case["log"])) == n  # nothing more was sent


def test_position_alignment_and_sampling(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    items = json.loads(case["sub"].read_text())
    shuffled = case["tmp"] / "shuffled.json"
    shuffled.write_text(json.dumps(items[::-1]))
    base = [shuffled if a == str(case["sub"]) else a for a in case["base"]]
    assert main([str(a) for a in base]) == 0  # by id: order does not matter
    by_id = json.loads(capsys.readouterr().out)
    assert main([str(a) for a in base] + ["--averimatec-align", "position"]) == 0
    by_pos = json.loads(capsys.readouterr().out)
    assert by_pos["label_accuracy"] != by_id["label_accuracy"] and by_pos["alignment"] == "position"
    extra = case["tmp"] / "extra.json"
    extra.write_text(json.dumps([*items, {**items[0], "id": 7}]))
    assert main([a if a != str(case["sub"]) else str(extra) for a in case["base"]] + ["--averimatec-align", "position"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["ignored_predictions"] == 1 and "past the last gold claim" in captured.err
    n = len(requests_sent(case["log"]))
    assert main([*case["base"], "--judge-sampling", "organisers"]) == 0
    sampled = requests_sent(case["log"])[n:]
    assert {(e["request"]["temperature"], e["request"]["top_p"], e["request"]["top_k"]) for e in sampled} == {(1, 0.95, 64)}
    assert parse_signature(json.loads(capsys.readouterr().out)["signature"])["sampling"] == "organisers(t=1,top_p=0.95,top_k=64)"


def test_failure_modes(tmp_path: Path, case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    fixtures = {"rules": [{"match": ["JUS-c2"], "responses": [{"status": 500}]}, *rules()], "default": {"content": "?"}}
    with running(fixtures, tmp_path / "failing") as (url, _):
        base = [a if a != case["url"] else url for a in case["base"]]
        base[base.index("--judge-cache") + 1] = str(tmp_path / "cache2")
        assert main([*base, "--judge-retries", "1"]) == 2
        err = capsys.readouterr().err
        assert "claim 2 (justification)" in err and err.count("\n") == 1
        assert main([*base, "--judge-retries", "0", "--judge-unscored"]) == 0
        out = json.loads(capsys.readouterr().out)
        # Only the judge's side leaves a claim unscored; claim 1's reply without markers scores 0 (the policy).
        assert out["judge"]["unscored"] == {"count": 1, "reasons": {"judge_request_failed": 1}}
        assert out["judge"]["complete"] is False and out["judge"]["unparseable"]["justification"] == 1
        assert parse_signature(out["signature"])["failures"] == "unscored(1)"
        kept = [h for i, h in enumerate(BY_HAND) if i != 2]
        assert out["question"] == pytest.approx(sum(h[0] for h in kept) / 6, abs=1e-12)
        assert out["label_accuracy"] == pytest.approx(6 / 7)
        assert main([*base, "--judge-retries", "0", "--official-failure-mode"]) == 0
        captured = capsys.readouterr()
        out = json.loads(captured.out)
        assert out["judge"]["failed_scored_zero"] == 1 and "got an empty reply" in captured.err
        assert parse_signature(out["signature"])["failures"] == "zero(1)"


def test_bad_inputs_exit_2(case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    items = json.loads(case["sub"].read_text())
    bad = case["tmp"] / "bad.json"
    for mutate, message in [
        (lambda x: x[2]["evidence"].append({"text": "see [IMG_2]", "images": []}), r"(claim 2): evidence[1].text: [IMG_2]"),
        (lambda x: x[0]["evidence"][0].update(images=["bm90IGFuIGltYWdl"]), "(claim 0): evidence[0].images[0]: not an image"),
        (lambda x: x.pop(3), "claim 3 is missing"),
        (lambda x: x.append(dict(x[0])), "duplicate id"),
    ]:
        data = json.loads(json.dumps(items))
        mutate(data)
        bad.write_text(json.dumps(data))
        assert main([a if a != str(case["sub"]) else str(bad) for a in case["base"]]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    assert main([*case["base"], "--gold-images", str(case["tmp"])]) == 2
    assert "gold image" in capsys.readouterr().err
    assert main([*case["base"], "--judge-max-tokens", "5"]) == 2
    assert "profile 'averimatec': --judge-max-tokens: not an option of this profile" in capsys.readouterr().err
    assert requests_sent(case["log"]) == []  # every input was refused before a request was sent


def test_refusals_bound_and_snapshot(tmp_path: Path, case: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal for the content scores 0 (never unscored); the input bound cuts what the judge
    sees; a snapshot re-used by a run with an empty cache sends nothing."""
    refusal = {"status": 400, "body": json.dumps({"error": {"message": "This model's maximum context length is 8192 tokens"}})}
    fixtures = {"rules": [{"match": ["JUS-c4"], "responses": [refusal]}, *rules()], "default": {"content": "?"}}
    with running(fixtures, tmp_path / "refusing") as (url, log):
        base = [a if a != case["url"] else url for a in case["base"]]
        base[base.index("--judge-cache") + 1] = str(tmp_path / "cache3")
        assert main([*base, "--judge-unscored"]) == 0
        captured = capsys.readouterr()
        out = json.loads(captured.out)
        assert out["judge"]["refused_content"] == 1 and out["judge"]["unscored"]["count"] == 0 and out["judge"]["complete"]
        assert "refused 1 request(s) for their content" in captured.err
        assert parse_signature(out["signature"])["refused"] == "zero(1)"
        expected = [h[3] for h in BY_HAND]
        expected[4] = 0.0  # the refused justification: an empty reply
        passing = [0, 1, 4]  # evidence > 0.4
        assert out["justification"] == pytest.approx(sum(expected[i] for i in passing) / 7, abs=1e-12)

        snap = tmp_path / "snapshot.json"
        bounded = [*base, "--judge-max-items", "1", "--judge-item-chars", "12", "--judge-snapshot", str(snap)]
        n = len(requests_sent(log))
        assert main(bounded) == 0
        out = json.loads(capsys.readouterr().out)
        sig = parse_signature(out["signature"])
        assert sig["input"] == "1x12c" and sig["judge_snapshot"].startswith("sha256.") and out["judge"]["claims_cut"] == 7
        shown = " ".join(e["flat"] for e in requests_sent(log)[n:])
        assert "EVI-c0-e1" not in shown and "QUE-c0-q1" not in shown and "EVI-c0-e0 s" in shown
        stored = json.loads(snap.read_text())
        assert stored["settings"]["input"] == "1x12c" and stored["replies"]
        base[base.index("--judge-cache") + 1] = str(tmp_path / "empty-cache")
        n = len(requests_sent(log))
        assert main([*base, "--judge-max-items", "1", "--judge-item-chars", "12", "--judge-snapshot", str(snap)]) == 0
        again = json.loads(capsys.readouterr().out)
        assert len(requests_sent(log)) == n and again["judge"]["sent"] == 0  # the refusal is remembered too
        assert again["judge"]["from_snapshot"] > 0 and again["verdict"] == out["verdict"]


def test_judge_side_failures_are_retried_then_unscored(tmp_path: Path, case: dict[str, Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Two 5xx then a reply: retried, the claim scored as if nothing happened; a 5xx on every
    try (3 attempts): the claim is unscored and the result incomplete (the board's policy)."""
    flaky = {"match": ["JUS-c0"], "responses": [{"status": 503}, {"status": 502}, {"content": J_OK}]}
    down = {"match": ["JUS-c2"], "responses": [{"status": 503}]}
    with running({"rules": [flaky, down, *rules()], "default": {"content": "?"}}, tmp_path / "flaky") as (url, log):
        base = [a if a != case["url"] else url for a in case["base"]]
        base[base.index("--judge-cache") + 1] = str(tmp_path / "cache4")
        assert main([*base, "--judge-retries", "2", "--judge-unscored"]) == 0
        out = json.loads(capsys.readouterr().out)
        sent = requests_sent(log)
    assert sum("JUS-c0" in e["flat"] for e in sent) == 3 and sum("JUS-c2" in e["flat"] for e in sent) == 3
    judge = out["judge"]
    assert judge["retries"] == 2 and judge["unscored"] == {"count": 1, "reasons": {"judge_request_failed": 1}}
    assert judge["complete"] is False and judge["refused_content"] == 0
    assert parse_signature(out["signature"])["failures"] == "unscored(1)"
    kept = [h for i, h in enumerate(BY_HAND) if i != 2]  # claim 0's justification as recorded: 2/3
    assert out["question"] == pytest.approx(sum(h[0] for h in kept) / 6, abs=1e-12)
    assert out["justification"] == pytest.approx(sum(BY_HAND[i][3] for i in (0, 1, 4)) / 6, abs=1e-12)
