"""Two cheap decisions made on training claims only (issue 27): whether the reranker is used
at all, and a per-label bias of the verdict model's pair probabilities.

* :func:`choose_reranker` — keep the reranker only where its evidence scores a strictly
  higher hu-METEOR Q+A than the BM25 order on the decision slice.
* :func:`fit_label_bias` — per-label log offsets ``b`` (Refuted fixed at 0: only
  differences matter) added to each QA pair's log-probabilities before the aggregation
  rule (:func:`apply_bias`), grid-searched for the slice's 4-way claim macro-F1 (a coarse
  grid over all three offsets, then a finer step one offset at a time, two rounds); ties go
  to the smallest total offset, then the first found.

The functions here are pure (arrays in, values out); :mod:`~averitec_tools.baselines.averitec.training.decision_slice` feeds them the
slice's retrieved evidence.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.stages.verdict import LABELS, NEE, C, R, S, aggregate_labels
from averitec_tools.metrics.label_codes import macro_f1_of_codes

#: Offsets tried for each of Supported, Not Enough Evidence and Conflicting (Refuted: 0).
BIAS_GRID: tuple[float, ...] = tuple(float(x) for x in np.arange(-2.0, 4.01, 0.5))
#: Step of the finer search around the best coarse offsets (the verdict models' pair
#: probabilities are flat: their labels' log-probabilities differ by tenths).
FINE_STEP = 0.05


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


def _claim_labels_fast(scores: np.ndarray, seg: np.ndarray, n_claims: int, rule: str) -> np.ndarray:
    """:func:`claim_labels` for pairs stacked in ``scores`` (claim of each row: ``seg``)."""
    counts = np.zeros((n_claims, 4), dtype=int)
    np.add.at(counts, (seg, scores.argmax(1)), 1)
    n = counts.sum(1)
    out = np.full(n_claims, C)
    out[counts[:, R] == n] = R
    out[counts[:, S] == n] = S
    unanswerable = counts[:, NEE] + (counts[:, C] if rule == "upstream" else 0)
    out[(n == 0) | (unanswerable > 0)] = NEE
    return out


def _macro_f1_of_labels(gold: np.ndarray, pred: np.ndarray) -> float:
    """Macro-F1 over the four labels of label indices (the metrics' code-based macro-F1)."""
    return float(macro_f1_of_codes(gold * 5 + pred, n_labels=4))


def _search(logp: np.ndarray, seg: np.ndarray, gold: np.ndarray, rule: str, grid: Sequence[float],
            best: tuple[float, float, list[float]]) -> tuple[float, float, list[float]]:
    """The best (macro-F1, -total offset, offsets) over ``grid`` for S, NEE and C, from ``best``."""
    for s_off, nee_off, c_off in itertools.product(grid, repeat=3):
        bias = [0.0, 0.0, 0.0, 0.0]
        bias[S], bias[NEE], bias[C] = float(s_off), float(nee_off), float(c_off)
        f1 = round(_macro_f1_of_labels(gold, _claim_labels_fast(logp + np.asarray(bias), seg, len(gold), rule)), 10)
        cand = (f1, -(abs(s_off) + abs(nee_off) + abs(c_off)), bias)
        if cand[:2] > best[:2]:
            best = cand
    return best


def fit_label_bias(*, claim_probs: Sequence[np.ndarray], gold: Sequence[int], rule: str,
                   grid: Sequence[float] = BIAS_GRID, fine_step: float | None = FINE_STEP) -> dict[str, Any]:
    """The per-label offsets maximising the claims' macro-F1, with the figures before and after.

    Args:
        claim_probs: Per claim, its QA pairs' verdict probabilities (pairs x 4).
        gold: Per claim, the gold label's index in :data:`~.verdict.LABELS`.
        rule: The aggregation rule (``verdict.aggregation``).
        grid: Offsets tried for Supported, NEE and Conflicting (Refuted stays 0).
        fine_step: Then a finer grid of this step within one coarse step of the best
            offsets (None: the coarse grid only). Ties go to the smallest total offset.

    Example:
        >>> probs = [np.array([[0.2, 0.7, 0.1, 0.0]]), np.array([[0.1, 0.5, 0.4, 0.0]]),
        ...          np.array([[0.1, 0.8, 0.1, 0.0]])]
        >>> fit = fit_label_bias(claim_probs=probs, gold=[1, 2, 1], rule="upstream", grid=[0.0, 1.0], fine_step=None)
        >>> fit["bias"]["Not Enough Evidence"], fit["macro_f1_unbiased"], fit["macro_f1"]
        (1.0, 0.2, 0.5)
    """
    if len(claim_probs) != len(gold):
        raise ValueError("fit_label_bias: claim_probs and gold differ in length")
    rows = [np.asarray(p, dtype=float).reshape(-1, 4) for p in claim_probs]
    logp = np.log(np.clip(np.concatenate(rows + [np.zeros((0, 4))]), 1e-12, None))
    seg = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    gold_a = np.asarray(gold, dtype=int)
    zero = [0.0, 0.0, 0.0, 0.0]
    before = round(_macro_f1_of_labels(gold_a, _claim_labels_fast(logp, seg, len(rows), rule)), 10)
    best = _search(logp, seg, gold_a, rule, grid, (before, 0.0, zero))
    if fine_step is not None and len(grid) > 1:
        coarse = float(np.min(np.diff(sorted(grid))))
        span = np.arange(-coarse, coarse + fine_step / 2, fine_step)
        for k in (S, NEE, C, S, NEE, C):  # one label at a time, two rounds
            local = sorted({round(best[2][k] + float(x), 6) for x in span})
            best = _refine(logp, seg, gold_a, rule, local, k, best)
    bias = best[2]
    pred = claim_labels(claim_probs, bias=bias, rule=rule)
    return {"bias": {LABELS[i]: round(bias[i], 6) for i in range(4)}, "macro_f1_unbiased": round(before, 4),
            "macro_f1": round(best[0], 4), "grid": [float(x) for x in grid], "fine_step": fine_step,
            "predicted": {LABELS[i]: sum(p == i for p in pred) for i in range(4)}}


def _refine(logp: np.ndarray, seg: np.ndarray, gold: np.ndarray, rule: str, values: Sequence[float], k: int,
            best: tuple[float, float, list[float]]) -> tuple[float, float, list[float]]:
    """The best offsets when only label ``k``'s offset moves over ``values``."""
    for v in values:
        bias = list(best[2])
        bias[k] = float(v)
        f1 = round(_macro_f1_of_labels(gold, _claim_labels_fast(logp + np.asarray(bias), seg, len(gold), rule)), 10)
        cand = (f1, -(abs(bias[S]) + abs(bias[NEE]) + abs(bias[C])), bias)
        if cand[:2] > best[:2]:
            best = cand
    return best


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


__all__ = ["BIAS_GRID", "FINE_STEP", "apply_bias", "bias_vector", "choose_reranker", "claim_labels", "fit_label_bias"]
