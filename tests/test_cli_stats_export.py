"""``averitec stats`` and ``averitec export-hf``: arguments, output, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.cli.main import main

CLAIMS = [
    {"claim": "a", "label": "Refuted", "claim_date": "01-10-2020", "claim_types": ["Numerical Claim"],
     "questions": [{"question": "q", "answers": [{"answer": "x", "answer_type": "Extractive", "source_url": "https://a.org"}]}]},
    {"claim": "b", "label": "Supported", "claim_date": "02-10-2020",
     "questions": [{"question": "q1", "answers": [{"answer": "No", "answer_type": "Boolean", "boolean_explanation": "e"}]},
                   {"question": "q2", "answers": [{"answer": "y", "answer_type": "Unanswerable"}]}]},
]


@pytest.fixture(autouse=True)
def _isolated_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "data" / "averitec"
    d.mkdir(parents=True)
    (d / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    return tmp_path / "data"


def test_stats_json(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "averitec", "--split", "dev", "--data-dir", str(data_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "averitec/dev"
    assert (out["n_claims"], out["n_questions"], out["n_answers"]) == (2, 3, 3)
    assert out["questions_per_claim"] == 1.5 and out["answers_per_question"] == 1.0
    assert out["answer_types"] == pytest.approx({"Extractive": 1 / 3, "Boolean": 1 / 3, "Unanswerable": 1 / 3})
    assert out["unanswerable_questions"] == pytest.approx(1 / 3)
    assert out["labels"] == {"Refuted": 1, "Supported": 1}
    assert out["paper_whole_dataset"]["questions_per_claim"] == 2.60


def test_stats_table_shows_paper_column(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "averitec/dev", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "questions_per_claim" in out and "paper" in out and "2.6" in out


def test_stats_table_readable_at_80_columns(data_dir: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure printed whole (rich used to cut them to "0.…"), groups named once."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["stats", "averitec/dev", "--data-dir", str(data_dir), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert main(["stats", "averitec/dev", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    for share in stats["answer_types"].values():
        assert f"{share:.4g}" in out
    assert "answer_types" in out and "  Unanswerable" in out and "2020-10-01 .. 2020-10-02" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stats", "averitek", "--split", "dev"], "unknown dataset 'averitek/dev' (did you mean: averitec/dev"),
        (["stats", "averitec"], "needs a split"),
        (["stats", "averitec", "--split", "train"], "no train.json for averitec/train"),
        (["export-hf", "averitec", "--split", "nope", "--out", "x"], "averitec has no split 'nope'"),
    ],
)
def test_errors(data_dir: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_export_hf_json_and_round_trip(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import datasets

    out_dir = tmp_path / "hf"
    assert main(["export-hf", "averitec", "--split", "dev", "--data-dir", str(data_dir), "--out", str(out_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_rows"] == 2 and out["dataset"] == "averitec/dev" and len(out["shards"]) == 1
    ds = datasets.load_dataset(str(out_dir), split="dev")
    assert ds["claim"] == ["a", "b"]
    assert ds[1]["questions"][0]["answers"][0]["boolean_explanation"] == "e"


def test_export_hf_text_output_and_required_out(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export-hf", "averitec/dev", "--data-dir", str(data_dir), "--out", str(tmp_path / "o")]) == 0
    assert "wrote 2 rows of averitec/dev" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["export-hf", "averitec/dev"])
    assert exc.value.code == 2


@pytest.mark.parametrize(
    ("name", "rows"),
    [
        ("averitec", [{"claim_id": 0, "claim": "a", "pred_label": "Refuted", "evidence": []}]),
        ("fever/paper_dev", [{"id": 1, "predicted_label": "SUPPORTS", "predicted_evidence": []}]),
        ("vitaminc", [{"claim": "c", "evidence": "e", "predicted_label": "SUPPORTS"}]),
    ],
)
def test_predictions_file_is_not_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, rows: list) -> None:
    """Issue 12: a predictions file passed as the dataset is refused, saying what it looks like."""
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    split = [] if "/" in name else ["--split", "dev"]
    for argv in (["stats", name, *split, "--data-dir", str(preds)],
                 ["export-hf", name, *split, "--data-dir", str(preds), "--out", str(tmp_path / "hf")]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and len(err.strip().splitlines()) == 1
        assert "looks like a predictions file" in err and "preds.jsonl" in err
    assert not (tmp_path / "hf").exists()


def test_hub_unreachable_fails_fast_with_the_fix(tmp_path: Path, capsys, monkeypatch) -> None:
    """Issue 12: no data dir and no network: one line naming AVERITEC_DATA_DIR, no retries."""
    from averitec_tools.loaders import base

    # the hub is on (TRANSFORMERS_OFFLINE, set for the whole suite, disables it as huggingface_hub reads it)
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "AVERITEC_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(base, "hub_reachable", lambda timeout=3.0: False)
    assert main(["stats", "averitec", "--split", "dev"]) == 2
    err = capsys.readouterr().err
    assert "hub is unreachable" in err and "AVERITEC_DATA_DIR" in err and "--data-dir" in err
