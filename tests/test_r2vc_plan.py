"""``averitec baseline r2vc paper --plan``: every stage's work and cost, on this CPU machine naming a GPU."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from averitec_tools.cli.main import main

BOTH = ["baseline", "r2vc", "paper", "--recipe", "paper-fever", "--recipe", "paper-vitaminc", "--plan"]


def _plan(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one JSON object
    return json.loads(out)


def test_make_r2vc_paper_planned_on_an_h200_fits_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(tmp_path))  # no data here: published sizes, download commands
    plan = _plan(capsys, *BOTH, "--gpu", "h200")
    assert plan["gpu"]["name"] == "h200" and plan["total"]["gpu_hours"] <= 120
    assert (plan["generator_trainings"], plan["slice_decodings"], plan["decodings_per_claim"]) == (1, 1, 2)
    stages = {s["stage"]: s for s in plan["stages"]}
    assert list(stages)[:3] == ["generator data", "generator sft", "generator dpo"]
    assert stages["generator dpo"]["work"]["steps"] == 125  # Figure F.3's run, not a full epoch
    assert stages["paper-vitaminc calibrate"]["gpu_hours"] == 0.0  # the slice is replayed from paper-fever's
    assert stages["paper-fever calibrate"]["work"]["decoded_here"] is True
    # FEVER's retrieval: one batched pass over the 9,999 claims before decoding, on the host CPUs. ivfsq8 at
    # 25 M units: 5,000 lists, nprobe 750 → 3.75 M codes per query vs 200,000 / 447 · 68 = 30,425 measured,
    # × 7.4 CPU-ms = 0.912 CPU-s per query; 16 assumed host threads + Table G.1's 0.0316 s for BM25 and encoding
    fever = stages["paper-fever retrieve"]
    assert fever["formula_inputs"]["dense_cpu_s"] == 0.912 and fever["host_threads"] == 16
    assert fever["gpu_hours"] == pytest.approx(9999 * (0.0316 + 0.912 / 16) / 3600, abs=1e-3)  # 0.246 (GPU idle)
    assert fever["cpu_hours"] == pytest.approx(9999 * 0.912 / 3600, abs=0.01)  # 2.53
    assert stages["paper-vitaminc retrieve"]["gpu_hours"] == 0 == stages["paper-vitaminc retrieve"]["work"]["queries"]
    # the plan lists the run's own stages, under the names its ledger times them (paper.py RECIPE_STEPS)
    from averitec_tools.baselines.r2vc.experiments.paper import RECIPE_STEPS
    from averitec_tools.baselines.r2vc.experiments.paper_set import GENERATOR_STEPS

    assert list(stages) == [f"generator {s}" for s in GENERATOR_STEPS] + [
        f"{r} {s}" for r in ("paper-fever", "paper-vitaminc") for s in RECIPE_STEPS]
    assert stages["paper-fever predict"]["formula_inputs"]["retrieval_s"] == 0  # charged once, in retrieve
    assert plan["assumptions"]["host_threads"] == 16 and plan["total"]["cpu_hours"] == fever["cpu_hours"]
    assert plan["total"]["within_budget"] is True and plan["total"]["budget_gpu_hours"] == 120
    for stage in stages.values():
        for key in ("inputs", "outputs", "work", "gpu_hours", "peak_gpu_gib", "host_ram_gib", "disk_gib"):
            assert key in stage, (stage["stage"], key)
        if stage["gpu_hours"]:
            assert stage["formula"] and stage["formula_inputs"]
    assert math.isclose(plan["total"]["gpu_hours"], sum(s["gpu_hours"] for s in plan["stages"]), abs_tol=0.1)
    missing = {Path(m["path"]).name: m["download"] for m in plan["missing"]}
    assert missing["train.jsonl"] == missing["test.jsonl"] == "averitec data download vitaminc"
    assert missing["wiki-pages"].startswith("averitec data download fever-wiki-pages (tries fever.ai")
    assert missing["paper_dev.jsonl"].startswith("averitec data download fever --split paper_dev (tries fever.ai")
    two = _plan(capsys, *BOTH, "--gpu", "h200", "--cpu-threads", "2")
    retrieve = {s["stage"]: s for s in two["stages"]}["paper-fever retrieve"]
    assert retrieve["gpu_hours"] == pytest.approx(9999 * (0.0316 + 0.912 / 2) / 3600, abs=1e-3)  # 1.35
    assert two["assumptions"]["host_threads_source"] == "--cpu-threads"
    assert main([*BOTH, "--gpu", "h200"]) == 0
    text = capsys.readouterr().out
    assert "(2.53 CPU-h on 16 host threads)" in text and "within the 120 GPU-hour budget" in text
    assert "total: " in text and "MISSING: averitec data download vitaminc" in text and "formula: " in text


def test_make_r2vc_paper_fits_the_papers_80gb_h100(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(tmp_path))
    # the paper's own GPU, an 80 GB H100: Table G.1's bf16 recipe fits every stage in 76 GiB, within 120 GPU-hours
    h100 = _plan(capsys, *BOTH, "--gpu", "h100-80gb")
    assert h100["gpu"]["usable_gib"] == 76.0 and h100["total"]["fits_gpu"]
    assert all(s["peak_gpu_gib"] <= 76 for s in h100["stages"]) and h100["total"]["gpu_hours"] <= 120
    assert h100["total"]["gpu_hours"] > _plan(capsys, *BOTH, "--gpu", "h200")["total"]["gpu_hours"]
    dpo = {s["stage"]: s for s in h100["stages"]}["generator dpo"]
    assert (dpo["work"]["master_weights"], dpo["work"]["bf16_rounding"], dpo["work"]["optim"]) == (
        "bf16", "stochastic", "paged_adamw_8bit")
    assert dpo["work"]["examples"] == 2000  # the pairs 125 steps of 16 use, not every VitaminC row's
    # doctor and the CLI's refusals give the plan's peak, rounded up: one number
    from averitec_tools.doctor.targets import R2VC_PAPER_PEAK_GIB

    assert R2VC_PAPER_PEAK_GIB == math.ceil(h100["total"]["peak_gpu_gib"]) == 72


def test_plan_counts_the_files_that_are_here_and_its_figures_are_the_stated_formulas(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [{"claim": f"c{i}", "evidence": f"e{i}", "label": "SUPPORTS", "case_id": str(i)} for i in range(100)]
    (tmp_path / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:10]))
    recipe = tmp_path / "mine.yaml"
    recipe.write_text("base: paper-vitaminc\ntrain_rows: train.jsonl\neval_claims: test.jsonl\nslice_size: 4\n")
    plan = _plan(capsys, "baseline", "r2vc", "paper", "--recipe", str(recipe), "--plan", "--gpu", "h200")
    stages = {s["stage"]: s for s in plan["stages"]}
    sft = stages["generator sft"]
    assert (sft["work"]["examples"], sft["work"]["steps"], sft["work"]["sequences"]) == (96, 6, 96)
    # 8 FLOPs/param/token · 8.03e9 params · 96 · 672.3 tokens / (989 TFLOP/s · 0.35) / 3600
    assert sft["gpu_hours"] == pytest.approx(8 * 8.03e9 * 96 * 672.3 / (989e12 * 0.35) / 3600, abs=1e-3)
    predict = stages["mine predict"]
    assert predict["inputs"][0]["rows_source"] == "counted" and predict["work"]["claims"] == 10
    # hand-derived for an H200 (module docs of plan_costs): batch of 8 claims × 16 candidates, 160 steps of
    # 13.71 ms (weights) + 11.00 ms (KV) + 5.94 ms (FLOPs), prefill 3.613 s → 1.0645 s/claim; verifier 16 × 0.0251 s
    assert predict["formula_inputs"]["seconds_per_claim"] == pytest.approx(1.0645 + 0.4016, abs=2e-3)
    assert not plan["missing"]


def test_plan_errors_are_one_line(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main([*BOTH, "--gpu", "h20"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown GPU 'h20' (did you mean: h200" in err
    with pytest.raises(SystemExit) as info:  # refused when parsed (issue 39)
        main([*BOTH, "--gpu", "h200", "--cpu-threads", "0"])
    assert info.value.code == 2 and "--cpu-threads: expected a whole number of at least 1" in capsys.readouterr().err
    from averitec_tools import doctor

    monkeypatch.setattr(doctor, "probe_torch", lambda: {"installed": True, "gpus": []})
    assert main(BOTH) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no CUDA GPU detected here: name the GPU to plan for with --gpu NAME" in err
