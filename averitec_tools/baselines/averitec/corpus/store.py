"""Stage 1: the per-claim knowledge store in the 2024 shared-task layout.

A store is a directory with one file per claim, ``<claim_id>.json``, each holding JSON
lines ``{claim_id, type, query, url, url2text: [sentence, ...]}``. :class:`KnowledgeStore`
reads them through the loaders' store reader
(:func:`~averitec_tools.loaders.stores.read_documents`, what
``loaders.load("averitec/knowledge_store", ...)`` reads): line by line, each line and file
bounded (real stores hold up to 1,000 pages per claim), typed
:class:`~averitec_tools.records.knowledge_store.StoreDocument` records whose claim id is
the file's name; a malformed line is an error naming the file and line.

:func:`build_store` writes such a store offline from AVeriTeC gold annotation: a claim's
own gold answers as documents (``url`` = the answer's ``source_url``, ``url2text`` = the
answer's sentences) plus distractor documents drawn, seeded, from other claims' answers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory
from averitec_tools.loaders.stores import read_documents
from averitec_tools.records.averitec import Answer, AVeriTeCClaim
from averitec_tools.records.knowledge_store import StoreDocument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences at ``.``/``!``/``?`` followed by a capital or digit.

    Example:
        >>> split_sentences("It rained. Then 2 cats left! ok")
        ['It rained.', 'Then 2 cats left! ok']
    """
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def answer_text(answer: Answer) -> str:
    """An answer as evidence text: Boolean answers get their explanation appended.

    Example:
        >>> answer_text(Answer(answer="No", answer_type="Boolean", boolean_explanation="It was fake."))
        'No. It was fake.'
    """
    text = answer.answer.strip()
    if answer.answer_type == "Boolean" and answer.boolean_explanation:
        text = f"{text.rstrip('.')}. {answer.boolean_explanation.strip()}"
    return text


class KnowledgeStore:
    """A store directory; ``documents(claim_id)`` streams that claim's pages (the loaders' reader).

    Args:
        path: The store directory.

    Raises:
        UserError: The directory is missing or holds no ``*.json`` file.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "0.json").write_text('{"claim_id": 0, "type": "t", "query": "q", '
        ...                               '"url": "u", "url2text": ["A.", "B."]}\\n')
        >>> store = KnowledgeStore(d)
        >>> [doc.url2text for doc in store.documents(0)], store.has(1)
        ([('A.', 'B.')], False)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise UserError(f"{self.path}: knowledge store directory does not exist")
        if not any(self.path.glob("*.json")):
            raise UserError(f"{self.path}: knowledge store is empty (no <claim_id>.json files)")

    def file(self, claim_id: Any) -> Path:
        return self.path / f"{claim_id}.json"

    def has(self, claim_id: Any) -> bool:
        return self.file(claim_id).is_file()

    def documents(self, claim_id: Any) -> Iterator[StoreDocument]:
        """Stream the claim's documents (nothing when the claim has no file)."""
        path = self.file(claim_id)
        if not path.is_file():
            return
        yield from read_documents(path, claim_id=claim_id)


@dataclass
class StoreStats:
    """What :func:`build_store` wrote and dropped."""

    claims: int = 0
    documents: int = 0
    own_documents: int = 0
    distractor_documents: int = 0
    sentences: int = 0
    dropped_after_claim_date: int = 0
    dropped_by_type: dict[str, int] = field(default_factory=dict)
    #: With ``exclude_own_evidence``: the claims' own answers left out (their own and their
    #: normalised twins'), and other claims' answers from the claim's own fact-checking article.
    own_answers_removed: int = 0
    own_article_answers_removed: int = 0
    #: ... and the answers of the claims checked in the same fact-checking article (siblings).
    sibling_answers_removed: int = 0
    #: Distractor documents that are answers of a claim in the claims file (all of them when
    #: the distractors come from the other claims'; 0 with ``pool_claims``).
    scored_annotations_in_store: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def count(self, kept: Sequence[StoreDocument]) -> None:
        """Count one claim's file: its documents, own answers, distractors and sentences."""
        self.claims += 1
        self.documents += len(kept)
        self.own_documents += sum(d.type == "gold_answer" for d in kept)
        self.distractor_documents += sum(d.type == "distractor" for d in kept)
        self.sentences += sum(len(d.url2text) for d in kept)


def _answer_docs(claim_id: Any, claim: AVeriTeCClaim, *, kind: str) -> list[StoreDocument]:
    docs = []
    for q in claim.questions:
        for a in q.answers:
            if a.answer_type == "Unanswerable" or not a.answer.strip():
                continue
            docs.append(StoreDocument(claim_id=claim_id, type=kind, query=q.question,
                                      url=a.source_url or "", url2text=tuple(split_sentences(answer_text(a)))))
    return docs


def published_after(url: str, claim_date: Any) -> bool:
    """Whether ``url`` carries a publication date after ``claim_date`` (leakage rules).

    Example:
        >>> import datetime as dt
        >>> published_after("https://x.com/2021/05/03/story", dt.date(2020, 1, 1))
        True
        >>> published_after("https://x.com/story", dt.date(2020, 1, 1))
        False
    """
    from averitec_tools.leakage.dates import date_from_url
    from averitec_tools.leakage.urls import parse_url

    if claim_date is None or not url:
        return False
    parsed = parse_url(url)
    date = date_from_url(parsed) if parsed is not None else None
    return date is not None and date.after(claim_date)


def _distractor_pool(claims: Sequence[AVeriTeCClaim], ids: Sequence[Any], pool_claims: Sequence[AVeriTeCClaim] | None
                     ) -> tuple[list[tuple[int, StoreDocument]], set[int]]:
    """Every answer the distractors are drawn from, as (index of its claim, document), and the
    pool indices that are answers of a claim in ``claims`` when the pool is another file's
    (those never become distractors: no annotation of a claim being scored is in the store)."""
    from averitec_tools.leakage.duplicates import normalise_claim

    if pool_claims is None:
        return [(ci, d) for ci, c in enumerate(claims) for d in _answer_docs(ids[ci], c, kind="distractor")], set()
    pool = [(ci, d) for ci, c in enumerate(pool_claims) for d in _answer_docs(None, c, kind="distractor")]
    scored = {normalise_claim(c.claim) for c in claims}
    return pool, {j for j, (ci, _) in enumerate(pool) if normalise_claim(pool_claims[ci].claim) in scored}


def _own_pool(claims: Sequence[AVeriTeCClaim], pool_claims: Sequence[AVeriTeCClaim],
              pool: Sequence[tuple[int, StoreDocument]]) -> Any:
    """``claim`` → pool indices of its (own and twins', own-article, sibling) answers
    (:class:`~averitec_tools.leakage.duplicates.OwnEvidence`, the rule R2VC retrieves by)."""
    from averitec_tools.leakage.duplicates import OwnEvidence

    ev = OwnEvidence.build(answers=[(pool_claims[cj].claim, str(j), d.url) for j, (cj, d) in enumerate(pool)],
                           claims=[(c.claim, c.fact_checking_article) for c in (*pool_claims, *claims)])

    def own_of(claim: AVeriTeCClaim) -> tuple[set[int], ...]:
        return tuple({int(j) for j in part} for part in ev.parts(claim.claim))

    return own_of


def _others(ci: int, claim: AVeriTeCClaim, pool: Sequence[tuple[int, StoreDocument]], *, own_of: Any,
            banned: set[int], own_file: bool, stats: StoreStats) -> list[int]:
    """The pool documents claim ``ci`` may draw distractors from: all but the ``banned`` (answers
    of a claim in the claims file when the pool is another file's) and, drawing from the claims
    file itself (``own_file``), its own; with ``own_of`` (exclude own evidence) also its twins',
    its own article's and its sibling claims' answers, counted."""
    skip = set(banned)
    if own_of is None:
        skip |= {j for j, (cj, _) in enumerate(pool) if own_file and cj == ci}
    else:
        own, article, sibling = own_of(claim)
        stats.own_answers_removed += len(own)
        stats.own_article_answers_removed += len(article)
        stats.sibling_answers_removed += len(sibling)
        skip |= own | article | sibling
    return [j for j in range(len(pool)) if j not in skip]


def _distractors(ci: int, claim_id: Any, pool: Sequence[tuple[int, StoreDocument]], others: Sequence[int], *,
                 n: int, seed: int) -> list[StoreDocument]:
    """``n`` of ``others`` drawn with the claim's seed, in pool order, as the claim's distractors."""
    if n <= 0 or not others:
        return []
    rng = np.random.default_rng([seed, ci])
    pick = rng.choice(len(others), size=min(n, len(others)), replace=False)
    return [StoreDocument(claim_id=claim_id, type="distractor", query=d.query, url=d.url, url2text=d.url2text)
            for d in (pool[others[j]][1] for j in sorted(int(p) for p in pick))]


def _kept(docs: Sequence[StoreDocument], claim: AVeriTeCClaim, stats: StoreStats) -> list[StoreDocument]:
    """``docs`` without those published after the claim date (counted by type)."""
    kept = []
    for d in docs:
        if published_after(d.url, claim.date):
            stats.dropped_after_claim_date += 1
            kind = str(d.type)  # build_store's documents always have one (gold_answer, distractor)
            stats.dropped_by_type[kind] = stats.dropped_by_type.get(kind, 0) + 1
            continue
        kept.append(d)
    return kept


def build_store(
    *,
    claims: Sequence[AVeriTeCClaim],
    out: str | os.PathLike[str],
    claim_ids: Sequence[Any] | None = None,
    distractors: int = 200,
    seed: int = 0,
    exclude_own_evidence: bool = False,
    temporal_filter: bool = False,
    pool_claims: Sequence[AVeriTeCClaim] | None = None,
) -> StoreStats:
    """Write a knowledge store for ``claims`` to ``out`` (atomically).

    Args:
        claims: Gold-annotated claims.
        out: Directory to write (replaced whole on success).
        claim_ids: File name of each claim (default: its position).
        distractors: Distractor documents per claim, drawn (seeded per claim) from the
            other claims' answers.
        seed: Seed of the distractor draw.
        exclude_own_evidence: Leave out the claim's own gold answers, and from its distractors
            those of its twins and its own article (:mod:`averitec_tools.leakage.duplicates`).
        temporal_filter: Drop documents whose URL dates after the claim (counted).
        pool_claims: Draw distractors from these claims (e.g. the training split), minus any
            twin of ``claims``: the honest store of a scored split (``scored_annotations_in_store`` 0).

    Example:
        >>> import tempfile, pathlib
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> cs = [AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [{"question": "q",
        ...        "answers": [{"answer": f"Answer {i}.", "source_url": f"u{i}"}]}]}, where="x")
        ...       for i in range(3)]
        >>> stats = build_store(claims=cs, out=pathlib.Path(tempfile.mkdtemp()) / "s", distractors=1)
        >>> stats.own_documents, stats.distractor_documents
        (3, 3)
    """
    ids = list(claim_ids) if claim_ids is not None else list(range(len(claims)))
    if len(ids) != len(claims):
        raise UserError("build_store: claim_ids and claims differ in length")
    pool, banned = _distractor_pool(claims, ids, pool_claims)
    stats = StoreStats()
    own_of = _own_pool(claims, claims if pool_claims is None else pool_claims, pool) if exclude_own_evidence else None
    with atomic_directory(out) as tmp:
        for ci, claim in enumerate(claims):
            docs = [] if exclude_own_evidence else _answer_docs(ids[ci], claim, kind="gold_answer")
            others = _others(ci, claim, pool, own_of=own_of, banned=banned, own_file=pool_claims is None, stats=stats)
            picked = _distractors(ci, ids[ci], pool, others, n=distractors, seed=seed)
            stats.scored_annotations_in_store += len(picked) if pool_claims is None else 0
            kept = _kept([*docs, *picked], claim, stats) if temporal_filter else [*docs, *picked]
            with (tmp / f"{ids[ci]}.json").open("w", encoding="utf-8") as fh:
                for d in kept:
                    fh.write(json.dumps(d.to_dict(), ensure_ascii=False) + "\n")
            stats.count(kept)
        if exclude_own_evidence or pool_claims is not None:  # the 2024 layout otherwise: only <claim_id>.json files
            (tmp / LEAK_GUARD_FILE).write_text(json.dumps({
                "exclude_own_evidence": exclude_own_evidence, **{k: getattr(stats, k) for k in LEAK_GUARD_KEYS}}),
                encoding="utf-8")
    return stats


def distractor_claims(path: str | os.PathLike[str]) -> tuple[list[AVeriTeCClaim], dict[str, Any]]:
    """The claims of ``path`` whose answers a store's distractors are drawn from (``build-store
    --distractors-from``), and what was held out: AVeriTeC's ``train.json`` keeps its pseudo-test
    out (:mod:`averitec_tools.leakage.pseudo_test`), as every training and fitting set does.

    Example:
        >>> import tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.json"
        >>> _ = p.write_text('[{"claim": "a", "questions": []}]')
        >>> [c.claim for c in distractor_claims(p)[0]], distractor_claims(p)[1]
        (['a'], {'distractor_claims': 1, 'pseudo_test_held_out': 0})
    """
    from averitec_tools.hashing import file_sha256
    from averitec_tools.jsonio import load_json
    from averitec_tools.leakage.pseudo_test import (
        PSEUDO_TEST_CLAIMS,
        pseudo_test_mask,
        pseudo_test_size,
    )

    raw = load_json(path)
    if not isinstance(raw, list):
        raise UserError(f"{path}: expected a JSON array of claims")
    claims = [AVeriTeCClaim.from_dict(r, where=f"{path}[{i}]", claim_id=i) for i, r in enumerate(raw)]
    n = pseudo_test_size(PSEUDO_TEST_CLAIMS, train_sha256=file_sha256(path))
    held = pseudo_test_mask([c.claim for c in claims], n=n)
    kept = [c for c, h in zip(claims, held, strict=True) if not h]
    return kept, {"distractor_claims": len(kept), "pseudo_test_held_out": int(held.sum())}


#: Written by :func:`build_store` with ``exclude_own_evidence`` beside the ``<claim_id>.json``
#: files: what its leak rules removed.
LEAK_GUARD_FILE = "leak_guard.info"


def read_leak_guard(store: str | os.PathLike[str]) -> dict[str, Any]:
    """The store's own-answer counts (``{}`` for a store not built by :func:`build_store`, e.g. the official one).

    Example:
        >>> import tempfile, pathlib
        >>> read_leak_guard(tempfile.mkdtemp())
        {}
    """
    path = Path(store) / LEAK_GUARD_FILE
    if not path.is_file():
        return {}
    info = json.loads(path.read_text(encoding="utf-8"))
    return {k: info[k] for k in ("exclude_own_evidence", *LEAK_GUARD_KEYS) if k in info}


#: The counts a store's ``leak_guard.info`` holds (:class:`StoreStats` fields).
LEAK_GUARD_KEYS: tuple[str, ...] = ("own_answers_removed", "own_article_answers_removed", "sibling_answers_removed",
                                    "scored_annotations_in_store")


__all__ = ["LEAK_GUARD_FILE", "LEAK_GUARD_KEYS", "KnowledgeStore", "distractor_claims", "read_leak_guard",
           "StoreDocument", "StoreStats", "answer_text", "build_store", "published_after", "split_sentences"]
