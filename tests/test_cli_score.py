"""``averitec score``: arguments, JSON/table output, --per-claim, errors (exit 2, one line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _score_fixtures import make_files

from averitec_tools.cli.main import main


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["score", *argv, "--json", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def test_json_keys_2024(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    out = run_json(capsys, str(files["pred2024"]), str(files["gold"]))
    assert list(out) == ["profile", "signature", "n_claims", "questions_only", "answers_only", "answers_only_averitec_tools",
                         "questions_answers",
                         "veracity", "averitec_score", "by_claim_type"]
    assert out["profile"] == "averitec2024"
    assert set(out["veracity"]) == {"accuracy", "macro_f1", "f1"}
    assert list(out["averitec_score"]) == ["0.1", "0.2", "0.25", "0.3", "0.4", "0.5"]
    assert list(out["by_claim_type"]) == ["0.25"]


def test_json_keys_2023(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    out = run_json(capsys, str(files["pred2023"]), str(files["gold"]), "--profile", "averitec2023")
    assert {"justification", "justification_score", "veracity", "averitec_score", "questions_only", "questions_answers"} <= set(out)
    assert "answers_only" not in out
    assert list(out["by_claim_type"]) == ["0.2", "0.3"]


def test_json_keys_evalai(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    out = run_json(capsys, str(files["pred_evalai"]), str(files["gold_evalai"]), "--profile", "evalai")
    assert list(out["label_accuracy"]) == ["0.2", "0.25", "0.3"] and list(out["evidence_meteor"]) == ["0.2", "0.25", "0.3"]


def test_metric_hu_meteor(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    out = run_json(capsys, str(files["pred2024"]), str(files["gold"]), "--metric", "hu-meteor")
    assert "veracity" not in out and "questions_answers" in out


def test_table_and_signature(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "questions answers" in out and "averitec score / 0.25" in out
    assert "signature: profile:averitec2024|metric:hu-meteor|tok:nltk-3.9.1-word_tokenize" in out


def test_table_at_80_columns_explains_our_own_rows(capsys: pytest.CaptureFixture[str], files: dict[str, Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "…" not in out
    assert "answers only averitec tools: this package's answer-only score" in " ".join(out.split())


def test_wide_tables_become_one_block_per_row() -> None:
    """A leaderboard-wide table that cannot fit 80 columns: every cell whole, row by row."""
    import io

    from rich.console import Console

    from averitec_tools.cli._tables import print_rows

    header = ["Rank", "Team", "System", *(f"metric {i}" for i in range(8)), "95% CI"]
    rows = [["1", "blue", "a long system name " * 3, *(f"0.{i}123" for i in range(8)), "[0.0600, 0.2800]"]]
    buffer = io.StringIO()
    print_rows(title="board", header=header, rows=rows, console=Console(file=buffer, width=80, color_system=None))
    out = buffer.getvalue()
    assert "…" not in out and "95% CI    [0.0600, 0.2800]" in out and "metric 7  0.7123" in out
    buffer = io.StringIO()
    print_rows(title="board", header=header[:4], rows=[r[:4] for r in rows], console=Console(file=buffer, width=80))
    assert "┃ Rank ┃" in buffer.getvalue()  # fits: a table


def test_per_claim_file(capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "out" / "claims.jsonl"
    summary = run_json(capsys, str(files["pred2024"]), str(files["gold"]), "--per-claim", str(target))
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["claim_id"] for r in rows] == [0, 1, 2]
    assert rows[0]["confidence"] == 0.8 and rows[0]["gold_label"] == "Refuted"
    assert sum(r["questions_answers"] for r in rows) / 3 == pytest.approx(summary["questions_answers"])


def test_identical_output_whatever_jobs(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    one = run_json(capsys, str(files["pred2024"]), str(files["gold"]))
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--json", "--jobs", "2"]) == 0
    assert json.loads(capsys.readouterr().out) == one


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--profile", "averitec2025"], "unknown scoring profile 'averitec2025' (did you mean: averitec2024"),
        (["--metric", "bleu"], "profile 'averitec2024': --metric: unknown value 'bleu' (choose one of: all, hu-meteor)"),
        (["--max-evidence", "3"], "profile 'averitec2024': --max-evidence: not an option of this profile (it takes "
                                  "--no-download, --metric, --lenient, --evidence-scorer)"),
    ],
)
def test_argument_errors(capsys: pytest.CaptureFixture[str], files: dict[str, Path], extra: list[str], needle: str) -> None:
    assert main(["score", str(files["pred2024"]), str(files["gold"]), *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert needle in captured.err and captured.err.count("\n") == 1
    assert captured.err.startswith("averitec score: error: ")
    with pytest.raises(SystemExit) as info:  # a number out of range: refused when parsed (issue 39)
        main(["score", str(files["pred2024"]), str(files["gold"]), "--jobs", "0"])
    assert info.value.code == 2 and "--jobs: expected a whole number of at least 1" in capsys.readouterr().err


def test_missing_file_and_wrong_format(capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    assert main(["score", str(tmp_path / "nope.json"), str(files["gold"])]) == 2
    assert "nope.json: no such file" in capsys.readouterr().err
    assert main(["score", str(files["pred_evalai"]), str(files["gold"]), "--json"]) == 2
    err = capsys.readouterr().err
    assert "looks like the EvalAI line format" in err and "Traceback" not in err


def test_no_partial_per_claim_file_on_error(capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "claims.jsonl"
    assert main(["score", str(files["pred_evalai"]), str(files["gold"]), "--per-claim", str(target)]) == 2
    assert not target.exists() and not list(tmp_path.glob(".claims.jsonl*"))


def test_missing_positional_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["score", "only-one.json"])
    assert info.value.code == 2


def test_fever_dispatch_rejects_averitec_options(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever", "--metric", "hu-meteor"]) == 2
    assert "profile 'fever': --metric: not an option of this profile" in capsys.readouterr().err


@pytest.mark.shared_data
def test_fever_profile_dispatch(capsys: pytest.CaptureFixture[str], shared_data: Path) -> None:
    fever = shared_data / "fever"
    out = run_json(capsys, str(fever / "paper_dev_sample_predictions.jsonl"), str(fever / "paper_dev.jsonl"),
                   "--profile", "fever", "--max-evidence", "5")
    assert out["profile"] == "fever" and {"strict_score", "label_accuracy", "precision", "recall", "f1"} <= set(out)


def test_bundled_demo_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """The README's expected demo figures (first 50 dev claims, official baseline)."""
    root = Path(__file__).resolve().parents[1] / "examples"
    out = run_json(capsys, str(root / "demo_predictions.json"), str(root / "demo_gold.json"), "--profile", "averitec2024")
    assert out["n_claims"] == 50
    assert round(out["questions_only"], 4) == 0.2575 and round(out["questions_answers"], 4) == 0.2128
    assert out["veracity"]["accuracy"] == pytest.approx(0.52)
    assert [out["averitec_score"][k] for k in ("0.2", "0.25", "0.3")] == pytest.approx([0.26, 0.16, 0.08])
