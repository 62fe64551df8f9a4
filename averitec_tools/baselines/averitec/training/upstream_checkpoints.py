"""The organisers' shipped Lightning checkpoints as checkpoint directories of this pipeline.

The 2024 baseline ships two PyTorch Lightning checkpoints (``pretrained_models/`` in
``chenxwh/AVeriTeC``): ``bert_dual_encoder.ckpt`` (the reranker: ``bert-base-uncased``
with a 2-way head, label 1 = relevant) and ``bert_veracity.ckpt`` (the verdict: a 4-way
head over Supported, Refuted, Not Enough Evidence, Conflicting Evidence/Cherrypicking).
Both are a Lightning module whose only sub-module is ``self.model``, a
``BertForSequenceClassification``: the checkpoint's ``state_dict`` holds that model's
weights under ``model.<key>`` (older transformers also stored the
``bert.embeddings.position_ids`` buffer), next to Lightning's own entries (``epoch``,
``global_step``, ``optimizer_states``, ``callbacks`` ...). :func:`convert_checkpoint`
writes such a file as the checkpoint directory the reranker and verdict stages load
(weights checked key for key: a missing or unexpected weight is refused, never ignored);
``reranker.checkpoint`` / ``verdict.checkpoint`` may name the ``.ckpt`` itself, which is
converted once into the cache (:func:`converted_checkpoint`). The shipped stage files are
read by :mod:`~averitec_tools.baselines.averitec.experiments.upstream`.

Example:
    >>> UPSTREAM_CHECKPOINTS["verdict"][0], len(UPSTREAM_CHECKPOINTS["verdict"][1])
    ('bert_veracity.ckpt', 4)
    >>> convert_checkpoint(ckpt="missing.ckpt", kind="verdict", base="bert-base-uncased", out_dir="x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: missing.ckpt: no such checkpoint file...
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from averitec_tools.baselines.averitec.config import AVeriTeCConfig, cache_dir
from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256

#: Stage kind → (shipped file name, label names in head order).
UPSTREAM_CHECKPOINTS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "reranker": ("bert_dual_encoder.ckpt", ("irrelevant", "relevant")),
    "verdict": ("bert_veracity.ckpt", ("Supported", "Refuted", "Not Enough Evidence",
                                       "Conflicting Evidence/Cherrypicking")),
}
#: Buffers older transformers stored in a state dict and newer ones rebuild (not weights).
_BUFFERS = re.compile(r".*embeddings\.(position_ids|token_type_ids)$")


def _load_lightning(ckpt: Path, *, trust_pickle: bool) -> dict[str, Any]:
    import pickle

    import torch

    if not ckpt.is_file():
        raise UserError(f"{ckpt}: no such checkpoint file",
                        hint="download it: huggingface-cli download chenxwh/AVeriTeC pretrained_models/"
                        f"{ckpt.name} --local-dir .")
    with ckpt.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"PK\x03\x04" and magic[:1] != b"\x80":  # torch.save's zip format, or the legacy pickle one
        raise UserError(f"{ckpt}: not a PyTorch checkpoint (neither torch.save format)")
    try:
        obj = torch.load(ckpt, map_location="cpu", weights_only=not trust_pickle)
    except pickle.UnpicklingError:
        raise UserError(f"{ckpt}: holds objects beyond tensors (a weights-only load refused it)",
                        hint="load it anyway only if you trust the file: --trust-pickle") from None
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        raise UserError(f"{ckpt}: not a PyTorch checkpoint ({type(exc).__name__})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("state_dict"), dict):
        raise UserError(f"{ckpt}: not a PyTorch Lightning checkpoint (no state_dict)")
    return obj


def _base_model(base: str, *, labels: Sequence[str]) -> tuple[Any, Any, str]:
    """``base`` with a fresh head of ``labels`` (weights not loaded), its tokenizer and component name."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    from averitec_tools.baselines.averitec.models import describe

    resolved, base_component = describe(model=base)
    try:
        config = AutoConfig.from_pretrained(resolved.location, num_labels=len(labels),
                                            id2label=dict(enumerate(labels)),
                                            label2id={v: i for i, v in enumerate(labels)})
        tok = AutoTokenizer.from_pretrained(resolved.location)
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(f"model {base!r}: cannot be loaded ({str(exc).strip().splitlines()[0]})") from None
    return AutoModelForSequenceClassification.from_config(config), tok, base_component


def _check_fit(expected: Mapping[str, Any], weights: Mapping[str, Any], *, what: str) -> None:
    """Refuse ``weights`` with a key ``expected`` lacks, lacking one it has (buffers aside), or of another shape."""
    missing = sorted(set(expected) - set(weights) - {k for k in expected if _BUFFERS.match(k)})
    unexpected = sorted(k for k in set(weights) - set(expected) if not _BUFFERS.match(k))
    wrong = sorted(k for k in set(weights) & set(expected) if tuple(weights[k].shape) != tuple(expected[k].shape))
    if missing or unexpected or wrong:
        parts = [f"{n} {kind} (e.g. {keys[0]})" for kind, keys, n in (
            ("missing", missing, len(missing)), ("unexpected", unexpected, len(unexpected)),
            ("of another shape", wrong, len(wrong))) if keys]
        raise UserError(f"{what}: " + "; ".join(parts), hint="pass the base model it was trained from (--base)")


def convert_checkpoint(*, ckpt: str | os.PathLike[str], kind: str, base: str, out_dir: str | os.PathLike[str],
                       trust_pickle: bool = False) -> dict[str, Any]:
    """Write the upstream Lightning checkpoint ``ckpt`` as a checkpoint directory (HF model,
    ``base``'s tokenizer, ``manifest.json``) for the ``reranker`` or ``verdict`` stage.

    Args:
        ckpt: The ``.ckpt`` file.
        kind: ``reranker`` (2-way head) or ``verdict`` (4-way head).
        base: The model the checkpoint was fine-tuned from (architecture and tokenizer:
            ``bert-base-uncased`` upstream).
        out_dir: Directory to write (atomically).
        trust_pickle: Unpickle arbitrary objects (only for a file you trust).

    Raises:
        UserError: no file, not a Lightning checkpoint, or its weights do not match
            ``base``'s architecture with the stage's head (naming the keys).
    """
    from averitec_tools.jsonio import atomic_directory

    if kind not in UPSTREAM_CHECKPOINTS:
        raise UserError(f"unknown checkpoint kind {kind!r}", hint=f"one of: {', '.join(UPSTREAM_CHECKPOINTS)}")
    path = Path(ckpt)
    obj = _load_lightning(path, trust_pickle=trust_pickle)
    weights = {k[len("model."):]: v for k, v in obj["state_dict"].items() if k.startswith("model.")}
    if not weights:
        raise UserError(f"{path}: no 'model.*' weights in its state_dict (not an upstream AVeriTeC module)")
    labels = UPSTREAM_CHECKPOINTS[kind][1]
    model, tok, base_component = _base_model(base, labels=labels)
    _check_fit(model.state_dict(), weights, what=f"{path}: its weights do not fit {base} with a "
               f"{len(labels)}-way {kind} head")
    model.load_state_dict({k: v for k, v in weights.items() if k in model.state_dict()}, strict=False)
    sha = file_sha256(path)
    manifest: dict[str, Any] = {"kind": kind, "base": base_component, "labels": list(labels), "fingerprint": f"upstream-{sha[:16]}",
                "settings": {"max_length": 512},
                "source": {"file": str(path), "sha256": sha, "format": "pytorch-lightning",
                           **{k: obj.get(k) for k in ("epoch", "global_step", "pytorch-lightning_version")
                              if k in obj}},
                "ignored_entries": sorted(k for k in obj["state_dict"] if not k.startswith("model."))}
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (Path(tmp) / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    return manifest


def converted_checkpoint(*, ckpt: str | os.PathLike[str], kind: str, base: str, cfg: AVeriTeCConfig) -> str:
    """The directory of ``ckpt`` converted (once, cached by its sha256 and base) for ``kind``."""
    path = Path(ckpt)
    if not path.is_file():
        _load_lightning(path, trust_pickle=False)  # the one-line error naming the download
    target = cache_dir(cfg) / f"upstream-{kind}-{file_sha256(path)[:16]}-{re.sub(r'[^A-Za-z0-9]+', '-', base)}"
    if not (target / "manifest.json").is_file():
        convert_checkpoint(ckpt=path, kind=kind, base=base, out_dir=target)
    return str(target)


__all__ = ["convert_checkpoint", "converted_checkpoint"]
