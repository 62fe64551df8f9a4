"""Training the justification stage's seq2seq model (BART, ``justification.train``) on the
training split: the epoch with the best held-out METEOR is kept, saved with a manifest.

The stage itself (inputs, the extractive fallback, the seq2seq justifier) is
:mod:`averitec_tools.baselines.averitec.stages.justification`.

Example:
    >>> import torch
    >>> _shift_right(torch.tensor([[5, 6, 7]]), 2).tolist()
    [[2, 5, 6]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.averitec.config import JustificationConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.baselines.averitec.stages.justification import generate, justification_examples
from averitec_tools.baselines.averitec.training.classifier import (
    BestEpoch,
    fingerprint,
    library_versions,
    save_checkpoint,
)
from averitec_tools.errors import UserError


def _shift_right(ids: Any, start: int) -> Any:
    shifted = ids.new_full(ids.shape, start)
    shifted[:, 1:] = ids[:, :-1]
    return shifted


def train_justifier(*, config: JustificationConfig, train: Sequence[ClaimItem], heldout: Sequence[ClaimItem],
                    out_dir: Any, data_info: dict[str, Any], progress: bool = False) -> dict[str, Any]:
    """Fine-tune the seq2seq model on the training claims; keep the epoch with the best mean
    METEOR on ``heldout`` (``train.select: meteor``; ``last`` keeps the last epoch); writes
    model + manifest."""
    import time

    import numpy as np
    import torch

    from averitec_tools.baselines.averitec.models import load_seq2seq

    t0 = time.perf_counter()
    s = config.train
    torch.manual_seed(s.seed)
    model, tok, base_component = load_seq2seq(model=config.model, device=s.device,
                                              add_prefix_space=config.input == "upstream")
    opt = torch.optim.AdamW(model.parameters(), lr=s.learning_rate)
    rng = np.random.default_rng(s.seed)
    data, held = _training_examples(config, train, heldout, data_info)
    losses: list[float] = []
    keep = BestEpoch(epochs=s.epochs)
    for epoch in range(s.epochs):
        losses += _train_epoch(model, tok, opt, data, order=rng.permutation(len(data)), config=config,
                               desc=f"train justification epoch {epoch + 1}", progress=progress)
        score = _heldout_meteor(model, tok, held, config) if held and s.select == "meteor" else None
        keep.update(model, epoch, score)
    keep.restore(model)
    manifest = _manifest(config, base_component=base_component, data_info=data_info, n_train=len(data),
                         n_heldout=len(held), losses=losses, keep=keep, seconds=round(time.perf_counter() - t0, 1))
    save_checkpoint(model, tok, manifest=manifest, out_dir=out_dir)
    return manifest


def _training_examples(config: JustificationConfig, train: Sequence[ClaimItem], heldout: Sequence[ClaimItem],
                       data_info: dict[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(input, justification) pairs to train on and to select the epoch with, capped by ``max_pairs``.

    Raises:
        UserError: No training claim has a justification.
    """
    s = config.train
    examples = justification_examples(train, style=config.input)
    data = examples[: s.max_pairs] if s.max_pairs else examples
    held = justification_examples(heldout, style=config.input)
    held = held[: max(5, s.max_pairs // 5)] if s.max_pairs else held
    if not data:
        raise UserError(f"{data_info.get('path')}: no training claims with a justification")
    return data, held


def _train_epoch(model: Any, tok: Any, opt: Any, data: Sequence[tuple[str, str]], *, order: Any,
                 config: JustificationConfig, desc: str, progress: bool) -> list[float]:
    """One pass over ``data`` in ``order``, batch by batch, stepping every ``grad_accumulation``
    batches and after the last; returns each batch's loss."""
    from tqdm.auto import tqdm

    s = config.train
    model.train()
    bs = max(1, s.batch_size)
    batches = [order[i : i + bs] for i in range(0, len(order), bs)]
    losses: list[float] = []
    for step, batch in enumerate(tqdm(batches, desc=desc, disable=not progress)):
        losses.append(_batch_backward(model, tok, [data[i] for i in batch], config))
        if (step + 1) % s.grad_accumulation == 0 or step + 1 == len(batches):
            opt.step()
            opt.zero_grad()
    return losses


def _batch_backward(model: Any, tok: Any, pairs: Sequence[tuple[str, str]], config: JustificationConfig) -> float:
    """Accumulate the gradient of one batch's loss (mean over its target tokens), in forward
    passes of at most ``micro_batch`` sequences (the same gradient); returns the loss."""
    import torch

    s = config.train
    enc = tok([src for src, _ in pairs], text_target=[tgt for _, tgt in pairs], truncation=True,
              max_length=s.max_length, padding=True, return_tensors="pt").to(model.device)
    labels = enc["labels"].masked_fill(enc["labels"] == tok.pad_token_id, -100)
    start = tok.pad_token_id if config.decoder_start == "pad" else model.config.decoder_start_token_id
    decoder_in = _shift_right(enc["labels"], start)
    # the batch's mean over target tokens, summed over micro-batches (same gradient)
    n_tokens = int((labels != -100).sum())
    size = s.micro_batch or len(pairs)
    total = 0.0
    for c0 in range(0, len(pairs), size):
        part = slice(c0, c0 + size)
        logits = model(input_ids=enc["input_ids"][part], attention_mask=enc["attention_mask"][part],
                       decoder_input_ids=decoder_in[part]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(),
                                                 labels[part].reshape(-1), ignore_index=-100,
                                                 reduction="sum") / max(1, n_tokens)
        (loss / s.grad_accumulation).backward()
        total += float(loss.detach())
    return total


def _heldout_meteor(model: Any, tok: Any, held: Sequence[tuple[str, str]], config: JustificationConfig) -> float:
    """Mean METEOR of the justifications generated for ``held`` against the gold ones."""
    import numpy as np

    from averitec_tools.metrics.meteor import default_engine

    model.eval()
    generated = generate(model, tok, [src for src, _ in held], config)
    engine = default_engine()
    return float(np.mean([engine.score(candidate=g, reference=ref) for g, (_, ref) in zip(generated, held, strict=True)]))


def _manifest(config: JustificationConfig, *, base_component: str, data_info: dict[str, Any], n_train: int,
              n_heldout: int, losses: list[float], keep: Any, seconds: float) -> dict[str, Any]:
    """The checkpoint's ``manifest.json``: data, settings, versions, per-epoch selection, fingerprint."""
    from dataclasses import asdict

    s = config.train
    manifest = {"kind": "justification", "base": base_component,
                "data": {**data_info, "train_examples": n_train, "heldout_examples": n_heldout},
                "settings": asdict(s), "input": config.input, "decoder_start": config.decoder_start,
                "versions": library_versions(), "final_loss": losses[-1] if losses else None,
                "heldout_metric": s.select, "heldout_per_epoch": keep.history, "best_epoch": keep.best_epoch,
                "seconds": seconds}
    manifest["fingerprint"] = fingerprint("justification", base_component, data_info, asdict(s), config.input,
                                          config.decoder_start)
    return manifest


__all__ = ["train_justifier"]
