"""Stage 2: BM25 sentence retrieval over one claim's knowledge store (bm25s).

Every sentence of every page in the claim's store file is a BM25 document; the claim text
is the query; the top ``k`` (100) sentences are kept, best first, ties broken by store
order. Tokenisation is bm25s's (lower-cased ``\\w\\w+`` tokens, English stop words
removed, no stemming) with bm25s's Lucene BM25 (k1 = 1.5, b = 0.75; idf
ln(1 + (N − df + 0.5)/(df + 0.5)), tf part tf/(tf + k1·(1 − b + b·dl/avgdl))),
where the upstream baseline uses ``rank_bm25.BM25Okapi`` over NLTK ``word_tokenize``
tokens (no stop-word removal, idf floored at ε·mean idf); see ``docs/averitec_baseline.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.store import StoreDocument


@dataclass(frozen=True)
class Sentence:
    """A retrieved sentence with its page URL and BM25 score."""

    text: str
    url: str
    score: float = 0.0


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    out = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [list(t) for t in out]


class BM25Index:
    """BM25 over a list of texts; ``top(query, k)`` returns row indices, best first.

    Args:
        texts: The documents.

    Example:
        >>> idx = BM25Index(["cats purr softly", "dogs bark", "cats and dogs"])
        >>> idx.top("cats", k=5)
        [2, 0]
    """

    def __init__(self, texts: Sequence[str]) -> None:
        import bm25s

        self.n = len(texts)
        self.model = bm25s.BM25(k1=1.5, b=0.75)
        tokens = _tokenize(texts)
        if any(tokens):
            self.model.index(tokens, show_progress=False)
            self.empty = False
        else:
            self.empty = True

    def scores(self, query: str) -> np.ndarray:
        if self.empty or self.n == 0:
            return np.zeros(self.n)
        q = [t for t in _tokenize([query])[0] if t in self.model.vocab_dict]
        if not q:
            return np.zeros(self.n)
        return np.asarray(self.model.get_scores(q), dtype=float)

    def top(self, query: str, *, k: int) -> list[int]:
        """Rows of the ``k`` best positive scores, best first, ties to the lower row."""
        s = self.scores(query)
        rows = np.flatnonzero(s > 0)
        order = rows[np.lexsort((rows, -s[rows]))]
        return [int(i) for i in order[:k]]


def retrieve_sentences(*, claim: str, documents: Iterable[StoreDocument], k: int = 100) -> list[Sentence]:
    """The ``k`` store sentences most BM25-similar to ``claim``.

    Example:
        >>> docs = [StoreDocument(0, "t", "q", "u1", ("The moon is cheese.", "Sky.")),
        ...         StoreDocument(0, "t", "q", "u2", ("Cheese is made of milk.",))]
        >>> [s.url for s in retrieve_sentences(claim="moon cheese", documents=docs, k=2)]
        ['u1', 'u2']
    """
    texts: list[str] = []
    urls: list[str] = []
    for doc in documents:
        for sent in doc.url2text:
            if sent.strip():
                texts.append(sent)
                urls.append(doc.url)
    if not texts:
        return []
    index = BM25Index(texts)
    scores = index.scores(claim)
    rows = index.top(claim, k=k)
    return [Sentence(text=texts[i], url=urls[i], score=float(scores[i])) for i in rows]


def gold_recall(*, retrieved: Sequence[Sentence], gold: Sequence[str]) -> float | None:
    """Share of gold answer sentences found among ``retrieved`` (None without gold).

    Example:
        >>> gold_recall(retrieved=[Sentence("A.", "u")], gold=["A.", "B."])
        0.5
    """
    wanted = {g.strip() for g in gold if g.strip()}
    if not wanted:
        return None
    got = {s.text.strip() for s in retrieved}
    return len(wanted & got) / len(wanted)


def as_dict(sentence: Sentence) -> dict[str, Any]:
    return {"text": sentence.text, "url": sentence.url, "score": sentence.score}


__all__ = ["BM25Index", "Sentence", "as_dict", "gold_recall", "retrieve_sentences"]
