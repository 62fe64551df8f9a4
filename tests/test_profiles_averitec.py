"""averitec2024 / averitec2023 / evalai profiles: hand-derived values, reference equality,
published baseline numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from _score_fixtures import GOLD, PRED_2024, make_files, run_reference, write_json, write_jsonl

from averitec_tools.scoring.profiles import get_profile

RECORDED = json.loads((Path(__file__).parent / "data" / "reference_scores.json").read_text(encoding="utf-8"))


def leaves(obj: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in obj.items():
        if isinstance(v, Mapping):
            yield from leaves(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def assert_same_figures(ours: Mapping[str, Any], reference: Mapping[str, Any], tol: float = 1e-9) -> None:
    ours_flat = {k: v for k, v in leaves(ours) if k not in {"profile", "signature"}}
    ref_flat = {k: v for k, v in leaves(reference) if k not in {"profile", "tokenizer"}}
    assert set(ours_flat) == set(ref_flat)
    for key, value in ref_flat.items():
        assert ours_flat[key] == pytest.approx(value, abs=tol), key


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def test_2024_hand_derived(files: dict[str, Path]) -> None:
    result = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    c1 = result.per_claim[1].values
    # Identical 11-token Q+A string ("Do cats have wings ? No answer could be found ."):
    # m = 11 in one chunk -> 1 - 0.5 * (1/11)**3.
    assert c1["questions_answers"] == pytest.approx(1 - 0.5 * (1 / 11) ** 3, abs=1e-12)
    # Identical 5-token question: 1 - 0.5 * 0.2**3 = 0.996.
    assert c1["questions_only"] == pytest.approx(0.996, abs=1e-12)
    assert c1["label_accuracy"] == 0.0 and c1["averitec_score@0.25"] == 0.0
    s = result.summary
    assert s["n_claims"] == 3 and s["veracity"]["accuracy"] == pytest.approx(2 / 3)
    assert set(s) == {"profile", "signature", "n_claims", "questions_only", "answers_only", "answers_only_averitec_tools", "questions_answers",
                      "veracity", "averitec_score", "by_claim_type"}
    assert list(s["averitec_score"]) == ["0.1", "0.2", "0.25", "0.3", "0.4", "0.5"]
    assert result.labels[0] == "Supported"
    assert result.per_claim[0].confidence == 0.8 and result.per_claim[0].probabilities == {"Refuted": 0.8, "Supported": 0.2}
    assert result.per_claim[1].claim_types == ("Event/Property Claim", "Causal Claim")
    # per-claim values average to the headline figures
    for key in ("questions_only", "questions_answers", "answers_only", "answers_only_averitec_tools"):
        assert sum(c.values[key] for c in result.per_claim) / 3 == pytest.approx(s[key])
    assert sum(c.values["averitec_score@0.2"] for c in result.per_claim) / 3 == pytest.approx(s["averitec_score"]["0.2"])


def test_2024_only_first_ten_items_count(tmp_path: Path, files: dict[str, Path]) -> None:
    changed = json.loads(json.dumps(PRED_2024))
    changed[2]["evidence"][10]["question"] = "At what temperature does water boil?"
    changed[2]["evidence"][11]["answer"] = "100 degrees Celsius at sea level."
    p = write_json(tmp_path / "changed.json", changed)
    a = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    b = get_profile("averitec2024").score(predictions=p, references=files["gold"], jobs=1)
    assert a.summary == b.summary


def test_2024_equals_reference_on_fixture(files: dict[str, Path]) -> None:
    ours = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    assert_same_figures(ours.summary, run_reference("averitec2024", files["pred2024"], files["gold"]))


def test_2023_equals_reference_on_fixture(files: dict[str, Path]) -> None:
    ours = get_profile("averitec2023").score(predictions=files["pred2023"], references=files["gold"], jobs=1)
    assert set(ours.summary) >= {"justification", "justification_score", "by_claim_type"}
    assert list(ours.summary["by_claim_type"]) == ["0.2", "0.3"]
    assert_same_figures(ours.summary, run_reference("averitec2023", files["pred2023"], files["gold"]))


def test_evalai_equals_reference_on_fixture(files: dict[str, Path]) -> None:
    ours = get_profile("evalai").score(predictions=files["pred_evalai"], references=files["gold_evalai"], jobs=1)
    assert set(ours.summary) == {"profile", "signature", "n_claims", "label_accuracy", "evidence_meteor"}
    assert_same_figures(ours.summary, run_reference("evalai", files["pred_evalai"], files["gold_evalai"]))


def test_evalai_normalises_by_predictions_and_includes_threshold(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "g.jsonl", [{"id": 0, "label": "Supported", "evidence": ["Who? Bob."]}])
    one = write_jsonl(tmp_path / "p1.jsonl", [{"id": 0, "label": "Supported", "evidence": ["Who? Bob."]}])
    two = write_jsonl(tmp_path / "p2.jsonl", [{"id": 0, "label": "Supported", "evidence": ["Who? Bob.", "zzz"]}])
    r1 = get_profile("evalai").score(predictions=one, references=gold, jobs=1)
    r2 = get_profile("evalai").score(predictions=two, references=gold, jobs=1)
    e1 = r1.per_claim[0].values["evidence_score"]
    assert r2.per_claim[0].values["evidence_score"] == pytest.approx(e1 / 2)
    assert r1.summary["label_accuracy"]["0.3"] == 1.0


def test_metric_hu_meteor_only(files: dict[str, Path]) -> None:
    r = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1, metric="hu-meteor")
    assert set(r.summary) == {"profile", "signature", "n_claims", "questions_only", "answers_only",
                              "answers_only_averitec_tools", "questions_answers"}


def test_signature_fields(files: dict[str, Path]) -> None:
    from averitec_tools.metrics.signature import parse_signature

    r = get_profile("evalai").score(predictions=files["pred_evalai"], references=files["gold_evalai"], jobs=1)
    sig = parse_signature(r.signature)
    assert sig["profile"] == "evalai" and sig["thr"] == "0.2,0.25,0.3(>=)" and sig["norm"] == "pred" and sig["cap"] == "none"
    assert sig["tok"] == "nltk-3.9.1-word_tokenize" and sig["wordnet"].startswith("3.0+sha256.")
    assert r.summary["signature"] == r.signature


def _subset(shared: Path, tmp: Path, n: int) -> dict[str, Path]:
    base = shared / "averitec"
    dev = json.loads((base / "dev.json").read_text(encoding="utf-8"))[:n]
    p24 = [p for p in json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8")) if p["claim_id"] < n]
    p23 = json.loads((base / "baseline_dev_predictions_2023format.json").read_text(encoding="utf-8"))[:n]
    lines = lambda name: (base / "evalai" / name).read_text(encoding="utf-8").splitlines()[:n]  # noqa: E731
    out = {"dev": write_json(tmp / "dev.json", dev), "p24": write_json(tmp / "p24.json", p24), "p23": write_json(tmp / "p23.json", p23)}
    for key, name in (("gold", "averitec_dev_gold.jsonl"), ("e24", "baseline_2024_dev_as_evalai.jsonl"), ("esub", "baseline_submission_dev.jsonl")):
        (tmp / name).write_text("\n".join(lines(name)) + "\n", encoding="utf-8")
        out[key] = tmp / name
    return out


SUBSET = 40


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("profile", "pred", "ref"),
    [("averitec2024", "p24", "dev"), ("averitec2023", "p23", "dev"), ("evalai", "e24", "gold"), ("evalai", "esub", "gold")],
)
def test_equals_reference_implementation_on_subset(shared_data: Path, tmp_path: Path, profile: str, pred: str, ref: str) -> None:
    f = _subset(shared_data, tmp_path, SUBSET)
    ours = get_profile(profile).score(predictions=f[pred], references=f[ref], jobs=2)
    assert_same_figures(ours.summary, run_reference(profile, f[pred], f[ref]))


@pytest.mark.shared_data
def test_2024_published_baseline_numbers(shared_data: Path) -> None:
    base = shared_data / "averitec"
    r = get_profile("averitec2024").score(predictions=base / "baseline_dev_predictions.json", references=base / "dev.json")
    s = r.summary
    assert f"{s['questions_only']:.4f}" == "0.2404"
    assert f"{s['questions_answers']:.4f}" == "0.1855" and str(s["questions_answers"]).startswith("0.1854")
    assert [round(s["averitec_score"][k], 3) for k in ("0.2", "0.25", "0.3")] == [0.186, 0.092, 0.050]
    assert_same_figures(s, RECORDED["averitec2024"])


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("key", "profile", "pred", "ref"),
    [
        ("averitec2023", "averitec2023", "baseline_dev_predictions_2023format.json", "dev.json"),
        ("evalai_baseline_2024", "evalai", "evalai/baseline_2024_dev_as_evalai.jsonl", "evalai/averitec_dev_gold.jsonl"),
        ("evalai_submission_dev", "evalai", "evalai/baseline_submission_dev.jsonl", "evalai/averitec_dev_gold.jsonl"),
    ],
)
def test_full_files_equal_recorded_nltk391_reference(shared_data: Path, key: str, profile: str, pred: str, ref: str) -> None:
    """Recorded with benchmarks/reference_scorer.py under a real NLTK 3.9.1."""
    base = shared_data / "averitec"
    r = get_profile(profile).score(predictions=base / pred, references=base / ref)
    assert_same_figures(r.summary, RECORDED[key])


def test_gold_fixture_is_consistent() -> None:
    assert len(GOLD) == len(PRED_2024)
