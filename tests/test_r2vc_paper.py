"""``averitec baseline r2vc paper``: the paper command end to end on CPU with tiny random models.

The same command ``make r2vc-paper`` runs with the paper's hub ids, here with a 2-layer
random Llama, a 1-layer random NLI model, bm25s only, and fixture data in the upstream
layouts (FEVER wiki-pages and claims, ``tals/vitaminc`` rows): data → SFT → DPO →
calibrate → predict → score → table, then a rerun that reuses every finished stage.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from averitec_tools.cli.main import main

sys.path.insert(0, str(Path(__file__).parent))

FAST = ("{max_steps: 1, warmup_ratio: 0.0, per_device_train_batch_size: 2, gradient_accumulation_steps: 1, "
        "max_length: 512, n_passages: 2, logging_steps: 1}")


def _recipe(root: Path) -> Path:
    from _r2vc_paper_fixture import (
        fever_claims,
        tiny_models,
        vitaminc_rows,
        write_jsonl,
        write_wiki_pages,
    )

    models = tiny_models(root)
    write_wiki_pages(root)
    write_jsonl(root / "paper_dev.jsonl", fever_claims())
    write_jsonl(root / "train.jsonl", vitaminc_rows())
    recipe = root / "tiny.yaml"
    recipe.write_text(
        "base: paper-fever\ntrain_rows: train.jsonl\neval_claims: paper_dev.jsonl\nwiki_pages: wiki-pages\n"
        f"slice_size: 4\ngenerator: {models['generator']}\nverifier: {models['verifier']}\ndense: null\n"
        f"sft: {FAST}\ndpo: {FAST.replace(', warmup_ratio: 0.0', '')}\n"
        "pipeline:\n  retrieval: {sparse: bm25s, top_m: 4}\n  generator: {k: 2, max_new_tokens: 4, device: cpu}\n"
        "  verifier: {device: cpu}\n  calibration: {fit_candidates: 2}\n"
        "rows: [full, no_dpo, nli_only]\n")
    return recipe


@pytest.mark.slow
def test_paper_command_runs_every_stage_with_tiny_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe, work = _recipe(tmp_path), tmp_path / "work"
    assert main(["baseline", "r2vc", "paper", "--recipe", str(recipe), "--work", str(work), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    # data: the slice is 4 rows in whole case_id groups, disjoint from the SFT rows
    data = steps["data"]
    assert (data["slice_rows"], data["sft_rows"], data["eval_claims"], data["group_key"]) == (4, 8, 3, "case_id")
    slice_cases = {json.loads(x)["case_id"] for x in (work / "slice.jsonl").read_text().splitlines()}
    sft_cases = {json.loads(x)["case_id"] for x in (work / "sft_rows.jsonl").read_text().splitlines()}
    assert slice_cases and not slice_cases & sft_cases
    # corpus: FEVER sentence units (the empty record and the empty sentence skipped)
    assert steps["corpus"]["num_units"] == 6 and steps["corpus"]["untitled_records"] == 1
    # training moved the weights and says what ran
    for stage in ("sft", "dpo"):
        assert steps[stage]["weights"]["final"]["changed_fraction"] == 1.0
        assert steps[stage]["master_weights"] == "fp32" and steps[stage]["attention"] == "sdpa"
    assert (work / "dpo" / "r2vc_training.json").is_file() and steps["calibrate"]["claims"] == 4
    # predictions cite FEVER evidence ids; the table scores every row and prints the paper's
    for line in (work / "pred-full.jsonl").read_text().splitlines():
        for page, n in json.loads(line)["predicted_evidence"]:
            assert page in {"Zorbland", "Quuxia_-LRB-country-RRB-", "Plimf"} and isinstance(n, int)
    assert json.loads((work / "pred-full.jsonl.manifest.json").read_text())["data"]["claims"]["sha256"]
    for row in ("full", "no_dpo", "nli_only"):
        score = steps["score"][row]
        assert score["n"] == 3 and 0.0 <= score["fever_score"]["strict_score"] <= score["accuracy"]
    table = (work / "table.md").read_text()
    assert "| R2VC (SFT+DPO, verifier selection, SLC) — paper, reported | 84.71 | 85.68 | 0.083 | 0.0125 |" in table
    assert "FEVER score (strict)" in table and "signature: r2vc-paper-table" in table
    # a rerun reuses every finished stage
    assert main(["baseline", "r2vc", "paper", "--recipe", str(recipe), "--work", str(work), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)["steps"]
    assert all(again[s] == {"reused": True} for s in ("data", "corpus", "sft", "dpo", "calibrate"))
    assert {r: v for r, v in again["predict"].items()} == {r: {"reused": str(work / f"pred-{r}.jsonl")}
                                                            for r in ("full", "no_dpo", "nli_only")}
    assert again["score"] == steps["score"]


def test_paper_recipe_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: paper-fever\nslice_sise: 3\n")
    assert main(["baseline", "r2vc", "paper", "--recipe", str(bad), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown key 'slice_sise' (did you mean 'slice_size'?)" in err
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(tmp_path / "nowhere"))
    from averitec_tools import doctor

    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    assert main(["baseline", "r2vc", "paper", "--recipe", "paper-vitaminc", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err  # the 8B generator on a machine without CUDA: refused first
    assert err.count("\n") == 1 and "is paper scale and this machine has no CUDA GPU" in err
    assert main(["baseline", "r2vc", "paper", "--recipe", "paper-vitaminc", "--work", str(tmp_path / "w"),
                 "--allow-cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "vitaminc/train.jsonl: training rows not found" in err
    assert "averitec data download vitaminc" in err
    assert not (tmp_path / "w").exists()
    rows = tmp_path / "rows.yaml"
    rows.write_text(f"base: paper-vitaminc\ntrain_rows: {bad}\neval_claims: {bad}\nrows: [full, nope]\n")
    assert main(["baseline", "r2vc", "paper", "--recipe", str(rows), "--work", str(tmp_path / "w")]) == 2
    assert "unknown table row 'nope'" in capsys.readouterr().err
