"""The flow shared by the SFT and DPO stages: model loading, the checked training run, the
staged output directory and the report."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.stages.generation.prompt import ensure_chat_template
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
        run: What ran: ``attention`` (the implementation the model used),
            ``master_weights``/``weights_dtype``, ``bf16_autocast``, ``reasoning`` (the
            prompt's reasoning mode), ``n_passages`` and ``weights`` (the weight-moved
            measurements after the first step and at the end).
    """

    stage: str
    output_dir: str | None
    n_examples: int
    n_dropped: int
    global_steps: int
    final_loss: float | None
    log_history: tuple[dict[str, Any], ...]
    device: str
    run: dict[str, Any] = field(default_factory=dict)

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
            **self.run,
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
    """Load ``settings.model`` with bf16 weights where ``master_weights: bf16`` and bf16 is on (CUDA:
    Table G.1's "bf16 full weights"), else fp32 weights (bf16 compute is then the trainer's
    autocast), with the resolved attention implementation."""
    import torch

    from averitec_tools.baselines.r2vc.stages.generation.generator import load_causal_lm

    resolved = settings.resolved(cuda=cuda)
    pure_bf16 = settings.master_weights == "bf16" and resolved["bf16"]
    model, tokenizer = load_causal_lm(
        settings.model,
        device=None,
        dtype=torch.bfloat16 if pure_bf16 else torch.float32,
        local_files_only=settings.local_files_only,
        model_kwargs={"attn_implementation": resolved["attn_implementation"]},
    )
    model.train()
    return model, prepare_tokenizer(tokenizer)


def ensure_model(settings: TrainSettings, *, model: Any, tokenizer: Any) -> tuple[Any, Any]:
    """``(model, tokenizer)`` as given, or ``settings.model`` loaded when ``model`` is None."""
    if model is None:
        return load_model_for_training(settings, cuda=cuda_available())
    if tokenizer is None:
        raise ValueError("tokenizer is required when model is given")
    return model, tokenizer


@dataclass(frozen=True)
class TrainerInputs:
    """What every stage's TRL trainer is built from.

    Attributes:
        model: The model to train.
        tokenizer: Its tokenizer (chat template and pad token set).
        config: The TRL config keyword arguments (:meth:`TrainSettings.trainer_kwargs`).
        system: The model's reasoning switch (the system prompt), or None.
    """

    model: Any
    tokenizer: Any
    config: dict[str, Any]
    system: str | None = None


def trainer_inputs(settings: TrainSettings, *, model: Any, tokenizer: Any,
                   output_dir: str | os.PathLike[str], system: str | None = None) -> TrainerInputs:
    """The model (``settings.model`` loaded when None), prepared tokenizer and TRL config
    keyword arguments for a stage's trainer."""
    model, tokenizer = ensure_model(settings, model=model, tokenizer=tokenizer)
    kwargs = settings.trainer_kwargs(output_dir=os.fspath(output_dir), cuda=cuda_available())
    return TrainerInputs(model=model, tokenizer=prepare_tokenizer(tokenizer), config=kwargs, system=system)


def _checkpoints(output_dir: str | os.PathLike[str], *, overwrite: bool, stage: str, settings: TrainSettings,
                 n_examples: int, manifest: dict[str, Any] | None) -> tuple[Path | None, str | None]:
    """With ``settings.save_steps``: the persistent checkpoint folder of this run and the last complete
    checkpoint to resume from (a rerun resumes, :mod:`.checkpoints`); else ``(None, None)``."""
    if settings.save_steps <= 0:
        return None, None
    from averitec_tools.baselines.r2vc.training.checkpoints import (
        last_complete_checkpoint,
        open_checkpoints,
        run_fingerprint,
    )

    if Path(output_dir).exists() and not overwrite:
        raise UserError(f"{output_dir}: output directory already exists", hint="pass --overwrite or another --out")
    folder = open_checkpoints(output_dir, fingerprint=run_fingerprint(
        stage=stage, settings=settings.to_dict(), n_examples=n_examples, manifest=manifest))
    last = last_complete_checkpoint(folder)
    return folder, None if last is None else str(last)


def fit_and_save(
    *,
    stage: str,
    settings: TrainSettings,
    build_trainer: Callable[[str], Any],
    reasoning: Any,
    n_examples: int,
    output_dir: str | os.PathLike[str] | None,
    overwrite: bool,
    manifest: dict[str, Any] | None,
    n_dropped: int = 0,
    tokenizer: Any = None,
) -> tuple[TrainingReport, Any]:
    """Build the stage's trainer in a scratch directory, train it with the weight checks, and
    save the model where asked.

    The run happens in a scratch directory that replaces ``output_dir`` only when training
    succeeded (:func:`staged_output_dir`), so an interrupted run leaves no half-written
    model; with ``output_dir`` None nothing is saved.

    Args:
        stage: ``"sft"`` or ``"dpo"``.
        settings: The stage's settings.
        build_trainer: Working directory → the TRL trainer.
        reasoning: The prompts' reasoning mode (:func:`prompt_choice`).
        n_examples: Training examples (rows or preference pairs) in the report.
        output_dir: Where to save the model, tokenizer and ``r2vc_training.json``.
        overwrite: Replace an existing ``output_dir``.
        manifest: The run manifest saved in ``r2vc_training.json``.
        n_dropped: Examples dropped before training (reported).
        tokenizer: The tokenizer to save (default: the trainer's processing class).

    Returns:
        ``(report, trained_model)``.
    """

    def fit(workdir: str, saved_to: str | None, resume: str | None = None) -> tuple[Any, TrainingReport]:
        trainer = build_trainer(workdir)
        result, run = train_checked(trainer, settings=settings, stage=stage, reasoning=reasoning, resume=resume)
        history = list(trainer.state.log_history)
        report = TrainingReport(stage=stage, output_dir=saved_to, n_examples=n_examples, n_dropped=n_dropped,
                                global_steps=int(result.global_step), final_loss=final_loss(history),
                                log_history=tuple(history), device="cuda" if cuda_available() else "cpu", run=run)
        return trainer, report

    if output_dir is None:
        with tempfile.TemporaryDirectory(prefix=f"r2vc-{stage}-") as tmp:
            trainer, report = fit(tmp, None)
            return report, trainer.model
    folder, resume = _checkpoints(output_dir, overwrite=overwrite, stage=stage, settings=settings,
                                  n_examples=n_examples, manifest=manifest)
    with staged_output_dir(output_dir, overwrite=overwrite) as staged:
        trainer, report = fit(str(folder or staged), os.fspath(output_dir), resume)
        if resume is not None:
            report = replace(report, run={**report.run, "resumed_from": Path(resume).name})
        save_run(trainer, tokenizer=trainer.processing_class if tokenizer is None else tokenizer,
                 directory=staged, settings=settings, report=report.to_json(), manifest=manifest)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    return report, trainer.model


def model_name(model: Any, settings: TrainSettings) -> str:
    """The id or path of the model being trained (an in-memory model: its config's, if any)."""
    name = getattr(getattr(model, "config", None), "_name_or_path", None)
    return str(name) if name else settings.model


def prompt_choice(model: Any, settings: TrainSettings) -> Any:
    """The reasoning mode the training prompts use (recorded with the model)."""
    from averitec_tools.baselines.r2vc.stages.generation.reasoning import resolve_reasoning

    return resolve_reasoning(model=model_name(model, settings), requested=settings.reasoning)


def train_checked(trainer: Any, *, settings: TrainSettings, stage: str, reasoning: Any,
                  resume: str | None = None) -> tuple[Any, dict[str, Any]]:
    """Run ``trainer.train()`` with the weight-moved checks (after step 1 and at the end),
    from the checkpoint folder ``resume`` when given.

    Returns:
        ``(train_output, run_info)``: ``run_info`` is :attr:`TrainingReport.run`.

    Raises:
        WeightsDidNotMoveError: fewer than ``settings.min_changed_fraction`` of the
            sampled weights moved.
    """
    from averitec_tools.baselines.r2vc.training.bf16_updates import Bf16Updates
    from averitec_tools.baselines.r2vc.training.weights import (
        WeightProbe,
        check_kept,
        check_moved,
        weight_check_callback,
    )

    model = trainer.model
    probe = WeightProbe(model, seed=settings.seed)
    updates = Bf16Updates(trainer, rounding=settings.bf16_rounding, seed=settings.seed)
    callback = weight_check_callback(probe, stage=stage, min_changed_fraction=settings.min_changed_fraction,
                                     master_weights=settings.master_weights, peak_lr=settings.learning_rate,
                                     updates=updates)
    trainer.add_callback(callback)
    result = trainer.train(resume_from_checkpoint=resume)
    if callback.error is not None:
        raise callback.error
    final = probe.measure(trainer.model)
    when = f"after {int(result.global_step)} steps"
    if updates.optimizer is not None:  # stochastic rounding: judged by the share of the update kept
        final["rounding"] = updates.optimizer.total.to_dict()
        check_kept(final["rounding"], stage=stage, when=when, min_changed_fraction=settings.min_changed_fraction)
    else:
        check_moved(final, stage=stage, when=when, min_changed_fraction=settings.min_changed_fraction,
                    master_weights=settings.master_weights)
    weight = next(iter(trainer.model.parameters()))
    info = {
        "attention": getattr(trainer.model.config, "_attn_implementation", None),
        "master_weights": settings.master_weights,
        "weights_dtype": str(weight.dtype).replace("torch.", ""),
        "bf16_rounding": settings.bf16_rounding if updates.active else None,
        "bf16_autocast": bool(trainer.args.bf16),
        "reasoning": reasoning.to_dict(),
        "n_passages": settings.n_passages,
        "weights": {"after_first_step": callback.first_step, "final": final,
                    "min_changed_fraction": settings.min_changed_fraction},
    }
    return result, info


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
    trainer: Any, *, tokenizer: Any, directory: Path, settings: TrainSettings, report: dict[str, Any],
    manifest: dict[str, Any] | None = None,
) -> None:
    """Save the final model, tokenizer, settings and report (no intermediate checkpoints)."""
    for checkpoint in directory.glob("checkpoint-*"):
        shutil.rmtree(checkpoint, ignore_errors=True)
    trainer.save_model(str(directory))
    tokenizer.save_pretrained(str(directory))
    record = {"settings": settings.to_dict(), "report": report,
              # what the generator must reproduce at inference (reasoning.recorded_choice)
              "prompt": {"reasoning": report.get("reasoning"), "n_passages": settings.n_passages},
              "manifest": manifest}
    with open(directory / "r2vc_training.json", "w", encoding="utf-8") as handle:
        json.dump(record, handle, indent=2)
