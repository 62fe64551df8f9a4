"""Issue 28 items 3-4 on the board: judge failures counted (unscored) or zeroed per phase,
audit flags per submission (counted on the claims the board shows; a phase rule that
refuses), and the team's declaration (form/API field, bounded, escaped).

The audit counts are checked against ``averitec audit --json`` on the same file (the CLI,
an independent path), restricted by hand to the public claims of the split; the unscored
counts and means against the fake judge's fixture (tests/_judge_server.py) and the stored
per-claim values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _judge_server import requests_sent, running
from conftest import skip_or_fail

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.competition import Split, parse_competition
from averitec_tools.leaderboard.export import export
from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.ranking import board_signature, rank_store
from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.worker import process_one
from averitec_tools.metrics.signature import parse_signature
from tests import _leaderboard_helpers as helpers
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS, variant

try:
    from fastapi.testclient import TestClient
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)
from averitec_tools.leaderboard.web.app import create_app  # noqa: E402

db_url = helpers.db_url  # the two-back-end fixture
GOLD = json.loads(DEMO_GOLD.read_text())
SPLIT = {"public_fraction": 0.5, "seed": 13}
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def flagged_predictions() -> bytes:
    """The demo predictions citing claim 0's own fact-check and, for claims 1-4, a page dated 2030."""
    preds = json.loads(DEMO_PREDS.read_text())
    preds[0]["evidence"][0]["url"] = GOLD[0]["fact_checking_article"]
    for i in range(1, 5):
        preds[i]["evidence"][0]["url"] = f"https://news.example.com/2030/01/0{i}/story-{i}"
    return json.dumps(preds).encode()


def competition(**dev: Any) -> str:
    phase = {"gold": str(DEMO_GOLD), "profiles": ["averitec2024"], "primary_metric": "averitec_score@0.25",
             "columns": ["averitec_score@0.25", "label_accuracy"]}
    return json.dumps({"name": "trust", "n_resamples": 100, "phases": [
        {"name": "dev", **phase, **dev},
        {"name": "priv", **phase, "visibility": "private", "split": SPLIT},
        {"name": "hid", **phase, "visibility": "hidden"},
    ]})


def cli_audit(tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    path = tmp_path / "audited.json"
    path.write_bytes(content)
    capsys.readouterr()
    assert main(["audit", str(path), "--references", str(DEMO_GOLD), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_audit_flags_on_every_board_counted_on_the_shown_claims(db_url: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = Store(db_url)
    store.init(competition(), where="c.yaml")
    token = store.add_team("blue")
    content = flagged_predictions()
    ids = {p: store.submit(team="blue", system=f"s-{p}", phase=p, content=content, file_name="p.json").id
           for p in ("dev", "priv", "hid")}
    scorer = Scorer(cache_dir=False, n_resamples=50)
    for sid in ids.values():
        process_one(store, scorer, submission_id=sid)
    reference = cli_audit(tmp_path, content, capsys)["rules"]
    # the board counts fact-checker sources by the shipped list only (not the gold's own article domains)
    reference["fact_checker_source"]["rows"] = [r for r in reference["fact_checker_source"]["rows"]
                                                if r["detail"].startswith("fact-checker ")]
    reference["fact_checker_source"]["count"] = len(reference["fact_checker_source"]["rows"])
    rules = ("published_after_claim", "fact_checker_source", "own_fact_check_article")
    everything = {r: reference[r]["count"] for r in rules}
    assert everything["own_fact_check_article"] == 1 and everything["published_after_claim"] >= 4
    public = Split(**SPLIT).public_mask(len(GOLD))
    on_public = {r: sum(1 for row in reference[r]["rows"] if public[row["claim_index"]]) for r in rules}
    assert on_public != everything  # the split hides some flags, so the check below can fail

    (dev,) = rank_store(store, "dev")
    assert dev.audit["counts"] == everything and dev.audit["flagged"]
    (priv,) = rank_store(store, "priv")
    assert priv.audit["counts"] == on_public  # before the reveal: the public claims only
    row = json.loads(export([dev], competition=store.competition(), phase=store.competition().phase("dev"), fmt="json"))["rows"][0]
    assert row["audit"]["counts"] == everything and row["audit_url"] == f"/submission/{ids['dev']}/audit"

    client = TestClient(create_app(db_url), base_url="http://127.0.0.1")
    bearer = {"Authorization": f"Bearer {token}"}
    detail = client.get(f"/api/submissions/{ids['priv']}/audit", headers=bearer).json()
    assert detail["counts"] == on_public
    assert {r["claim_id"] for r in detail["rows"]["published_after_claim"]} <= {i for i, p in enumerate(public) if p}
    assert detail["rows"]["own_fact_check_article"] == ([{"claim_id": 0, "url": GOLD[0]["fact_checking_article"], "date": None}]
                                                         if public[0] else [])
    hidden = client.get(f"/api/submissions/{ids['hid']}/audit", headers=bearer).json()
    assert hidden["counts"] == dict.fromkeys(rules, 0) and not any(hidden["rows"].values())  # hidden phase: nothing yet
    assert client.get(f"/api/submissions/{ids['hid']}/audit").status_code == 403  # not on a board: its team only
    for bad in ("abc", "9" * 40, "-1", "99999"):  # one message, 404, nothing else
        r = client.get(f"/api/submissions/{bad}/audit", headers=bearer)
        assert r.status_code == 404 and list(r.json()) == ["error"]
        assert client.get(f"/submission/{bad}/audit").status_code == 404
    page = client.get(f"/submission/{ids['dev']}/audit")
    assert page.status_code == 200 and "the claim&#39;s own fact-check" in page.text
    assert f'href="/submission/{ids["dev"]}/audit"' in client.get("/phase/dev").text
    store.reveal("priv")
    private = {r: everything[r] - on_public[r] for r in rules}
    (priv,) = rank_store(store, "priv")
    assert priv.audit["counts"] == private  # after the reveal the private claims rank, and count
    status = capsys.readouterr()
    assert main(["leaderboard", "status", "--db", db_url, "--json"]) == 0
    listed = {s["id"]: s for s in json.loads(capsys.readouterr().out)["submissions"]}
    assert listed[ids["hid"]]["audit_flags"] == {"status": "audited", **everything}  # the organisers: every claim
    assert status is not None


def test_phase_rule_refuses_a_submission_citing_the_claims_own_fact_check(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.init(competition(reject_own_factcheck=True), where="c.yaml")
    store.add_team("blue")
    scorer = Scorer(cache_dir=False, n_resamples=50)
    bad = store.submit(team="blue", system="leaky", phase="dev", content=flagged_predictions(), file_name="leaky.json").id
    good = store.submit(team="blue", system="clean", phase="dev", content=variant(0), file_name="clean.json").id
    process_one(store, scorer, submission_id=bad)
    process_one(store, scorer, submission_id=good)
    row = store.submission(bad)
    assert row["state"] == "failed" and row["charged"]
    assert row["reason"] == ("leaky.json: refused by the phase rule reject_own_factcheck: 1 evidence item(s) are the "
                             "claim's own fact-checking article")
    assert row["audit"]["by_claim"]["own_fact_check_article"] == {"0": 1}
    assert store.submission(good)["state"] == "finished"
    assert [e.system for e in rank_store(store, "dev")] == ["clean"]
    comp = store.competition()
    assert parse_signature(board_signature(competition=comp, phase=comp.phase("dev")))["audit-reject"] == "reject_own_factcheck"


def test_declaration_is_stored_shown_and_bad_input_stores_nothing(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    store.init(competition(), where="c.yaml")
    token = store.add_team("blue")
    client = TestClient(create_app(url), base_url="http://127.0.0.1")

    def upload(content: bytes, **fields: str) -> Any:
        return client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"system": "s", "phase": "dev", **fields}, files={"file": ("p.json", content)})

    for fields, message in (
        ({"dev_claims_used": "maybe"}, "field 'dev_claims_used' must be 'yes' or 'no' (or left empty)"),
        ({"training_data": "x" * 501}, "field 'training_data': 501 characters, at most 500 allowed"),
        ({"training_data": "x" * 5000}, "field 'training_data': more than 500 characters"),
        ({"training_data": "evil\u202etxt"}, "field 'training_data': character U+202E (RIGHT-TO-LEFT OVERRIDE) is not allowed "
         "(names are plain text: no control, formatting or bidi characters)"),
    ):
        r = upload(variant(0), **fields)
        assert r.status_code == 400 and r.json() == {"error": message}, r.text
    assert store.submissions() == []  # nothing stored
    xss = "<script>alert(1)</script> AVeriTeC train"
    r = upload(variant(0), training_data=xss, dev_claims_used="no")
    assert r.status_code == 201
    sid = r.json()["id"]
    assert store.submission(sid)["declaration"] == {"training_data": xss, "dev_claims_used": "no"}
    assert client.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {token}"}).json()["declaration"]["dev_claims_used"] == "no"
    process_one(store, Scorer(cache_dir=False, n_resamples=50), submission_id=sid)
    board = client.get("/phase/dev").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; AVeriTeC train" in board and "<script>alert(1)" not in board
    (entry,) = rank_store(store, "dev")
    assert entry.declaration == {"training_data": xss, "dev_claims_used": "no"}

    # The command line takes the same declaration, with the same checks.
    path = tmp_path / "cli.json"
    path.write_bytes(variant(5, n_wrong=3))
    base = ["leaderboard", "submit", str(path), "--db", url, "--team", "blue", "--system", "cli", "--phase", "dev", "--no-score"]
    n = len(store.submissions())
    assert main([*base, "--training-data", "evil\u202etxt"]) == 2
    assert len(store.submissions()) == n
    assert main([*base, "--training-data", "FEVER + AVeriTeC train", "--dev-claims-used", "yes"]) == 0
    assert store.submissions()[-1]["declaration"] == {"training_data": "FEVER + AVeriTeC train", "dev_claims_used": "yes"}


JUDGE_QA = "question-answer pairs written"  # only in the [qa] prompt


def judge_fixtures() -> dict[str, Any]:
    """Claims 0 and 1: the qa request fails on every try; claim 2: an unparseable qa reply; the rest: a fixed reply."""
    counts = {f"{w} {k}": n for k in ("evidence", "questions") for w, n in
              (("facts count predicted", 2), ("support predicted", 1), ("facts count reference", 4), ("support reference", 3))}
    return {"rules": [
        {"match": [GOLD[0]["claim"], JUDGE_QA], "responses": [{"status": 500}]},
        {"match": [GOLD[1]["claim"], JUDGE_QA], "responses": [{"status": 500}]},
        {"match": [GOLD[2]["claim"], JUDGE_QA], "responses": [{"content": "I cannot count these."}]},
    ], "default": {"status": 200, "content": "Output: " + json.dumps(counts)}}


def judge_competition(url: str, cache: Path) -> str:
    options = {"fever8": {"judge_url": url, "judge_model": "fixture-judge", "judge_cache": str(cache), "judge_retries": 0,
                          "judge_timeout": 5.0, "judge_backoff": 0.01}}
    phase = {"gold": str(DEMO_GOLD), "profiles": ["fever8"], "primary_metric": "ev2r_qa_recall",
             "columns": ["ev2r_qa_recall", "label_accuracy"], "options": options}
    return json.dumps({"name": "judge", "n_resamples": 100, "phases": [
        {"name": "dev", **phase}, {"name": "official", **phase, "judge_failures": "zero"}]})


def test_judge_failures_unscored_by_default_zero_as_a_phase_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Claims 0 and 1: the judge's side fails (HTTP 500 on every try); claim 2: an unparseable
    reply. Under ``unscored`` (the default) the two failures are unscored and the row is
    incomplete -- listed apart, never ranked -- while the unparseable reply scores 0 (the
    content's doing, issue 39); a rescore with the judge back re-uses the stored replies,
    asks only for the two, and the row is ranked. Under ``zero`` all three score 0."""
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    with running(judge_fixtures(), tmp_path) as (url, log):
        store.init(judge_competition(url, tmp_path / "judge-cache"), where="c.yaml")
        store.add_team("blue")
        scorer = Scorer(cache_dir=False, n_resamples=50)
        for phase in ("dev", "official"):
            sid = store.submit(team="blue", system="s", phase=phase, content=variant(0), file_name="p.json").id
            process_one(store, scorer, submission_id=sid)
            assert store.submission(sid)["state"] == "finished", store.submission(sid)["server_reason"]
        sent_first = len(requests_sent(log))
    comp = store.competition()
    (dev,) = rank_store(store, "dev")
    (official,) = rank_store(store, "official")
    assert dev.status == "incomplete" and dev.rank == 0
    assert dev.unscored == {"judge_request_failed": 2} and dev.n_unscored == 2
    # The 48 claims with a score: 47 at the fixed reply's Q+A recall 3/4, the unparseable one 0.
    assert dev.metrics["ev2r_qa_recall"] == pytest.approx(47 * 0.75 / 48)
    # The official mode scores the three 0: (47 * 3/4) / 50.
    assert official.n_unscored == 0 and official.metrics["ev2r_qa_recall"] == pytest.approx(47 * 0.75 / 50)
    assert official.status == "ranked"
    assert parse_signature(board_signature(competition=comp, phase=comp.phase("dev")))["judge-failures"] == "unscored"
    assert parse_signature(board_signature(competition=comp, phase=comp.phase("official")))["judge-failures"] == "zero"
    assert parse_signature(dev.signature)["failures"] == "unscored(2)" and parse_signature(dev.signature)["input"] == "10x2000c"
    per_claim = store.results([dev.submission_id])[dev.submission_id][0]["per_claim"]
    assert [c.get("unscored") for c in per_claim[:4]] == ["judge_request_failed", "judge_request_failed", None, None]
    assert per_claim[0]["values"]["ev2r_qa_recall"] is None and per_claim[2]["values"]["ev2r_qa_recall"] == 0.0
    assert main(["leaderboard", "show", "--db", db, "--phase", "dev", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["n_unscored"] == 2 and row["status"] == "incomplete" and row["rank"] is None
    csv_text = export([dev], competition=comp, phase=comp.phase("dev"), fmt="csv")
    assert "Unscored" in csv_text.splitlines()[0] and "2 (judge_request_failed 2)" in csv_text and '"incomplete"' in csv_text
    client = TestClient(create_app(db), base_url="http://127.0.0.1")
    board = client.get("/phase/dev").text
    assert "judge-failures:unscored" in board and 'id="unranked-rows"' in board and "incomplete" in board
    assert main(["leaderboard", "show", "--db", db, "--phase", "dev"]) == 0
    assert "Unscored" in capsys.readouterr().out
    # The judge is back: a rescore re-uses every stored reply and asks only for the two missing ones.
    stored = store.judge_snapshots(dev.submission_id)["fever8"]
    assert len(stored["replies"]) == 98 and stored["endpoint"].startswith("http://127.0.0.1:")
    healthy = {"rules": [], "default": judge_fixtures()["default"]}
    with running(healthy, tmp_path, name="judge-back") as (url2, log2):
        store.init(judge_competition(url2, tmp_path / "judge-cache-2"), where="c.yaml")
        assert main(["leaderboard", "rescore", "--submission", str(dev.submission_id), "--db", db, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["queued"] == 1
        assert len(requests_sent(log2)) == 2  # only claims 0 and 1's Q+A prompts
    (again,) = rank_store(store, "dev")
    assert again.status == "ranked" and again.rank == 1 and again.n_unscored == 0
    assert again.metrics["ev2r_qa_recall"] == pytest.approx(49 * 0.75 / 50)
    assert parse_signature(again.signature)["judge_snapshot"] != parse_signature(dev.signature)["judge_snapshot"]
    assert sent_first > 0


@pytest.mark.parametrize(("options", "message"), [
    ({"fever8": {"judge_retries": "two"}}, "options: fever8: profile 'fever8': judge_retries: expected int, got 'two'"),
    ({"fever8": {"official_failure_mode": True}}, "official_failure_mode is set by the board"),
    ({"fever8": {"judge_urll": "x"}}, "options: fever8: profile 'fever8': judge_urll: not an option of this profile"),
    ({"averitec2024": {}}, "options: averitec2024: not a profile of this phase"),
])
def test_bad_phase_options_are_one_clear_error(options: dict[str, Any], message: str) -> None:
    spec = {"name": "c", "phases": [{"name": "dev", "gold": "g.json", "profiles": ["fever8"], "primary_metric": "ev2r_qa_recall",
                                     "options": options}]}
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_competition(spec, where="c.yaml")
    with pytest.raises(UserError, match="judge_failures"):
        parse_competition({**spec, "phases": [{**spec["phases"][0], "options": {}, "judge_failures": "skip"}]}, where="c.yaml")
