"""A Lucene-like English analyser in pure Python, shared by the bm25s backend and tests.

pyserini's default BM25 analyser (Anserini's ``DefaultEnglishAnalyzer``) lowercases,
strips English possessives, drops Lucene's 33 English stop words and applies the Porter
stemmer. :class:`LuceneLikeAnalyzer` does the same with a regular expression tokeniser
and NLTK's Porter stemmer in Martin Porter's reference mode (the algorithm Lucene
ported), so bm25s and pyserini index the same terms for ordinary prose.

The tokeniser follows the UAX #29 word rules that matter for prose (letters joined
across apostrophes, periods and colons; digits across commas, periods and semicolons),
so "wouldn't", "U.S.", "225,000" and "0.02" are single tokens as in Lucene. Known
remaining differences: e-mail addresses, URLs, emoji, CJK/Thai text, tokens longer than
255 characters and Lucene's lossy encoding of document length (a small score
difference for long paragraphs).
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Lucene's ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` (also bm25s's "en" list).
LUCENE_ENGLISH_STOPWORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with",
})

# UAX #29 word rules, as far as prose needs them: letters stay joined across ' ’ . : and
# digits across , . ; ' ’ ("wouldn't", "u.s", "225,000", "0.02" are one token each).
_TOKEN = re.compile(
    r"\w+(?:(?:(?<=[^\W\d_])['’‘＇.:·](?=[^\W\d_])|(?<=\d)[,.;'’‘＇](?=\d))\w+)*"
)
_POSSESSIVE_SUFFIXES = ("'s", "’s", "＇s")


class LuceneLikeAnalyzer:
    """Lowercase → UAX #29-like tokens → strip possessive ``'s`` → stop words → Porter stem.

    Args:
        stopwords: Words to drop (after lowercasing); Lucene's English set by default.
        stem: Apply the Porter stemmer.

    Example:
        >>> LuceneLikeAnalyzer()("The cat's owners were running to Paris")
        ['cat', 'owner', 'were', 'run', 'pari']
    """

    def __init__(self, *, stopwords: frozenset[str] = LUCENE_ENGLISH_STOPWORDS, stem: bool = True) -> None:
        self.stopwords = stopwords
        self.stem = stem
        if stem:
            from nltk.stem.porter import PorterStemmer

            stemmer = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS)
            self._stem = lru_cache(maxsize=1 << 20)(stemmer.stem)

    def settings(self) -> dict[str, object]:
        """What an index records so a query is analysed like the documents."""
        return {"analyzer": "lucene-like", "stem": "porter" if self.stem else None,
                "stopwords": sorted(self.stopwords)}

    def __call__(self, text: str) -> list[str]:
        words = _TOKEN.findall(text.lower())
        words = [w[:-2] if w.endswith(_POSSESSIVE_SUFFIXES) else w for w in words]
        kept = [w for w in words if w and w not in self.stopwords]
        if self.stem:
            return [self._stem(w) for w in kept]
        return kept


__all__ = ["LuceneLikeAnalyzer"]
