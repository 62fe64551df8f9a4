"""``averitec doctor`` and the CPU guard of paper-scale work (issue 25 §1).

The machine probes are replaced by a fixed ``torch_info`` where the expectation depends on
the hardware; the data roots are temporary folders with hand-made layouts.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from averitec_tools import doctor
from averitec_tools.cli.main import main
from averitec_tools.errors import UserError

NO_GPU = {"installed": True, "version": "2.0+cpu", "cuda_build": None, "cuda_available": False, "gpus": []}
H200 = {"installed": True, "version": "2.0", "cuda_build": "12.8", "cuda_available": True,
        "gpus": [{"index": 0, "name": "NVIDIA H200", "memory_gib": 139.8, "bf16": True}]}
A10 = {**H200, "gpus": [{"index": 0, "name": "NVIDIA A10G", "memory_gib": 22.0, "bf16": True}]}


def _needs(report: dict, target: str) -> dict[str, dict]:
    return {n["name"]: n for n in report["targets"][target]["needs"]}


def test_gpu_need_follows_the_gpu_memory(tmp_path: Path) -> None:
    for info, want in ((NO_GPU, "missing"), (A10, "missing"), (H200, "ok")):
        report = doctor.diagnose(targets=["r2vc-paper"], data_roots=[tmp_path], probe_hub=False, torch_info=info)
        gpu = _needs(report, "r2vc-paper")["GPU"]
        assert gpu["status"] == want, info
        assert (gpu["fix"] == "") == (want == "ok")
    # averitec-paper needs less than r2vc-paper: 40 GiB, so an A10G is still too small, an H200 is fine
    report = doctor.diagnose(targets=["averitec-paper"], data_roots=[tmp_path], probe_hub=False, torch_info=H200)
    assert _needs(report, "averitec-paper")["GPU"]["status"] == "ok"
    assert "GPU 0" in [c["name"] for c in report["checks"]]


def test_data_needs_name_the_download_command(tmp_path: Path) -> None:
    (tmp_path / "vitaminc").mkdir()
    (tmp_path / "vitaminc" / "train.jsonl").write_text("{}\n")
    (tmp_path / "fever" / "wiki-pages").mkdir(parents=True)
    report = doctor.diagnose(targets=["r2vc-paper"], data_roots=[tmp_path / "nowhere", tmp_path],
                             probe_hub=False, torch_info=H200)
    needs = _needs(report, "r2vc-paper")
    assert needs["vitaminc/train.jsonl"]["status"] == "ok"
    assert needs["vitaminc/train.jsonl"]["have"] == str(tmp_path / "vitaminc" / "train.jsonl")
    assert needs["fever/wiki-pages"]["status"] == "ok"
    assert needs["vitaminc/test.jsonl"] == {"name": "vitaminc/test.jsonl", "status": "missing",
                                            "have": "not found in the data roots",
                                            "want": "$AVERITEC_DATA_DIR or the download root",
                                            "fix": "averitec data download vitaminc"}
    fever = needs["fever/paper_dev.jsonl"]["fix"]  # the command, and the sources it tries in order
    assert fever.startswith("averitec data download fever --split paper_dev (tries fever.ai/download/fever, then "
                            "the hub's fever/fever; sha256-checked; or --from DIR)")
    assert report["targets"]["r2vc-paper"]["ready"] is False


def test_optional_flash_attn_never_makes_a_target_not_ready(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "host_ram_bytes", lambda: 256 * doctor.GIB)
    monkeypatch.setattr(doctor, "free_disk_bytes", lambda path: 1 << 50)
    monkeypatch.setattr(doctor, "installed_modules",
                        lambda mods: {m: (None if m == "flash_attn" else "x 1.0") for m in mods})
    for rel in ("averitec/train.json", "averitec/dev.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("[]")
    (tmp_path / "averitec" / "knowledge_store" / "dev").mkdir(parents=True)
    report = doctor.diagnose(targets=["averitec-paper", "r2vc-paper"], data_roots=[tmp_path], probe_hub=False,
                             torch_info=H200)
    assert report["targets"]["averitec-paper"]["ready"] is True
    r2vc = _needs(report, "r2vc-paper")
    assert r2vc["module flash_attn"]["status"] == "optional" and "--no-build-isolation" in r2vc["module flash_attn"]["fix"]
    # the fix installs into the GPU venv (make venv-gpu), not the CPU .venv, and says what runs without it
    assert r2vc["module flash_attn"]["fix"].startswith(".venv-gpu/bin/pip install flash-attn")
    assert "SDPA" in r2vc["module flash_attn"]["fix"]
    assert {n for n, v in r2vc.items() if v["status"] == "missing"} == {
        "vitaminc/train.jsonl", "vitaminc/test.jsonl", "fever/paper_dev.jsonl", "fever/wiki-pages"}


def test_hub_is_unreachable_on_a_closed_port_and_offline_env_is_missing(monkeypatch: pytest.MonkeyPatch,
                                                                         tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert doctor.hub_status(timeout=1.0) == {"endpoint": f"http://127.0.0.1:{port}", "reachable": False,
                                              "offline_env": False}
    with socket.socket() as server:  # a listening one
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
        report = doctor.diagnose(targets=["r2vc-paper"], data_roots=[tmp_path], torch_info=NO_GPU, hub_timeout=1.0)
    hub = _needs(report, "r2vc-paper")["hub"]
    assert report["hub"]["reachable"] is True and hub["status"] == "missing" and "HF_HUB_OFFLINE" in hub["fix"]


def test_cli_json_is_one_object_and_for_exits_1_when_not_ready(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["doctor", "--json", "--no-hub"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report["targets"]) == ["averitec-paper", "r2vc-paper"] and report["hub"] is None
    assert main(["doctor", "--for", "averitec-paper", "--no-hub"]) == 1  # no knowledge store in tmp_path
    out = " ".join(capsys.readouterr().out.split())  # folded at the terminal's width
    assert "averitec-paper: NOT READY" in out and "averitec data download averitec-store --split dev" in out
    assert "r2vc-paper" not in out


def test_model_params_from_config_and_known_ids(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 32, "num_hidden_layers": 2, "vocab_size": 100,
                                                      "intermediate_size": 64}))
    # 100·32 embeddings + 2 layers × (4·32² attention + 3·32·64 FFN) = 3200 + 2 × 10240
    assert doctor.model_params(tmp_path) == 23680
    assert doctor.model_params("bert-base-uncased") == 110_000_000
    assert doctor.model_params(tmp_path / "absent") is None


def test_paper_scale_on_cpu_is_refused_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"claim": "c", "evidence": "e", "label": "SUPPORTS"}\n')
    out = tmp_path / "out"
    code = main(["baseline", "r2vc", "train", "sft", "--model", "bigscience/bloom-7b1", "--data", str(rows),
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "bigscience/bloom-7b1 (7.07B parameters) is paper scale" in err
    assert "one CUDA GPU holding 72 GiB for the run (an 80 GB H100 or larger)" in err  # doctor's number
    assert "--allow-cpu" in err and not out.exists()
    code = main(["baseline", "averitec", "reproduce", "--config", "paper", "--claims", str(rows),
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "averitec reproduce:" in err and "bigscience/bloom-7b1" in err
    assert not out.exists()


def test_tiny_models_pass_the_guard_and_allow_cpu_lifts_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    (tiny / "config.json").write_text(json.dumps({"hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 1000}))
    doctor.refuse_cpu(what="x", models=[tiny, "minilm", None], gpu="a GPU", allow_cpu=False)
    doctor.refuse_cpu(what="x", models=["bigscience/bloom-7b1"], gpu="a GPU", allow_cpu=True)
    monkeypatch.setattr(doctor, "cuda_available", lambda: True)
    doctor.refuse_cpu(what="x", models=["bigscience/bloom-7b1"], gpu="a GPU", allow_cpu=False)
    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    with pytest.raises(UserError, match="needs one H200"):
        doctor.refuse_cpu(what="x", models=[tiny, "bert-base-uncased"], gpu="one H200", allow_cpu=False)


def test_unknown_target_is_a_user_error() -> None:
    with pytest.raises(UserError, match="r2vc-paper"):
        doctor.diagnose(targets=["r2vc-papr"], data_roots=[], probe_hub=False, torch_info=NO_GPU)


def test_gpu_check_without_cuda_is_one_line_and_exit_2() -> None:
    import subprocess
    import sys

    if doctor.cuda_available():
        pytest.skip("this machine has CUDA: make gpu-check runs the checks for real")
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "gpu_check.py"
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("gpu-check: no CUDA device")


def test_make_gpu_targets_use_the_gpu_venv_with_the_hub_on() -> None:
    """`make -n` shows the GPU venv's commands; the paper targets override HF_HUB_OFFLINE."""
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[1]

    def dry(*args: str) -> str:
        return subprocess.run(["make", "-n", "--no-print-directory", *args], cwd=root, capture_output=True,
                              text=True, timeout=60, check=True).stdout

    venv = dry("venv-gpu", "GPU_VENV=/nonexistent-gpu-venv")
    assert "/nonexistent-gpu-venv/bin/python -m pip install -q \"torch==" in venv and "--index-url" in venv
    assert '-e ".[gpu-all,dev]"' in venv and "flash-attn" not in venv  # flash-attn: the documented second step
    paper = dry("r2vc-paper", "GPU_VENV=/nonexistent-gpu-venv")
    # one command for both recipes: one generator, one decoding serve both (docs/r2vc.md)
    assert "/nonexistent-gpu-venv/bin/averitec baseline r2vc paper --recipe paper-fever --recipe paper-vitaminc" in paper
    database = subprocess.run(["make", "-pn", "--no-print-directory", "r2vc-paper", "GPU_VENV=/nonexistent-gpu-venv"],
                              cwd=root, capture_output=True, text=True, timeout=60).stdout
    for target in ("r2vc-paper", "averitec-paper"):
        assert f"{target}: HF_HUB_OFFLINE = 0" in database and f"{target}: TRANSFORMERS_OFFLINE = 0" in database


def test_paper_targets_read_data_where_the_downloads_put_it() -> None:
    """`env -u AVERITEC_DATA_DIR make -n averitec-paper` names no path of this repository's CI data
    (../shared): claims and store come from the data roots, and the paper targets run with the caller's
    AVERITEC_DATA_DIR / NLTK_DATA only (empty: the download root)."""
    import os
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("AVERITEC_DATA_DIR", "NLTK_DATA", "MAKEFLAGS")}
    for target in ("averitec-paper", "r2vc-paper"):
        dry = subprocess.run(["make", "-n", "--no-print-directory", target, "GPU_VENV=/nonexistent-gpu-venv"],
                             cwd=root, env=env, capture_output=True, text=True, timeout=60, check=True).stdout
        assert "shared" not in dry and "--claims" not in dry, dry
        database = subprocess.run(["make", "-pn", "--no-print-directory", target, "GPU_VENV=/nonexistent-gpu-venv"],
                                  cwd=root, env=env, capture_output=True, text=True, timeout=60).stdout
        assert f"{target}: AVERITEC_DATA_DIR = $(USER_DATA_DIR)" in database
        assert f"{target}: NLTK_DATA = $(USER_NLTK_DATA)" in database
