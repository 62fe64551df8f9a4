"""The training stages by name, and the one flow that trains any of them on rows in memory.

Each stage (:mod:`.sft`, :mod:`.dpo`) gives a :class:`StageRecipe`: how rows become its
training examples and how the examples become a TRL trainer. :func:`train` does the rest
the same way for every stage: model loading, the reasoning mode, the checked run and the
staged output directory (:func:`~averitec_tools.baselines.r2vc.training._common.fit_and_save`).

Example:
    >>> STAGES.names()
    ['dpo', 'sft']
    >>> STAGES.get("dpp")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: unknown training stage 'dpp' (did you mean: dpo?)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.training._common import (
    TrainingReport,
    ensure_model,
    fit_and_save,
    prepare_tokenizer,
    prompt_choice,
    trainer_inputs,
)
from averitec_tools.baselines.r2vc.training.dpo import dpo_examples, dpo_trainer
from averitec_tools.baselines.r2vc.training.rows import TrainingRow
from averitec_tools.baselines.r2vc.training.sft import sft_examples, sft_trainer
from averitec_tools.registry import Registry


@dataclass(frozen=True)
class StageRecipe:
    """What one training stage does differently from the others.

    Attributes:
        examples: ``(rows=, settings=, tokenizer=) -> (examples, n_dropped)``.
        trainer: ``(settings=, examples=, inputs=) -> trainer`` (``inputs``: a
            :class:`~averitec_tools.baselines.r2vc.training._common.TrainerInputs`).
    """

    examples: Callable[..., tuple[list[Any], int]]
    trainer: Callable[..., Any]


STAGES: Registry[StageRecipe] = Registry("training stage")
STAGES.add("sft", StageRecipe(examples=sft_examples, trainer=sft_trainer))
STAGES.add("dpo", StageRecipe(examples=dpo_examples, trainer=dpo_trainer))


def build_trainer(
    *, stage: str, settings: Any, examples: Sequence[Any], output_dir: str | os.PathLike[str],
    model: Any = None, tokenizer: Any = None, system: str | None = None,
) -> Any:
    """Build (but do not run) ``stage``'s TRL trainer on its examples.

    Args:
        stage: ``"sft"`` (examples: training rows) or ``"dpo"`` (preference pairs).
        settings: The stage's settings (Table G.1 defaults).
        examples: The stage's training examples.
        output_dir: Trainer working directory.
        model: An already loaded model (default: load ``settings.model``).
        tokenizer: Its tokenizer (required when ``model`` is given).
        system: The model's reasoning switch (the system prompt), or None.

    Returns:
        The trainer; ``trainer.train()`` runs it.

    Example:
        >>> trainer = build_trainer(stage="sft", settings=SFTSettings(max_steps=2), examples=rows,
        ...                         output_dir="out", model=lm, tokenizer=tok)  # doctest: +SKIP
    """
    inputs = trainer_inputs(settings, model=model, tokenizer=tokenizer, output_dir=output_dir, system=system)
    return STAGES.get(stage).trainer(settings=settings, examples=examples, inputs=inputs)


def train(
    *,
    stage: str,
    settings: Any,
    rows: Sequence[TrainingRow],
    output_dir: str | os.PathLike[str] | None,
    model: Any = None,
    tokenizer: Any = None,
    overwrite: bool = False,
    manifest: dict[str, Any] | None = None,
) -> tuple[TrainingReport, Any]:
    """Train ``stage`` on the rows and save the model to ``output_dir``.

    The final model is written to a scratch directory that replaces ``output_dir`` only
    when training succeeded, so an interrupted run leaves no half-written model; with
    ``settings.save_steps`` > 0 the run checkpoints into ``output_dir.checkpoints/`` and a
    rerun resumes there (:mod:`~averitec_tools.baselines.r2vc.training.checkpoints`).

    Args:
        stage: ``"sft"`` (fine-tune on the rows) or ``"dpo"`` (align on preference pairs
            drawn from them).
        settings: The stage's ``SFTSettings`` or ``DPOSettings``.
        rows: Training rows (``settings.limit`` keeps the first n).
        output_dir: Where to save the model, tokenizer and ``r2vc_training.json``
            (None: do not save; the trained model is still returned).
        model: Already loaded model (default: load ``settings.model``; DPO: the SFT model).
        tokenizer: Its tokenizer.
        overwrite: Replace an existing ``output_dir``.
        manifest: The run manifest (:func:`~averitec_tools.baselines._run.manifest.run_manifest`)
            saved in ``r2vc_training.json``.

    Returns:
        ``(report, trained_model)``; ``report.n_dropped`` counts the examples dropped
        (DPO: over-long pairs).

    Example:
        >>> report, lm = train(stage="sft", settings=SFTSettings(model="path/to/base"),
        ...                    rows=read_training_rows("train.jsonl"),
        ...                    output_dir="sft-out")  # doctest: +SKIP
    """
    recipe = STAGES.get(stage)
    if settings.limit is not None:
        rows = rows[: settings.limit]
    model, tokenizer = ensure_model(settings, model=model, tokenizer=tokenizer)
    tokenizer = prepare_tokenizer(tokenizer)
    choice = prompt_choice(model, settings)
    examples, n_dropped = recipe.examples(rows=rows, settings=settings, tokenizer=tokenizer)
    return fit_and_save(
        stage=stage, settings=settings, reasoning=choice, n_examples=len(examples), n_dropped=n_dropped,
        output_dir=output_dir, overwrite=overwrite, manifest=manifest, tokenizer=tokenizer,
        build_trainer=lambda workdir: build_trainer(stage=stage, settings=settings, examples=examples,
                                                    output_dir=workdir, model=model, tokenizer=tokenizer,
                                                    system=choice.system),
    )


__all__ = ["STAGES", "build_trainer", "train"]
