"""``averitec leaderboard submit|cancel|status|show`` as organisers use them."""

from __future__ import annotations

import json

import pytest

from averitec_tools.cli.main import main
from averitec_tools.metrics.signature import parse_signature
from tests._leaderboard_helpers import competition_yaml, variant


@pytest.fixture
def db(tmp_path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    args = ["--db", f"sqlite:///{tmp_path / 'lb.db'}"]
    yaml_path = tmp_path / "c.yaml"
    columns = ["averitec_score@0.25", "averitec_score@0.2", "averitec_score@0.3", "questions_only", "questions_answers", "label_accuracy"]
    yaml_path.write_text(competition_yaml(limits={"total": 10}, columns=columns))
    assert main(["leaderboard", "init", str(yaml_path), *args]) == 0
    assert main(["leaderboard", "team", "add", "blue", *args]) == 0
    assert main(["leaderboard", "team", "add", "a-team-with-a-rather-long-name-that-must-wrap", *args]) == 0
    capsys.readouterr()
    return args


def _err(capsys: pytest.CaptureFixture[str], code: int) -> str:
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


def _submit(path, db: list[str], *extra: str, team: str = "blue", system: str = "s") -> int:
    return main(["leaderboard", "submit", str(path), "--team", team, "--system", system, "--phase", "dev", *extra, *db])


def test_submit_refuses_like_the_web(tmp_path, db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    assert "empty.json: the file is empty" in _err(capsys, _submit(empty, db))
    good = tmp_path / "good.json"
    good.write_bytes(variant(0))
    assert "metadata key 'secret' is not one of the competition's disclosure keys" in _err(capsys, _submit(good, db, "--meta", "secret=1"))
    bad = tmp_path / "sub" / "bad.json"
    bad.parent.mkdir()
    bad.write_text('[{"claim_id": 0, "pred_label": "Supported", "evidence": []}]')
    err = _err(capsys, _submit(bad, db))
    assert err.startswith(f"averitec leaderboard: error: {bad}[0] (claim_id 0): empty evidence list") and "submission 1 failed" in err
    assert "/tmp/averitec-lb" not in err
    # the same bytes after a failure are scored again (a new submission, not the failed row)
    assert "submission 2 failed" in _err(capsys, _submit(bad, db))
    assert _submit(good, db, "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["id"], out["state"], out["again"]) == (3, "finished", False)


def test_cancel_and_status(tmp_path, db: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(variant(0))
    assert _submit(path, db, "--no-score") == 0
    capsys.readouterr()
    assert main(["leaderboard", "cancel", "1", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out) == {"id": 1, "state": "cancelled", "was": "pending"}
    assert "no submission 5" in _err(capsys, main(["leaderboard", "cancel", "5", *db]))
    with pytest.raises(SystemExit) as exit_info:
        main(["leaderboard", "cancel", "99999999999999999999", *db])
    assert exit_info.value.code == 2 and "expected a submission id" in capsys.readouterr().err
    assert main(["leaderboard", "status", "--json", *db]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["queue"]["cancelled"] == 1 and status["workers"] == []
    assert status["submissions"][0]["state"] == "cancelled" and status["submissions"][0]["charged"] is False


def test_show_is_readable_at_80_columns(tmp_path, db: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for seed, team in ((0, "blue"), (1, "a-team-with-a-rather-long-name-that-must-wrap")):
        path = tmp_path / f"p{seed}.json"
        path.write_bytes(variant(seed, n_wrong=5 * seed))
        assert _submit(path, db, "--meta", "model=bloom-7b1", team=team, system="baseline (BLOOM QA + BERT reranker)") == 0
    capsys.readouterr()
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["leaderboard", "show", "--phase", "dev", *db]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out  # nothing cut off
    assert "0.1600" in out and "[0." in out and "bloom-7b1" in out
    assert "more metrics" in out and "Label acc." in out  # the columns that did not fit continue below
    assert "Rank" in out and "interval" in out and "P(first)" in out and "[1, 1]" in out
    signature = "".join(out.split("signature:\n", 1)[1].split())  # folded at 80 columns: joined again
    parsed = parse_signature(signature)
    assert parsed.head == "leaderboard" and (parsed["B"], parsed["seed"], parsed["ties"]) == ("200", "0", "min+floor+interval")


def test_status_and_show_need_no_gold_variable(tmp_path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 item 17: a competition whose gold is ``${VAR}/...`` needed VAR set for every
    command, even ``status`` listing submissions. A stored competition keeps an unset
    ``${VAR}`` as written: only scoring, which reads the gold, fails (naming it)."""
    import shutil

    from tests._leaderboard_helpers import DEMO_GOLD

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(DEMO_GOLD, data / "gold.json")
    monkeypatch.setenv("LB_TEST_DATA", str(data))
    spec = json.loads(competition_yaml())
    spec["phases"][0]["gold"] = "${LB_TEST_DATA}/gold.json"
    (tmp_path / "c.yaml").write_text(json.dumps(spec))
    db = ["--db", f"sqlite:///{tmp_path / 'lb.db'}"]
    assert main(["leaderboard", "init", str(tmp_path / "c.yaml"), *db]) == 0
    assert main(["leaderboard", "team", "add", "blue", *db]) == 0
    (tmp_path / "p.json").write_bytes(variant(0))
    assert _submit(tmp_path / "p.json", db) == 0
    capsys.readouterr()
    monkeypatch.delenv("LB_TEST_DATA")
    assert main(["leaderboard", "status", "--json", *db]) == 0
    assert [s["state"] for s in json.loads(capsys.readouterr().out)["submissions"]] == ["finished"]
    assert main(["leaderboard", "show", "--phase", "dev", *db]) == 0
    assert "blue" in capsys.readouterr().out
    (tmp_path / "q.json").write_bytes(variant(1))
    err = _err(capsys, _submit(tmp_path / "q.json", db))  # scoring reads the gold: now the variable is needed
    assert "${LB_TEST_DATA}/gold.json" in err  # the organiser running submit is told the cause


def test_missing_nltk_data_is_named_to_the_organiser_not_to_the_team(tmp_path, db: list[str], capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The README's block offline without NLTK data: the organiser running ``submit`` (and
    the server log) get the real cause and its fix; the team sees a neutral line."""
    import logging

    from averitec_tools import resources
    from averitec_tools.leaderboard import failures
    from averitec_tools.leaderboard.store import Store
    from averitec_tools.scoring.profiles import averitec2024

    monkeypatch.setenv("AVERITEC_NO_DOWNLOAD", "1")  # offline: nltk.download would fail
    monkeypatch.setattr(resources, "_find", lambda resource: None)  # no NLTK_DATA, nothing in the usual folders

    def score_needing_nltk(*args, **kwargs):
        resources.find_resource("punkt_tab")  # the tokenizer's data, if the gold side did not ask first

    monkeypatch.setattr(averitec2024.Profile, "score", score_needing_nltk)
    path = tmp_path / "p.json"
    path.write_bytes(variant(0))
    logger = logging.getLogger("averitec.leaderboard")
    logger.addHandler(caplog.handler)
    try:
        with caplog.at_level(logging.INFO, logger="averitec.leaderboard"):
            err = _err(capsys, _submit(path, db))
    finally:
        logger.removeHandler(caplog.handler)
    assert f"{path}: submission 1 was not scored because of a problem on the server's side: NLTK resource '" in err
    assert "not found and downloads are disabled" in err and "set NLTK_DATA to a folder that contains " in err
    assert "python -m nltk.downloader " in err
    assert "NLTK resource '" in caplog.text and "set NLTK_DATA" in caplog.text  # the server log names it too
    row = Store(db[1]).submission(1)
    assert row["reason"] == failures.SERVER_SIDE and not row["charged"] and "NLTK" not in row["reason"]


def test_init_creates_the_session_secret_apart_from_the_database(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    yaml_path = tmp_path / "c.yaml"
    yaml_path.write_text(competition_yaml())
    db = ["--db", f"sqlite:///{tmp_path / 'lb.db'}"]
    assert main(["leaderboard", "init", str(yaml_path), "--json", *db]) == 0
    secret = tmp_path / "lb.db.secret"
    assert json.loads(capsys.readouterr().out)["secret_file"] == str(secret)
    first = secret.read_text()
    assert secret.stat().st_mode & 0o777 == 0o600 and len(first.strip()) == 64
    assert first.strip().encode() not in (tmp_path / "lb.db").read_bytes()
    secret.chmod(0o644)  # loosened by hand: init again tightens it and keeps the secret
    assert main(["leaderboard", "init", str(yaml_path), *db]) == 0
    assert secret.stat().st_mode & 0o777 == 0o600 and secret.read_text() == first
    capsys.readouterr()
    custom = tmp_path / "elsewhere" / "s.secret"
    assert main(["leaderboard", "secret", "rotate", "--secret-file", str(custom), "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out)["secret_file"] == str(custom) and custom.stat().st_mode & 0o777 == 0o600
    secret.write_text("not a secret\n")
    code = main(["leaderboard", "init", str(yaml_path), *db])
    assert code == 2 and "not a leaderboard secret" in capsys.readouterr().err
