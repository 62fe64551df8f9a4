"""The offline preset's data: the AVeriTeC files, the corpus and its retriever, the training plan.

:func:`offline_data` reads ``averitec/train.json`` and ``dev.json`` (and the FEVER dev claims
the corpus adds as distractors), builds or loads the cached corpus and its indexes, decides
which training claims train and fit what (:func:`~averitec_tools.baselines.r2vc.offline.inputs.offline_plan`:
no scored claim's twin) and, in the honest setting, wraps the retriever so that no claim
retrieves its own answers (:class:`~averitec_tools.baselines.r2vc.offline.inputs.ExcludeOwnRetriever`).

Example:
    >>> from dataclasses import fields
    >>> [f.name for f in fields(OfflineData)][:6]
    ['train', 'dev', 'train_passages', 'dev_passages', 'store', 'retriever']
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.baselines.r2vc.offline.data import (
    _file_digest,
    cache_root,
    data_dir,
    distractor_passages,
    load_dev,
)
from averitec_tools.baselines.r2vc.offline.inputs import (
    ExcludeOwnRetriever,
    TrainingPlan,
    offline_plan,
    own_evidence,
)
from averitec_tools.baselines.r2vc.types import Passage, Retriever
from averitec_tools.errors import UserError
from averitec_tools.hashing import json_digest
from averitec_tools.leakage.pseudo_test import pseudo_test_mask, pseudo_test_size
from averitec_tools.records.averitec import AVeriTeCClaim


@dataclass(frozen=True)
class OfflineData:
    """The offline preset's data, corpus and retriever (built or loaded from the cache).

    Attributes:
        train: The training claims (the first ``offline.train_claims``).
        dev: The dev claims (their texts guard the training set; their labels are never read).
        train_passages: The training claims' answer passages (claim index, passage).
        dev_passages: The dev answer passages in the corpus (none in the honest corpus).
        store: The corpus.
        retriever: Its retriever (own answers excluded in the honest setting).
        data_key: What the data is: the files' digests and ``train_claims``.
        corpus_key: The corpus' cache key.
        train_path: ``averitec/train.json``.
        cache: The preset's cache directory.
        corpus_train: Training answers in the corpus (the pseudo-test's are left out of the honest one).
        plan: Which training claims feed the verifier and the slice (none a scored claim's twin).
        leak_guard: ``leak_guard`` of the run summary: what each leak rule removed.
        build_seconds: Seconds spent on the corpus and the indexes.
    """

    train: list[AVeriTeCClaim]
    dev: list[AVeriTeCClaim]
    train_passages: list[tuple[int, Passage]]
    dev_passages: list[tuple[int, Passage]]
    store: ParagraphStore
    retriever: Retriever
    data_key: tuple[Any, ...]
    corpus_key: str
    train_path: Path
    cache: Path
    corpus_train: int
    plan: TrainingPlan
    leak_guard: dict[str, Any]
    build_seconds: dict[str, float]


@dataclass(frozen=True)
class _Splits:
    """The AVeriTeC files as the preset reads them (``root``: the data root; ``pseudo``: the
    pseudo-test mask over ``train``)."""

    train: list[AVeriTeCClaim]
    dev: list[AVeriTeCClaim]
    pseudo: Any
    root: Path
    data_key: tuple[Any, ...]


def _read_splits(cfg: R2VCConfig) -> _Splits:
    off = cfg.offline
    root = data_dir()
    dev_path = root / "averitec" / "dev.json"
    train_path = root / "averitec" / "train.json"
    if not train_path.is_file():
        raise UserError(f"{train_path}: not found", hint="offline-minilm trains on the AVeriTeC training split")
    dev = load_dev(dev_path)
    train = load_dev(train_path)
    n_pseudo = pseudo_test_size(off.pseudo_test_claims, train_sha256=_file_digest(train_path))
    pseudo = pseudo_test_mask([c.claim for c in train], n=n_pseudo)  # drawn from all of train.json
    if off.train_claims is not None:
        train, pseudo = train[: off.train_claims], pseudo[: off.train_claims]
    return _Splits(train=train, dev=dev, pseudo=pseudo, root=root,
                   data_key=(_file_digest(dev_path), _file_digest(train_path), off.train_claims))


def _corpus(cfg: R2VCConfig, splits: _Splits, passages: list[list[tuple[int, Passage]]],
            cache: Path) -> tuple[ParagraphStore, str, Path]:
    """The cached corpus (the ``passages`` given + distractors), its key and directory."""
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    off = cfg.offline
    corpus_key = json_digest("corpus-v3", splits.data_key, off.distractors, off.seed, off.corpus,
                             np.flatnonzero(splits.pseudo).tolist())
    corpus_dir = cache / f"corpus-{corpus_key}"
    if (corpus_dir / "corpus.json").is_file():
        return ParagraphStore.open(corpus_dir), corpus_key, corpus_dir
    texts = [p for split in passages for _, p in split]
    texts += distractor_passages(splits.root / "fever" / "paper_dev.jsonl", n=off.distractors, seed=off.seed)
    source = str(splits.root / "averitec" / "train.json")
    if off.corpus == "train+dev":
        source += f" + {splits.root / 'averitec' / 'dev.json'}"
    return build_corpus(passages=texts, out_dir=corpus_dir, source=source), corpus_key, corpus_dir


def offline_data(cfg: R2VCConfig, *, progress: bool = True, engine: Any = None,
                 scored: Sequence[str] = ()) -> OfflineData:
    """Read the AVeriTeC files and build (or load) the corpus and its retriever.

    The leak guard (:mod:`averitec_tools.leakage.duplicates`): training claims whose
    normalised text equals a dev claim's or a ``scored`` claim's are marked unusable
    (``plan``) for every training and fitting set; with ``exclude_own_evidence``
    each claim's own answers (by normalised text) and the answers from its own
    fact-checking article are removed from its retrieval results.
    """
    from averitec_tools.baselines.r2vc.stages.retrieval.configured import retriever_from_config

    off = cfg.offline
    t0 = time.perf_counter()
    splits = _read_splits(cfg)
    cache = cache_root(cfg)
    train_passages = answer_passages(splits.train, split="train")
    dev_passages = answer_passages(splits.dev, split="dev")
    # The honest corpus: the training claims' gold answers, none of the pseudo-test's (it is scored
    # like dev); ``offline.corpus: train+dev`` adds every training and dev answer (labelled, not honest).
    dev_corpus = off.corpus == "train+dev"
    corpus_train = train_passages if dev_corpus else [(ci, p) for ci, p in train_passages if not splits.pseudo[ci]]
    corpus_dev = dev_passages if dev_corpus else []
    store, corpus_key, corpus_dir = _corpus(cfg, splits, [corpus_train, corpus_dev], cache)
    build_seconds = {"corpus": time.perf_counter() - t0}
    t0 = time.perf_counter()
    retriever: Retriever = retriever_from_config(cfg.retrieval, corpus=store, index_dir=corpus_dir / "indexes",
                                                 show_progress=progress, engine=engine)
    plan = offline_plan(train=splits.train, dev=splits.dev, scored=scored, n_calibration=off.calibration_claims,
                        seed=off.seed, pseudo_test=splits.pseudo)
    leak_guard = dict(plan.leak_guard) | {
        "dev_annotations_in_corpus": len(corpus_dev),
        "pseudo_test_annotations_in_corpus": sum(bool(splits.pseudo[ci]) for ci, _ in corpus_train)}
    if off.exclude_own_evidence:
        own = own_evidence([(splits.train, corpus_train), (splits.dev, corpus_dev)])
        retriever = ExcludeOwnRetriever(base=retriever, own=own)
        leak_guard |= own.counts(list(scored) or [c.claim for c in splits.dev])
    else:
        leak_guard |= {"own_answers_removed": 0, "own_article_answers_removed": 0, "sibling_answers_removed": 0}
    build_seconds["indexes"] = time.perf_counter() - t0
    return OfflineData(train=splits.train, dev=splits.dev, train_passages=train_passages, dev_passages=corpus_dev,
                       store=store, retriever=retriever, data_key=splits.data_key, corpus_key=corpus_key,
                       train_path=splits.root / "averitec" / "train.json", cache=cache, corpus_train=len(corpus_train), plan=plan, leak_guard=leak_guard,
                       build_seconds=build_seconds)


__all__ = ["OfflineData", "offline_data"]
