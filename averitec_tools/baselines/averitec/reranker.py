"""Stage 4: the cross-encoder reranker over (claim, question + answer); keeps the top 3.

Training (on the training split only): every gold QA pair of a training claim is a
positive; for each, one negative made by swapping in another claim's claim, question or
answer (chosen at random, seeded). The upstream code calls this model a "dual encoder";
it is a cross-encoder (claim and QA text in one input), and so is this one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from averitec_tools.baselines.averitec.data import ClaimItem, QAPair, gold_pairs

LABELS: tuple[str, ...] = ("irrelevant", "relevant")


def reranker_examples(claims: Sequence[ClaimItem], *, seed: int) -> list[tuple[str, str, int]]:
    """Positives and swapped negatives from gold QA pairs.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [
        ...     {"question": f"q{i}?", "answers": [{"answer": f"a{i}"}]}]}, where="x")) for i in range(2)]
        >>> ex = reranker_examples(cs, seed=0)
        >>> len(ex), sum(y for *_, y in ex), ex[0]
        (4, 2, ('c0', 'q0? a0', 1))
    """
    rng = np.random.default_rng(seed)
    pairs = [(ci, p) for ci, c in enumerate(claims) for p in gold_pairs(c.record)]
    out: list[tuple[str, str, int]] = []
    if len(claims) < 2:
        return [(claims[ci].claim, p.text, 1) for ci, p in pairs]
    for ci, p in pairs:
        out.append((claims[ci].claim, p.text, 1))
        for _ in range(10):  # draw a pair of another claim
            cj, q = pairs[int(rng.integers(len(pairs)))]
            if cj != ci:
                break
        else:
            continue
        swap = int(rng.integers(3))
        if swap == 0:
            out.append((claims[cj].claim, p.text, 0))
        elif swap == 1:
            out.append((claims[ci].claim, f"{q.question} {p.answer}".strip(), 0))
        else:
            out.append((claims[ci].claim, f"{p.question} {q.answer}".strip(), 0))
    return out


def rerank(*, claim: str, candidates: Sequence[QAPair], scorer: object | None, keep: int) -> tuple[list[QAPair],
                                                                                                     list[float]]:
    """The ``keep`` best candidates by the scorer's P(relevant), stable on ties; with no
    scorer (the no-reranker variant) the first ``keep`` (BM25 order).

    Example:
        >>> cands = [QAPair("q1", "a1"), QAPair("q2", "a2"), QAPair("q3", "a3")]
        >>> class S:
        ...     def predict(self, pairs): return np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]])
        >>> [c.question for c in rerank(claim="c", candidates=cands, scorer=S(), keep=2)[0]]
        ['q2', 'q3']
    """
    if not candidates:
        return [], []
    if scorer is None:
        return list(candidates[:keep]), [float("nan")] * min(keep, len(candidates))
    probs = scorer.predict([(claim, c.text) for c in candidates])  # type: ignore[attr-defined]
    relevant = probs[:, 1]
    order = np.argsort(-relevant, kind="stable")[:keep]
    return [candidates[i] for i in order], [float(relevant[i]) for i in order]


__all__ = ["LABELS", "rerank", "reranker_examples"]
