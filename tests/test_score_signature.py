"""Signature strings: every field present, round trip through parse_signature."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.metrics.signature import Signature, parse_signature


def test_render_and_parse() -> None:
    sig = Signature(
        profile="averitec2024",
        metric="hu-meteor",
        tokenizer="nltk-3.9.1-word_tokenize",
        wordnet="3.0+sha256.0123456789ab",
        thresholds=(0.1, 0.25),
        comparison=">",
        normalisation="gold",
        evidence_cap=10,
        version="0.1.0",
    )
    text = str(sig)
    assert text == (
        "profile:averitec2024|metric:hu-meteor|tok:nltk-3.9.1-word_tokenize|stem:porter-nltk|"
        "wordnet:3.0+sha256.0123456789ab|thr:0.1,0.25(>)|norm:gold|cap:10|version:0.1.0"
    )
    fields = parse_signature(text)
    assert list(fields) == ["profile", "metric", "tok", "stem", "wordnet", "thr", "norm", "cap", "version"]


def test_no_cap_and_bad_field() -> None:
    sig = Signature(profile="evalai", metric="hu-meteor", tokenizer="t", wordnet="w", thresholds=(0.2,),
                    comparison=">=", normalisation="pred", evidence_cap=None, version="v")
    assert parse_signature(sig.render())["cap"] == "none"
    with pytest.raises(ValueError):
        parse_signature("profile:x|garbage")


def _fever_files(tmp: Path) -> tuple[Path, Path]:
    gold = tmp / "fever_gold.jsonl"
    gold.write_text(json.dumps({"id": 1, "verifiable": "VERIFIABLE", "label": "REFUTES", "claim": "c",
                                "evidence": [[[0, 0, "P", 3]]]}) + "\n", encoding="utf-8")
    pred = tmp / "fever_pred.jsonl"
    pred.write_text(json.dumps({"id": 1, "predicted_label": "REFUTES", "predicted_evidence": [["P", 3]]}) + "\n",
                    encoding="utf-8")
    return pred, gold


def _printed_signatures(tmp: Path) -> dict[str, str]:
    """One signature of every kind the package prints, computed for real on tiny files."""
    from _score_fixtures import make_files

    from averitec_tools.baselines.r2vc.experiments.tables import signature as paper_table_signature
    from averitec_tools.scoring.calibration import calibration_report
    from averitec_tools.scoring.compare import compare_submissions
    from averitec_tools.scoring.profiles import get_profile
    from averitec_tools.scoring.subset import score_subset

    files = make_files(tmp)
    fever_pred, fever_gold = _fever_files(tmp)
    demo = Path(__file__).resolve().parents[1] / "examples"
    two = tmp / "two.json"
    two.write_text(json.dumps(json.loads(files["pred2024"].read_text(encoding="utf-8"))[:2]), encoding="utf-8")
    score = {
        "averitec2024": get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1),
        "averitec2023": get_profile("averitec2023").score(predictions=files["pred2023"], references=files["gold"],
                                                          jobs=1, lenient=True),
        "evalai": get_profile("evalai").score(predictions=files["pred_evalai"], references=files["gold_evalai"], jobs=1),
        "fever": get_profile("fever").score(predictions=fever_pred, references=fever_gold, max_evidence=None),
        "subset": score_subset(get_profile("averitec2024"), predictions=two, references=files["gold"], jobs=1),
    }
    out = {name: result.signature for name, result in score.items()}
    out["calibration"] = calibration_report(predictions=demo / "demo_predictions_confidence.json",
                                            references=demo / "demo_gold.json", n_resamples=0).signature
    out["compare"] = compare_submissions(a=demo / "demo_predictions.json", b=demo / "demo_predictions_confidence.json",
                                         references=demo / "demo_gold.json", n_resamples=5).signature
    out["r2vc-paper-table"] = paper_table_signature()
    return out


def test_every_printed_signature_round_trips(tmp_path: Path) -> None:
    """fever8's (a judge server is needed) round-trips in tests/test_fever8_ev2r.py."""
    signatures = _printed_signatures(tmp_path)
    assert set(signatures) == {"averitec2024", "averitec2023", "evalai", "fever", "subset", "calibration", "compare",
                               "r2vc-paper-table"}
    heads = {}
    for kind, text in signatures.items():
        parsed = parse_signature(text)
        assert parsed.render() == text == str(parsed), kind
        assert parsed["version"], kind
        heads[kind] = parsed.head
    assert heads == {"averitec2024": None, "averitec2023": None, "evalai": None, "fever": None, "subset": None,
                     "calibration": "calibration", "compare": "compare", "r2vc-paper-table": "r2vc-paper-table"}
    assert parse_signature(signatures["subset"])["subset"] == "2/3"
    assert parse_signature(signatures["averitec2023"])["mode"] == "lenient"
    assert parse_signature(signatures["calibration"])["profile"] == "averitec2024"


def test_judge_agreement_form_and_bad_signatures() -> None:
    text = "report:judge-agreement|metric:ev2r-qa|judges:a,b|thr:0.5(>)|version:0.1.0"
    parsed = parse_signature(text)
    assert parsed.head is None and parsed["report"] == "judge-agreement" and parsed.render() == text
    with pytest.raises(ValueError, match="given twice"):
        parse_signature("profile:a|profile:b")
    with pytest.raises(ValueError, match="not a signature field"):
        parse_signature("profile:a|compare")  # a bare word only leads
    with pytest.raises(ValueError, match="not a signature field"):
        parse_signature("Calibration report|profile:a")
