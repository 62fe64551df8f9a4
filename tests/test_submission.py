"""Submission parsing: format sniffing and every kind of bad input gives a one-line UserError."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _score_fixtures import GOLD, PRED_2024, make_files, pred_evalai, write_json, write_jsonl

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.profiles import get_profile
from averitec_tools.leaderboard.submission import (
    iter_format,
    load_evalai,
    load_gold_claims,
    load_predictions_2024,
    sniff_item_format,
)


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def score(profile: str, pred: Path, ref: Path) -> None:
    get_profile(profile).score(predictions=pred, references=ref, jobs=1)


def error_of(profile: str, pred: Path, ref: Path) -> str:
    with pytest.raises(UserError) as info:
        score(profile, pred, ref)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("item", "fmt"),
    [
        ({"claim_id": 0, "pred_label": "Refuted", "evidence": []}, "averitec2024"),
        ({"claim": "x", "label": "Refuted", "questions": []}, "averitec2023"),
        ({"id": 1, "label": "Refuted", "evidence": ["a b"]}, "evalai"),
        ({"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": [["P", 0]]}, "fever"),
        ({"id": 1, "label": "SUPPORTS", "evidence": [[[1, 2, "P", 0]]]}, "fever"),
        ({"something": 1}, None),
        ([1, 2], None),
    ],
)
def test_sniff(item: object, fmt: str | None) -> None:
    assert sniff_item_format(item) == fmt


def test_wrong_format_names_both_and_suggests_profile(files: dict[str, Path]) -> None:
    msg = error_of("averitec2024", files["pred_evalai"], files["gold"])
    assert "looks like the EvalAI line format" in msg and "profile averitec2024 expects the 2024" in msg
    assert "--profile evalai" in msg
    msg = error_of("evalai", files["pred2024"], files["gold_evalai"])
    assert "looks like the 2024 shared-task format" in msg and "--profile averitec2024" in msg
    msg = error_of("averitec2023", files["pred2024"], files["gold"])
    assert "2024" in msg and "profile averitec2023 expects the 2023" in msg


def test_mixed_formats(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    items.append({"id": 3, "label": "Refuted", "evidence": ["x"]})
    p = write_json(tmp_path / "mixed.json", items)
    msg = error_of("averitec2024", p, files["gold"])
    assert "mixed formats" in msg and "[3]" in msg


def test_missing_and_extra_claim_ids(tmp_path: Path, files: dict[str, Path]) -> None:
    p = write_json(tmp_path / "p.json", PRED_2024[:2])
    msg = error_of("averitec2024", p, files["gold"])
    assert "2 predictions, not one for every reference claim (3 reference claims; missing claim_id 2)" in msg
    extra = json.loads(json.dumps(PRED_2024)) + [dict(PRED_2024[0], claim_id=7)]
    msg = error_of("averitec2024", write_json(tmp_path / "e.json", extra), files["gold"])
    assert "claim_id 7 has no reference" in msg
    dup = json.loads(json.dumps(PRED_2024)) + [PRED_2024[0]]
    assert "duplicate claim_id 0" in error_of("averitec2024", write_json(tmp_path / "d.json", dup), files["gold"])


def test_count_mismatch_2023_and_evalai(tmp_path: Path, files: dict[str, Path]) -> None:
    p = write_json(tmp_path / "p.json", json.loads(files["pred2023"].read_text())[:2])
    assert "2 predictions, not one per reference claim" in error_of("averitec2023", p, files["gold"])
    p = write_jsonl(tmp_path / "p.jsonl", pred_evalai()[:1])
    assert "1 predictions, not one per reference claim" in error_of("evalai", p, files["gold_evalai"])


def test_evalai_id_mismatch(tmp_path: Path, files: dict[str, Path]) -> None:
    items = pred_evalai()
    items[0], items[1] = items[1], items[0]
    msg = error_of("evalai", write_jsonl(tmp_path / "p.jsonl", items), files["gold_evalai"])
    assert "item 1 has id 1, not the id of reference item 1 (reference item 1 has id 0)" in msg


def test_unknown_label_lists_valid_and_hints_case(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    items[1]["pred_label"] = "supported "
    msg = error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    assert "claim_id 1" in msg and "unknown pred_label 'supported '" in msg
    assert "Conflicting Evidence/Cherrypicking" in msg and "did you mean 'Supported'" in msg
    items[1]["pred_label"] = "True"
    msg = error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    assert "did you mean" not in msg and "valid labels" in msg


def test_empty_evidence_lists(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    items[2]["evidence"] = []
    assert "claim_id 2): empty evidence list" in error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    ev = pred_evalai()
    ev[0]["evidence"] = []
    assert "empty evidence list" in error_of("evalai", write_jsonl(tmp_path / "p.jsonl", ev), files["gold_evalai"])
    gold = json.loads(json.dumps(GOLD))
    gold[1]["questions"] = []
    assert "no questions" in error_of("averitec2024", files["pred2024"], write_json(tmp_path / "g.json", gold))


def test_missing_keys(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    del items[0]["pred_label"]
    assert "missing key 'pred_label'" in error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    items = json.loads(json.dumps(PRED_2024))
    del items[0]["evidence"][1]["answer"]
    msg = error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    assert "evidence[1]: missing key 'answer'" in msg
    gold = json.loads(json.dumps(GOLD))
    del gold[0]["label"]
    assert "no 'label'" in error_of("averitec2024", files["pred2024"], write_json(tmp_path / "g.json", gold))


def test_non_utf8_reports_line_and_column(tmp_path: Path, files: dict[str, Path]) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"id": 0, "label": "Refuted", "evidence": ["ok"]}\n{"id": 1, "label": "Re\xfffuted"}\n')
    msg = error_of("evalai", p, files["gold_evalai"])
    assert "bad.jsonl:2:23: file is not valid UTF-8" in msg


def test_truncated_json_and_jsonl(tmp_path: Path, files: dict[str, Path]) -> None:
    text = json.dumps(PRED_2024, indent=1)
    p = tmp_path / "trunc.json"
    p.write_text(text[: len(text) // 2], encoding="utf-8")
    msg = error_of("averitec2024", p, files["gold"])
    assert re.search(r"trunc\.json:\d+:\d+: (truncated|invalid) JSON", msg)
    q = tmp_path / "trunc.jsonl"
    q.write_text(json.dumps(pred_evalai()[0]) + "\n" + json.dumps(pred_evalai()[1])[:20], encoding="utf-8")
    assert "trunc.jsonl:2:" in error_of("evalai", q, files["gold_evalai"])


def test_jsonl_is_streamed(tmp_path: Path) -> None:
    """The first item is available before the rest of a (huge) file is read."""
    p = tmp_path / "big.jsonl"
    with p.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": 0, "label": "Refuted", "evidence": ["x"]}) + "\n")
        fh.write("{broken\n" * 50_000)
    it = iter_format(p, expected="evalai", profile="evalai", role="predictions")
    assert next(it).value["id"] == 0
    with pytest.raises(UserError, match="big.jsonl:2:"):
        next(it)


def test_bad_confidence_and_probabilities(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    for bad in ("high", 1.5, -0.1, float("nan"), float("inf"), True):
        items[0]["confidence"] = bad
        msg = error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
        assert "[0] (claim_id 0): field 'confidence' must be a number in [0, 1]" in msg
    items[0]["confidence"] = 0.5
    items[0]["probabilities"] = {"Refuted": 1.01}
    assert "\"probabilities['Refuted']\" must be a number in [0, 1]" in error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])
    items[0]["confidence"] = 0.5
    items[0]["probabilities"] = {"Refutd": 1.0}
    assert "unknown label in 'probabilities'" in error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])


def test_claim_text_mismatch(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(json.dumps(PRED_2024))
    items[0]["claim"] = "Something else entirely."
    assert "differs from the reference claim" in error_of("averitec2024", write_json(tmp_path / "p.json", items), files["gold"])


def test_not_an_object_and_empty(tmp_path: Path, files: dict[str, Path]) -> None:
    assert "must be a JSON object" in error_of("averitec2024", write_json(tmp_path / "p.json", [1, 2, 3]), files["gold"])
    assert "no predictions found" in error_of("averitec2024", write_json(tmp_path / "e.json", []), files["gold"])
    assert "missing key 'claim_id'" in error_of("averitec2024", write_json(tmp_path / "o.json", {"a": 1}), files["gold"])


def test_loaders_return_typed_records(files: dict[str, Path]) -> None:
    gold = load_gold_claims(files["gold"], profile="averitec2024")
    preds = load_predictions_2024(files["pred2024"], n_references=len(gold), references="gold.json")
    assert preds[0].evidence is not None and preds[0].evidence[0].question == "What is the moon made of?"
    assert load_evalai(files["gold_evalai"], role="references")[0].evidence[1].endswith("No. It is rock.")


def test_lone_answer_object_is_wrapped(tmp_path: Path, files: dict[str, Path]) -> None:
    items = json.loads(files["pred2023"].read_text())
    items[1]["questions"][0]["answers"] = items[1]["questions"][0]["answers"][0]
    a = get_profile("averitec2023").score(predictions=files["pred2023"], references=files["gold"], jobs=1)
    b = get_profile("averitec2023").score(predictions=write_json(tmp_path / "p.json", items), references=files["gold"], jobs=1)
    assert a.summary["questions_answers"] == b.summary["questions_answers"]
