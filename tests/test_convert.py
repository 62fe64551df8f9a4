"""``averitec convert``: round trips that score identically, clear errors where a format cannot hold the data."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _score_fixtures import PRED_2024, make_files, write_json

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.scoring.convert import convert, sniff_submission_format
from averitec_tools.scoring.fever8_csv import SEP_PAIR, SEP_QA, read_fever8_csv
from averitec_tools.scoring.profiles import get_profile


def _score(pred: Path, gold: Path, profile: str = "averitec2024") -> dict[str, Any]:
    return dict(get_profile(profile).score(predictions=pred, references=gold, jobs=1).summary)


def test_2024_to_2023_to_2024_is_lossless(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    convert(source=files["pred2024"], target_format="2023", out=tmp_path / "p23.json")
    convert(source=tmp_path / "p23.json", target_format="2024", out=tmp_path / "back.json")
    assert json.loads((tmp_path / "back.json").read_text(encoding="utf-8")) == PRED_2024
    assert _score(tmp_path / "back.json", files["gold"]) == _score(files["pred2024"], files["gold"])


def test_2024_to_fever8_to_2024_scores_identically(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    result = convert(source=files["pred2024"], target_format="fever8", out=tmp_path / "sub.csv")
    assert result.dropped == {"url": 15, "confidence": 1}
    rows = read_fever8_csv(tmp_path / "sub.csv")
    assert list(rows[0]) == ["id", "claim", "evi", "label", "split"]
    assert rows[0]["evi"] == f"What is the moon made of?{SEP_QA}Rock.{SEP_PAIR}Is the moon cheese?{SEP_QA}No{SEP_PAIR}"
    # Byte for byte what the organisers' prepare_leaderboard_submission.py writes: csv.writer's
    # CRLF rows, every pair followed by the pair separator, split "pred".
    head = (tmp_path / "sub.csv").read_bytes().split(b"\r\n")[:2]
    assert head == [b"id,claim,evi,label,split",
                    b'0,The moon is made of cheese.,"What is the moon made of?\t\t\nRock.\t\t\n\nIs the moon cheese?'
                    b'\t\t\nNo\t\t\n\n",Refuted,pred']
    assert sniff_submission_format(tmp_path / "sub.csv") == "fever8"
    convert(source=tmp_path / "sub.csv", target_format="2024", out=tmp_path / "back.json")
    assert _score(tmp_path / "back.json", files["gold"]) == _score(files["pred2024"], files["gold"])


def test_fever8_csv_is_recognised_by_its_header_whatever_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    out = tmp_path / "x.fever8"
    assert main(["convert", str(files["pred2024"]), "--to", "fever8", "--out", str(out)]) == 0
    assert main(["convert", str(out), "--to", "2024", "--out", str(tmp_path / "back.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["from"] == "fever8"
    assert _score(tmp_path / "back.json", files["gold"]) == _score(files["pred2024"], files["gold"])
    # A BOM and a header without the optional split column are recognised too; JSON is not.
    bom = tmp_path / "sub.txt"
    bom.write_bytes(b"\xef\xbb\xbfid,claim,evi,label\r\n0,c,\"Q?\t\t\nA.\",Refuted\r\n")
    assert sniff_submission_format(bom) == "fever8"
    assert sniff_submission_format(files["pred2024"]) == "2024"


def test_evalai_back_to_2024_needs_references(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    out = tmp_path / "x.json"
    assert main(["convert", str(files["pred_evalai"]), "--to", "2024", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no claim text" in err and "--references" in err and err.count("\n") == 1
    assert not out.exists()
    assert main(["convert", str(files["pred_evalai"]), "--to", "2024", "--out", str(out),
                 "--references", str(files["gold"]), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"from": "evalai", "to": "2024", "n_claims": 3, "out": str(out), "dropped": {}}
    back = json.loads(out.read_text(encoding="utf-8"))
    assert back[0]["claim"] == PRED_2024[0]["claim"] and "string_evidence" in back[0]
    # ... and back to EvalAI lines, unchanged
    convert(source=out, target_format="evalai", out=tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_text(encoding="utf-8").splitlines() == \
        files["pred_evalai"].read_text(encoding="utf-8").splitlines()


def test_evalai_strings_cannot_become_fever8_pairs(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    with pytest.raises(UserError, match="without a question/answer split"):
        convert(source=files["pred_evalai"], target_format="fever8", out=tmp_path / "x.csv",
                references=files["gold"])
    assert not (tmp_path / "x.csv").exists()


def test_separator_inside_text_is_an_error(tmp_path: Path) -> None:
    items = json.loads(json.dumps(PRED_2024))
    items[0]["evidence"][0]["answer"] = "Rock.\t\t\nDust."
    with pytest.raises(UserError, match="FEVER-8 separator"):
        convert(source=write_json(tmp_path / "p.json", items), target_format="fever8", out=tmp_path / "x.csv")


def test_claim_text_must_match_references(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    items = json.loads(json.dumps(PRED_2024))
    items[1]["claim"] = "Dogs can fly."
    with pytest.raises(UserError, match="differs from the reference claim"):
        convert(source=write_json(tmp_path / "p.json", items), target_format="2023", out=tmp_path / "x.json",
                references=files["gold"])


def test_output_must_not_be_the_input(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    with pytest.raises(UserError, match="overwrite the input"):
        convert(source=files["pred2024"], target_format="2024", out=files["pred2024"])


def test_fever8_csv_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("id,claim,label\n0,c,Refuted\n", encoding="utf-8")
    with pytest.raises(UserError, match="missing evi"):
        read_fever8_csv(bad)
    with bad.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["id", "claim", "evi", "label", "split"], [0, "c", "Q only no separator", "Refuted", "dev"]])
    with pytest.raises(UserError, match="evi pair 0"):
        convert(source=bad, target_format="2024", out=tmp_path / "x.json")


@pytest.mark.shared_data
def test_baseline_dev_round_trip_through_fever8(shared_data: Path, tmp_path: Path) -> None:
    base = shared_data / "averitec"
    convert(source=base / "baseline_dev_predictions.json", target_format="fever8", out=tmp_path / "sub.csv")
    convert(source=tmp_path / "sub.csv", target_format="2023", out=tmp_path / "p23.json")
    convert(source=tmp_path / "p23.json", target_format="2024", out=tmp_path / "back.json")
    original = _score(base / "baseline_dev_predictions.json", base / "dev.json")
    assert _score(tmp_path / "back.json", base / "dev.json") == original
