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
#: The retrieval-exclusion rule of :class:`OwnEvidence` (v2: siblings of one fact-checking article too).
OWN_EVIDENCE_VERSION = "own-evidence-v2"


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
    """Which answers are each claim's own (by normalised text, its own article, its siblings).

    Built from every (claim text, answer id, answer ``source_url``) of the corpus and every
    known claim's (text, ``fact_checking_article``). :meth:`own` gives the answer ids a claim
    may not see: its own answers (any spelling of its text), the answers whose source is its
    own fact-checking article, and its *siblings'* answers — those of the other claims checked
    in the same fact-checking article, which the annotators researched together (a dev claim
    has no sibling among the training claims; a training claim or a pseudo-test claim often
    does, so without this rule its pool would be richer than a dev claim's). :meth:`counts`
    counts, over the scored claims, what each rule removes (an answer caught by several rules
    counts once, for the first of own, article, sibling).

    Example:
        >>> ev = OwnEvidence.build(
        ...     answers=[("India’s GDP", "a1", "https://x.org/1"), ("Other", "a2", "https://fc.org/c/"),
        ...              ("Other", "a3", "https://y.org"), ("Sibling", "a4", "https://z.org")],
        ...     claims=[("India's GDP", "http://www.fc.org/c"), ("Sibling", "https://fc.org/c")])
        >>> sorted(ev.own("india's gdp")), ev.counts(["India's GDP"])
        (['a1', 'a2', 'a4'], {'own_answers_removed': 1, 'own_article_answers_removed': 1, 'sibling_answers_removed': 1})
    """

    by_text: dict[str, frozenset[str]] = field(default_factory=dict)
    by_article: dict[str, frozenset[str]] = field(default_factory=dict)
    by_sibling: dict[str, frozenset[str]] = field(default_factory=dict)

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
        pages = [(normalise_claim(text), page_key(article)) for text, article in claims]
        texts_of: dict[str, set[str]] = {}
        for norm, key in pages:
            if key is not None:
                texts_of.setdefault(key, set()).add(norm)
        by_article: dict[str, set[str]] = {}
        by_sibling: dict[str, set[str]] = {}
        for norm, key in pages:
            if key is None:
                continue
            own = by_text.get(norm, set())
            article = by_article.setdefault(norm, set())
            article.update(by_page.get(key, set()) - own)
            siblings = set().union(*(by_text.get(t, set()) for t in texts_of[key] - {norm}))
            by_sibling.setdefault(norm, set()).update(siblings - own - article)
        return cls(by_text={k: frozenset(v) for k, v in by_text.items()},
                   by_article={k: frozenset(v) for k, v in by_article.items() if v},
                   by_sibling={k: frozenset(v) for k, v in by_sibling.items() if v})

    def parts(self, claim: str) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        """A claim's (own, own-article, sibling) answer ids, disjoint."""
        norm = normalise_claim(claim)
        return (self.by_text.get(norm, frozenset()), self.by_article.get(norm, frozenset()),
                self.by_sibling.get(norm, frozenset()))

    def own(self, claim: str) -> frozenset[str]:
        """The answer ids a claim (any spelling) may not see: its own, its article's, its siblings'."""
        own, article, sibling = self.parts(claim)
        return own | article | sibling

    def counts(self, scored: Iterable[str]) -> dict[str, int]:
        """What each rule removes over the scored claims (each distinct normalised text once)."""
        parts = [self.parts(t) for t in {normalise_claim(t) for t in scored}]
        return {name: sum(len(p[i]) for p in parts) for i, name in enumerate(OWN_EVIDENCE_COUNTS)}


#: The names of :meth:`OwnEvidence.counts`, in :meth:`OwnEvidence.parts` order.
OWN_EVIDENCE_COUNTS: tuple[str, ...] = ("own_answers_removed", "own_article_answers_removed",
                                        "sibling_answers_removed")


__all__ = ["LEAK_GUARD_VERSION", "OWN_EVIDENCE_COUNTS", "OWN_EVIDENCE_VERSION", "OwnEvidence", "normalise_claim", "page_key", "rows_digest", "train_duplicates"]
