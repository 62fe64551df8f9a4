"""Stage 9b: DPO alignment of the SFT generator with TRL's ``DPOTrainer`` (paper §3.3).

Preference triples (x, y+, y−) come from :func:`data.build_preference_pairs`: y+ has the
correct label and a rationale that quotes and cites the evidence; y− has a wrong label
or a mismatched citation. β = 0.2 and lr = 4e-6 (Table G.1). The reference model is a
frozen copy of the starting (SFT) model.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.training._common import (
    TrainingReport,
    ensure_model,
    fit_and_save,
    prepare_tokenizer,
    prompt_choice,
    trainer_inputs,
)
from averitec_tools.baselines.r2vc.training.config import DPOSettings
from averitec_tools.baselines.r2vc.training.data import (
    PreferencePair,
    build_dpo_dataset,
    build_preference_pairs,
)
from averitec_tools.baselines.r2vc.training.rows import TrainingRow
from averitec_tools.errors import UserError


def filter_long_pairs(
    pairs: Sequence[PreferencePair], *, tokenizer: Any, max_target_length: int
) -> tuple[list[PreferencePair], int]:
    """Drop pairs whose chosen or rejected response exceeds ``max_target_length`` tokens.

    Table G.1's "max target length" (512); TRL 1.x has no separate response limit, so it
    is enforced here, and the number dropped is reported rather than silently truncated.

    Returns:
        ``(kept_pairs, n_dropped)``.

    Example:
        >>> row = TrainingRow(claim="c", evidence_text="e", label="True")
        >>> pairs = [PreferencePair(row, "True: short.", "False: short.", "wrong_label"),
        ...          PreferencePair(row, "True: " + "long " * 20, "False: short.", "wrong_label")]
        >>> words = lambda text, add_special_tokens: {"input_ids": text.split()}  # a whitespace "tokenizer"
        >>> kept, dropped = filter_long_pairs(pairs, tokenizer=words, max_target_length=8)
        >>> [p.chosen for p in kept], dropped
        (['True: short.'], 1)
    """
    kept = []
    for pair in pairs:
        longest = max(
            len(tokenizer(pair.chosen, add_special_tokens=False)["input_ids"]),
            len(tokenizer(pair.rejected, add_special_tokens=False)["input_ids"]),
        )
        if longest <= max_target_length:
            kept.append(pair)
    return kept, len(pairs) - len(kept)


def build_dpo_trainer(
    *,
    settings: DPOSettings,
    pairs: Sequence[PreferencePair],
    output_dir: str | os.PathLike[str],
    model: Any = None,
    tokenizer: Any = None,
    system: str | None = None,
) -> Any:
    """Build (but do not run) a TRL ``DPOTrainer`` on the preference pairs.

    Args:
        settings: DPO settings (Table G.1 defaults; ``settings.model`` is the SFT model).
        pairs: Preference pairs.
        output_dir: Trainer working directory.
        model: An already loaded policy model (default: load ``settings.model``).
        tokenizer: Its tokenizer (required when ``model`` is given).
        system: The model's reasoning switch (the system prompt), or None.

    Returns:
        The trainer; ``trainer.train()`` runs it.

    Example:
        >>> trainer = build_dpo_trainer(settings=DPOSettings(max_steps=2), pairs=pairs,
        ...                             output_dir="out", model=lm, tokenizer=tok)  # doctest: +SKIP
    """
    from trl import DPOConfig, DPOTrainer

    if not pairs:
        raise UserError("no preference pairs to train on")
    model, tokenizer, kwargs = trainer_inputs(settings, model=model, tokenizer=tokenizer, output_dir=output_dir)
    config = DPOConfig(**kwargs, beta=settings.beta)
    # TRL would reload the reference from the model's hub id/path, which fails for an
    # in-memory model and re-reads 16 GB for the paper's; a frozen copy is equivalent.
    ref_model = copy.deepcopy(model).eval()
    ref_model.requires_grad_(False)
    if config.bf16:  # the frozen reference only runs forward: bf16 weights halve its memory
        import torch

        ref_model.to(torch.bfloat16)
    return DPOTrainer(
        model=model,
        ref_model=ref_model,
        args=config,
        train_dataset=build_dpo_dataset(pairs, system=system),
        processing_class=tokenizer,
    )


def train_dpo(
    *,
    settings: DPOSettings,
    rows: Sequence[TrainingRow],
    output_dir: str | os.PathLike[str] | None,
    model: Any = None,
    tokenizer: Any = None,
    overwrite: bool = False,
    manifest: dict[str, Any] | None = None,
) -> tuple[TrainingReport, Any]:
    """Build preference pairs from the rows and align the model with DPO.

    Args:
        settings: DPO settings (pairs are drawn with ``settings.pair_seed`` and
            ``settings.wrong_label_fraction``).
        rows: Training rows (``settings.limit`` keeps the first n).
        output_dir: Where to save the aligned model (None: do not save).
        model: Already loaded SFT model (default: load ``settings.model``).
        tokenizer: Its tokenizer.
        overwrite: Replace an existing ``output_dir``.
        manifest: The run manifest (:func:`~averitec_tools.baselines._run.manifest.run_manifest`)
            saved in ``r2vc_training.json``.

    Returns:
        ``(report, trained_model)``; ``report.n_dropped`` counts over-long pairs.

    Example:
        >>> report, lm = train_dpo(settings=DPOSettings(model="sft-out"),
        ...                        rows=read_training_rows("train.jsonl"),
        ...                        output_dir="dpo-out")  # doctest: +SKIP
    """
    if settings.limit is not None:
        rows = rows[: settings.limit]
    model, tokenizer = ensure_model(settings, model=model, tokenizer=tokenizer)
    tokenizer = prepare_tokenizer(tokenizer)
    pairs = build_preference_pairs(
        rows, seed=settings.pair_seed, wrong_label_fraction=settings.wrong_label_fraction,
        n_passages=settings.n_passages, layout_seed=settings.seed,
    )
    choice = prompt_choice(model, settings)
    pairs, n_dropped = filter_long_pairs(
        pairs, tokenizer=tokenizer, max_target_length=settings.max_target_length
    )
    return fit_and_save(
        stage="dpo", settings=settings, reasoning=choice, n_examples=len(pairs), n_dropped=n_dropped,
        output_dir=output_dir, overwrite=overwrite, manifest=manifest, tokenizer=tokenizer,
        build_trainer=lambda workdir: build_dpo_trainer(settings=settings, pairs=pairs, output_dir=workdir,
                                                        model=model, tokenizer=tokenizer, system=choice.system),
    )


__all__ = ["build_dpo_trainer", "filter_long_pairs", "train_dpo"]
