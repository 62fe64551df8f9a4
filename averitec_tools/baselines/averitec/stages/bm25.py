"""The two BM25 backends of the AVeriTeC baseline, behind one ``make_index(kind, texts)``.

* ``upstream`` — :class:`OkapiIndex`: the upstream scripts' ``rank_bm25.BM25Okapi``
  (k1 = 1.5, b = 0.75, ε = 0.25) over NLTK ``word_tokenize`` tokens (case kept,
  punctuation tokens kept, no stop words), computed with the same floating-point
  operations in the same order, so scores are bit-identical and the ranking —
  ``np.argsort(scores)[::-1]``, as upstream — puts ties in the same order. Every
  document is ranked, zero scores included. Tokens come from
  :class:`averitec_tools.metrics.tokenize.WordTokenizer` (NLTK 3.9.1 behaviour).
* ``bm25s`` — :class:`BM25Index`: bm25s's Lucene BM25 (k1 = 1.5, b = 0.75) over
  lower-cased ``\\w\\w+`` tokens without English stop words; only positive scores are
  ranked, ties to the lower row (this project's earlier choice).

rank_bm25 itself is not a dependency: ``tests/test_averitec_baseline_bm25.py`` checks
:class:`OkapiIndex` against it.

Example:
    >>> idx = make_index("upstream", ["Cats purr .", "Dogs bark", "Cats and dogs"])
    >>> idx.top("Cats", k=3)
    [2, 0, 1]
    >>> make_index("bm25s", ["cats purr softly", "dogs bark", "cats and dogs"]).top("cats", k=5)
    [2, 0]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from averitec_tools.errors import UserError

#: rank_bm25 ``BM25Okapi`` defaults, used by the upstream scripts.
OKAPI_K1 = 1.5
OKAPI_B = 0.75
OKAPI_EPSILON = 0.25

_TOKENIZER: Any = None


def word_tokenize(text: str) -> list[str]:
    """``nltk.word_tokenize`` as NLTK 3.9.1 computes it (one shared tokenizer).

    Example:
        >>> word_tokenize("Trump's wall, 2020.")
        ['Trump', "'s", 'wall', ',', '2020', '.']
    """
    global _TOKENIZER
    if _TOKENIZER is None:
        from averitec_tools.metrics.tokenize import WordTokenizer

        _TOKENIZER = WordTokenizer()
    tokens: list[str] = _TOKENIZER.tokenize(text)
    if len(_TOKENIZER._sentence_tokens) > 200_000:  # a long run: keep the sentence cache bounded
        _TOKENIZER.clear_cache()
    return tokens


class Index(Protocol):
    """What the stages need from a BM25 index."""

    def scores(self, query: str) -> np.ndarray: ...

    def top(self, query: str, *, k: int) -> list[int]: ...


class OkapiIndex:
    """rank_bm25's ``BM25Okapi`` over pre-tokenised documents, vectorised.

    Args:
        texts: The documents (tokenised with :func:`word_tokenize`), or ``tokens``.
        tokens: Already tokenised documents (instead of ``texts``).

    Example:
        >>> idx = OkapiIndex(tokens=[["a", "b"], ["a"], ["c"]])
        >>> [round(float(s), 6) for s in idx.scores_tokens(["b"])]
        [0.417001, 0.0, 0.0]
    """

    def __init__(self, texts: Sequence[str] | None = None, *, tokens: Sequence[Sequence[str]] | None = None,
                 k1: float = OKAPI_K1, b: float = OKAPI_B, epsilon: float = OKAPI_EPSILON) -> None:
        docs = tokens if tokens is not None else [word_tokenize(t) for t in texts or ()]
        self.n = len(docs)
        self.k1, self.b = k1, b
        # Word ids in first-occurrence order: the order rank_bm25 fills its document counts in,
        # which fixes the order of its idf sum.
        vocab: dict[str, int] = {}
        ids: list[int] = []
        lengths = np.zeros(self.n, dtype=np.int64)
        for row, doc in enumerate(docs):
            lengths[row] = len(doc)
            for w in doc:
                i = vocab.get(w)
                if i is None:
                    i = vocab[w] = len(vocab)
                ids.append(i)
        self.vocab = vocab
        self.idf: dict[str, float] = {}
        self.empty = not ids
        if self.empty:
            return
        # (word, document) pairs with their counts, sorted by word: the postings
        pair = np.asarray(ids, dtype=np.int64) * self.n + np.repeat(np.arange(self.n, dtype=np.int64), lengths)
        keys, counts = np.unique(pair, return_counts=True)
        self._rows, self._tf = keys % self.n, counts
        df = np.bincount(keys // self.n, minlength=len(vocab))
        self._start = np.concatenate([[0], np.cumsum(df)])
        avgdl = int(lengths.sum()) / self.n
        idf = [math.log(self.n - d + 0.5) - math.log(d + 0.5) for d in df.tolist()]
        idf_sum = 0.0
        for v in idf:  # summed in rank_bm25's order
            idf_sum += v
        eps = epsilon * (idf_sum / len(idf))
        self._idf = [eps if v < 0 else v for v in idf]
        self.idf = dict(zip(vocab, self._idf, strict=True))
        # rank_bm25's length term, element by element as it computes it
        self._norm = k1 * (1 - b + b * lengths / avgdl)

    def scores_tokens(self, query: Sequence[str]) -> np.ndarray:
        """Scores of every document for a tokenised query (repeated tokens count again)."""
        score = np.zeros(self.n)
        if self.empty:
            return score
        for q in query:
            i = self.vocab.get(q)
            if i is None:  # rank_bm25 adds 0.0 for every document: no change
                continue
            lo, hi = self._start[i], self._start[i + 1]
            rows, tf = self._rows[lo:hi], self._tf[lo:hi]
            score[rows] += self._idf[i] * (tf * (self.k1 + 1) / (tf + self._norm[rows]))
        return score

    def scores(self, query: str) -> np.ndarray:
        return self.scores_tokens(word_tokenize(query))

    def top(self, query: str, *, k: int) -> list[int]:
        """The ``k`` best rows, as upstream orders them (``np.argsort(scores)[::-1]``)."""
        return [int(i) for i in np.argsort(self.scores(query))[::-1][:k]]


def _bm25s_tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    out = bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)
    return [list(t) for t in out]


class BM25Index:
    """bm25s's Lucene BM25 over lower-cased ``\\w\\w+`` tokens without stop words.

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
        tokens = _bm25s_tokenize(texts)
        self.empty = not any(tokens)
        if not self.empty:
            self.model.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        if self.empty or self.n == 0:
            return np.zeros(self.n)
        q = [t for t in _bm25s_tokenize([query])[0] if t in self.model.vocab_dict]
        if not q:
            return np.zeros(self.n)
        return np.asarray(self.model.get_scores(q), dtype=float)

    def top(self, query: str, *, k: int) -> list[int]:
        """Rows of the ``k`` best positive scores, best first, ties to the lower row."""
        s = self.scores(query)
        rows = np.flatnonzero(s > 0)
        order = rows[np.lexsort((rows, -s[rows]))]
        return [int(i) for i in order[:k]]


#: ``retrieval.bm25`` / ``questions.prompt`` lookup backends by name.
BACKENDS: dict[str, Callable[[Sequence[str]], Index]] = {"upstream": OkapiIndex, "bm25s": BM25Index}


def make_index(kind: str, texts: Sequence[str]) -> Index:
    """A BM25 index of backend ``kind`` (``upstream`` or ``bm25s``) over ``texts``."""
    if kind not in BACKENDS:
        raise UserError(f"unknown BM25 backend {kind!r}", hint=f"one of: {', '.join(BACKENDS)}")
    return BACKENDS[kind](texts)


__all__ = ["BM25Index", "Index", "OkapiIndex", "make_index", "word_tokenize"]
