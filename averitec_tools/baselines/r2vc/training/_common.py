"""Helpers shared by the SFT and DPO entry points (model loading, output directory, report)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.prompt import ensure_chat_template
from averitec_tools.baselines.r2vc.training.config import TrainSettings
from averitec_tools.errors import UserError


@dataclass(frozen=True)
class TrainingReport:
    """What a training run did.

    Attributes:
        stage: ``"sft"`` or ``"dpo"``.
        output_dir: Where the model, tokenizer and ``r2vc_training.json`` were saved
            (None when the run was not saved).
        n_examples: Training examples used.
        n_dropped: Examples dropped (DPO: responses longer than ``max_target_length``).
        global_steps: Optimizer steps taken.
        final_loss: Training loss of the last logged step.
        log_history: The trainer's log records.
        device: ``"cuda"`` or ``"cpu"``.
    """

    stage: str
    output_dir: str | None
    n_examples: int
    n_dropped: int
    global_steps: int
    final_loss: float | None
    log_history: tuple[dict[str, Any], ...]
    device: str

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable summary (without the full log history)."""
        return {
            "stage": self.stage,
            "output_dir": self.output_dir,
            "n_examples": self.n_examples,
            "n_dropped": self.n_dropped,
            "global_steps": self.global_steps,
            "final_loss": self.final_loss,
            "device": self.device,
        }


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def prepare_tokenizer(tokenizer: Any) -> Any:
    """Give the tokenizer a chat template and a pad token if it lacks them."""
    ensure_chat_template(tokenizer)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


def load_model_for_training(settings: TrainSettings, *, cuda: bool) -> tuple[Any, Any]:
    """Load ``settings.model`` in the resolved dtype and attention implementation."""
    import torch

    from averitec_tools.baselines.r2vc.generator import load_causal_lm

    resolved = settings.resolved(cuda=cuda)
    model, tokenizer = load_causal_lm(
        settings.model,
        device=None,
        dtype=torch.bfloat16 if resolved["bf16"] else torch.float32,
        local_files_only=settings.local_files_only,
        model_kwargs={"attn_implementation": resolved["attn_implementation"]},
    )
    model.train()
    return model, prepare_tokenizer(tokenizer)


def final_loss(log_history: list[dict[str, Any]]) -> float | None:
    for record in reversed(log_history):
        if "loss" in record:
            return float(record["loss"])
        if "train_loss" in record:
            return float(record["train_loss"])
    return None


@contextmanager
def staged_output_dir(output_dir: str | os.PathLike[str], *, overwrite: bool) -> Iterator[Path]:
    """Yield a scratch directory next to ``output_dir``; move it into place only on success.

    An interrupted or failed run therefore never leaves a half-written model at
    ``output_dir``.
    """
    target = Path(output_dir)
    if target.exists() and not overwrite:
        raise UserError(f"{target}: output directory already exists", hint="pass --overwrite or another --out")
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        yield scratch
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if target.exists():
        shutil.rmtree(target)
    os.replace(scratch, target)


def save_run(
    trainer: Any, *, tokenizer: Any, directory: Path, settings: TrainSettings, report: dict[str, Any]
) -> None:
    """Save the final model, tokenizer, settings and report (no intermediate checkpoints)."""
    for checkpoint in directory.glob("checkpoint-*"):
        shutil.rmtree(checkpoint, ignore_errors=True)
    trainer.save_model(str(directory))
    tokenizer.save_pretrained(str(directory))
    with open(directory / "r2vc_training.json", "w", encoding="utf-8") as handle:
        json.dump({"settings": settings.to_dict(), "report": report}, handle, indent=2)
