"""``averitec baseline r2vc`` / ``r2vc-calibrate``: arguments, --json, errors, resume, scoring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.baselines._run.sidecar import sidecar_path
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.cli.main import main
from tests._cli import exit_code, usage_error
from tests._r2vc_helpers import save_tiny_nli_model, tiny_claims, tiny_passages


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A tiny paragraph store, a tiny random NLI model and a YAML config using them (bm25s only)."""
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    root = tmp_path_factory.mktemp("cli-r2vc")
    corpus = root / "corpus"
    build_corpus(passages=tiny_passages(), out_dir=corpus)
    model = save_tiny_nli_model(root / "nli")
    cfg = root / "tiny.yaml"
    cfg.write_text(
        "retrieval:\n  sparse: bm25s\n  dense_model: null\n"
        f"verifier:\n  model: {model}\n  device: cpu\n"
        "generator:\n  k: 4\n"
        "ablation:\n  nli_only: true\n  no_calibration: true\n"
        "calibration:\n  tau_cal: 0.0\n  tau_ver: -1.0\n"
    )
    claims = root / "claims.json"
    claims.write_text(json.dumps(tiny_claims()))
    return {"root": root, "corpus": corpus, "model": model, "config": cfg, "claims": claims}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def base_args(s: dict[str, Path], out: Path) -> list[str]:
    return ["baseline", "r2vc", "--config", str(s["config"]), "--claims", str(s["claims"]),
            "--corpus", str(s["corpus"]), "--out", str(out), "--no-progress"]


def test_json_output_and_prediction_file(setup, tmp_path, capsys) -> None:
    out = tmp_path / "pred.json"
    code, stdout, err = run([*base_args(setup, out), "--json"], capsys)
    assert code == 0, err
    summary = json.loads(stdout)  # exactly one JSON object
    assert summary["n_claims"] == 4 and summary["format"] == "averitec2024"
    assert set(summary["seconds_per_claim"]) >= {"retrieve", "generate", "verify", "calibrate"}
    preds = json.loads(out.read_text())
    assert [p["claim_id"] for p in preds] == [0, 1, 2, 3]
    for p in preds:
        assert set(p) >= {"claim_id", "claim", "pred_label", "evidence", "confidence", "rationale", "citations"}
        assert all(set(e) == {"question", "answer", "url"} for e in p["evidence"])
    # the thresholds are off, so every claim with evidence gets the candidate's verdict
    assert preds[3]["pred_label"] == "Not Enough Evidence" and preds[3]["r2vc"]["reason"] == "no_candidates"


def test_human_output_and_limit(setup, tmp_path, capsys) -> None:
    out = tmp_path / "pred.json"
    code, stdout, _ = run([*base_args(setup, out), "--limit", "2"], capsys)
    assert code == 0
    assert stdout.startswith(f"wrote 2 predictions to {out}")
    assert len(json.loads(out.read_text())) == 2


def test_no_progress_bar_off_a_terminal_or_with_json(setup, tmp_path, capsys) -> None:
    args = [a for a in base_args(setup, tmp_path / "p.json") if a != "--no-progress"]
    for extra in ([], ["--json"]):
        code, _, err = run([*args, "--overwrite", *extra], capsys)
        assert code == 0, err
        assert "%|" not in err and "claim/s" not in err and "it/s" not in err


def test_limit_writes_the_matching_gold_subset(setup, tmp_path, capsys) -> None:
    out, gold = tmp_path / "pred.json", tmp_path / "gold.json"
    code, stdout, err = run([*base_args(setup, out), "--limit", "2", "--write-gold-subset", str(gold), "--json"], capsys)
    assert code == 0, err
    assert json.loads(stdout)["gold_subset"] == str(gold)
    assert json.loads(gold.read_text()) == json.loads(setup["claims"].read_text())[:2]
    assert len(json.loads(out.read_text())) == 2


def test_ternary_format_flag(setup, tmp_path, capsys) -> None:
    out = tmp_path / "pred.jsonl"
    code, _, _ = run([*base_args(setup, out), "--format", "ternary", "--json"], capsys)
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["predicted_label"] for r in rows} <= {"SUPPORTS", "REFUTES", "NOT ENOUGH INFO"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--config", "offline-minlm"], "did you mean: offline-minilm"),
    ],
)
def test_bad_arguments(setup, tmp_path, capsys, extra, message) -> None:
    code, stdout, err = run([*base_args(setup, tmp_path / "p.json"), *extra], capsys)
    assert code == 2 and stdout == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_limit_is_range_checked_when_parsed(setup, tmp_path, capsys) -> None:
    assert exit_code(main, [*base_args(setup, tmp_path / "p.json"), "--limit", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and usage_error(err).endswith("argument --limit: expected a whole number of at least 1, got '0'")
    assert not (tmp_path / "p.json").exists()


def test_required_arguments(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["baseline", "r2vc", "--claims", "x.json"])
    assert exc.value.code == 2
    assert "--config" in capsys.readouterr().err


def test_missing_files_and_corpus(setup, tmp_path, capsys) -> None:
    args = base_args(setup, tmp_path / "p.json")
    bad_claims = [a if a != str(setup["claims"]) else str(tmp_path / "none.json") for a in args]
    code, _, err = run(bad_claims, capsys)
    assert code == 2 and "none.json: no such file" in err
    no_corpus = [a for a in args if a not in ("--corpus", str(setup["corpus"]))]
    code, _, err = run(no_corpus, capsys)
    assert code == 2 and "no corpus given" in err
    code, _, err = run([*no_corpus, "--corpus", str(tmp_path / "nowhere")], capsys)
    assert code == 2 and "corpus directory not found" in err
    code, _, err = run(["baseline", "r2vc", "--config", str(tmp_path / "nope.yaml"), "--claims",
                        str(setup["claims"]), "--out", str(tmp_path / "p.json")], capsys)
    assert code == 2 and "no such configuration file" in err
    code, _, err = run(["baseline", "r2vc", "--config", str(setup["config"]), "--out", str(tmp_path / "p.json")],
                       capsys)
    assert code == 2 and "--claims is required" in err


def test_corrupt_claims_file(setup, tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"claim": "a"}, {"claim": ')
    args = [a if a != str(setup["claims"]) else str(bad) for a in base_args(setup, tmp_path / "p.json")]
    code, _, err = run(args, capsys)
    assert code == 2 and "bad.json:1:" in err and "truncated JSON" in err


def test_corrupt_index_says_how_to_rebuild(setup, tmp_path, capsys) -> None:
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(setup["corpus"], corpus)
    out = tmp_path / "p.json"
    args = [a if a != str(setup["corpus"]) else str(corpus) for a in base_args(setup, out)]
    assert run(args, capsys)[0] == 0  # builds the index under corpus/indexes
    index_files = [p for p in (corpus / "indexes").rglob("*") if p.is_file()]
    assert index_files
    for p in index_files:
        p.write_bytes(b"\x00garbage")
    code, _, err = run(args, capsys)
    assert code == 2 and "Traceback" not in err
    assert "rebuild" in err.lower()
    assert run([*args, "--rebuild-index"], capsys)[0] == 0


def test_model_that_cannot_be_loaded_offline(setup, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cfg = tmp_path / "bad-model.yaml"
    cfg.write_text("retrieval:\n  sparse: bm25s\n  dense_model: null\nverifier:\n  model: no-such-org/no-such-model\n"
                   "ablation: {nli_only: true, no_calibration: true}\n")
    args = base_args(setup, tmp_path / "p.json")
    args[args.index("--config") + 1] = str(cfg)
    code, _, err = run(args, capsys)
    assert code == 2
    assert "cannot load model 'no-such-org/no-such-model'" in err and "HF_HUB_OFFLINE" in err
    assert not (tmp_path / "p.json").exists()


def test_manifest_names_the_commit_the_run_started_with(setup, tmp_path, capsys, monkeypatch) -> None:
    from averitec_tools.baselines._run import manifest

    state = {"ran": False}
    real_run = R2VCPipeline.run

    def run_then_commit(self, *args, **kwargs):
        summary = real_run(self, *args, **kwargs)
        state["ran"] = True  # as if the checkout moved on while the run was going
        return summary

    monkeypatch.setattr(R2VCPipeline, "run", run_then_commit)
    monkeypatch.setattr(manifest, "git_state", lambda: {"commit": "after" if state["ran"] else "before", "dirty": False})
    out = tmp_path / "pred.json"
    code, stdout, err = run([*base_args(setup, out), "--json"], capsys)
    assert code == 0, err
    assert json.loads(Path(json.loads(stdout)["manifest"]).read_text())["git"] == {"commit": "before", "dirty": False}


def test_interrupted_run_resumes(setup, tmp_path, capsys, monkeypatch) -> None:
    out = tmp_path / "pred.json"
    clean = tmp_path / "clean.json"
    assert run([*base_args(setup, clean), "--json"], capsys)[0] == 0

    real_predict = R2VCPipeline.predict
    calls = {"n": 0}

    def flaky(self, claim):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real_predict(self, claim)

    monkeypatch.setattr(R2VCPipeline, "predict", flaky)
    code, _, err = run(base_args(setup, out), capsys)
    assert code == 130 and "interrupted" in err and "--resume" in err
    assert not out.exists()  # no half-written output file
    assert len(sidecar_path(out).read_text().splitlines()) == 3  # header + 2 claims
    monkeypatch.setattr(R2VCPipeline, "predict", real_predict)
    code, stdout, _ = run([*base_args(setup, out), "--resume", "--json"], capsys)
    assert code == 0 and json.loads(stdout)["n_resumed"] == 2
    assert json.loads(out.read_text()) == json.loads(clean.read_text())
    assert not sidecar_path(out).exists()


def test_r2vc_calibrate_fits_and_run_uses_it(setup, tmp_path, capsys) -> None:
    cal = tmp_path / "cal.json"
    # The recipe's config already names the calibrator file it is about to write.
    cfg = tmp_path / "with-cal.yaml"
    calibrated = setup["config"].read_text().replace("no_calibration: true", "no_calibration: false")
    cfg.write_text(calibrated + f"  path: {cal}\n")
    args = ["baseline", "r2vc-calibrate", "--config", str(cfg), "--claims", str(setup["claims"]),
            "--corpus", str(setup["corpus"]), "--out", str(cal), "--json", "--no-progress"]
    code, stdout, err = run(args, capsys)
    assert code == 0, err
    info = json.loads(stdout)
    assert info["claims"] == 3 and len(info["coef"]) == 7  # the claim without retrieval is skipped
    run_args = base_args(setup, tmp_path / "p.json")
    run_args[run_args.index("--config") + 1] = str(cfg)
    code, stdout, err = run([*run_args, "--json"], capsys)
    assert code == 0, err
    assert json.loads(stdout)["components"]["calibrator"] == str(cal)
    missing = tmp_path / "missing-cal.yaml"
    missing.write_text(calibrated + f"  path: {tmp_path / 'nope.json'}\n")
    run_args[run_args.index("--config") + 1] = str(missing)
    code, _, err = run(run_args, capsys)
    assert code == 2 and "calibrator file not found" in err


def test_unset_component_refused(setup, tmp_path, capsys) -> None:
    cfg = tmp_path / "unset.yaml"
    cfg.write_text(setup["config"].read_text().replace("  nli_only: true\n", ""))
    args = base_args(setup, tmp_path / "p.json")
    args[args.index("--config") + 1] = str(cfg)
    code, _, err = run(args, capsys)
    assert code == 2 and "generator.model is not set" in err and "ablation.nli_only" in err
    assert "Traceback" not in err and not (tmp_path / "p.json").exists()


def test_offline_config_argument_rules(setup, tmp_path, capsys, monkeypatch) -> None:
    code, _, err = run(["baseline", "r2vc", "--config", "offline-minilm", "--claims", str(setup["claims"]),
                        "--corpus", str(setup["corpus"]), "--out", str(tmp_path / "p.json")], capsys)
    assert code == 2 and "builds its own corpus" in err
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    code, _, err = run(["baseline", "r2vc", "--config", "offline-minilm", "--out", str(tmp_path / "p.json")], capsys)
    assert code == 2 and "AVERITEC_DATA_DIR" in err


@pytest.mark.shared_data
def test_predictions_score_with_averitec_score_and_calibration(shared_data, tmp_path, capsys) -> None:
    """Three dev claims over a corpus of their own answers: the output scores with both commands."""
    from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus
    from averitec_tools.baselines.r2vc.offline.data import load_dev

    dev = load_dev(shared_data / "averitec" / "dev.json")[:3]
    corpus = tmp_path / "corpus"
    build_corpus(passages=[p for _, p in answer_passages(dev)], out_dir=corpus)
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps([c.to_dict() for c in dev]))
    model = save_tiny_nli_model(tmp_path / "nli")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"retrieval:\n  sparse: bm25s\n  dense_model: null\nverifier:\n  model: {model}\n"
                   "ablation: {nli_only: true, no_calibration: true}\n")
    out = tmp_path / "pred.json"
    code, _, err = run(["baseline", "r2vc", "--config", str(cfg), "--claims", str(gold), "--corpus", str(corpus),
                        "--out", str(out), "--json", "--no-progress"], capsys)
    assert code == 0, err
    code, stdout, err = run(["score", str(out), str(gold), "--profile", "averitec2024", "--json"], capsys)
    assert code == 0, err
    scores = json.loads(stdout)
    assert scores["n_claims"] == 3 and 0.0 <= scores["questions_answers"] <= 1.0
    code, stdout, err = run(["calibration", str(out), str(gold), "--profile", "averitec2024", "--json",
                             "--n-resamples", "0"], capsys)
    assert code == 0, err
    assert json.loads(stdout)["n"] == 3


def test_r2vc_help_has_a_description(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["baseline", "r2vc", "--help"])
    out = capsys.readouterr().out
    assert "Run the R2VC pipeline" in out and "first run builds" in out and "--resume" in out
