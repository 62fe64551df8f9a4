"""Stage 2: BM25 sentence retrieval over one claim's knowledge store.

Every sentence of every page in the claim's store file is a BM25 document; the claim text
is the query; the top ``k`` (100) sentences are kept, best first. ``retrieval.bm25``
picks the backend (:mod:`.bm25`): ``upstream`` — the upstream script exactly
(rank_bm25 ``BM25Okapi`` over NLTK ``word_tokenize`` tokens, every sentence ranked
including empty ones and zero scores, order ``np.argsort(scores)[::-1]``); ``bm25s`` —
Lucene BM25 over lower-cased ``\\w\\w+`` tokens without English stop words, empty
sentences skipped, only positive scores, ties to store order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.averitec.corpus.store import StoreDocument
from averitec_tools.baselines.averitec.stages.bm25 import BM25Index, make_index


@dataclass(frozen=True)
class Sentence:
    """A retrieved sentence with its page URL and BM25 score."""

    text: str
    url: str
    score: float = 0.0


def retrieve_sentences(*, claim: str, documents: Iterable[StoreDocument], k: int = 100,
                       bm25: str = "upstream") -> list[Sentence]:
    """The ``k`` store sentences most BM25-similar to ``claim``.

    Example (upstream: case kept, "Cheese" is not "cheese"; zero-score ties last row first):
        >>> docs = [StoreDocument(0, "t", "q", "u1", ("The moon is cheese.", "Sky.")),
        ...         StoreDocument(0, "t", "q", "u2", ("Cheese is made of milk.",)),
        ...         StoreDocument(0, "t", "q", "u3", ("Rain.",))]
        >>> [s.url for s in retrieve_sentences(claim="moon cheese", documents=docs, k=2)]
        ['u1', 'u3']
        >>> [s.url for s in retrieve_sentences(claim="moon cheese", documents=docs, k=9, bm25="bm25s")]
        ['u1', 'u2']
    """
    texts: list[str] = []
    urls: list[str] = []
    for doc in documents:
        for sent in doc.url2text:
            if bm25 == "upstream" or sent.strip():
                texts.append(sent)
                urls.append(doc.url)
    if not texts:
        return []
    index = make_index(bm25, texts)
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
