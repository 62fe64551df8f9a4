"""Wrong data that used to be accepted silently (issue 12), and cheap checks that must run
before the slow scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _score_fixtures import make_files

from averitec_tools.cli.main import main


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def error_line(capsys: pytest.CaptureFixture[str], code: int) -> str:
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def never_score(monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.cli import calibration, compare

    def fail(**kwargs: object) -> None:
        pytest.fail("scored before the cheap checks")

    monkeypatch.setattr(calibration, "score_with_profile", fail)
    monkeypatch.setattr(compare, "score_with_profile", fail)


# ---------------------------------------------------------------- audit

def test_audit_duplicate_claim_ids_are_refused(files, tmp_path, capsys) -> None:
    preds = json.loads(files["pred2024"].read_text())
    preds[1]["claim_id"] = preds[0]["claim_id"]
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(preds))
    err = error_line(capsys, main(["audit", str(dup), "--references", str(files["gold"])]))
    assert "dup.json[1]: duplicate claim_id 0 (first at" in err


def test_audit_references_without_dates_warn(files, tmp_path, capsys) -> None:
    gold = json.loads(files["gold"].read_text())
    for claim in gold:
        claim.pop("claim_date", None)
    nodate = tmp_path / "nodate.json"
    nodate.write_text(json.dumps(gold))
    assert main(["audit", str(files["pred2024"]), "--references", str(nodate), "--json"]) == 0
    out, err = capsys.readouterr()
    json.loads(out)
    assert f"{len(gold)} of {len(gold)} claims have no usable claim date in --references" in err


# ---------------------------------------------------------------- FEVER / EvalAI

FEVER_GOLD = [{"id": i, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": f"c{i}",
               "evidence": [[[0, 0, "P", i]]]} for i in range(3)]


def write_jsonl(path: Path, rows: list) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_fever_null_predicted_evidence_is_refused(tmp_path, capsys) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", FEVER_GOLD)
    preds = [{"id": i, "predicted_label": "SUPPORTS", "predicted_evidence": [["P", i]]} for i in range(3)]
    preds[1]["predicted_evidence"] = None
    pred = write_jsonl(tmp_path / "pred.jsonl", preds)
    err = error_line(capsys, main(["score", pred, gold, "--profile", "fever"]))
    assert "pred.jsonl:2: 'predicted_evidence' is null" in err and "use []" in err


def test_fever_wrong_length_is_found_before_parsing(tmp_path, capsys, monkeypatch) -> None:
    from averitec_tools.leaderboard.profiles import fever

    gold = write_jsonl(tmp_path / "gold.jsonl", FEVER_GOLD)
    pred = write_jsonl(tmp_path / "pred.jsonl", [{"id": 0, "predicted_label": "SUPPORTS", "predicted_evidence": []}])
    monkeypatch.setattr(fever, "_read_predictions", lambda path: pytest.fail("parsed every prediction"))
    err = error_line(capsys, main(["score", pred, gold, "--profile", "fever"]))
    assert "1 predictions, not one per reference claim" in err and "has 3 claims" in err


@pytest.mark.parametrize("evidence", [[1, 2], "q a", None, [{"q": "a"}]])
def test_evalai_wrong_evidence_type_names_the_field(files, tmp_path, capsys, evidence) -> None:
    rows = [json.loads(line) for line in files["pred_evalai"].read_text().splitlines()]
    rows[-1]["evidence"] = evidence
    pred = write_jsonl(tmp_path / "bad.jsonl", rows)
    err = error_line(capsys, main(["score", pred, str(files["gold_evalai"]), "--profile", "evalai"]))
    assert "field 'evidence' must be a list of strings" in err and "FEVER" not in err


# ---------------------------------------------------------------- calibration / compare

def with_confidence(files: dict[str, Path], tmp_path: Path, edit) -> str:
    preds = json.loads(files["pred2024"].read_text())
    for p in preds:
        p["confidence"] = 0.5
    edit(preds)
    path = tmp_path / "conf.json"
    path.write_text(json.dumps(preds))
    return str(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ps: ps[1].update(confidence=1.5), "conf.json[1]: claim 1: confidence 1.5 is not a number in [0, 1]"),
        (lambda ps: ps[0].update(confidence=True), "claim 0: confidence True"),
        (lambda ps: ps[0].update(probabilities={"Supported": 0.5, "Refuted": 0.2}), "sum to 1 (sum is 0.7)"),
        (lambda ps: ps[0].update(probabilities={"Supported": "x"}), "probabilities must be numbers"),
    ],
)
def test_calibration_cheap_checks_run_before_scoring(files, tmp_path, capsys, monkeypatch, edit, message) -> None:
    never_score(monkeypatch)
    pred = with_confidence(files, tmp_path, edit)
    assert message in error_line(capsys, main(["calibration", pred, str(files["gold"])]))


def test_calibration_partial_probabilities_are_reported(files, tmp_path, capsys) -> None:
    pred = with_confidence(files, tmp_path, lambda ps: ps[0].update(probabilities={"Supported": 0.5, "Refuted": 0.5}))
    assert main(["calibration", pred, str(files["gold"]), "--json", "--n-resamples", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["multiclass"] == {"skipped": f"only 1 of {report['n']} claims have 'probabilities'"}


def test_compare_unknown_metric_fails_before_scoring(files, capsys, monkeypatch) -> None:
    never_score(monkeypatch)
    p = str(files["pred2024"])
    err = error_line(capsys, main(["compare", p, p, str(files["gold"]), "--metric", "questions_onyl"]))
    assert "questions_onyl" in err and "questions_only" in err


@pytest.mark.parametrize(("profile", "pred", "gold"), [
    ("averitec2024", "pred2024", "gold"), ("averitec2023", "pred2023", "gold"), ("evalai", "pred_evalai", "gold_evalai"),
])
def test_declared_per_claim_metrics_match_the_profiles(files, profile, pred, gold) -> None:
    from averitec_tools.cli._profile_scores import score_with_profile
    from averitec_tools.leaderboard.profiles import get_profile

    result = score_with_profile(profile=profile, predictions=str(files[pred]), references=str(files[gold]))
    assert set(result.per_claim[0].values) == set(get_profile(profile).per_claim_metrics)


def test_declared_fever_metrics_match_the_profile(tmp_path) -> None:
    from averitec_tools.cli._profile_scores import score_with_profile
    from averitec_tools.leaderboard.profiles import get_profile

    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": 1, "claim": "c", "verifiable": "VERIFIABLE", "label": "SUPPORTS", '
                    '"evidence": [[[0, 0, "Page", 3]]]}\n')
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": [["Page", 3]]}\n')
    result = score_with_profile(profile="fever", predictions=str(pred), references=str(gold))
    assert set(result.per_claim[0].values) == set(get_profile("fever").per_claim_metrics)
