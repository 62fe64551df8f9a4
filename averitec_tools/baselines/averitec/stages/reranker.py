"""Stage 4: the cross-encoder reranker over (claim, question, answer); keeps the top 3.

Inputs (``reranker.input``): ``upstream`` — one text ``claim </s> question </s> answer``
(each part stripped; BERT's tokenizer reads ``</s>`` as plain characters, as upstream);
``pair`` — the text pair (claim, "question answer").

Training (on the training split only): every gold QA pair of a training claim is a
positive (a Boolean answer as "<answer>. <explanation>"). Negatives (``reranker.negatives``):

* ``upstream`` — 3 draws of a pair of another claim; each draw gives 3 negatives, swapping
  in its claim, its question or its answer: 9 per positive. A positive and its negatives
  form one group; a batch is ``batch_size`` groups and the loss is the mean over its
  positives plus the mean over its negatives, as upstream.
* ``one-swap`` — one draw, one part (chosen at random) swapped: one negative per positive,
  plain mean loss over shuffled examples.

The upstream code calls this model a "dual encoder"; it is a cross-encoder (claim and QA
text in one input), and so is this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair, gold_pairs

LABELS: tuple[str, ...] = ("irrelevant", "relevant")
#: (text_a, text_b or None, label)
Example = tuple[str, str | None, int]
#: How many pairs of other claims each positive draws under ``negatives: upstream``.
UPSTREAM_DRAWS = 3


def upstream_triple(claim: str, question: str, answer: str) -> str:
    """The upstream reranker's one-text input.

    Example:
        >>> upstream_triple(" C. ", "Q?", "A.")
        'C. </s> Q? </s> A.'
    """
    return " </s> ".join(part.strip() for part in (claim, question, answer))


def _as_input(style: str, claim: str, question: str, answer: str) -> tuple[str, str | None]:
    if style == "upstream":
        return upstream_triple(claim, question, answer), None
    return claim, f"{question} {answer}".strip()


def reranker_input(*, claim: str, pair: QAPair, style: str) -> tuple[str, str | None]:
    """The (text_a, text_b) the reranker scores for one candidate.

    Example:
        >>> reranker_input(claim="C.", pair=QAPair("Q?", "A."), style="pair")
        ('C.', 'Q? A.')
    """
    return _as_input(style, claim, pair.question, pair.answer)


def reranker_groups(claims: Sequence[ClaimItem], *, seed: int, negatives: str = "upstream",
                    style: str = "upstream") -> list[list[Example]]:
    """One group per gold QA pair: the positive first, then its negatives.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [
        ...     {"question": f"q{i}?", "answers": [{"answer": f"a{i}"}]}]}, where="x")) for i in range(2)]
        >>> g = reranker_groups(cs, seed=0)
        >>> len(g), [len(x) for x in g], g[0][:2]
        (2, [10, 10], [('c0 </s> q0? </s> a0', None, 1), ('c1 </s> q0? </s> a0', None, 0)])
        >>> [len(x) for x in reranker_groups(cs, seed=0, negatives="one-swap", style="pair")]
        [2, 2]
    """
    rng = np.random.default_rng(seed)
    # upstream: Boolean answers as "<answer>. <explanation>"; pair: the evidence answer text
    pairs = [(ci, p.question, p.with_explanation(". ") if style == "upstream" else p.answer)
             for ci, c in enumerate(claims) for p in gold_pairs(c.record)]
    text = [c.claim for c in claims]
    same = (lambda i, j: text[i] == text[j]) if negatives == "upstream" else (lambda i, j: i == j)
    groups: list[list[Example]] = []
    draws = UPSTREAM_DRAWS if negatives == "upstream" else 1
    for ci, q, a in pairs:
        group: list[Example] = [(*_as_input(style, text[ci], q, a), 1)]
        for _ in range(draws):
            for _attempt in range(10):  # a pair of another claim (upstream: another claim text)
                cj, q2, a2 = pairs[int(rng.integers(len(pairs)))]
                if not same(ci, cj):
                    break
            else:
                continue
            swaps = [(text[cj], q, a), (text[ci], q2, a), (text[ci], q, a2)]
            if negatives != "upstream":
                swaps = [swaps[int(rng.integers(3))]]
            group.extend((*_as_input(style, *s), 0) for s in swaps)
        groups.append(group)
    return groups


def reranker_examples(claims: Sequence[ClaimItem], *, seed: int) -> list[Example]:
    """Positives and one swapped negative each (``negatives: one-swap``), flattened.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [
        ...     {"question": f"q{i}?", "answers": [{"answer": f"a{i}"}]}]}, where="x")) for i in range(2)]
        >>> ex = reranker_examples(cs, seed=0)
        >>> len(ex), sum(y for *_, y in ex), ex[0]
        (4, 2, ('c0', 'q0? a0', 1))
    """
    return [e for g in reranker_groups(claims, seed=seed, negatives="one-swap", style="pair") for e in g]


def rerank(*, claim: str, candidates: Sequence[QAPair], scorer: object | None, keep: int,
           inputs: Callable[[str, QAPair], tuple[str, str | None]] | None = None) -> tuple[list[QAPair],
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
    order, scores = rerank_order(claim=claim, candidates=candidates, scorer=scorer, keep=keep, inputs=inputs)
    return [candidates[i] for i in order], scores


def rerank_order(*, claim: str, candidates: Sequence[QAPair], scorer: object | None, keep: int,
                 inputs: Callable[[str, QAPair], tuple[str, str | None]] | None = None) -> tuple[list[int],
                                                                                                  list[float]]:
    """Positions of the kept candidates, best first, and their P(relevant) (NaN: no scorer)."""
    if not candidates:
        return [], []
    if scorer is None:
        n = min(keep, len(candidates))
        return list(range(n)), [float("nan")] * n
    make = inputs or (lambda c, p: (c, p.text))
    probs = scorer.predict([make(claim, c) for c in candidates])  # type: ignore[attr-defined]
    relevant = probs[:, 1]
    order = np.argsort(-relevant, kind="stable")[:keep]
    return [int(i) for i in order], [float(relevant[i]) for i in order]


__all__ = ["LABELS", "rerank", "rerank_order", "reranker_examples", "reranker_groups", "reranker_input"]
