"""``averitec compare``: arguments, output and errors (fake profile), plus integration tests
with the real profiles on the shared data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _calibration_fake_profile import LABELS, fake_profile, write  # noqa: F401
from _cli import exit_code, usage_error
from sklearn.metrics import f1_score

from averitec_tools.cli.main import main

RNG = np.random.default_rng(0)
N = 120
GOLD_LABELS = [LABELS[i] for i in RNG.integers(0, 3, N)]
GOLD = [{"id": f"c{i}", "label": lab} for i, lab in enumerate(GOLD_LABELS)]


def system(accuracy: float, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i, g in enumerate(GOLD_LABELS):
        label = g if rng.random() < accuracy else LABELS[(LABELS.index(g) + 1) % 3]
        out.append({"id": f"c{i}", "label": label, "score": float(label == g) * rng.random()})
    return out


A = system(0.85, 1)
B = system(0.55, 2)


@pytest.fixture
def files(tmp_path: Path, fake_profile: None) -> tuple[str, str, str]:  # noqa: F811
    return (write(tmp_path / "a.json", A), write(tmp_path / "b.json", B), write(tmp_path / "gold.json", GOLD))


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_json_for_every_metric(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, gold = files
    report = run_json(capsys, ["compare", a, b, gold, "--profile", "fake", "--json", "--n-resamples", "500"])
    assert report["n"] == N and report["test"] == "bootstrap"
    assert list(report["metrics"]) == ["score", "label_accuracy", "accuracy", "macro_f1"]
    acc = report["metrics"]["accuracy"]
    acc_a = np.mean([p["label"] == g for p, g in zip(A, GOLD_LABELS, strict=True)])
    acc_b = np.mean([p["label"] == g for p, g in zip(B, GOLD_LABELS, strict=True)])
    assert acc["a"] == pytest.approx(acc_a) and acc["b"] == pytest.approx(acc_b)
    assert acc["difference"] == pytest.approx(acc_a - acc_b)
    assert acc["significant"] is True and acc["p_value"] < 0.01 and acc["ci_low"] > 0
    assert acc["effect_size_kind"] == "cohens_dz" and acc["effect_size"] > 0
    f1 = report["metrics"]["macro_f1"]
    assert f1["a"] == pytest.approx(f1_score(GOLD_LABELS, [p["label"] for p in A], labels=list(LABELS), average="macro"))
    assert f1["effect_size_kind"] == "bootstrap_standardized"
    score = report["metrics"]["score"]
    assert score["a"] == pytest.approx(np.mean([p["score"] for p in A]))
    assert report["skipped"] == {}
    assert report["signature"].startswith("compare|profile:fake|test:bootstrap|resamples:500")


def test_identical_systems(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, _, gold = files
    report = run_json(capsys, ["compare", a, a, gold, "--profile", "fake", "--json", "--n-resamples", "200"])
    for result in report["metrics"].values():
        assert result["difference"] == 0.0 and result["p_value"] == 1.0 and not result["significant"]


def test_text_table(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str],
                    monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, gold = files
    monkeypatch.setenv("COLUMNS", "120")  # wide enough for the table (narrower: one block per metric)
    assert main(["compare", a, b, gold, "--profile", "fake", "--n-resamples", "200", "--metric", "accuracy"]) == 0
    out = capsys.readouterr().out
    cells = [[c.strip() for c in line.strip("│┃ ").split("│" if "│" in line else "┃")] for line in out.splitlines()
             if line.startswith(("│", "┃"))]
    header, row = cells
    assert header[:4] == ["metric", "A", "B", "A−B"]
    assert row[0] == "accuracy" and row[-1] == "yes"
    assert "signature: compare|profile:fake" in out


def test_randomization_and_options(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, gold = files
    argv = ["compare", a, b, gold, "--profile", "fake", "--json", "--test", "randomization",
            "--n-resamples", "300", "--seed", "5", "--metric", "macro_f1", "--metric", "score",
            "--alpha", "0.01", "--confidence-level", "0.9", "--ci-method", "BCa"]
    first = run_json(capsys, argv)
    assert list(first["metrics"]) == ["macro_f1", "score"]
    r = first["metrics"]["macro_f1"]
    assert r["test"] == "randomization" and r["alpha"] == 0.01 and r["confidence_level"] == 0.9
    assert r["ci_method"] == "BCa"
    assert 1 / 301 <= r["p_value"] <= 1.0
    assert run_json(capsys, argv) == first  # seeded
    # a label metric by its parse form (metrics/keys.py) is the same comparison, under its JSON key
    by_parse_form = run_json(capsys, [x if x != "macro_f1" else "label-macro-f1" for x in argv])
    assert by_parse_form == first


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_unknown_metric_suggests(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, gold = files
    assert main(["compare", a, b, gold, "--profile", "fake", "--metric", "acuracy"]) == 2
    assert "did you mean: accuracy" in one_error_line(capsys)


def test_misaligned_claims(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", GOLD)
    a = write(tmp_path / "a.json", A)
    b = write(tmp_path / "b.json", B[:-1])
    assert main(["compare", a, b, gold, "--profile", "fake"]) == 2
    assert f"claim 'c{N - 1}' (present in {a}) is missing" in one_error_line(capsys)
    assert main(["compare", b, a, gold, "--profile", "fake"]) == 2
    assert f"{b}: claim 'c{N - 1}'" in one_error_line(capsys)


def test_duplicate_claim(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", GOLD)
    a = write(tmp_path / "a.json", [*A, A[0]])
    assert main(["compare", a, a, gold, "--profile", "fake"]) == 2
    assert "claim 'c0' appears twice" in one_error_line(capsys)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--profile", "averitec2042"], "unknown scoring profile 'averitec2042'"),
    ],
)
def test_bad_arguments(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    a, b, gold = files
    assert main(["compare", a, b, gold, "--profile", "fake", *extra]) == 2
    assert message in one_error_line(capsys)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--n-resamples", "0"], "argument --n-resamples: expected a whole number of at least 1, got '0'"),
        (["--alpha", "1"], "argument --alpha: expected a number in (0, 1), got '1'"),
        (["--confidence-level", "0"], "argument --confidence-level: expected a number in (0, 1), got '0'"),
    ],
)
def test_out_of_range_options_are_usage_errors(files: tuple[str, str, str], capsys: pytest.CaptureFixture[str], extra: list[str], message: str) -> None:
    a, b, gold = files
    assert exit_code(main, ["compare", a, b, gold, "--profile", "fake", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and usage_error(err).endswith(message)


def test_argparse_errors(files: tuple[str, str, str]) -> None:
    a, b, gold = files
    with pytest.raises(SystemExit) as exc:
        main(["compare", a, b, gold, "--test", "t-test"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["compare", a, b])


# --- integration with the real profiles on the shared data --------------------------------


@pytest.mark.shared_data
def test_averitec2024_baseline_vs_perturbed(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = json.loads((shared_data / "averitec" / "baseline_dev_predictions.json").read_text())
    worse = json.loads(json.dumps(preds))
    for i, item in enumerate(worse):
        if i % 3 == 0:  # a third of the verdicts flipped to one label: clearly worse accuracy
            item["pred_label"] = "Conflicting Evidence/Cherrypicking"
    a = write(tmp_path / "baseline.json", preds)
    b = write(tmp_path / "perturbed.json", worse)
    report = run_json(capsys, ["compare", a, b, str(shared_data / "averitec" / "dev.json"),
                               "--profile", "averitec2024", "--json", "--n-resamples", "300"])
    assert report["n"] == 500
    assert report["metrics"]["accuracy"]["difference"] > 0
    assert report["metrics"]["accuracy"]["significant"] is True
    # Question-only scores do not depend on the verdict: no difference at all.
    same = [m for m in report["metrics"].values() if m["difference"] == 0.0]
    assert same and all(m["p_value"] == 1.0 for m in same)


@pytest.mark.shared_data
def test_fever_profile(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (shared_data / "fever" / "paper_dev_sample_predictions.jsonl").read_text().splitlines()
    flipped = []
    for i, line in enumerate(lines):
        obj = json.loads(line)
        if i % 10 == 0:
            obj["predicted_label"] = "REFUTES"
        flipped.append(json.dumps(obj))
    b = tmp_path / "b.jsonl"
    b.write_text("\n".join(flipped) + "\n")
    report = run_json(capsys, [
        "compare", str(shared_data / "fever" / "paper_dev_sample_predictions.jsonl"), str(b),
        str(shared_data / "fever" / "paper_dev.jsonl"), "--profile", "fever", "--json",
        "--n-resamples", "200", "--metric", "accuracy", "--metric", "strict_score",
    ])
    assert report["n"] == 9999
    assert set(report["metrics"]) == {"accuracy", "strict_score"}
    assert report["metrics"]["accuracy"]["significant"] is True


def test_non_finite_values_are_skipped_not_tested(tmp_path: Path, fake_profile: None, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    gold = write(tmp_path / "g.json", GOLD)
    a = write(tmp_path / "a.json", A)
    bad = [dict(p) for p in B]
    bad[3]["score"] = float("nan")
    b = write(tmp_path / "b.json", bad)
    report = run_json(capsys, ["compare", a, b, gold, "--profile", "fake", "--json", "--n-resamples", "100"])
    assert "score" not in report["metrics"]
    assert report["skipped"] == {"score": "claim 'c3' has a non-finite per-claim value"}
    assert main(["compare", a, b, gold, "--profile", "fake", "--metric", "score"]) == 2
    assert "metric 'score' cannot be compared: claim 'c3'" in one_error_line(capsys)
