"""FEVER score: hand-derived fixtures, crash fixes, and equality with the reference scorer.

``fever-scorer`` does not build from PyPI here (its setup needs network/legacy tooling),
so ``_reference_fever_score`` below is the reference ``fever/scorer.py``
(sheffieldnlp/fever-scorer, ``fever_score(predictions, actual, max_evidence=5)``)
transcribed line for line, including its quirks.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.metrics.fever_score import FeverScore
from averitec_tools.records.fever import FeverClaim, FeverPrediction
from averitec_tools.scoring.profiles import get_profile


# --- reference (transcribed) -------------------------------------------------------------
def _ref_is_correct_label(instance: dict[str, Any]) -> bool:
    return instance["label"].upper() == instance["predicted_label"].upper()


def _ref_is_strictly_correct(instance: dict[str, Any], max_evidence: int | None = None) -> bool:
    if instance["label"].upper() != "NOT ENOUGH INFO" and _ref_is_correct_label(instance):
        if max_evidence is None:
            max_evidence = len(instance["predicted_evidence"])
        for group in instance["evidence"]:
            actual = [[e[2], e[3]] for e in group]
            if all([a in instance["predicted_evidence"][:max_evidence] for a in actual]):  # noqa: C419
                return True
    elif instance["label"].upper() == "NOT ENOUGH INFO" and _ref_is_correct_label(instance):
        return True
    return False


def _ref_precision(instance: dict[str, Any], max_evidence: int | None = None) -> tuple[float, float]:
    p = hits = 0.0
    if instance["label"].upper() != "NOT ENOUGH INFO":
        all_evi = [[e[2], e[3]] for eg in instance["evidence"] for e in eg if e[3] is not None]
        pred = instance["predicted_evidence"] if max_evidence is None else instance["predicted_evidence"][:max_evidence]
        for prediction in pred:
            if prediction in all_evi:
                p += 1.0
            hits += 1.0
        return (p / hits) if hits > 0 else 1.0, 1.0
    return 0.0, 0.0


def _ref_recall(instance: dict[str, Any], max_evidence: int | None = None) -> tuple[float, float]:
    if instance["label"].upper() != "NOT ENOUGH INFO":
        if len(instance["evidence"]) == 0 or all([len(eg) == 0 for eg in instance]):  # noqa: C419
            return 1.0, 1.0
        pred = instance["predicted_evidence"] if max_evidence is None else instance["predicted_evidence"][:max_evidence]
        for group in instance["evidence"]:
            evidence = [[e[2], e[3]] for e in group]
            if all([item in pred for item in evidence]):  # noqa: C419
                return 1.0, 1.0
        return 0.0, 1.0
    return 0.0, 0.0


def _reference_fever_score(predictions: list[dict[str, Any]], actual: list[dict[str, Any]], max_evidence: int | None = 5) -> tuple[float, ...]:
    correct = strict = 0.0
    mp = mph = mr = mrh = 0.0
    for idx, instance in enumerate(predictions):
        if "evidence" not in instance or "label" not in instance:
            instance["evidence"] = actual[idx]["evidence"]
            instance["label"] = actual[idx]["label"]
        if _ref_is_correct_label(instance):
            correct += 1.0
            if _ref_is_strictly_correct(instance, max_evidence):
                strict += 1.0
        a, b = _ref_precision(instance, max_evidence)
        mp += a
        mph += b
        a, b = _ref_recall(instance, max_evidence)
        mr += a
        mrh += b
    total = len(predictions)
    pr = (mp / mph) if mph > 0 else 1.0
    rec = (mr / mrh) if mrh > 0 else 0.0
    f1 = 2.0 * pr * rec / (pr + rec)
    return strict / total, correct / total, pr, rec, f1


# --- fixtures ------------------------------------------------------------------------------
def _gold(i: int, label: str, groups: list[list[tuple[str | None, int | None]]]) -> dict[str, Any]:
    return {
        "id": i,
        "verifiable": "NOT VERIFIABLE" if label == "NOT ENOUGH INFO" else "VERIFIABLE",
        "label": label,
        "claim": f"claim {i}",
        "evidence": [[[100 + i, 200 + i, p, ln] for p, ln in g] for g in groups],
    }


def _pred(i: int, label: str, evidence: list[tuple[str, int]]) -> dict[str, Any]:
    return {"id": i, "predicted_label": label, "predicted_evidence": [list(e) for e in evidence]}


GOLD = [
    _gold(1, "SUPPORTS", [[("A", 0)], [("A", 1), ("B", 2)]]),  # second group needs two sentences
    _gold(2, "REFUTES", [[("C", 3)]]),
    _gold(3, "NOT ENOUGH INFO", [[(None, None)]]),
    _gold(4, "SUPPORTS", [[("D", 0), ("D", 1)]]),
]
PREDS = [
    _pred(1, "SUPPORTS", [("A", 1), ("B", 2), ("X", 9)]),  # complete group 2: strict; P = 2/3
    _pred(2, "SUPPORTS", [("C", 3)]),  # wrong label, evidence right: P = 1, R = 1, not strict
    _pred(3, "not enough info", []),  # NEI, right label (case-insensitive): strict
    _pred(4, "SUPPORTS", [("D", 0)]),  # incomplete group: P = 1, R = 0
]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    return _write_jsonl(tmp_path / "pred.jsonl", PREDS), _write_jsonl(tmp_path / "gold.jsonl", GOLD)


def test_hand_derived_values(files: tuple[Path, Path]) -> None:
    pred, gold = files
    s = get_profile("fever").score(predictions=pred, references=gold).summary
    assert s["strict_score"] == pytest.approx(2 / 4)
    assert s["label_accuracy"] == pytest.approx(3 / 4)
    assert s["precision"] == pytest.approx((2 / 3 + 1 + 1) / 3)
    assert s["recall"] == pytest.approx(2 / 3)
    p, r = s["precision"], s["recall"]
    assert s["f1"] == pytest.approx(2 * p * r / (p + r))
    assert set(s) == {"profile", "signature", "n_claims", "strict_score", "label_accuracy", "precision", "recall", "f1"}
    assert "cap:5" in s["signature"]


def test_per_claim_values_average_to_headline(files: tuple[Path, Path]) -> None:
    pred, gold = files
    res = get_profile("fever").score(predictions=pred, references=gold)
    assert res.labels == ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")
    assert [c.values["strict_score"] for c in res.per_claim] == [1.0, 0.0, 1.0, 0.0]
    for key in ("strict_score", "label_accuracy"):
        assert sum(c.values[key] for c in res.per_claim) / len(res.per_claim) == res.summary[key]
    assert [c.claim_id for c in res.per_claim] == [1, 2, 3, 4]


def test_max_evidence_truncates(tmp_path: Path) -> None:
    gold = _write_jsonl(tmp_path / "g.jsonl", [_gold(1, "SUPPORTS", [[("A", 0)]])])
    late = [("Z", i) for i in range(5)] + [("A", 0)]
    pred = _write_jsonl(tmp_path / "p.jsonl", [_pred(1, "SUPPORTS", late)])
    prof = get_profile("fever")
    assert prof.score(predictions=pred, references=gold).summary["strict_score"] == 0.0
    s = prof.score(predictions=pred, references=gold, max_evidence=6).summary
    assert s["strict_score"] == 1.0 and s["precision"] == pytest.approx(1 / 6)
    assert prof.score(predictions=pred, references=gold, max_evidence=None).summary["recall"] == 1.0


def test_zero_precision_and_recall_does_not_crash(tmp_path: Path) -> None:
    gold = [_gold(1, "SUPPORTS", [[("A", 0)]])]
    preds = [_pred(1, "REFUTES", [("B", 0)])]
    with pytest.raises(ZeroDivisionError):  # the reference crashes here
        _reference_fever_score(copy.deepcopy(preds), gold)
    s = get_profile("fever").score(
        predictions=_write_jsonl(tmp_path / "p.jsonl", preds),
        references=_write_jsonl(tmp_path / "g.jsonl", gold),
    ).summary
    assert (s["precision"], s["recall"], s["f1"]) == (0.0, 0.0, 0.0)


def test_all_nei_and_empty_predicted_evidence(tmp_path: Path) -> None:
    gold = [_gold(1, "NOT ENOUGH INFO", [[(None, None)]]), _gold(2, "SUPPORTS", [])]
    preds = [_pred(1, "SUPPORTS", []), _pred(2, "SUPPORTS", [])]
    ref = _reference_fever_score(copy.deepcopy(preds), gold)
    s = get_profile("fever").score(
        predictions=_write_jsonl(tmp_path / "p.jsonl", preds),
        references=_write_jsonl(tmp_path / "g.jsonl", gold),
        lenient=True,  # a SUPPORTS claim without evidence sets is refused in strict mode
    ).summary
    # empty predicted evidence → precision 1; no gold groups → recall 1; strict needs a group
    assert (s["strict_score"], s["label_accuracy"], s["precision"], s["recall"], s["f1"]) == ref
    assert ref == (0.0, 0.5, 1.0, 1.0, 1.0)


def test_only_nei_gold_gives_reference_defaults(tmp_path: Path) -> None:
    gold = [_gold(1, "NOT ENOUGH INFO", [[(None, None)]])]
    preds = [_pred(1, "NOT ENOUGH INFO", [])]
    s = get_profile("fever").score(
        predictions=_write_jsonl(tmp_path / "p.jsonl", preds),
        references=_write_jsonl(tmp_path / "g.jsonl", gold),
    ).summary
    assert (s["strict_score"], s["precision"], s["recall"], s["f1"]) == (1.0, 1.0, 0.0, 0.0)


def test_confidence_and_probabilities_kept(tmp_path: Path) -> None:
    gold = [_gold(1, "SUPPORTS", [[("A", 0)]])]
    pred = _pred(1, "SUPPORTS", [("A", 0)]) | {"confidence": 0.8, "probabilities": {"SUPPORTS": 0.8, "REFUTES": 0.1, "NOT ENOUGH INFO": 0.1}}
    res = get_profile("fever").score(
        predictions=_write_jsonl(tmp_path / "p.jsonl", [pred]),
        references=_write_jsonl(tmp_path / "g.jsonl", gold),
    )
    assert res.per_claim[0].confidence == 0.8
    assert res.per_claim[0].probabilities == {"SUPPORTS": 0.8, "REFUTES": 0.1, "NOT ENOUGH INFO": 0.1}


def test_label_evidence_synonym_keys(tmp_path: Path) -> None:
    gold = [_gold(1, "SUPPORTS", [[("A", 0)]])]
    pred = [{"id": 1, "label": "SUPPORTS", "evidence": [["A", 0]]}]
    s = get_profile("fever").score(
        predictions=_write_jsonl(tmp_path / "p.jsonl", pred),
        references=_write_jsonl(tmp_path / "g.jsonl", gold),
    ).summary
    assert s["strict_score"] == 1.0


@pytest.mark.parametrize(
    ("pred", "match"),
    [
        ({"id": 1, "predicted_label": "MAYBE", "predicted_evidence": []}, "unknown label 'MAYBE'"),
        ({"id": 1, "predicted_label": "SUPPORTS"}, "missing key 'predicted_evidence'"),
        ({"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": [["A", "0"]]}, r"predicted_evidence\[0\] must be a \[page<string>, line<int>\]"),
        ({"id": 2, "predicted_label": "SUPPORTS", "predicted_evidence": []}, r"prediction id 2 is not the claim id on the same line of the references \(.* has claim id 1 there\)"),
        ({"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": [], "confidence": "high"}, "'confidence' must be a number in \\[0, 1\\]"),
    ],
)
def test_bad_predictions(tmp_path: Path, pred: dict[str, Any], match: str) -> None:
    gold = _write_jsonl(tmp_path / "g.jsonl", [_gold(1, "SUPPORTS", [[("A", 0)]])])
    p = _write_jsonl(tmp_path / "p.jsonl", [pred])
    with pytest.raises(UserError, match=match):
        get_profile("fever").score(predictions=p, references=gold)


def test_bad_files(tmp_path: Path, files: tuple[Path, Path]) -> None:
    pred, gold = files
    prof = get_profile("fever")
    with pytest.raises(UserError, match="looks like a FEVER gold file"):
        prof.score(predictions=gold, references=gold)
    with pytest.raises(UserError, match="looks like a FEVER predictions file"):
        prof.score(predictions=pred, references=pred)
    short = _write_jsonl(tmp_path / "short.jsonl", PREDS[:2])
    with pytest.raises(UserError, match="2 predictions, not one per reference claim .* has 4 claims"):
        prof.score(predictions=short, references=gold)
    with pytest.raises(UserError, match="not an option of this profile"):
        prof.score(predictions=pred, references=gold, lam=0.3)
    with pytest.raises(UserError, match="profile 'fever': max_evidence: must be at least 1, got 0"):
        prof.score(predictions=pred, references=gold, max_evidence=0)
    with pytest.raises(UserError, match="non-negative integer"):  # the metric on its own: 0 counts no sentence
        FeverScore(max_evidence=-1)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 1, "predicted_label": "SUPP\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"broken.jsonl:1:\d+: truncated JSON"):
        prof.score(predictions=broken, references=gold)


def test_metric_object_matches_reference_on_fixture() -> None:
    golds = [FeverClaim.from_dict(g, where="g") for g in GOLD]
    preds = [FeverPrediction.from_dict(p, where="p") for p in PREDS]
    for cap in (None, 0, 1, 2, 5):
        r = FeverScore(max_evidence=cap).compute(golds=golds, predictions=preds)
        ref = _reference_fever_score(copy.deepcopy(PREDS), GOLD, max_evidence=cap)
        assert (r.strict_score, r.label_accuracy, r.precision, r.recall, r.f1) == pytest.approx(ref, abs=1e-12)


def test_cli_score_fever(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = files
    code = main(["score", str(pred), str(gold), "--profile", "fever", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strict_score"] == pytest.approx(0.5)


@pytest.mark.shared_data
@pytest.mark.parametrize("cap", [5, None, 1])
def test_equals_reference_on_paper_dev(shared_data: Path, cap: int | None) -> None:
    gold_path = shared_data / "fever" / "paper_dev.jsonl"
    pred_path = shared_data / "fever" / "paper_dev_sample_predictions.jsonl"
    actual = [json.loads(line) for line in gold_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    predictions = [json.loads(line) for line in pred_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ref = _reference_fever_score(predictions, actual, max_evidence=cap)
    s = get_profile("fever").score(predictions=pred_path, references=gold_path, max_evidence=cap).summary
    ours = (s["strict_score"], s["label_accuracy"], s["precision"], s["recall"], s["f1"])
    assert s["n_claims"] == 9999
    for a, b in zip(ours, ref, strict=True):
        assert abs(a - b) <= 1e-9
    assert ours == ref  # in fact bit for bit: same summation order
