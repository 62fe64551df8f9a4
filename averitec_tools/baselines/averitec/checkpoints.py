"""Which fine-tuned checkpoint each trained stage uses: a configured one, or one trained
(and cached) from the configured base on the training split. Never a silent substitute."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from averitec_tools.baselines.averitec.config import AVeriTeCConfig, cache_dir, train_path
from averitec_tools.baselines.averitec.data import (
    ClaimItem,
    read_claims,
    without_scored_claims,
)
from averitec_tools.baselines.averitec.training import (
    cap_examples,
    fingerprint,
    split_heldout,
    train_classifier,
)
from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256

#: Held-out examples scored after each epoch are capped at this share of ``max_pairs``.
HELDOUT_CAP_SHARE = 0.2


def training_claims(cfg: AVeriTeCConfig, *, exclude: Sequence[str] = ()) -> tuple[list[ClaimItem], dict[str, Any]]:
    """The training split minus any claim whose text is among ``exclude`` (the scored claims)."""
    path = train_path(cfg)
    claims = read_claims(path, skip_empty=True)
    kept, dropped = without_scored_claims(claims, exclude)
    info = {"path": str(path), "sha256": file_sha256(path), "claims": len(kept), "dropped_scored_claims": dropped,
            "skipped_empty_claims": (claims[-1].claim_id + 1 - len(claims)) if isinstance(claims[-1].claim_id, int)
            else 0}
    if dropped:
        info["kept_ids_hash"] = fingerprint([c.claim_id for c in kept])
    return kept, info


def _stage_examples(kind: str, claims: Sequence[ClaimItem], seed: int) -> list[tuple[str, str, int]]:
    from averitec_tools.baselines.averitec.reranker import reranker_examples
    from averitec_tools.baselines.averitec.verdict import verdict_examples

    return reranker_examples(claims, seed=seed) if kind == "reranker" else verdict_examples(claims)


def train_stage(*, kind: str, cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], data_info: dict[str, Any],
                out_dir: str | Path, progress: bool = False) -> dict[str, Any]:
    """Train the ``reranker`` or ``verdict`` model of ``cfg`` on ``claims`` into ``out_dir``."""
    from averitec_tools.baselines.averitec import reranker, verdict

    section = getattr(cfg, kind)
    s = section.train
    held = split_heldout(len(claims), share=s.heldout, seed=s.seed)
    train_ex = _stage_examples(kind, [c for c, h in zip(claims, held, strict=True) if not h], s.seed)
    held_ex = _stage_examples(kind, [c for c, h in zip(claims, held, strict=True) if h], s.seed + 1)
    train_ex = cap_examples(train_ex, cap=s.max_pairs, seed=s.seed)
    held_cap = None if s.max_pairs is None else max(50, int(s.max_pairs * HELDOUT_CAP_SHARE))
    held_ex = cap_examples(held_ex, cap=held_cap, seed=s.seed)
    if not train_ex:
        raise UserError(f"{data_info.get('path')}: no training examples for the {kind}")
    labels = reranker.LABELS if kind == "reranker" else verdict.LABELS
    return train_classifier(base=section.base, labels=labels, train=train_ex, heldout=held_ex, settings=s,
                            out_dir=out_dir, kind=kind, data_info=data_info, progress=progress)


def obtain_checkpoint(*, kind: str, cfg: AVeriTeCConfig, exclude: Sequence[str], progress: bool) -> tuple[str, bool]:
    """(checkpoint directory, whether it was trained now) for the ``reranker``/``verdict`` stage."""
    section = getattr(cfg, kind)
    if section.checkpoint:
        path = Path(section.checkpoint)
        if not path.is_dir():
            raise UserError(f"config {cfg.name!r}: {kind}.checkpoint {str(path)!r}: no such directory")
        return str(path), False
    if not section.auto_train:
        raise UserError(
            f"config {cfg.name!r}: {kind}.checkpoint is not set",
            hint=f"train one with 'averitec baseline averitec train {kind} --config {cfg.name} --out DIR' and set "
            f"{kind}.checkpoint: DIR, or set {kind}.auto_train: true",
        )
    claims, info = training_claims(cfg, exclude=exclude)
    key = fingerprint(kind, section.base, info, asdict(section.train), "v1")
    target = cache_dir(cfg) / f"{kind}-{key}"
    if (target / "manifest.json").is_file():
        return str(target), False
    train_stage(kind=kind, cfg=cfg, claims=claims, data_info=info, out_dir=target, progress=progress)
    return str(target), True


__all__ = ["obtain_checkpoint", "train_stage", "training_claims"]
