"""Stage 9a: supervised fine-tuning of the R2VC generator with TRL's ``SFTTrainer``.

The data are conversational prompt–completion records (:func:`data.sft_record`), so
TRL's completion-only loss applies: the collator sets the label of every prompt
(system + user) token to -100 and the loss covers the assistant response only — the
paper's "masking collator that zeroes loss on user tokens".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.training._common import (
    TrainingReport,
    ensure_model,
    fit_and_save,
    prompt_choice,
    trainer_inputs,
)
from averitec_tools.baselines.r2vc.training.config import SFTSettings
from averitec_tools.baselines.r2vc.training.data import build_sft_dataset
from averitec_tools.baselines.r2vc.training.rows import TrainingRow


def build_sft_trainer(
    *,
    settings: SFTSettings,
    rows: Sequence[TrainingRow],
    output_dir: str | os.PathLike[str],
    model: Any = None,
    tokenizer: Any = None,
    system: str | None = None,
) -> Any:
    """Build (but do not run) a TRL ``SFTTrainer`` for the R2VC generator.

    Prompts are in the inference layout (``settings.n_passages`` passages, the gold one
    at a seeded random position).

    Args:
        settings: SFT settings (Table G.1 defaults).
        rows: Training rows.
        output_dir: Trainer working directory.
        model: An already loaded causal LM (default: load ``settings.model``).
        tokenizer: Its tokenizer (required when ``model`` is given).
        system: The model's reasoning switch (the system prompt), or None.

    Returns:
        The trainer; ``trainer.train()`` runs it.

    Example:
        >>> trainer = build_sft_trainer(settings=SFTSettings(max_steps=2), rows=rows,
        ...                             output_dir="out", model=lm, tokenizer=tok)  # doctest: +SKIP
    """
    from trl import SFTConfig, SFTTrainer

    model, tokenizer, kwargs = trainer_inputs(settings, model=model, tokenizer=tokenizer, output_dir=output_dir)
    config = SFTConfig(**kwargs, completion_only_loss=True, packing=False)
    return SFTTrainer(
        model=model,
        args=config,
        train_dataset=build_sft_dataset(rows, n_passages=settings.n_passages, seed=settings.seed, system=system),
        processing_class=tokenizer,
    )


def train_sft(
    *,
    settings: SFTSettings,
    rows: Sequence[TrainingRow],
    output_dir: str | os.PathLike[str] | None,
    model: Any = None,
    tokenizer: Any = None,
    overwrite: bool = False,
    manifest: dict[str, Any] | None = None,
) -> tuple[TrainingReport, Any]:
    """Fine-tune the generator on the rows and save it to ``output_dir``.

    The run happens in a scratch directory that replaces ``output_dir`` only when
    training succeeded, so an interrupted run leaves no half-written model.

    Args:
        settings: SFT settings.
        rows: Training rows (``settings.limit`` keeps the first n).
        output_dir: Where to save the model, tokenizer and ``r2vc_training.json``
            (None: do not save; the trained model is still returned).
        model: Already loaded model (default: load ``settings.model``).
        tokenizer: Its tokenizer.
        overwrite: Replace an existing ``output_dir``.
        manifest: The run manifest (:func:`~averitec_tools.baselines._run.manifest.run_manifest`)
            saved in ``r2vc_training.json``.

    Returns:
        ``(report, trained_model)``.

    Example:
        >>> report, lm = train_sft(settings=SFTSettings(model="path/to/base"),
        ...                        rows=read_training_rows("train.jsonl"),
        ...                        output_dir="sft-out")  # doctest: +SKIP
    """
    if settings.limit is not None:
        rows = rows[: settings.limit]
    model, tokenizer = ensure_model(settings, model=model, tokenizer=tokenizer)
    choice = prompt_choice(model, settings)
    return fit_and_save(
        stage="sft", settings=settings, reasoning=choice, n_examples=len(rows), output_dir=output_dir,
        overwrite=overwrite, manifest=manifest,
        build_trainer=lambda workdir: build_sft_trainer(settings=settings, rows=rows, output_dir=workdir, model=model,
                                                        tokenizer=tokenizer, system=choice.system),
    )


__all__ = ["build_sft_trainer", "train_sft"]
