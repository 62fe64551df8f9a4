"""Temporal-leakage rules: evidence published (or archived) after the claim date.

``published_after_claim`` uses real publication dates only: the URL path, tweet ids and
page metadata (:mod:`averitec_tools.leakage.dates`). ``archived_after_claim`` reports
Wayback captures made after the claim date; a capture date only bounds the publication
date from above (annotators archived pages after the claim), so it is *not* evidence of
leakage by itself and is kept as a separate rule.

Example:
    >>> from averitec_tools.leakage.inputs import claim_from_gold
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> gold = AVeriTeCClaim.from_dict({"claim": "x", "claim_date": "31-10-2020", "questions": [
    ...     {"question": "Q?", "answers": [{"answer": "A", "source_url": "https://a.org/2020/11/02/story",
    ...      "cached_source_url": "https://web.archive.org/web/20201105000000/https://a.org/2020/11/02/story"}]}]},
    ...     where="x")
    >>> claim = claim_from_gold(gold, index=0, where="x")
    >>> item = DatedEvidence(claim.evidence[0], published=publication_date(claim.evidence[0])[0])
    >>> PUBLISHED_AFTER_CLAIM.check(claim, item, None).detail  # dates need no lists: ctx=None
    "published 2020-11-02 (URL path '2020/11/02'), 2 day(s) after the claim date 2020-10-31"
    >>> ARCHIVED_AFTER_CLAIM.check(claim, item, None).date
    '2020-11-05'
"""

from __future__ import annotations

from typing import ClassVar

from averitec_tools.leakage.dates import EvidenceDate, date_from_metadata, date_from_url
from averitec_tools.leakage.inputs import AuditClaim, AuditEvidence
from averitec_tools.leakage.rules import AuditContext, DatedEvidence, Finding, Rule, register_rule


def publication_date(evidence: AuditEvidence) -> tuple[EvidenceDate | None, tuple[str, ...]]:
    """The evidence's publication date (metadata first, then URL) and unparseable metadata dates.

    The audit finds it once per item and hands it to the rules (:class:`DatedEvidence`).

    Example:
        >>> from averitec_tools.leakage.inputs import AuditEvidence
        >>> from averitec_tools.leakage.urls import parse_url
        >>> url = "https://a.org/2020/11/02/story"
        >>> date, bad = publication_date(AuditEvidence(url, parse_url(url), metadata={"article:published_time": "soon"}))
        >>> date.iso(), date.source, bad
        ('2020-11-02', 'url-path', ('soon',))
    """
    meta = date_from_metadata(metadata=evidence.metadata, html=evidence.html)
    if meta.date is not None:
        return meta.date, meta.unparseable
    if evidence.parsed is None:
        return None, meta.unparseable
    return date_from_url(evidence.parsed), meta.unparseable


class PublishedAfterClaim(Rule):
    name: ClassVar[str] = "published_after_claim"
    description: ClassVar[str] = "evidence published after the claim date (URL path, tweet id or page metadata)"

    def check(self, claim: AuditClaim, item: DatedEvidence, ctx: AuditContext) -> Finding | None:
        date = item.published
        if claim.claim_date is None or date is None or not date.after(claim.claim_date):
            return None
        days = (date.date - claim.claim_date).days
        where = {"url-path": "URL path", "tweet-id": "tweet id"}.get(date.source, date.source)
        return Finding(
            date.iso(),
            f"published {date.iso()} ({where} {date.text!r}), {days} day(s) after the claim date "
            f"{claim.claim_date.isoformat()}",
        )


class ArchivedAfterClaim(Rule):
    name: ClassVar[str] = "archived_after_claim"
    description: ClassVar[str] = (
        "archive.org snapshot taken after the claim date (upper bound on publication only; not leakage by itself)"
    )

    def check(self, claim: AuditClaim, item: DatedEvidence, ctx: AuditContext) -> Finding | None:
        snapshot = item.evidence.snapshot
        if claim.claim_date is None or snapshot is None or snapshot <= claim.claim_date:
            return None
        return Finding(
            snapshot.isoformat(),
            f"archived {snapshot.isoformat()}, after the claim date {claim.claim_date.isoformat()} "
            "(upper bound: the page may have been published before the claim)",
        )


PUBLISHED_AFTER_CLAIM = register_rule(PublishedAfterClaim())
ARCHIVED_AFTER_CLAIM = register_rule(ArchivedAfterClaim())

__all__ = ["ARCHIVED_AFTER_CLAIM", "PUBLISHED_AFTER_CLAIM", "publication_date"]
