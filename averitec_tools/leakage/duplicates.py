"""Claim duplicates and a claim's own evidence: the one rule both baselines train and score by.

* :func:`normalise_claim` — the claim text every duplicate decision compares: Unicode
  NFKC, case-folded, every punctuation character (Unicode category ``P*``: ``’`` and
  ``'`` alike) folded to a space, whitespace runs folded to one space, stripped.
* :func:`train_duplicates` — the training claims whose normalised text equals a scored
  claim's: dropped from every training and fitting set.
* :func:`page_key` — the page an URL names (archive.org captures unwrapped, host without
  ``www.``, path without trailing slash, case-folded), to match an answer's
  ``source_url`` with a claim's ``fact_checking_article``.
* :class:`OwnEvidence` — for each scored claim, the answers that are its own: those of
  every claim with the same normalised text, and every answer whose ``source_url`` is the
  claim's own fact-checking article; counted per rule for the run summary's
  ``leak_guard``.

On the shared AVeriTeC data (train 3,068 / dev 500 claims) 13 training claims are
normalised duplicates of dev claims (6 verbatim); 15 dev claims have a twin whose text
differs only in punctuation, case or Unicode (their answers escaped an exact-text filter);
10 dev claims have their own fact-checking article as the ``source_url`` of another
claim's answer (13 answers).

Example:
    >>> normalise_claim("India’s  GDP grew.") == normalise_claim("india's GDP grew")
    True
    >>> train_duplicates(train=["A b.", "c", "A  B"], scored=["a b"])
    [0, 2]
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

#: Bumped when the rule changes: cache keys of anything trained or fitted include it.
LEAK_GUARD_VERSION = "leak-guard-v1"


def normalise_claim(text: str) -> str:
    """The duplicate-deciding form of a claim: NFKC, casefold, punctuation and whitespace folded.

    Example:
        >>> normalise_claim("  “U.S.”  is\\tBIG! ")
        'u s is big'
        >>> normalise_claim("ﬁne") == normalise_claim("FINE")
        True
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    spaced = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in folded)
    return " ".join(spaced.split())


def train_duplicates(*, train: Sequence[str], scored: Iterable[str]) -> list[int]:
    """Indices of the training claims whose normalised text equals a scored claim's.

    Example:
        >>> train_duplicates(train=["x", "Y!"], scored=["y"])
        [1]
    """
    keys = {normalise_claim(s) for s in scored}
    return [i for i, t in enumerate(train) if normalise_claim(t) in keys]


def page_key(url: str | None) -> str | None:
    """The page an URL names, or None for no/invalid URL (archive.org captures unwrapped).

    Example:
        >>> page_key("https://web.archive.org/web/2020/https://www.Snopes.com/fact-check/x/")
        'snopes.com/fact-check/x'
        >>> page_key("http://snopes.com/fact-check/X"), page_key(""), page_key(None)
        ('snopes.com/fact-check/x', None, None)
    """
    from averitec_tools.leakage.urls import parse_url

    parsed = parse_url(url or "")
    if parsed is None:
        return None
    return f"{parsed.host}{parsed.path.rstrip('/').lower()}"


def rows_digest(rows: Iterable[object]) -> str:
    """SHA-256 (16 hex) of rows as canonical JSON: the fingerprint of a training/fitting input.

    Example:
        >>> rows_digest([["a", 1]]) == rows_digest([("a", 1)]), len(rows_digest([]))
        (True, 16)
    """
    h = hashlib.sha256()
    for row in rows:
        h.update(json.dumps(row, sort_keys=True, default=str, ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


@dataclass
class OwnEvidence:
    """Which answers are each claim's own (by normalised text or by its own article).

    Built from every (claim text, answer id, answer ``source_url``) of the corpus and every
    known claim's (text, ``fact_checking_article``). :meth:`own` gives a claim's own answer
    ids (any spelling of its text); :meth:`counts` counts, over the scored claims, the
    answers each rule removes (an answer both rules catch counts as own).

    Example:
        >>> ev = OwnEvidence.build(
        ...     answers=[("India’s GDP", "a1", "https://x.org/1"), ("Other", "a2", "https://fc.org/c/"),
        ...              ("Other", "a3", "https://y.org")],
        ...     claims=[("India's GDP", "http://www.fc.org/c")])
        >>> sorted(ev.own("india's gdp")), ev.counts(["India's GDP"])
        (['a1', 'a2'], {'own_answers_removed': 1, 'own_article_answers_removed': 1})
    """

    by_text: dict[str, frozenset[str]] = field(default_factory=dict)
    by_article: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, *, answers: Iterable[tuple[str, str, str | None]],
              claims: Iterable[tuple[str, str | None]]) -> OwnEvidence:
        """Index ``answers`` (claim text, answer id, source_url) for ``claims`` (text, fact_checking_article)."""
        by_text: dict[str, set[str]] = {}
        by_page: dict[str, set[str]] = {}
        for text, doc_id, url in answers:
            by_text.setdefault(normalise_claim(text), set()).add(doc_id)
            key = page_key(url)
            if key is not None:
                by_page.setdefault(key, set()).add(doc_id)
        by_article: dict[str, set[str]] = {}
        for text, article in claims:
            key = page_key(article)
            norm = normalise_claim(text)
            if key is not None and key in by_page:
                by_article.setdefault(norm, set()).update(by_page[key] - by_text.get(norm, set()))
        return cls(by_text={k: frozenset(v) for k, v in by_text.items()},
                   by_article={k: frozenset(v) for k, v in by_article.items()})

    def own(self, claim: str) -> frozenset[str]:
        """The answer ids a claim (any spelling) may not see: its own and its article's."""
        norm = normalise_claim(claim)
        return self.by_text.get(norm, frozenset()) | self.by_article.get(norm, frozenset())

    def counts(self, scored: Iterable[str]) -> dict[str, int]:
        """What each rule removes over the scored claims (each distinct normalised text once)."""
        norms = {normalise_claim(t) for t in scored}
        return {"own_answers_removed": sum(len(self.by_text.get(n, ())) for n in norms),
                "own_article_answers_removed": sum(len(self.by_article.get(n, ())) for n in norms)}


__all__ = ["LEAK_GUARD_VERSION", "OwnEvidence", "normalise_claim", "page_key", "rows_digest", "train_duplicates"]
