"""``averitec baseline averitec reproduce --plan`` and the inputs check ``reproduce`` runs first.

Expected figures are derived by hand from the stated assumptions and the H200's datasheet
numbers (4.8 TB/s, 989 bf16 TFLOP/s, 0.35 MFU) with the decode-step model both baselines'
plans share (``_run/decode.py``): the bandwidth efficiency Table G.1's 50.92 tokens/s implies,
2·8.03e9·50.92 / 3.35e12 = 0.24408. ``paper-bounded`` writes 16 questions per call with 2
beams: BLOOM-7b1's step over 32 sequences at a 928-token mean context is
(7.07e9·2 + 491,520·32·928) / (4.8e12·0.24408) + 2·7.07e9·32 / (989e12·0.35) = 25.832 ms, its
prefill 2·7.07e9·800·2 / (989e12·0.35) = 65.36 ms, so a bounded question (256 new tokens)
costs 65.36 ms + 256 · 25.832 ms / 16 = 0.47867 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _averitec_baseline_fixtures import claims, write_json

from averitec_tools.cli.main import main


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    (data / "averitec").mkdir(parents=True)
    write_json(data / "averitec" / "dev.json", claims("dev", 4))
    write_json(data / "averitec" / "train.json", claims("train", 6))
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(data))
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    return data


def _plan(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main(["baseline", "averitec", "reproduce", "--plan", "--gpu", "h200", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_lists_every_stage_with_formula_inputs_and_hand_derived_hours(root: Path,
                                                                            capsys: pytest.CaptureFixture[str]) -> None:
    plan = _plan(capsys)
    assert [s["stage"] for s in plan["stages"]] == ["train-reranker", "train-verdict", "train-justification",
                                                    "retrieval", "questions", "rerank", "verdict", "justification"]
    assert plan["config"] == "paper-bounded" and plan["claims"] == {"n": 4, "how": "counted"}
    assert plan["gpu"]["name"] == "h200" and plan["measured_on_a_gpu"] is False
    q = next(s for s in plan["stages"] if s["stage"] == "questions")
    assert q["work_units"]["questions"] == 400  # 4 claims x top_k 100 sentences
    assert q["formula_inputs"]["step_ms"] == pytest.approx(25.832, abs=2e-3)
    assert q["formula_inputs"]["prefill_ms"] == pytest.approx(65.36, abs=1e-2)
    assert q["gpu_hours"] == pytest.approx(400 * 0.47867 / 3600, abs=1e-3)  # printed to 3 decimals
    assert q["formula_inputs"]["batch"] == 16 and q["formula_inputs"]["efficiency"] == 0.244
    assert q["new_tokens_per_question"]["measured_tiny_model"] == 1
    assert q["new_tokens_per_question"]["estimate_uses"] == 256
    up = q["alternative"]
    assert up["setting"].startswith("upstream") and up["formula_inputs"]["new_tokens"] == 4200
    assert up["gpu_hours"] > 10 * q["gpu_hours"] and up["peak_gpu_memory_gib"] > q["peak_gpu_memory_gib"]
    # BLOOM-7b1 bf16 weights 13.17 GiB + 16 questions x 2 beams x 1,056 tokens x 0.47 MiB + 1.5 GiB
    assert q["peak_gpu_memory_gib"] == pytest.approx(7.07e9 * 2 / 2**30 + 491520 * 32 * 1056 / 2**30 + 1.5, abs=1e-2)
    for s in plan["stages"]:
        assert {"inputs", "outputs", "work_units", "gpu_hours", "formula", "formula_inputs", "peak_gpu_memory_gib",
                "host_ram_gib", "disk_gib"} <= set(s)
    assert plan["totals"]["gpu_hours"] == pytest.approx(sum(s["gpu_hours"] for s in plan["stages"]), abs=1e-2)
    store = str(root / "averitec" / "knowledge_store" / "dev")
    assert plan["missing"] == [{"name": "knowledge store", "path": store, "present": False, "required": True,
                                "fix": "averitec data download averitec-store --split dev"}]


def test_plan_text_names_missing_inputs_and_the_upstream_setting(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "averitec", "reproduce", "--plan", "--gpu", "h100-80gb", "--config", "paper"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # folded at the terminal's width
    assert "NVIDIA H100 SXM 80GB" in out and "setting: upstream (questions.stop: none)" in out
    assert "the bounded (questions.stop: question-end) setting" in out
    assert "missing: knowledge store" in out and "averitec data download averitec-store --split dev" in out


def test_plan_with_checkpoints_skips_training_and_names_a_missing_one(root: Path, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    have = tmp_path / "verdict-ckpt"
    have.mkdir()
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"base: paper\nverdict:\n  checkpoint: {have}\nreranker:\n  checkpoint: {tmp_path / 'nope'}\n")
    plan = _plan(capsys, "--config", str(cfg))
    assert [s["stage"] for s in plan["stages"] if s["stage"].startswith("train-")] == ["train-justification"]
    names = {m["name"]: m for m in plan["missing"]}
    assert names["reranker checkpoint"]["path"] == str(tmp_path / "nope")
    assert names["reranker checkpoint"]["fix"].startswith("averitec baseline averitec train reranker")


def _one_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    return captured.err


def test_plan_without_a_gpu_asks_for_one(root: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools import doctor

    monkeypatch.setattr(doctor, "probe_torch", lambda: {"installed": True, "gpus": []})
    assert "--gpu NAME" in _one_line(capsys, ["baseline", "averitec", "reproduce", "--plan"])
    assert "unknown GPU" in _one_line(capsys, ["baseline", "averitec", "reproduce", "--plan", "--gpu", "h300"])


def test_missing_dataset_checkpoint_and_gpu_are_one_line_and_nothing_starts(
        root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools import doctor

    out = tmp_path / "out"
    base = ["baseline", "averitec", "reproduce", "--out", str(out)]
    (root / "averitec" / "dev.json").unlink()
    err = _one_line(capsys, [*base, "--config", "offline-minilm"])
    assert "dev.json: claims not found" in err and "averitec data download averitec --split dev" in err
    write_json(root / "averitec" / "dev.json", claims("dev", 4))
    err = _one_line(capsys, [*base, "--config", "offline-minilm"])
    assert "--store DIR is required" in err and "averitec data download averitec-store --split dev" in err
    store = root / "averitec" / "knowledge_store" / "dev"
    store.mkdir(parents=True)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"base: offline-minilm\nverdict:\n  checkpoint: {tmp_path / 'gone'}\n")
    err = _one_line(capsys, [*base, "--config", str(cfg)])
    assert f"{tmp_path / 'gone'}: verdict checkpoint not found" in err
    assert "averitec baseline averitec train verdict" in err
    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    err = _one_line(capsys, [*base, "--config", "paper"])
    assert "averitec reproduce:" in err and "bigscience/bloom-7b1" in err and "--allow-cpu" in err
    assert not out.exists() and not (tmp_path / "cache").exists()


def test_doctor_and_the_refusals_give_the_plans_peak(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """One number: doctor's (and the CLI's) GPU for averitec-paper is paper-bounded's planned peak, rounded up;
    a reproduction whose planned peak exceeds the GPU here is refused before any work."""
    import math

    from averitec_tools.baselines.averitec.config import builtin_config
    from averitec_tools.baselines.averitec.experiments.plan import reproduce_plan
    from averitec_tools.doctor.targets import AVERITEC_PAPER_PEAK_GIB, TARGETS
    from averitec_tools.errors import UserError

    plan = reproduce_plan(config=builtin_config("paper-bounded"), claims=None, store=None, gpu="h100-80gb",
                          data_roots=[])
    assert math.ceil(plan["totals"]["peak_gpu_memory_gib"]) == AVERITEC_PAPER_PEAK_GIB == 31
    assert TARGETS.get("averitec-paper").gpu_text == "one CUDA GPU holding 31 GiB for the run (a 40 GB A100 or larger)"
    from averitec_tools import doctor
    from averitec_tools.cli.baseline_averitec import _check_gpu_memory

    monkeypatch.setattr(doctor, "probe_torch", lambda: {"installed": True, "gpus": [{"name": "NVIDIA L4", "memory_gib": 22.0}]})
    with pytest.raises(UserError, match=r"averitec reproduce: stage 'questions' plans a peak of 30\.1 GiB of GPU memory; "
                                        r"NVIDIA L4 has 22 GiB"):
        _check_gpu_memory(builtin_config("paper-bounded"), claims=None, store=None)
