"""Stage 9a: supervised fine-tuning of the R2VC generator with TRL's ``SFTTrainer``.

The data are conversational prompt–completion records (:func:`data.sft_record`), so
TRL's completion-only loss applies: the collator sets the label of every prompt
(system + user) token to -100 and the loss covers the assistant response only — the
paper's "masking collator that zeroes loss on user tokens". The stage runs through
:func:`~averitec_tools.baselines.r2vc.training.stages.train` with ``stage="sft"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.training._common import TrainerInputs
from averitec_tools.baselines.r2vc.training.config import SFTSettings
from averitec_tools.baselines.r2vc.training.data import build_sft_dataset
from averitec_tools.baselines.r2vc.training.rows import TrainingRow


def sft_examples(*, rows: Sequence[TrainingRow], settings: SFTSettings, tokenizer: Any) -> tuple[list[TrainingRow], int]:
    """SFT's training examples: every row, none dropped.

    Example:
        >>> rows = [TrainingRow(claim="c", evidence_text="e", label="True")]
        >>> kept, dropped = sft_examples(rows=rows, settings=SFTSettings(), tokenizer=None)
        >>> [row.claim for row in kept], dropped
        (['c'], 0)
    """
    return list(rows), 0


def sft_trainer(*, settings: SFTSettings, examples: Sequence[TrainingRow], inputs: TrainerInputs) -> Any:
    """Build (but do not run) a TRL ``SFTTrainer`` for the R2VC generator.

    Prompts are in the inference layout (``settings.n_passages`` passages, the gold one
    at a seeded random position).

    Args:
        settings: SFT settings (Table G.1 defaults).
        examples: Training rows.
        inputs: The model, tokenizer, TRL config arguments and system prompt.

    Returns:
        The trainer; ``trainer.train()`` runs it.
    """
    from trl import SFTConfig, SFTTrainer

    config = SFTConfig(**inputs.config, completion_only_loss=True, packing=False)
    dataset = build_sft_dataset(examples, n_passages=settings.n_passages, seed=settings.seed, system=inputs.system)
    return SFTTrainer(model=inputs.model, args=config, train_dataset=dataset, processing_class=inputs.tokenizer)


__all__ = ["sft_examples", "sft_trainer"]
