"""Which fine-tuned checkpoint each trained stage uses: a configured one, or one trained
(and cached) from the configured base on the training split. Never a silent substitute."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.config import (
    JUSTIFICATION_FALLBACK,
    AVeriTeCConfig,
    cache_dir,
    train_path,
)
from averitec_tools.baselines.averitec.io.data import (
    ClaimItem,
    read_claims,
    without_scored_claims,
)
from averitec_tools.baselines.averitec.training.classifier import (
    cap_examples,
    fingerprint,
    split_heldout,
    train_classifier,
)
from averitec_tools.errors import UserError
from averitec_tools.hashing import file_sha256
from averitec_tools.leakage.pseudo_test import pseudo_test_records, pseudo_test_size

#: Held-out examples scored after each epoch are capped at this share of ``max_pairs``.
HELDOUT_CAP_SHARE = 0.2


def training_claims(cfg: AVeriTeCConfig, *, exclude: Sequence[str] = ()) -> tuple[list[ClaimItem], dict[str, Any]]:
    """The training split minus any claim whose text is among ``exclude`` (the scored claims)."""
    path = train_path(cfg)
    claims = read_claims(path, skip_empty=True)
    n_records = (claims[-1].claim_id + 1) if isinstance(claims[-1].claim_id, int) else len(claims)
    sha = file_sha256(path)
    held = _pseudo_test_ids(path, n=pseudo_test_size(cfg.data.pseudo_test_claims, train_sha256=sha))
    kept, dropped = without_scored_claims([c for c in claims if c.claim_id not in held], exclude)
    info = {"path": str(path), "sha256": sha, "claims": len(kept), "dropped_scored_claims": dropped,
            "skipped_empty_claims": n_records - len(claims)}
    if held:
        info["pseudo_test_held_out"] = len(held)
    if dropped or held:
        info["kept_ids_hash"] = fingerprint([c.claim_id for c in kept])
    return kept, info


def _pseudo_test_ids(path: Any, *, n: int) -> set[int]:
    """Indices in the training file of its pseudo-test claims (:mod:`averitec_tools.leakage.pseudo_test`)."""
    if n <= 0:
        return set()
    from averitec_tools.jsonio import load_json

    raw = load_json(path)
    _, scored, unscored = pseudo_test_records(raw if isinstance(raw, list) else [], n=n)
    return set(scored) | set(unscored)


def cap_groups(groups: Sequence[Sequence[Any]], *, cap: int | None, seed: int) -> list[list[Any]]:
    """A seeded sample of whole groups holding at most ``cap`` examples (all when ``None``).

    Example:
        >>> cap_groups([[1, 2], [3, 4], [5, 6]], cap=4, seed=0)
        [[5, 6], [1, 2]]
    """
    if cap is None or sum(len(g) for g in groups) <= cap:
        return [list(g) for g in groups]
    out: list[list[Any]] = []
    total = 0
    for i in np.random.default_rng(seed).permutation(len(groups)):
        if total + len(groups[i]) > cap:
            break
        out.append(list(groups[i]))
        total += len(groups[i])
    return out


def _split(claims: Sequence[ClaimItem], s: Any) -> tuple[list[ClaimItem], list[ClaimItem]]:
    held = split_heldout(len(claims), share=s.heldout, seed=s.seed)
    return ([c for c, h in zip(claims, held, strict=True) if not h], [c for c, h in zip(claims, held, strict=True) if h])


def _held_cap(s: Any) -> int | None:
    return None if s.max_pairs is None else max(50, int(s.max_pairs * HELDOUT_CAP_SHARE))


def _train_reranker(cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], data_info: dict[str, Any], out_dir: Any,
                    progress: bool) -> dict[str, Any]:
    from averitec_tools.baselines.averitec.stages.reranker import LABELS, reranker_groups

    sec, s = cfg.reranker, cfg.reranker.train
    train_c, held_c = _split(claims, s)
    make = partial(reranker_groups, negatives=sec.negatives, style=sec.input)
    groups_train, groups_held = make(train_c, seed=s.seed), make(held_c, seed=s.seed + 1)
    if sec.negatives == "upstream":
        kept = cap_groups(groups_train, cap=s.max_pairs, seed=s.seed)
        train_ex = [e for g in kept for e in g]
        spans, start = [], 0
        for g in kept:
            spans.append(list(range(start, start + len(g))))
            start += len(g)
        held_ex = [e for g in cap_groups(groups_held, cap=_held_cap(s), seed=s.seed) for e in g]
        groups: list[list[int]] | None = spans
    else:
        train_ex = cap_examples([e for g in groups_train for e in g], cap=s.max_pairs, seed=s.seed)
        held_ex = cap_examples([e for g in groups_held for e in g], cap=_held_cap(s), seed=s.seed)
        groups = None
    if not train_ex:
        raise UserError(f"{data_info.get('path')}: no training examples for the reranker")
    return train_classifier(base=sec.base, labels=LABELS, train=train_ex, heldout=held_ex, settings=s, out_dir=out_dir,
                            kind="reranker", data_info=data_info, progress=progress, groups=groups)


def _train_verdict(cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], data_info: dict[str, Any], out_dir: Any,
                   progress: bool) -> dict[str, Any]:
    from averitec_tools.baselines.averitec.stages.verdict import (
        LABELS,
        claim_macro_f1,
        verdict_examples,
    )

    sec, s = cfg.verdict, cfg.verdict.train
    train_c, held_c = _split(claims, s)
    gold = verdict_examples(train_c, style=sec.input)
    extra: list[Any] = []
    if sec.train_evidence == "gold+retrieved" and train_c:  # issue 37: the evidence a scored claim gets, too
        from averitec_tools.baselines.averitec.training.verdict_evidence import (
            composition,
            retrieved_examples,
        )

        extra, store = retrieved_examples(cfg, claims=train_c, writer_claims=claims,
                                          train_sha=data_info.get("sha256"), progress=progress)
        data_info = {**data_info, **composition(gold=len(gold), retrieved=extra, per_claim=sec.retrieved_per_claim,
                                                store=store)}
    train_ex = cap_examples(gold + extra, cap=s.max_pairs, seed=s.seed)
    held_ex = cap_examples(verdict_examples(held_c, style=sec.input), cap=_held_cap(s), seed=s.seed)
    if not train_ex:
        raise UserError(f"{data_info.get('path')}: no training examples for the verdict")
    evaluate = None
    if s.select == "claim-macro-f1" and held_c:
        def evaluate(fn: Any) -> float:
            return claim_macro_f1(claims=held_c, predict=fn, style=sec.input, rule=sec.aggregation)
    return train_classifier(base=sec.base, labels=LABELS, train=train_ex, heldout=held_ex, settings=s, out_dir=out_dir,
                            kind="verdict", data_info=data_info, progress=progress, evaluate=evaluate)


def _train_justification(cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], data_info: dict[str, Any], out_dir: Any,
                         progress: bool) -> dict[str, Any]:
    from averitec_tools.baselines.averitec.training.justification import train_justifier

    if cfg.justification.model == JUSTIFICATION_FALLBACK:
        raise UserError(f"config {cfg.name!r}: justification.model is the extractive fallback: nothing to train",
                        hint="set justification.model to a seq2seq model id, e.g. facebook/bart-large")
    s = cfg.justification.train
    train_c, held_c = _split(claims, s)
    return train_justifier(config=cfg.justification, train=train_c, heldout=held_c, out_dir=out_dir,
                           data_info=data_info, progress=progress)


#: Stage -> trainer(cfg, training claims, data info, out_dir, progress) -> manifest.
TRAINERS: dict[str, Callable[..., dict[str, Any]]] = {
    "reranker": _train_reranker, "verdict": _train_verdict, "justification": _train_justification}


def train_stage(*, kind: str, cfg: AVeriTeCConfig, claims: Sequence[ClaimItem], data_info: dict[str, Any],
                out_dir: str | Path, progress: bool = False) -> dict[str, Any]:
    """Train the ``reranker``, ``verdict`` or ``justification`` model of ``cfg`` on ``claims``
    into ``out_dir``; the held-out share of the claims picks the epoch."""
    return TRAINERS[kind](cfg, claims, data_info, out_dir, progress)


def training_settings(kind: str, cfg: AVeriTeCConfig) -> dict[str, Any]:
    """Every setting that changes the trained model of ``kind`` (the cache key's part).

    Example:
        >>> from averitec_tools.baselines.averitec.config import builtin_config
        >>> sorted(training_settings("reranker", builtin_config("paper")))
        ['base', 'input', 'negatives', 'train']
    """
    section = getattr(cfg, kind)
    keys = {"reranker": ("base", "input", "negatives"), "verdict": ("base", "input", "aggregation"),
            "justification": ("model", "input", "decoder_start", "num_beams", "max_new_tokens")}[kind]
    out = {**{k: getattr(section, k) for k in keys}, "train": asdict(section.train)}
    if kind == "verdict" and section.train_evidence != "gold":  # gold: the keys of before issue 37
        out |= {"train_evidence": section.train_evidence, "retrieved_per_claim": section.retrieved_per_claim,
                "retrieved_from": {"bm25": cfg.retrieval.bm25, "questions": cfg.questions.model,
                                   "prompt": cfg.questions.prompt, "distractors": cfg.decision.distractors}}
    return out


def obtain_checkpoint(*, kind: str, cfg: AVeriTeCConfig, exclude: Sequence[str], progress: bool) -> tuple[str, bool]:
    """(checkpoint directory, whether it was trained now) for the ``reranker``/``verdict`` stage."""
    section = getattr(cfg, kind)
    if section.checkpoint:
        path = Path(section.checkpoint)
        if path.suffix == ".ckpt" and kind in ("reranker", "verdict"):  # an upstream Lightning file
            from averitec_tools.baselines.averitec.training.upstream_checkpoints import (
                converted_checkpoint,
            )

            return converted_checkpoint(ckpt=path, kind=kind, base=section.base, cfg=cfg), False
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
    key = fingerprint(kind, info, training_settings(kind, cfg), "v2")
    target = cache_dir(cfg) / f"{kind}-{key}"
    if (target / "manifest.json").is_file():
        return str(target), False
    train_stage(kind=kind, cfg=cfg, claims=claims, data_info=info, out_dir=target, progress=progress)
    return str(target), True


__all__ = ["obtain_checkpoint", "train_stage", "training_claims", "training_settings"]
