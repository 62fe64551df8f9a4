"""Stage 9b: DPO alignment of the SFT generator with TRL's ``DPOTrainer`` (paper §3.3).

Preference triples (x, y+, y−) come from :func:`data.build_preference_pairs`: y+ has the
correct label and a rationale that quotes and cites the evidence; y− has a wrong label
or a mismatched citation. β = 0.2 and lr = 4e-6 (Table G.1). The reference model is a
frozen copy of the starting (SFT) model. The stage runs through
:func:`~averitec_tools.baselines.r2vc.training.stages.train` with ``stage="dpo"``.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.training._common import TrainerInputs
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


def pairs_needed(settings: DPOSettings) -> int | None:
    """Preference pairs the run's optimizer steps consume (``max_steps`` × the batch), or None
    when it runs whole epochs (every row's pair).

    Example:
        >>> pairs_needed(DPOSettings(max_steps=125)), pairs_needed(DPOSettings())
        (2000, None)
    """
    if settings.max_steps <= 0:
        return None
    return settings.max_steps * settings.per_device_train_batch_size * settings.gradient_accumulation_steps


def dpo_examples(*, rows: Sequence[TrainingRow], settings: DPOSettings, tokenizer: Any) -> tuple[list[PreferencePair], int]:
    """DPO's training examples: preference pairs drawn from the rows (``settings.pair_seed``,
    ``settings.wrong_label_fraction``), less those over ``max_target_length`` tokens.

    A run of ``max_steps`` uses :func:`pairs_needed` pairs: only those are built and
    tokenised, for a seeded random sample of the rows (Figure F.3's 125 steps use 2,000 of
    VitaminC's ~360,000 rows; building and tokenising them all took tens of CPU minutes and
    tens of GB of host RAM for pairs no step reads). Pairs dropped as too long are replaced by
    further rows of the same sample order.

    Returns:
        ``(pairs, n_dropped)``.

    Example:
        >>> rows = [TrainingRow(claim=f"c{i}", evidence_text=f"e{i}", label="True") for i in range(10)]
        >>> words = lambda text, add_special_tokens: {"input_ids": text.split()}  # a whitespace "tokenizer"
        >>> pairs, dropped = dpo_examples(rows=rows, settings=DPOSettings(n_passages=1), tokenizer=words)
        >>> len(pairs), dropped, pairs[0].chosen.startswith("True")
        (10, 0, True)
        >>> few, _ = dpo_examples(rows=rows, settings=DPOSettings(n_passages=1, max_steps=2,
        ...                       per_device_train_batch_size=2, gradient_accumulation_steps=1), tokenizer=words)
        >>> len(few), len({p.row.claim for p in few})
        (4, 4)
    """
    def build(only: Sequence[int] | None, part: int) -> list[PreferencePair]:
        return build_preference_pairs(rows, seed=settings.pair_seed + part, only=only, n_passages=settings.n_passages,
                                      wrong_label_fraction=settings.wrong_label_fraction, layout_seed=settings.seed)

    needed = pairs_needed(settings)
    if needed is None or needed >= len(rows):
        return filter_long_pairs(build(None, 0), tokenizer=tokenizer, max_target_length=settings.max_target_length)
    order = list(range(len(rows)))
    random.Random(settings.pair_seed).shuffle(order)
    kept: list[PreferencePair] = []
    dropped = start = part = 0
    while len(kept) < needed and start < len(order):
        take = order[start:start + needed - len(kept)]
        start, part = start + len(take), part + 1
        fresh, n = filter_long_pairs(build(sorted(take), part - 1), tokenizer=tokenizer,
                                     max_target_length=settings.max_target_length)
        kept, dropped = kept + fresh, dropped + n
    return kept, dropped


def dpo_trainer(*, settings: DPOSettings, examples: Sequence[PreferencePair], inputs: TrainerInputs) -> Any:
    """Build (but do not run) a TRL ``DPOTrainer`` on the preference pairs.

    Args:
        settings: DPO settings (Table G.1 defaults; ``settings.model`` is the SFT model).
        examples: Preference pairs.
        inputs: The policy model, tokenizer, TRL config arguments and system prompt.

    Returns:
        The trainer; ``trainer.train()`` runs it.

    Raises:
        UserError: no preference pairs.
    """
    from trl import DPOConfig, DPOTrainer

    if not examples:
        raise UserError("no preference pairs to train on")
    config = DPOConfig(**inputs.config, beta=settings.beta)
    # TRL would reload the reference from the model's hub id/path, which fails for an
    # in-memory model and re-reads 16 GB for the paper's; a frozen copy is equivalent.
    ref_model = copy.deepcopy(inputs.model).eval()
    ref_model.requires_grad_(False)
    if config.bf16:  # the frozen reference only runs forward: bf16 weights halve its memory
        import torch

        ref_model.to(torch.bfloat16)
    return DPOTrainer(model=inputs.model, ref_model=ref_model, args=config,
                      train_dataset=build_dpo_dataset(examples, system=inputs.system),
                      processing_class=inputs.tokenizer)


__all__ = ["dpo_examples", "dpo_trainer", "filter_long_pairs", "pairs_needed"]
