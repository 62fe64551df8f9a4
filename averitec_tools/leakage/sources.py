"""Evidence-source rules: fact-checkers, the claim's own fact-check, misinformation sites.

AVeriTeC's annotation forbade fact-checking articles as evidence; systems that search
the open web often retrieve them (the verdict is then copied, not inferred).

Example:
    >>> from averitec_tools.leakage.inputs import claim_from_gold
    >>> from averitec_tools.leakage.rules import DatedEvidence
    >>> from averitec_tools.leakage.urls import DomainList
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> gold = AVeriTeCClaim.from_dict({"claim": "x", "fact_checking_article": "https://www.politifact.com/f/x/",
    ...     "questions": [{"question": "Q?", "answers": [
    ...         {"answer": "A", "source_url": "https://web.archive.org/web/2020/https://politifact.com/f/x"}]}]},
    ...     where="x")
    >>> claim = claim_from_gold(gold, index=0, where="x")
    >>> none = DomainList([], name="empty")
    >>> ctx = AuditContext(fact_checkers=shipped_fact_checkers(), split_fact_checkers=none, misinfo=shipped_misinfo())
    >>> item = DatedEvidence(claim.evidence[0], published=None)  # source rules read no date
    >>> OWN_FACT_CHECK_ARTICLE.check(claim, item, ctx).detail
    "is the claim's fact_checking_article https://www.politifact.com/f/x/"
    >>> FACT_CHECKER_SOURCE.check(claim, item, ctx).detail
    'fact-checker politifact.com (shipped list)'
"""

from __future__ import annotations

from functools import cache
from typing import ClassVar

from averitec_tools.leakage.inputs import AuditClaim
from averitec_tools.leakage.rules import AuditContext, Finding, SourceRule, register_rule
from averitec_tools.leakage.urls import DomainList, ParsedUrl, same_page

FACT_CHECKERS_FILE = "fact_checkers.txt"
MISINFO_FILE = "misinfo_list.txt"


@cache  # read once per process: a board audits every submission against it (nothing changes a DomainList)
def shipped_fact_checkers() -> DomainList:
    """The maintained fact-checker list in ``averitec_tools/data/fact_checkers.txt``."""
    return DomainList.packaged(FACT_CHECKERS_FILE, name="shipped fact-checker list")


@cache
def shipped_misinfo() -> DomainList:
    """The upstream AVeriTeC misinformation-domain list (``averitec_tools/data/misinfo_list.txt``)."""
    return DomainList.packaged(MISINFO_FILE, name="AVeriTeC misinformation list")


class FactCheckerSource(SourceRule):
    name: ClassVar[str] = "fact_checker_source"
    description: ClassVar[str] = (
        "evidence from a fact-checking organisation (shipped list, or the domain of a fact_checking_article in the loaded splits)"
    )

    def check_source(self, claim: AuditClaim, url: ParsedUrl, ctx: AuditContext) -> Finding | None:
        entry = ctx.fact_checkers.match(url)
        if entry is not None:
            return Finding(None, f"fact-checker {entry} (shipped list)")
        entry = ctx.split_fact_checkers.match(url)
        if entry is not None:
            return Finding(None, f"{entry}: domain of a fact_checking_article in the loaded splits")
        return None


class OwnFactCheckArticle(SourceRule):
    name: ClassVar[str] = "own_fact_check_article"
    description: ClassVar[str] = "the claim's own fact-checking article used as evidence"

    def check_source(self, claim: AuditClaim, url: ParsedUrl, ctx: AuditContext) -> Finding | None:
        if claim.fact_checking_article is None:
            return None
        if same_page(url, claim.fact_checking_article):
            return Finding(None, f"is the claim's fact_checking_article {claim.fact_checking_article.url}")
        return None


class MisinfoSource(SourceRule):
    name: ClassVar[str] = "misinfo_source"
    description: ClassVar[str] = "evidence from a known misinformation domain (AVeriTeC's upstream list)"

    def check_source(self, claim: AuditClaim, url: ParsedUrl, ctx: AuditContext) -> Finding | None:
        entry = ctx.misinfo.match(url)
        return Finding(None, f"misinformation domain {entry}") if entry is not None else None


FACT_CHECKER_SOURCE = register_rule(FactCheckerSource())
OWN_FACT_CHECK_ARTICLE = register_rule(OwnFactCheckArticle())
MISINFO_SOURCE = register_rule(MisinfoSource())

__all__ = [
    "FACT_CHECKER_SOURCE", "MISINFO_SOURCE", "OWN_FACT_CHECK_ARTICLE", "shipped_fact_checkers", "shipped_misinfo",
]
