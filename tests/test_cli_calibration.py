"""``averitec calibration``: arguments, output and errors (fake profile), plus integration
tests with the real profiles on the shared data."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from _calibration_fake_profile import fake_profile, write  # noqa: F401
from _cli import exit_code, usage_error

from averitec_tools.cli.main import main
from averitec_tools.metrics.brier import brier_score
from averitec_tools.metrics.ece import reliability_diagram
from averitec_tools.metrics.selective import risk_coverage_curve

GOLD = [{"id": i, "label": lab} for i, lab in enumerate(
    ["SUPPORTS", "REFUTES", "NEI", "SUPPORTS", "REFUTES", "SUPPORTS", "NEI", "REFUTES"]
)]
PREDS = [
    {"id": 0, "label": "SUPPORTS", "confidence": 0.95},
    {"id": 1, "label": "REFUTES", "confidence": 0.8},
    {"id": 2, "label": "SUPPORTS", "confidence": 0.8},
    {"id": 3, "label": "SUPPORTS", "confidence": 0.7},
    {"id": 4, "label": "NEI", "confidence": 0.3},
    {"id": 5, "label": "REFUTES", "confidence": 0.65},
    {"id": 6, "label": "NEI", "confidence": 0.55},
    {"id": 7, "label": "REFUTES", "confidence": 0.2},
]


@pytest.fixture
def files(tmp_path: Path, fake_profile: None) -> tuple[str, str]:  # noqa: F811
    return write(tmp_path / "preds.json", PREDS), write(tmp_path / "gold.json", GOLD)


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # exactly one JSON object
    return json.loads(out)


def test_json_headline_numbers(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    report = run_json(capsys, ["calibration", preds, gold, "--profile", "fake", "--json", "--n-resamples", "200"])
    conf = np.array([p["confidence"] for p in PREDS])
    ok = np.array([p["label"] == g["label"] for p, g in zip(PREDS, GOLD, strict=True)])
    assert report["n"] == 8 and report["accuracy"] == pytest.approx(ok.mean())
    assert report["brier"] == pytest.approx(brier_score(confidences=conf, correct=ok))
    d = reliability_diagram(confidences=conf, correct=ok)
    c = risk_coverage_curve(confidences=conf, correct=ok)
    assert report["ece"] == pytest.approx(d.ece) and report["mce"] == pytest.approx(d.mce)
    assert report["aurc"] == pytest.approx(c.aurc) and report["e_aurc"] == pytest.approx(c.e_aurc)
    # Hand check: sorted 0.95✓ | 0.8✓✗ (tied) | 0.7✓ | 0.65✗ | 0.55✓ | 0.3✗ | 0.2✓
    # → risks 0, 1/3 (over 2 items), 1/4, 2/5, 2/6, 3/7, 3/8.
    assert report["aurc"] == pytest.approx((0 + 2 * (1 / 3) + 1 / 4 + 2 / 5 + 2 / 6 + 3 / 7 + 3 / 8) / 8)
    assert report["accuracy"] == 5 / 8
    assert report["selective"] == {"threshold": 0.6, "n_covered": 5, "coverage": 5 / 8,
                                   "accuracy": 0.6, "risk": pytest.approx(0.4)}
    assert report["reliability"]["n_bins"] == 15 and len(report["reliability"]["bins"]) == 15
    assert report["risk_coverage"]["thresholds"][:2] == [0.95, 0.8]
    for key in ("accuracy", "brier", "ece", "mce", "aurc", "e_aurc"):
        ci = report["ci"][key]
        assert ci["low"] <= report[key] + 1e-12 and report[key] - 1e-12 <= ci["high"]
    assert report["abstention"]["class"]["accuracy"] == pytest.approx(ok.mean())
    assert report["abstention"]["abstain"]["n_abstained"] == 2
    assert report["multiclass"] is None
    assert report["signature"].startswith("calibration|profile:fake|")


def test_text_output_and_determinism(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    argv = ["calibration", preds, gold, "--profile", "fake", "--n-resamples", "100", "--seed", "7"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "ECE (15 uniform)" in first and "AURC" in first and "95% CI" in first
    assert "selective @ τ=0.6: coverage 0.6250, accuracy 0.6000" in first
    assert main(argv) == 0
    assert capsys.readouterr().out == first


def test_options(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    report = run_json(capsys, [
        "calibration", preds, gold, "--profile", "fake", "--json", "--n-bins", "4",
        "--strategy", "quantile", "--threshold", "0.75", "--target-risk", "0.0",
        "--target-coverage", "0.5", "--n-resamples", "0",
    ])
    assert report["reliability"]["strategy"] == "quantile" and report["reliability"]["n_bins"] == 4
    assert report["selective"]["n_covered"] == 3
    assert report["coverage_at_risk"]["coverage"] == 1 / 8
    assert report["risk_at_coverage"]["coverage"] == 0.5
    assert report["risk_at_coverage"]["risk"] == 0.25
    assert report["ci"] is None


def test_abstention_mode_excludes_abstentions(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    report = run_json(capsys, ["calibration", preds, gold, "--profile", "fake", "--json",
                               "--abstention-mode", "abstain", "--n-resamples", "0"])
    assert report["n"] == 6 and report["n_abstentions_excluded"] == 2
    custom = run_json(capsys, ["calibration", preds, gold, "--profile", "fake", "--json",
                               "--abstention-mode", "abstain", "--abstain-label", "REFUTES",
                               "--n-resamples", "0"])
    assert custom["n"] == 5 and custom["abstention"]["abstain_labels"] == ["REFUTES"]


def test_plots_are_written(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    out = tmp_path / "plots"
    report = run_json(capsys, ["calibration", preds, gold, "--profile", "fake", "--json",
                               "--plot", str(out), "--n-resamples", "0"])
    for name in ("reliability_diagram.png", "risk_coverage.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert sorted(p.name for p in out.iterdir()) == ["reliability_diagram.png", "risk_coverage.png"]
    assert report["plots"]["risk_coverage"].endswith("risk_coverage.png")


def test_multiclass_probabilities(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    preds = [
        {"id": 0, "label": "SUPPORTS", "confidence": 0.7, "probabilities": {"SUPPORTS": 0.7, "REFUTES": 0.2, "NEI": 0.1}},
        {"id": 1, "label": "NEI", "confidence": 0.5, "probabilities": {"SUPPORTS": 0.3, "NEI": 0.5, "REFUTES": 0.2}},
    ]
    gold = [{"id": 0, "label": "SUPPORTS"}, {"id": 1, "label": "REFUTES"}]
    p, g = write(tmp_path / "p.json", preds), write(tmp_path / "g.json", gold)
    report = run_json(capsys, ["calibration", p, g, "--profile", "fake", "--json", "--n-resamples", "0"])
    mc = report["multiclass"]
    # (0.09+0.04+0.01) and (0.09+0.64+0.25) → mean 0.56
    assert mc["classes"] == ["SUPPORTS", "REFUTES", "NEI"]
    assert mc["brier"] == pytest.approx(0.56) and mc["brier_scaled_by_half"] == pytest.approx(0.28)
    preds[1]["probabilities"] = {"SUPPORTS": 0.9, "NEI": 0.5}
    p = write(tmp_path / "p.json", preds)
    assert main(["calibration", p, g, "--profile", "fake", "--n-resamples", "0"]) == 2
    assert "claim 1: probabilities must be in [0, 1] and sum to 1" in capsys.readouterr().err
    preds[1]["probabilities"] = {"SUPPORTS": "lots", "NEI": 0.5}
    p = write(tmp_path / "p.json", preds)
    assert main(["calibration", p, g, "--profile", "fake", "--n-resamples", "0"]) == 2
    assert "claim 1: probabilities must be numbers" in capsys.readouterr().err


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_missing_confidence_names_the_claim(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    preds = [dict(p) for p in PREDS]
    del preds[3]["confidence"]
    del preds[5]["confidence"]
    p, g = write(tmp_path / "p.json", preds), write(tmp_path / "g.json", GOLD)
    assert main(["calibration", p, g, "--profile", "fake"]) == 2
    err = one_error_line(capsys)
    assert "claim 3 has no 'confidence' (2 claims lack one)" in err and "--drop-missing-confidence" in err
    report = run_json(capsys, ["calibration", p, g, "--profile", "fake", "--json",
                               "--drop-missing-confidence", "--n-resamples", "0"])
    assert report["n"] == 6 and report["n_missing_confidence_dropped"] == 2


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda ps: [{k: v for k, v in p.items() if k != "confidence"} for p in ps], "no claim has a 'confidence'"),
        (lambda ps: [{**p, "confidence": 1.5} if p["id"] == 2 else p for p in ps], "claim 2: confidence 1.5 is not"),
        (lambda ps: [{**p, "confidence": "high"} if p["id"] == 4 else p for p in ps], "claim 4: confidence 'high'"),
    ],
)
def test_bad_confidences(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str], mutate, message: str) -> None:  # noqa: F811
    p, g = write(tmp_path / "p.json", mutate(PREDS)), write(tmp_path / "g.json", GOLD)
    assert main(["calibration", p, g, "--profile", "fake"]) == 2
    assert message in one_error_line(capsys)


def test_all_abstain_in_abstain_mode(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    preds = [{**p, "label": "NEI"} for p in PREDS]
    p, g = write(tmp_path / "p.json", preds), write(tmp_path / "g.json", GOLD)
    assert main(["calibration", p, g, "--profile", "fake", "--abstention-mode", "abstain"]) == 2
    assert "every prediction is an abstain label" in one_error_line(capsys)
    report = run_json(capsys, ["calibration", p, g, "--profile", "fake", "--json", "--n-resamples", "0"])
    assert report["abstention"]["abstain"]["coverage"] == 0.0
    assert report["abstention"]["abstain"]["accuracy"] is None


def test_registry_metrics_by_their_string_form(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    """``--metric SPEC`` goes through the metric registry; values derived by hand on PREDS."""
    preds, gold = files
    report = run_json(capsys, ["calibration", preds, gold, "--profile", "fake", "--json", "--n-resamples", "0",
                               "--metric", "risk-at-coverage(coverage=0.5)", "--metric", "ece(n_bins=2)",
                               "--metric", "brier"])
    # Sorted 0.95✓ 0.8✓ 0.8✗ 0.7✓ | 0.65✗ 0.55✓ 0.3✗ 0.2✓: the top half holds one error.
    assert report["metrics"]["risk-at-coverage(coverage=0.5)"] == pytest.approx(1 / 4)
    # Bins (0, .5]: mean conf .25, acc .5 (2 claims); (.5, 1]: mean 4.45/6, acc 4/6 (6 claims).
    assert report["metrics"]["ece(n_bins=2)"] == pytest.approx(2 / 8 * 0.25 + 6 / 8 * abs(4.45 / 6 - 4 / 6))
    assert report["metrics"]["brier"] == pytest.approx(report["brier"])
    assert main(["calibration", preds, gold, "--profile", "fake", "--n-resamples", "0", "--metric", "ece(n_bins=2)"]) == 0
    assert "ece(n_bins=2)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--profile", "fevr"], "did you mean: fever"),
        (["--metric", "brier-multiclass"], "--metric brier-multiclass: not a metric of confidence against correctness"),
        (["--metric", "ece(n_bin=3)"], "--metric ece(n_bin=3): unknown parameter of metric 'ece' 'n_bin' (did you mean: n_bins?)"),
        (["--metric", "eec"], "--metric eec: unknown metric 'eec' (did you mean: ece"),
    ],
)
def test_bad_arguments(files: tuple[str, str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    preds, gold = files
    argv = ["calibration", preds, gold, "--profile", "fake", *extra]
    assert main(argv) == 2
    assert message in one_error_line(capsys)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--n-bins", "0"], "argument --n-bins: expected a whole number of at least 1, got '0'"),
        (["--threshold", "1.5"], "argument --threshold: expected a number in [0, 1], got '1.5'"),
        (["--target-coverage", "0"], "argument --target-coverage: expected a number in (0, 1], got '0'"),
        (["--n-resamples", "-1"], "argument --n-resamples: expected a whole number of at least 0, got '-1'"),
        (["--confidence-level", "1"], "argument --confidence-level: expected a number in (0, 1), got '1'"),
    ],
)
def test_out_of_range_options_are_usage_errors(files: tuple[str, str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    preds, gold = files
    assert exit_code(main, ["calibration", preds, gold, "--profile", "fake", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and usage_error(err).endswith(message)


def test_argparse_errors(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    with pytest.raises(SystemExit) as exc:
        main(["calibration", preds, gold, "--strategy", "equal"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["calibration", preds])


def test_missing_file(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", GOLD)
    assert main(["calibration", str(tmp_path / "nope.json"), gold, "--profile", "fake"]) == 2
    assert "nope.json: no such file" in one_error_line(capsys)


def test_plot_target_is_a_file(files: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds, gold = files
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert main(["calibration", preds, gold, "--profile", "fake", "--plot", str(target), "--n-resamples", "0"]) == 2
    assert "is not a directory" in one_error_line(capsys)


# --- integration with the real profiles on the shared data --------------------------------


def synthetic_confidence(key: object, correct: bool) -> float:
    """Deterministic, informative but imperfect confidence for a claim."""
    h = int(hashlib.sha256(str(key).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return round(0.35 + 0.6 * h if correct else 0.3 + 0.5 * h, 4)


@pytest.mark.shared_data
def test_fever_profile_end_to_end(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = {}
    with (shared_data / "fever" / "paper_dev.jsonl").open() as fh:
        for line in fh:
            obj = json.loads(line)
            gold[obj["id"]] = obj["label"]
    lines = []
    with (shared_data / "fever" / "paper_dev_sample_predictions.jsonl").open() as fh:
        for line in fh:
            obj = json.loads(line)
            obj["confidence"] = synthetic_confidence(obj["id"], obj["predicted_label"] == gold[obj["id"]])
            lines.append(json.dumps(obj))
    preds = tmp_path / "fever_preds.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    report = run_json(capsys, [
        "calibration", str(preds), str(shared_data / "fever" / "paper_dev.jsonl"), "--profile", "fever",
        "--json", "--n-resamples", "100", "--plot", str(tmp_path / "plots"),
    ])
    assert report["n"] == 9999
    # The fever profile's own label accuracy must equal ours (pred == gold).
    assert 0.5 < report["accuracy"] < 0.95
    assert 0.0 < report["e_aurc"] < report["aurc"] < 1.0 - report["accuracy"]
    assert (tmp_path / "plots" / "reliability_diagram.png").stat().st_size > 5000


@pytest.mark.shared_data
def test_averitec2024_profile_end_to_end(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dev = json.loads((shared_data / "averitec" / "dev.json").read_text())
    preds = json.loads((shared_data / "averitec" / "baseline_dev_predictions.json").read_text())
    for i, item in enumerate(preds):
        item["confidence"] = synthetic_confidence(i, item["pred_label"] == dev[i]["label"])
    path = write(tmp_path / "baseline_conf.json", preds)
    report = run_json(capsys, [
        "calibration", path, str(shared_data / "averitec" / "dev.json"), "--profile", "averitec2024",
        "--json", "--n-resamples", "100",
    ])
    ok = np.array([p["pred_label"] == d["label"] for p, d in zip(preds, dev, strict=True)])
    conf = np.array([p["confidence"] for p in preds])
    assert report["n"] == 500
    assert report["accuracy"] == pytest.approx(ok.mean())
    assert report["brier"] == pytest.approx(brier_score(confidences=conf, correct=ok))
    assert report["aurc"] == pytest.approx(risk_coverage_curve(confidences=conf, correct=ok).aurc)
