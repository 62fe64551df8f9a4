"""``minilm-verdict``: does the submitted evidence decide the claim the way the gold label does?

The verdict model of :mod:`~averitec_tools.metrics.verdict_head` (frozen
all-MiniLM-L6-v2 embeddings, a logistic-regression head trained on AVeriTeC train claims
only) gives ``p(label | claim, evidence)``. ``mode`` picks the score of an item:

* ``gold`` (default) — ``p(gold label | claim, predicted evidence)``;
* ``agree`` — ``sum_l p(l | claim, predicted) * p(l | claim, reference)``, how far the
  verdicts the two evidence sets lead to coincide.

``coverage`` (0 to 1, default 0) mixes in the ``minilm-qa-f1`` coverage:
``(1 - coverage) * verdict + coverage * F1``, a fixed weight (nothing is fitted on the
ratings). Like ``minilm-qa-f1`` it runs offline on CPU and is never an official default.

    >>> item_score(probs_pred=np.array([0.1, 0.7, 0.1, 0.1]), probs_ref=np.array([0.0, 1.0, 0.0, 0.0]),
    ...            gold=1, mode="agree", f1=0.5, coverage=0.5)
    0.6
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.metrics import minilm_qa_f1, verdict_head
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import (
    EvidenceScorer,
    check_coverage,
    qa_strings,
)
from averitec_tools.records.rated import RatedItem

MODES = ("gold", "agree")


@lru_cache(maxsize=1)
def head_sha256() -> str:
    """sha256 of the packaged verdict head (the signature's head hash)."""
    from averitec_tools.hashing import file_sha256

    return file_sha256(verdict_head.HEAD_FILE)


def feature_rows(*, claims: Sequence[str], evidence: Sequence[Sequence[str]],
                 vectors: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`verdict_head.features` of each (claim, Q+A strings), given every string's embedding."""
    dim = len(next(iter(vectors.values()))) if vectors else 0
    rows = [verdict_head.features(vectors[c], np.stack([vectors[s] for s in ev]) if ev else np.zeros((0, dim)))
            for c, ev in zip(claims, evidence, strict=True)]
    return np.stack(rows) if rows else np.zeros((0, 4 * dim + 3))


def verdict_probabilities(*, claims: Sequence[str], evidence: Sequence[Sequence[str]],
                          vectors: dict[str, np.ndarray], head: dict[str, Any] | None = None) -> np.ndarray:
    """``p(label | claim, evidence)`` per claim (rows in :data:`verdict_head.LABELS` order; the packaged head by default)."""
    if not claims:
        return np.zeros((0, len(verdict_head.LABELS)))
    return verdict_head.predict(head or verdict_head.load_head(),
                                feature_rows(claims=claims, evidence=evidence, vectors=vectors))


def item_score(*, probs_pred: np.ndarray, probs_ref: np.ndarray, gold: int, mode: str, f1: float,
               coverage: float) -> float:
    """One item's ``minilm-verdict`` (see the module docstring)."""
    verdict = float(probs_pred[gold]) if mode == "gold" else float(probs_pred @ probs_ref)
    return (1 - coverage) * verdict + coverage * f1


@register_metric
class MiniLMVerdict(
    EvidenceScorer, name="minilm-verdict", higher_is_better=True,
    description="probability a verdict model on frozen all-MiniLM-L6-v2 embeddings (trained on AVeriTeC train) gives "
    "the gold label from the predicted evidence (offline, CPU; never an official figure)",
):
    """The verdict scorer (see the module docstring).

    Its signature: ``metric:minilm-verdict|mode:gold|coverage:0|head:sha256.<16 hex>|trained:...|``
    then the ``minilm-qa-f1`` encoder's fields (model, weights, max_length, package).
    """

    mode: str = "gold"
    coverage: float = 0.0
    max_length: int = 128
    batch_size: int = 64
    cache: bool = True
    choices: ClassVar[Mapping[str, tuple[Any, ...]]] = {"mode": MODES}

    def validate(self) -> None:
        check_coverage(self.name, self.coverage)

    def signature_fields(self) -> list[tuple[str, Any]]:
        meta = verdict_head.load_head()["meta"]
        return [("mode", self.mode), ("coverage", f"{self.coverage:g}"), ("head", f"sha256.{head_sha256()[:16]}"),
                ("trained", meta.get("trained", "?")), *minilm_qa_f1.encoder_fields(self.max_length)]

    def score_claims(self, *, claims: Sequence[str], labels: Sequence[str], predicted: Sequence[Sequence[str]],
                     references: Sequence[Sequence[str]]) -> list[float]:
        """Scores of claims given as text, gold label and lists of Q+A strings."""
        unknown = [(i, lab) for i, lab in enumerate(labels) if lab not in verdict_head.LABELS]
        if unknown:
            raise UserError(f"minilm-verdict: claim {unknown[0][0]}: gold label {unknown[0][1]!r} is not an AVeriTeC label")
        encoder = minilm_qa_f1.MiniLMQAF1(max_length=self.max_length, batch_size=self.batch_size, cache=self.cache)
        vec = minilm_qa_f1.embed_cached([*claims, *(s for group in references for s in group)], max_length=self.max_length,
                                       batch_size=self.batch_size, cache_dir=encoder.cache_dir())
        vec.update(minilm_qa_f1.embed([s for group in predicted for s in group if s not in vec],
                                     max_length=self.max_length, batch_size=self.batch_size))
        f1 = (minilm_qa_f1.f1_from_vectors(predicted=predicted, references=references, vectors=vec)
              if self.coverage else [0.0] * len(claims))
        pp = verdict_probabilities(claims=claims, evidence=predicted, vectors=vec)
        pr = (verdict_probabilities(claims=claims, evidence=references, vectors=vec) if self.mode == "agree"
              else pp)
        return [item_score(probs_pred=pp[i], probs_ref=pr[i], gold=verdict_head.LABELS.index(lab), mode=self.mode,
                           f1=f1[i], coverage=self.coverage) for i, lab in enumerate(labels)]

    def score_strings(self, *, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                      claims: Sequence[str] | None = None, labels: Sequence[str] | None = None) -> list[float]:
        """``averitec score --evidence-scorer``: needs each claim's text and gold label."""
        if claims is None or labels is None:
            raise UserError("minilm-verdict needs each claim's text and gold label")
        return self.score_claims(claims=claims, labels=labels, predicted=predicted, references=references)

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        return list(self.score_claims(claims=[it.claim for it in items], labels=[it.gold for it in items],
                                      predicted=[qa_strings(it.predicted) for it in items],
                                      references=[qa_strings(it.reference) for it in items]))

    def details(self) -> dict[str, Any]:
        return {"signature": self.signature()}


__all__ = ["MODES", "MiniLMVerdict", "feature_rows", "head_sha256", "item_score", "verdict_probabilities"]
