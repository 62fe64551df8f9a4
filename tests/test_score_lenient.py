"""``--lenient``: every tolerated input class scores exactly as the official scripts do.

The official algorithms are ``benchmarks/reference_scorer.py``, run under a real NLTK 3.9.1.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from _score_fixtures import (
    PRED_2024,
    gold_evalai,
    make_files,
    pred_2023,
    pred_evalai,
    run_reference,
    write_json,
    write_jsonl,
)

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.profiles import get_profile


def _leaves(obj: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in obj.items():
        if isinstance(v, Mapping):
            yield from _leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def assert_same_figures(ours: Mapping[str, Any], reference: Mapping[str, Any]) -> None:
    a = {k: v for k, v in _leaves(ours) if k.split(".")[0] not in {"profile", "signature", "tolerated"}}
    b = {k: v for k, v in _leaves(reference) if k not in {"profile", "tokenizer"}}
    assert set(a) == set(b)
    for key, value in b.items():
        assert a[key] == pytest.approx(value, abs=1e-9), key


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def _unknown_labels_2024(items: list[dict[str, Any]]) -> None:
    items[0]["pred_label"] = "refuted"  # case variant of the right label: still wrong
    items[2]["pred_label"] = "True"


def _empty_evidence_2024(items: list[dict[str, Any]]) -> None:
    items[1]["evidence"] = []


def _unknown_labels_2023(items: list[dict[str, Any]]) -> None:
    items[0]["label"] = "REFUTED"


def _empty_questions_2023(items: list[dict[str, Any]]) -> None:
    items[1]["questions"] = []
    items[1]["string_evidence"] = ["Do cats have wings? No, cats have no wings."]
    items[2]["questions"] = []


def _null_justification_2023(items: list[dict[str, Any]]) -> None:
    items[0]["justification"] = None


def _unknown_labels_evalai(items: list[dict[str, Any]]) -> None:
    items[1]["label"] = "NEI"


def _empty_evidence_evalai(items: list[dict[str, Any]]) -> None:
    items[0]["evidence"] = []


CASES: list[tuple[str, str, Callable[[list[dict[str, Any]]], None], dict[str, int]]] = [
    ("averitec2024", "pred2024", _unknown_labels_2024, {"unknown_label": 2}),
    ("averitec2024", "pred2024", _empty_evidence_2024, {"empty_evidence": 1}),
    ("averitec2023", "pred2023", _unknown_labels_2023, {"unknown_label": 1}),
    ("averitec2023", "pred2023", _empty_questions_2023, {"empty_questions": 2}),
    ("averitec2023", "pred2023", _null_justification_2023, {"null_justification": 1}),
    ("evalai", "pred_evalai", _unknown_labels_evalai, {"unknown_label": 1}),
    ("evalai", "pred_evalai", _empty_evidence_evalai, {"empty_evidence_skipped": 1}),
]
BASE = {"pred2024": lambda: PRED_2024, "pred2023": pred_2023, "pred_evalai": pred_evalai}


def _write_case(tmp_path: Path, kind: str, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    items = _copy(BASE[kind]())
    change(items)
    if kind == "pred_evalai":
        return write_jsonl(tmp_path / "lenient.jsonl", items)
    return write_json(tmp_path / "lenient.json", items)


@pytest.mark.parametrize(("profile", "kind", "change", "counts"), CASES, ids=[f"{c[0]}-{c[2].__name__[1:]}" for c in CASES])
def test_each_class_is_an_error_unless_lenient(tmp_path: Path, profile: str, kind: str, change: Any, counts: dict[str, int]) -> None:
    files = make_files(tmp_path)
    gold = files["gold_evalai"] if profile == "evalai" else files["gold"]
    pred = _write_case(tmp_path, kind, change)
    with pytest.raises(UserError):
        get_profile(profile).score(predictions=pred, references=gold, jobs=1)
    result = get_profile(profile).score(predictions=pred, references=gold, jobs=1, lenient=True)
    assert result.summary["tolerated"] == counts
    assert len(result.warnings) == len(counts)
    assert parse_signature(result.signature)["mode"] == "lenient"


@pytest.mark.parametrize("profile", ["averitec2024", "averitec2023", "evalai"])
def test_lenient_equals_official(tmp_path: Path, profile: str) -> None:
    """All of a profile's tolerated classes in one file (one reference run per profile)."""
    files = make_files(tmp_path)
    gold = files["gold_evalai"] if profile == "evalai" else files["gold"]
    cases = [c for c in CASES if c[0] == profile]
    kind = cases[0][1]

    def change_all(items: list[dict[str, Any]]) -> None:
        for case in cases:
            case[2](items)

    pred = _write_case(tmp_path, kind, change_all)
    result = get_profile(profile).score(predictions=pred, references=gold, jobs=1, lenient=True)
    expected: dict[str, int] = {}
    for case in cases:
        expected.update(case[3])
    assert result.summary["tolerated"] == expected
    assert_same_figures(result.summary, run_reference(profile, pred, gold))


def test_lenient_cli_warns_once_per_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    items = _copy(PRED_2024)
    _unknown_labels_2024(items)
    _empty_evidence_2024(items)
    pred = write_json(tmp_path / "both.json", items)
    assert main(["score", str(pred), str(files["gold"]), "--json", "--jobs", "1"]) == 2
    capsys.readouterr()
    assert main(["score", str(pred), str(files["gold"]), "--json", "--jobs", "1", "--lenient"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines == [
        "averitec score: warning: lenient: 2 prediction(s) with a label that is not an exact label name, counted as wrong",
        "averitec score: warning: lenient: 1 prediction(s) with an empty evidence list, scored 0",
    ]
    out = json.loads(captured.out)
    assert out["tolerated"] == {"unknown_label": 2, "empty_evidence": 1}
    assert "|mode:lenient|" in out["signature"]


def test_lenient_on_clean_input_changes_only_the_signature(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    strict = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    lenient = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1, lenient=True)
    assert lenient.warnings == () and lenient.summary["tolerated"] == {}
    assert "mode" not in parse_signature(strict.signature)
    drop = {"signature", "tolerated"}
    assert {k: v for k, v in lenient.summary.items() if k not in drop} == {k: v for k, v in strict.summary.items() if k not in drop}


# FEVER gold lines without evidence: sheffieldnlp/fever-scorer asserts the 'evidence' key
# (any label) and iterates it for SUPPORTS/REFUTES, so it raises on both; read as "no
# evidence" a SUPPORTS/REFUTES claim would get recall 1.0 whatever was predicted.
FEVER_OK = {"id": 1, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": "c", "evidence": [[[0, 0, "P", 1]]]}


def _fever_files(tmp_path: Path, gold_line: dict[str, Any]) -> tuple[Path, Path]:
    gold = write_jsonl(tmp_path / "fgold.jsonl", [FEVER_OK, {"id": 2, "claim": "d", **gold_line}])
    pred = write_jsonl(tmp_path / "fpred.jsonl", [{"id": i, "predicted_label": "SUPPORTS", "predicted_evidence": [["Q", 9]]}
                                                  for i in (1, 2)])
    return pred, gold


@pytest.mark.parametrize("gold_line", [
    {"label": "REFUTES", "verifiable": "VERIFIABLE"},
    {"label": "SUPPORTS", "verifiable": "VERIFIABLE", "evidence": None},
    {"label": "NOT ENOUGH INFO", "verifiable": "NOT VERIFIABLE"},
], ids=["no key", "null", "NEI without key"])
def test_fever_gold_without_evidence_is_an_error_unless_lenient(tmp_path: Path, gold_line: dict[str, Any]) -> None:
    pred, gold = _fever_files(tmp_path, gold_line)
    with pytest.raises(UserError, match=r"fgold.jsonl:2: claim 2 .* has (no 'evidence' key|\"evidence\": null)"):
        get_profile("fever").score(predictions=pred, references=gold)
    result = get_profile("fever").score(predictions=pred, references=gold, lenient=True)
    assert result.summary["tolerated"] == {"missing_gold_evidence": 1}
    assert parse_signature(result.signature)["mode"] == "lenient"
    assert result.warnings == ("lenient: 1 gold line(s) with a label but no 'evidence' (missing or null), scored as "
                               "having no evidence sets (the FEVER scorer raises on them)",)
    # scored as "evidence": [] is: claim 1 misses its one set (recall 0), claim 2 has none
    # (the reference's rule: recall 1 if the label is not NEI); nothing strictly correct
    as_empty = get_profile("fever").score(predictions=pred, references=write_jsonl(
        tmp_path / "empty.jsonl", [FEVER_OK, {"id": 2, "claim": "d", **gold_line, "evidence": []}]), lenient=True)
    drop = {"signature", "tolerated"}
    assert {k: v for k, v in result.summary.items() if k not in drop} == {k: v for k, v in as_empty.summary.items() if k not in drop}
    assert result.summary["recall"] == (0.5 if gold_line["label"] != "NOT ENOUGH INFO" else 0.0)


@pytest.mark.parametrize(("label", "evidence", "strict_2", "recall"), [
    ("SUPPORTS", [], 0.0, 0.5),  # no set: recall 1, never strictly correct (the reference's rule)
    ("REFUTES", [], 0.0, 0.5),
    ("SUPPORTS", [[]], 1.0, 0.5),  # an empty set is "complete" in any prediction: strict with the right label
    ("SUPPORTS", [[[0, 0, "P", 4]], []], 1.0, 0.5),  # one empty set among real ones
], ids=["[] SUPPORTS", "[] REFUTES", "[[]]", "real + empty set"])
def test_fever_gold_with_empty_evidence_is_an_error_unless_lenient(
        tmp_path: Path, label: str, evidence: list[Any], strict_2: float, recall: float) -> None:
    """Issue 30 item 12: a verifiable gold claim with no evidence set, or an empty one, gives
    every prediction recall 1.0 (``[[]]``: a strictly correct claim): strict refuses it, naming
    the line and the claim; ``--lenient`` scores it as the FEVER scorer does, counted."""
    from test_fever_score import _reference_fever_score

    line = {"id": 2, "claim": "d", "label": label, "verifiable": "VERIFIABLE", "evidence": evidence}
    pred, gold = _fever_files(tmp_path, line)
    with pytest.raises(UserError, match=r"fgold.jsonl:2: claim 2 \((SUPPORTS|REFUTES)\) has (\"evidence\": \[\]|an empty evidence set)"):
        get_profile("fever").score(predictions=pred, references=gold)
    result = get_profile("fever").score(predictions=pred, references=gold, lenient=True)
    assert result.summary["tolerated"] == {"empty_gold_evidence": 1}
    assert result.warnings[0].startswith("lenient: 1 gold line(s) with a SUPPORTS/REFUTES label and an empty")
    assert [c.values["strict_score"] for c in result.per_claim] == [0.0, strict_2]
    reference = _reference_fever_score(
        [json.loads(x) for x in pred.read_text().splitlines()], [json.loads(x) for x in gold.read_text().splitlines()])
    s = result.summary
    assert (s["strict_score"], s["label_accuracy"], s["precision"], s["recall"]) == pytest.approx(reference[:4])
    assert s["recall"] == recall


@pytest.mark.parametrize("evidence", [[], [[]], [[[0, None, None, None]]]])
def test_fever_nei_with_empty_evidence_stays_accepted(tmp_path: Path, evidence: list[Any]) -> None:
    pred, gold = _fever_files(tmp_path, {"label": "NOT ENOUGH INFO", "verifiable": "NOT VERIFIABLE",
                                         "evidence": evidence})
    assert get_profile("fever").score(predictions=pred, references=gold).summary["n_claims"] == 2


def test_fever_cli_empty_gold_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = _fever_files(tmp_path, {"label": "SUPPORTS", "verifiable": "VERIFIABLE", "evidence": [[]]})
    assert main(["score", str(pred), str(gold), "--profile", "fever"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "fgold.jsonl:2" in err and "claim 2" in err and "--lenient" in err
    assert main(["score", str(pred), str(gold), "--profile", "fever", "--lenient", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tolerated"] == {"empty_gold_evidence": 1}


def test_fever_nei_with_null_evidence_is_read_as_the_reference_reads_it(tmp_path: Path) -> None:
    """The reference never looks at an NEI line's evidence: null there is accepted, uncounted."""
    pred, gold = _fever_files(tmp_path, {"label": "NOT ENOUGH INFO", "verifiable": "NOT VERIFIABLE", "evidence": None})
    strict = get_profile("fever").score(predictions=pred, references=gold)
    assert strict.summary["strict_score"] == 0.0 and strict.summary["n_claims"] == 2
    assert get_profile("fever").score(predictions=pred, references=gold, lenient=True).summary["tolerated"] == {}


def test_fever_cli_strict_error_and_lenient_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = _fever_files(tmp_path, {"label": "REFUTES", "verifiable": "VERIFIABLE", "evidence": None})
    assert main(["score", str(pred), str(gold), "--profile", "fever"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--lenient" in err and "fgold.jsonl:2" in err
    assert main(["score", str(pred), str(gold), "--profile", "fever", "--lenient", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["tolerated"] == {"missing_gold_evidence": 1}
    assert "|mode:lenient|" in json.loads(captured.out)["signature"]
    assert "warning: lenient: 1 gold line(s) with a label but no 'evidence'" in captured.err


def test_gold_evalai_fixture_unchanged() -> None:
    # Runs after the tests above that mutate copies: the shared fixtures still hold these values.
    assert gold_evalai() == [
        {"id": 0, "label": "Refuted", "evidence": ["What is the moon made of? Rock and dust.",
                                                   "Is the moon cheese? No. It is rock."]},
        {"id": 1, "label": "Refuted", "evidence": ["Do cats have wings? No answer could be found."]},
        {"id": 2, "label": "Supported",
         "evidence": ["At what temperature does water boil? 100 degrees Celsius at sea level."]},
    ]
    assert pred_evalai() == [
        {"id": 0, "label": "Refuted", "evidence": ["What is the moon made of? Rock.", "Is the moon cheese? No"]},
        {"id": 1, "label": "Supported", "evidence": ["Do cats have wings? No answer could be found."]},
        {"id": 2, "label": "Supported",
         "evidence": [f"Question {i} about water? It boils at 100 degrees." for i in range(12)]},
    ]
