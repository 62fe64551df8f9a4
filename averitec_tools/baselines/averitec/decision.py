"""Two cheap decisions made on training claims only (issue 27): whether the reranker is used
at all, and a per-label bias of the verdict model's pair probabilities.

* :func:`choose_reranker` — keep the reranker only where its evidence scores a strictly
  higher hu-METEOR Q+A than the BM25 order on the decision slice.
* :func:`fit_label_bias` — per-label log offsets ``b`` (Refuted fixed at 0: only
  differences matter) added to each QA pair's log-probabilities before the aggregation
  rule (:func:`apply_bias`), grid-searched for the slice's 4-way claim macro-F1; ties go to
  the smallest total offset, then the first in grid order.

The functions here are pure (arrays in, values out); :mod:`.decision_slice` feeds them the
slice's retrieved evidence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.verdict import LABELS, NEE, C, S, aggregate_labels

#: Offsets tried for each of Supported, Not Enough Evidence and Conflicting (Refuted: 0).
BIAS_GRID: tuple[float, ...] = tuple(float(x) for x in np.arange(-2.0, 4.01, 0.5))


def apply_bias(probs: np.ndarray, bias: Sequence[float]) -> np.ndarray:
    """Pair probabilities times ``exp(bias)``, renormalised per pair (rows of ``probs``).

    Example:
        >>> p = apply_bias(np.array([[0.5, 0.5, 0.0, 0.0]]), [np.log(3.0), 0.0, 0.0, 0.0])
        >>> [round(float(x), 4) for x in p[0]]
        [0.75, 0.25, 0.0, 0.0]
    """
    probs = np.asarray(probs, dtype=float).reshape(-1, 4)
    if len(probs) == 0:
        return probs
    out = probs * np.exp(np.asarray(bias, dtype=float))[None, :]
    return out / out.sum(axis=1, keepdims=True)


def macro_f1(gold: Sequence[int], pred: Sequence[int]) -> float:
    """Macro-F1 over the four labels (a label never gold nor predicted counts 0, as
    scikit-learn's ``zero_division=0`` with ``labels=range(4)``).

    Example:
        >>> round(macro_f1([0, 1, 2, 3], [0, 1, 1, 3]), 4)
        0.6667
    """
    scores = []
    for k in range(4):
        tp = sum(g == k and p == k for g, p in zip(gold, pred, strict=True))
        n_pred, n_gold = sum(p == k for p in pred), sum(g == k for g in gold)
        scores.append(0.0 if tp == 0 else 2 * tp / (n_pred + n_gold))
    return float(np.mean(scores))


def claim_labels(claim_probs: Sequence[np.ndarray], *, bias: Sequence[float], rule: str) -> list[int]:
    """Each claim's label by the aggregation ``rule`` over its biased pairs' arg-max
    (no pairs: Not Enough Evidence, as the rule says).

    Example:
        >>> claim_labels([np.array([[0.4, 0.6, 0.0, 0.0]]), np.zeros((0, 4))], bias=[0, 0, 0, 0], rule="upstream")
        [1, 2]
        >>> claim_labels([np.array([[0.4, 0.6, 0.0, 0.0]])], bias=[1.0, 0, 0, 0], rule="upstream")
        [0]
    """
    out = []
    for probs in claim_probs:
        probs = np.asarray(probs, dtype=float).reshape(-1, 4)
        if len(probs) == 0:
            out.append(NEE)
            continue
        scores = np.log(np.clip(probs, 1e-12, None)) + np.asarray(bias, dtype=float)[None, :]
        out.append(aggregate_labels([int(i) for i in scores.argmax(1)], rule=rule))
    return out


def fit_label_bias(*, claim_probs: Sequence[np.ndarray], gold: Sequence[int], rule: str,
                   grid: Sequence[float] = BIAS_GRID) -> dict[str, Any]:
    """The per-label offsets maximising the claims' macro-F1, with the figures before and after.

    Args:
        claim_probs: Per claim, its QA pairs' verdict probabilities (pairs x 4).
        gold: Per claim, the gold label's index in :data:`~.verdict.LABELS`.
        rule: The aggregation rule (``verdict.aggregation``).
        grid: Offsets tried for Supported, NEE and Conflicting (Refuted stays 0).

    Example:
        >>> probs = [np.array([[0.2, 0.7, 0.1, 0.0]]), np.array([[0.1, 0.5, 0.4, 0.0]]),
        ...          np.array([[0.1, 0.8, 0.1, 0.0]])]
        >>> fit = fit_label_bias(claim_probs=probs, gold=[1, 2, 1], rule="upstream", grid=[0.0, 1.0])
        >>> fit["bias"]["Not Enough Evidence"], fit["macro_f1_unbiased"], fit["macro_f1"]
        (1.0, 0.2, 0.5)
    """
    if len(claim_probs) != len(gold):
        raise ValueError("fit_label_bias: claim_probs and gold differ in length")
    zero = [0.0, 0.0, 0.0, 0.0]
    before = macro_f1(gold, claim_labels(claim_probs, bias=zero, rule=rule))
    best: tuple[float, float] = (before, 0.0)
    best_bias = zero
    for s_off, nee_off, c_off in itertools.product(grid, repeat=3):
        bias = [0.0, 0.0, 0.0, 0.0]
        bias[S], bias[NEE], bias[C] = float(s_off), float(nee_off), float(c_off)
        f1 = macro_f1(gold, claim_labels(claim_probs, bias=bias, rule=rule))
        size = abs(s_off) + abs(nee_off) + abs(c_off)
        if f1 > best[0] or (f1 == best[0] and size < best[1]):
            best, best_bias = (f1, size), bias
    pred = claim_labels(claim_probs, bias=best_bias, rule=rule)
    return {"bias": {LABELS[i]: best_bias[i] for i in range(4)}, "macro_f1_unbiased": round(before, 4),
            "macro_f1": round(best[0], 4), "grid": [float(x) for x in grid],
            "predicted": {LABELS[i]: sum(p == i for p in pred) for i in range(4)}}


def choose_reranker(*, qa_reranker: float, qa_bm25: float) -> bool:
    """Whether to use the reranker: only where it beats the BM25 order (ties: BM25, the cheaper).

    Example:
        >>> choose_reranker(qa_reranker=0.20, qa_bm25=0.21), choose_reranker(qa_reranker=0.22, qa_bm25=0.21)
        (False, True)
    """
    return qa_reranker > qa_bm25


def bias_vector(bias: dict[str, float] | None) -> list[float] | None:
    """The offsets in label order (None stays None).

    Example:
        >>> bias_vector({"Supported": 0.5, "Refuted": 0.0, "Not Enough Evidence": 2.0,
        ...              "Conflicting Evidence/Cherrypicking": 0.0})
        [0.5, 0.0, 2.0, 0.0]
    """
    return None if bias is None else [float(bias[k]) for k in LABELS]


__all__ = ["BIAS_GRID", "apply_bias", "bias_vector", "choose_reranker", "claim_labels", "fit_label_bias", "macro_f1"]
