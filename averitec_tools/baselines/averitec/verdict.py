"""Stage 5: a 4-way verdict per QA pair, aggregated per claim.

Training (as upstream): every gold QA pair of a training claim, labelled with the claim's
verdict, except unanswerable answers → Not Enough Evidence; Conflicting
Evidence/Cherrypicking claims are left out.

Aggregation (as upstream, on each pair's arg-max): any Not Enough Evidence → NEE; only
Supported → Supported; only Refuted → Refuted; anything else (a mix, or a pair predicted
Conflicting) → Conflicting Evidence/Cherrypicking.

``probabilities`` is the distribution of that rule's outcome when each pair's label is
drawn independently from its predicted distribution (p_i):
P(NEE) = 1 − Π(1 − p_i[NEE]); P(S) = Π p_i[S]; P(R) = Π p_i[R];
P(C) = Π(1 − p_i[NEE]) − P(S) − P(R). ``confidence`` is the probability of the label
predicted by the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from averitec_tools.baselines.averitec.data import ClaimItem, gold_pairs
from averitec_tools.records.averitec import AVERITEC_LABELS

LABELS: tuple[str, ...] = AVERITEC_LABELS
S, R, NEE, C = range(4)


def verdict_examples(claims: Sequence[ClaimItem]) -> list[tuple[str, str, int]]:
    """(claim, question + answer, label) examples.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "label": "Refuted", "questions": [
        ...     {"question": "q?", "answers": [{"answer": "a"},
        ...                                    {"answer": "No answer", "answer_type": "Unanswerable"}]}]},
        ...     where="x")
        >>> verdict_examples([ClaimItem(0, c)])
        [('x', 'q? a', 1), ('x', 'q? No answer', 2)]
    """
    out = []
    for c in claims:
        label = c.record.label
        if label not in LABELS or label == LABELS[C]:
            continue
        for p in gold_pairs(c.record):
            y = NEE if p.answer_type == "Unanswerable" else LABELS.index(label)
            out.append((c.claim, p.text, y))
    return out


def aggregate_labels(pair_labels: Sequence[int]) -> int:
    """The upstream rule over per-pair labels (no pairs → NEE).

    Example:
        >>> [LABELS[aggregate_labels(x)] for x in ([0, 0], [1], [0, 1], [0, 2], [])]
        ['Supported', 'Refuted', 'Conflicting Evidence/Cherrypicking', 'Not Enough Evidence', 'Not Enough Evidence']
    """
    if not pair_labels or NEE in pair_labels:
        return NEE
    if all(y == S for y in pair_labels):
        return S
    if all(y == R for y in pair_labels):
        return R
    return C


def aggregate_probabilities(probs: np.ndarray) -> np.ndarray:
    """Distribution of the rule's outcome under independent pair labels (see module doc).

    Example:
        >>> p = aggregate_probabilities(np.array([[0.5, 0.3, 0.2, 0.0], [0.6, 0.4, 0.0, 0.0]]))
        >>> [round(float(x), 4) for x in p]
        [0.3, 0.12, 0.2, 0.38]
    """
    if len(probs) == 0:
        out = np.zeros(4)
        out[NEE] = 1.0
        return out
    no_nee = float(np.prod(1.0 - probs[:, NEE]))
    p_s = float(np.prod(probs[:, S]))
    p_r = float(np.prod(probs[:, R]))
    out = np.array([p_s, p_r, 1.0 - no_nee, max(0.0, no_nee - p_s - p_r)])
    return out / out.sum()


def decide(probs: np.ndarray) -> tuple[str, float, dict[str, float]]:
    """(label, confidence, probabilities by label) for one claim's pair probabilities.

    Example:
        >>> label, confidence, probabilities = decide(np.array([[0.7, 0.2, 0.1, 0.0]]))
        >>> label, round(confidence, 6), round(sum(probabilities.values()), 6)
        ('Supported', 0.7, 1.0)
    """
    label = aggregate_labels([int(i) for i in probs.argmax(1)]) if len(probs) else NEE
    dist = aggregate_probabilities(probs)
    return LABELS[label], float(dist[label]), {LABELS[i]: float(dist[i]) for i in range(4)}


__all__ = ["LABELS", "aggregate_labels", "aggregate_probabilities", "decide", "verdict_examples"]
