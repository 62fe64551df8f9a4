"""Fine-tuning shared by the reranker and verdict stages (and the justification model),
with a manifest beside every checkpoint.

A checkpoint directory holds the HF model, its tokenizer and ``manifest.json``: the kind
of model, the base model (id and revision), the training data's sha256 and counts, every
setting, the library versions, held-out accuracy per epoch and the epoch kept.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.config import TrainConfig
from averitec_tools.jsonio import atomic_directory

Example = tuple[str, str | None, int]


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("averitec-tools", "torch", "transformers", "bm25s", "numpy"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def fingerprint(*parts: Any) -> str:
    """Short, stable hash of JSON-serialisable parts (cache keys, manifest ids).

    Example:
        >>> fingerprint({"a": 1}) == fingerprint({"a": 1}), len(fingerprint("x"))
        (True, 16)
    """
    from averitec_tools.hashing import json_digest

    return json_digest(parts)  # the parts as one JSON list


def split_heldout(n_claims: int, *, share: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out claims (a seeded ``share`` of them, at least one if share > 0).

    Example:
        >>> int(split_heldout(10, share=0.2, seed=0).sum())
        2
    """
    mask = np.zeros(n_claims, dtype=bool)
    if share > 0 and n_claims > 1:
        k = max(1, int(round(share * n_claims)))
        mask[np.random.default_rng(seed).permutation(n_claims)[:k]] = True
    return mask


def cap_examples(examples: Sequence[Example], *, cap: int | None, seed: int) -> list[Example]:
    """A seeded sample of at most ``cap`` examples, classes as balanced as the data allows.

    Example:
        >>> ex = [("a", "b", 0)] * 8 + [("a", "b", 1)] * 2
        >>> sorted(y for *_, y in cap_examples(ex, cap=4, seed=0))
        [0, 0, 1, 1]
    """
    if cap is None or len(examples) <= cap:
        return list(examples)
    rng = np.random.default_rng(seed)
    by_class: dict[int, list[int]] = {}
    for i, (_, _, y) in enumerate(examples):
        by_class.setdefault(y, []).append(i)
    pools = {y: list(rng.permutation(idx)) for y, idx in sorted(by_class.items())}
    chosen: list[int] = []
    while len(chosen) < cap:  # round-robin over classes until the cap
        for y in list(pools):
            if not pools[y]:
                del pools[y]
                continue
            chosen.append(int(pools[y].pop()))
            if len(chosen) == cap:
                break
    return [examples[i] for i in rng.permutation(chosen)]


def freeze_bottom(model: Any, layers: int) -> int:
    """Freeze the embeddings and the bottom ``layers`` encoder layers of a BERT-style model;
    returns the number of frozen parameters (0 when ``layers`` is 0 or the model has no such parts)."""
    if layers <= 0:
        return 0
    base = getattr(model, "base_model", model)
    parts = [getattr(base, "embeddings", None)]
    encoder_layers = getattr(getattr(base, "encoder", None), "layer", None)
    if encoder_layers is not None:
        parts.extend(list(encoder_layers)[:layers])
    n = 0
    for part in parts:
        if part is None:
            continue
        for p in part.parameters():
            p.requires_grad = False
            n += p.numel()
    return n


def batch_weights(labels: Sequence[int], *, loss: str) -> list[float]:
    """Per-example loss weights of one batch: ``mean`` — 1/n each; ``class-mean`` — 1/(count
    of the example's class), so the loss is the sum over classes of each class's mean (the
    upstream reranker: mean over positives + mean over negatives).

    Example:
        >>> batch_weights([1, 0, 0, 0], loss="class-mean")
        [1.0, 0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
        >>> batch_weights([1, 0], loss="mean")
        [0.5, 0.5]
    """
    if loss == "class-mean":
        counts: dict[int, int] = {}
        for y in labels:
            counts[y] = counts.get(y, 0) + 1
        return [1.0 / counts[y] for y in labels]
    return [1.0 / len(labels)] * len(labels)


def _encode(tok: Any, pairs: Sequence[tuple[str, str | None]], max_length: int) -> Any:
    first = [a for a, _ in pairs]
    second = [b for _, b in pairs]
    if all(b is None for b in second):
        return tok(first, truncation=True, max_length=max_length, padding=True, return_tensors="pt")
    return tok(first, [b or "" for b in second], truncation=True, max_length=max_length, padding=True,
               return_tensors="pt")


class BestEpoch:
    """The epoch to keep: the best held-out score (the last epoch when nothing is scored).

    Example:
        >>> keep = BestEpoch(epochs=3)
        >>> for epoch, score in enumerate([0.5, 0.7, 0.6]):
        ...     keep.update(None, epoch, score)
        >>> keep.best_epoch, keep.history
        (2, [0.5, 0.7, 0.6])
    """

    def __init__(self, *, epochs: int) -> None:
        self.epochs = epochs
        self.history: list[float | None] = []
        self.best_epoch, self._best, self._state = 0, -1.0, None

    def update(self, model: Any, epoch: int, score: float | None) -> None:
        self.history.append(score)
        ranked = score if score is not None else float(epoch)
        if ranked > self._best:
            self._best, self.best_epoch = ranked, epoch + 1
            self._state = copy.deepcopy(model.state_dict()) if self.epochs > 1 and model is not None else None

    def restore(self, model: Any) -> None:
        """Load the kept epoch's weights into ``model`` and set it to evaluation mode."""
        if self._state is not None:
            model.load_state_dict(self._state)
        model.eval()


def _train_epoch(*, model: Any, tok: Any, opt: Any, train: Sequence[Example], batches: Sequence[Sequence[int]],
                 loss_kind: str, settings: TrainConfig, desc: str, progress: bool) -> None:
    """One epoch over ``batches`` (lists of example indices), split into ``micro_batch`` forward passes."""
    import torch
    from tqdm.auto import tqdm

    device = model.device
    model.train()
    size_cap = settings.micro_batch or None
    for step, batch in enumerate(tqdm(batches, desc=desc, unit="batch", disable=not progress)):
        weights = batch_weights([train[i][2] for i in batch], loss=loss_kind)
        size = size_cap or len(batch)
        for c0 in range(0, len(batch), size):
            part = batch[c0 : c0 + size]
            enc = _encode(tok, [(train[i][0], train[i][1]) for i in part], settings.max_length).to(device)
            logits = model(**enc).logits
            ce = torch.nn.functional.cross_entropy(
                logits, torch.tensor([train[i][2] for i in part], device=device), reduction="none")
            w = torch.tensor(weights[c0 : c0 + size], device=device, dtype=ce.dtype)
            ((ce * w).sum() / settings.grad_accumulation).backward()
        if (step + 1) % settings.grad_accumulation == 0 or step + 1 == len(batches):
            opt.step()
            opt.zero_grad()


def _manifest(*, kind: str, base_component: Any, labels: Sequence[str], train: Sequence[Example],
              heldout: Sequence[Example], data_info: Mapping[str, Any], settings: TrainConfig, n_groups: int | None,
              frozen: int, loss_kind: str, keep: BestEpoch, seconds: float) -> dict[str, Any]:
    """The checkpoint's ``manifest.json``: data, settings, versions, held-out scores, the epoch kept."""
    counts: dict[str, int] = {}
    for *_, y in train:
        counts[labels[y]] = counts.get(labels[y], 0) + 1
    manifest = {
        "kind": kind, "base": base_component, "labels": list(labels),
        "data": {**dict(data_info), "train_examples": len(train), "heldout_examples": len(heldout),
                 "class_counts": counts, **({"groups": n_groups} if n_groups is not None else {})},
        "settings": asdict(settings), "versions": library_versions(), "frozen_parameters": frozen,
        "loss": loss_kind, "heldout_metric": settings.select, "heldout_per_epoch": keep.history, "best_epoch": keep.best_epoch,
        "seconds": round(seconds, 1),
    }
    manifest["fingerprint"] = fingerprint(kind, base_component, dict(data_info), asdict(settings))
    return manifest


def _heldout_accuracy(heldout: Sequence[Example]
                      ) -> Callable[[Callable[[list[tuple[str, str | None]]], np.ndarray]], float]:
    """Scores a prediction function by its accuracy on ``heldout``."""
    held_y = np.array([y for *_, y in heldout])

    def evaluate(fn: Callable[[list[tuple[str, str | None]]], np.ndarray]) -> float:
        return float(np.mean(fn([(a, b) for a, b, _ in heldout]).argmax(1) == held_y))

    return evaluate


def train_classifier(
    *,
    base: str,
    labels: Sequence[str],
    train: Sequence[Example],
    heldout: Sequence[Example],
    settings: TrainConfig,
    out_dir: str | Path,
    kind: str,
    data_info: Mapping[str, Any],
    progress: bool = False,
    groups: Sequence[Sequence[int]] | None = None,
    evaluate: Callable[[Callable[[list[tuple[str, str | None]]], np.ndarray]], float] | None = None,
) -> dict[str, Any]:
    """Fine-tune ``base`` with a fresh ``len(labels)``-way head on (text_a, text_b or None,
    label) examples; keep the best epoch by ``settings.select``; write model + manifest to
    ``out_dir`` atomically. Returns the manifest.

    ``groups`` (lists of example indices) makes a batch ``batch_size`` whole groups with the
    class-mean loss (:func:`batch_weights`); otherwise a batch is ``batch_size`` shuffled
    examples with the plain mean. ``evaluate`` scores a prediction function on held-out
    data (default: accuracy of ``heldout``).
    """
    import torch

    from averitec_tools.baselines.averitec.models import load_classifier

    t0 = time.perf_counter()
    torch.manual_seed(settings.seed)
    model, tok, base_component = load_classifier(model=base, device=settings.device, num_labels=len(labels),
                                                 id2label=dict(enumerate(labels)))
    frozen = freeze_bottom(model, settings.freeze_layers)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=settings.learning_rate)
    rng = np.random.default_rng(settings.seed)
    units = [list(g) for g in groups] if groups is not None else [[i] for i in range(len(train))]
    loss_kind = "class-mean" if groups is not None else "mean"

    def predict(pairs: list[tuple[str, str | None]]) -> np.ndarray:
        return predict_proba(model=model, tokenizer=tok, pairs=pairs, max_length=settings.max_length, batch_size=64)

    evaluate = evaluate if evaluate is not None or not heldout else _heldout_accuracy(heldout)
    keep = BestEpoch(epochs=settings.epochs)
    bs = max(1, settings.batch_size)
    for epoch in range(settings.epochs):
        order = rng.permutation(len(units))
        batches = [[i for u in order[s : s + bs] for i in units[u]] for s in range(0, len(order), bs)]
        _train_epoch(model=model, tok=tok, opt=opt, train=train, batches=batches, loss_kind=loss_kind,
                     settings=settings, desc=f"train {kind} epoch {epoch + 1}", progress=progress)
        score = None
        if evaluate is not None and settings.select != "last":
            model.eval()
            score = float(evaluate(predict))
        keep.update(model, epoch, score)
    keep.restore(model)
    manifest = _manifest(kind=kind, base_component=base_component, labels=labels, train=train, heldout=heldout,
                         data_info=data_info, settings=settings, n_groups=len(units) if groups is not None else None,
                         frozen=frozen, loss_kind=loss_kind, keep=keep, seconds=time.perf_counter() - t0)
    save_checkpoint(model, tok, manifest=manifest, out_dir=out_dir)
    return manifest


def save_checkpoint(model: Any, tokenizer: Any, *, manifest: Mapping[str, Any], out_dir: str | os.PathLike[str]) -> None:
    """Write a checkpoint directory atomically: the model, its tokenizer and ``manifest.json``."""
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))


def predict_proba(*, model: Any, tokenizer: Any, pairs: Sequence[tuple[str, str | None]], max_length: int,
                  batch_size: int) -> np.ndarray:
    """Softmax class probabilities for (text_a, text_b or None) inputs."""
    import torch

    out = []
    model.eval()
    with torch.no_grad():
        for i in range(0, len(pairs), batch_size):
            enc = _encode(tokenizer, pairs[i : i + batch_size], max_length).to(model.device)
            out.append(torch.softmax(model(**enc).logits.float(), dim=-1).cpu().numpy())
    n = int(getattr(model.config, "num_labels", 2))
    return np.concatenate(out) if out else np.zeros((0, n))


class PairClassifier:
    """A fine-tuned checkpoint scoring (text_a, text_b or None) inputs; ``component`` names
    it. The weights load on the first :meth:`predict` (a run served from the stage cache
    never loads them)."""

    def __init__(self, *, checkpoint: str, device: str | None = None, batch_size: int = 64,
                 max_length: int | None = None) -> None:
        from averitec_tools.baselines.averitec.models import describe

        self.checkpoint, self.device, self.batch_size = checkpoint, device, batch_size
        _, self.component = describe(model=checkpoint)
        manifest = Path(checkpoint) / "manifest.json"
        self.manifest = json.loads(manifest.read_text()) if manifest.is_file() else {}
        self.max_length = max_length or int(self.manifest.get("settings", {}).get("max_length", 512))
        self._loaded: tuple[Any, Any] | None = None
        self.load_seconds = 0.0

    def predict(self, pairs: Sequence[tuple[str, str | None]]) -> np.ndarray:
        if self._loaded is None:
            from averitec_tools.baselines.averitec.models import load_classifier

            t0 = time.perf_counter()
            model, tok, _ = load_classifier(model=self.checkpoint, device=self.device)
            self._loaded = (model.eval(), tok)
            self.load_seconds = time.perf_counter() - t0
        return predict_proba(model=self._loaded[0], tokenizer=self._loaded[1], pairs=pairs,
                             max_length=self.max_length, batch_size=self.batch_size)


__all__ = ["BestEpoch", "PairClassifier", "batch_weights", "cap_examples", "fingerprint", "library_versions",
           "predict_proba", "save_checkpoint", "split_heldout", "train_classifier"]
