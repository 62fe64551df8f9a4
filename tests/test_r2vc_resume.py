"""Kill -9 in the middle of each R2VC stage, rerun, and get what an uninterrupted run gets.

Each interrupted run is a subprocess (``tests/_r2vc_kill.py``) that SIGKILLs itself at a
chosen point — right after a training checkpoint was written, or after the generator
decoded some claims — so the kill lands where the test says, with no timing involved. The
rerun happens here, and its outputs are compared with an uninterrupted run's: the trained
weights byte for byte (training on CPU is deterministic), the predictions and the
calibrator file byte for byte.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

HERE = Path(__file__).parent


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    return subprocess.run([sys.executable, str(HERE / "_r2vc_kill.py"), *args], env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def base_and_rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    root = tmp_path_factory.mktemp("resume")
    tok = tiny_tokenizer()
    tiny_lm(tok).save_pretrained(root / "base")
    tok.save_pretrained(root / "base")
    rows = [{"claim": f"Claim number {i} about the city.", "evidence_text": f"The city had {1000 + i} residents.",
             "label": ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")[i % 3], "page": f"City {i}"} for i in range(8)]
    (root / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root / "base", root / "rows.jsonl"


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["sft", "dpo"])
def test_training_killed_after_a_checkpoint_resumes_to_the_same_weights(
        stage: str, base_and_rows: tuple[Path, Path], tmp_path: Path) -> None:
    from _r2vc_kill import train

    base, rows = base_and_rows
    reference, _ = train(stage, str(base), str(rows), str(tmp_path / "ref"), kill_at=None)
    out = tmp_path / stage
    killed = _subprocess("train", stage, str(base), str(rows), str(out), "2")
    assert killed.returncode == -9, killed.stderr[-2000:]
    folder = tmp_path / f"{stage}.checkpoints"
    assert (folder / "checkpoint-2" / "trainer_state.json").is_file() and not out.exists()
    report, _ = train(stage, str(base), str(rows), str(out), kill_at=None)
    assert report.run["resumed_from"] == "checkpoint-2" and "resumed_from" not in reference.run
    assert report.global_steps == reference.global_steps == 4
    assert (out / "model.safetensors").read_bytes() == (tmp_path / "ref" / "model.safetensors").read_bytes()
    losses = [r["loss"] for r in report.log_history if "loss" in r]
    assert losses == [r["loss"] for r in reference.log_history if "loss" in r] and len(losses) == 4
    assert not folder.exists()  # the checkpoints go once the model is in place


def test_checkpoints_of_another_run_are_refused(base_and_rows: tuple[Path, Path], tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.training.checkpoints import open_checkpoints
    from averitec_tools.errors import UserError

    open_checkpoints(tmp_path / "sft", fingerprint="a")
    with pytest.raises(UserError, match="holds checkpoints of another training run"):
        open_checkpoints(tmp_path / "sft", fingerprint="b")
