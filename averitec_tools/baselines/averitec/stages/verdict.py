"""Stage 5: a 4-way verdict per QA pair, aggregated per claim.

Inputs (``verdict.input``): ``upstream`` — one text ``[CLAIM] c [QUESTION] q a`` (a gold
Boolean answer as "<answer>, because <explanation lower-cased>", as the upstream training
data loader writes it; retrieved evidence has no explanation, as upstream) — or ``pair``:
the text pair (claim, "question answer").

Training (as upstream): every gold QA pair of a training claim, labelled with the claim's
verdict, except unanswerable answers → Not Enough Evidence; Conflicting
Evidence/Cherrypicking claims are left out.

Aggregation (on each pair's arg-max; ``verdict.aggregation``):

* ``upstream`` — a pair predicted Not Enough Evidence *or* Conflicting → NEE; otherwise
  only Supported → Supported, only Refuted → Refuted, both → Conflicting.
* ``conflicting-pair`` — a pair predicted NEE → NEE; only Supported → Supported; only
  Refuted → Refuted; anything else (a mix, or a pair predicted Conflicting) → Conflicting.

``probabilities`` is the distribution of the rule's outcome when each pair's label is
drawn independently from its predicted distribution (p_i). Upstream rule:
P(NEE) = 1 − Π(1 − p_i[NEE] − p_i[C]); P(S) = Π p_i[S]; P(R) = Π p_i[R];
P(C) = Π(p_i[S] + p_i[R]) − P(S) − P(R). ``conflicting-pair``: P(NEE) = 1 − Π(1 − p_i[NEE]),
P(C) = Π(1 − p_i[NEE]) − P(S) − P(R). ``confidence`` is the probability of the label the
rule predicted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair, gold_pairs
from averitec_tools.records.averitec import AVERITEC_LABELS

LABELS: tuple[str, ...] = AVERITEC_LABELS
S, R, NEE, C = range(4)


def verdict_input(*, claim: str, pair: QAPair, style: str) -> tuple[str, str | None]:
    """The (text_a, text_b) the verdict model reads for one QA pair.

    Example:
        >>> verdict_input(claim=" C. ", pair=QAPair("Q?", "No. X.", base_answer="No", explanation="It Was X"),
        ...               style="upstream")
        ('[CLAIM] C. [QUESTION] Q? No, because it was x', None)
        >>> verdict_input(claim="C.", pair=QAPair("Q?", "A."), style="pair")
        ('C.', 'Q? A.')
    """
    if style != "upstream":
        return claim, pair.text
    answer = pair.base_answer if pair.base_answer is not None else pair.answer
    because = f", because {pair.explanation.lower().strip()}" if pair.explanation else ""
    return f"[CLAIM] {claim.strip()} [QUESTION] {pair.question.strip()} {answer.strip()}{because}", None


def verdict_examples(claims: Sequence[ClaimItem], *, style: str = "pair") -> list[tuple[str, str | None, int]]:
    """(text_a, text_b, label) training examples.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "label": "Refuted", "questions": [
        ...     {"question": "q?", "answers": [{"answer": "a"},
        ...                                    {"answer": "No answer", "answer_type": "Unanswerable"}]}]},
        ...     where="x")
        >>> verdict_examples([ClaimItem(0, c)])
        [('x', 'q? a', 1), ('x', 'q? No answer', 2)]
        >>> verdict_examples([ClaimItem(0, c)], style="upstream")[0]
        ('[CLAIM] x [QUESTION] q? a', None, 1)
    """
    out = []
    for c in claims:
        label = c.record.label
        if label not in LABELS or label == LABELS[C]:
            continue
        for p in gold_pairs(c.record):
            y = NEE if p.answer_type == "Unanswerable" else LABELS.index(label)
            out.append((*verdict_input(claim=c.claim, pair=p, style=style), y))
    return out


def aggregate_labels(pair_labels: Sequence[int], *, rule: str = "upstream") -> int:
    """The aggregation rule over per-pair labels (no pairs → NEE).

    Example:
        >>> [LABELS[aggregate_labels(x)] for x in ([0, 0], [1], [0, 1], [0, 3], [])]
        ['Supported', 'Refuted', 'Conflicting Evidence/Cherrypicking', 'Not Enough Evidence', 'Not Enough Evidence']
        >>> LABELS[aggregate_labels([0, 3], rule="conflicting-pair")]
        'Conflicting Evidence/Cherrypicking'
    """
    unanswerable = (NEE, C) if rule == "upstream" else (NEE,)
    if not pair_labels or any(y in unanswerable for y in pair_labels):
        return NEE
    if all(y == S for y in pair_labels):
        return S
    if all(y == R for y in pair_labels):
        return R
    return C


def aggregate_probabilities(probs: np.ndarray, *, rule: str = "upstream") -> np.ndarray:
    """Distribution of the rule's outcome under independent pair labels (see module doc).

    Example:
        >>> p = aggregate_probabilities(np.array([[0.5, 0.3, 0.2, 0.0], [0.6, 0.4, 0.0, 0.0]]))
        >>> [round(float(x), 4) for x in p]
        [0.3, 0.12, 0.2, 0.38]
        >>> [round(float(x), 4) for x in aggregate_probabilities(np.array([[0.5, 0.3, 0.1, 0.1]]))]
        [0.5, 0.3, 0.2, 0.0]
    """
    if len(probs) == 0:
        out = np.zeros(4)
        out[NEE] = 1.0
        return out
    p_s = float(np.prod(probs[:, S]))
    p_r = float(np.prod(probs[:, R]))
    if rule == "upstream":
        answered = float(np.prod(probs[:, S] + probs[:, R]))
        out = np.array([p_s, p_r, 1.0 - answered, max(0.0, answered - p_s - p_r)])
    else:
        no_nee = float(np.prod(1.0 - probs[:, NEE]))
        out = np.array([p_s, p_r, 1.0 - no_nee, max(0.0, no_nee - p_s - p_r)])
    return out / out.sum()


def decide(probs: np.ndarray, *, rule: str = "upstream") -> tuple[str, float, dict[str, float]]:
    """(label, confidence, probabilities by label) for one claim's pair probabilities.

    Example:
        >>> label, confidence, probabilities = decide(np.array([[0.7, 0.2, 0.1, 0.0]]))
        >>> label, round(confidence, 6), round(sum(probabilities.values()), 6)
        ('Supported', 0.7, 1.0)
    """
    label = aggregate_labels([int(i) for i in probs.argmax(1)], rule=rule) if len(probs) else NEE
    dist = aggregate_probabilities(probs, rule=rule)
    return LABELS[label], float(dist[label]), {LABELS[i]: float(dist[i]) for i in range(4)}


def claim_macro_f1(*, claims: Sequence[ClaimItem], predict: Callable[[list[tuple[str, str | None]]], np.ndarray],
                   style: str, rule: str) -> float:
    """Macro-F1 over the four labels of the aggregated verdicts of ``claims`` from their
    gold QA pairs: how upstream picks the verdict model's epoch (upstream: on dev; here:
    on held-out training claims).

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": "x", "label": lab, "questions": [
        ...     {"question": "q?", "answers": [{"answer": "a"}]}]}, where="x"))
        ...     for i, lab in enumerate(["Supported", "Refuted"])]
        >>> claim_macro_f1(claims=cs, predict=lambda pairs: np.array([[1.0, 0, 0, 0]] * len(pairs)),
        ...                style="upstream", rule="upstream")
        0.16666666666666666
    """
    from averitec_tools.metrics.label_metrics import macro_f1

    gold, pred = [], []
    for c in claims:
        if c.record.label not in LABELS:
            continue
        pairs = [verdict_input(claim=c.claim, pair=p, style=style) for p in gold_pairs(c.record)]
        probs = np.asarray(predict(pairs)) if pairs else np.zeros((0, 4))
        gold.append(LABELS.index(c.record.label))
        pred.append(aggregate_labels([int(i) for i in probs.argmax(1)], rule=rule) if len(probs) else NEE)
    if not gold:
        return 0.0
    return macro_f1(gold=[LABELS[g] for g in gold], predicted=[LABELS[p] for p in pred], labels=LABELS)


__all__ = ["LABELS", "aggregate_labels", "aggregate_probabilities", "claim_macro_f1", "decide", "verdict_examples",
           "verdict_input"]
