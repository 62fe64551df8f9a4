"""The rule contract and registry. One module per rule family registers its rules.

A rule looks at one evidence item of one claim and returns a :class:`Finding` when it
fires. It receives the item as a :class:`DatedEvidence`: what the audit found about the
item once (its publication date) travels with it, so no rule finds it again. ``count``
in reports is the number of evidence items flagged.

Example:
    >>> import averitec_tools.leakage  # registers the built-in rules
    >>> from averitec_tools.leakage.inputs import AuditEvidence, claim_from_gold
    >>> from averitec_tools.leakage.urls import parse_url
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> none = DomainList([], name="empty")
    >>> ctx = AuditContext(fact_checkers=DomainList.from_lines(["snopes.com"], name="demo"),
    ...                    split_fact_checkers=none, misinfo=none)
    >>> claim = claim_from_gold(AVeriTeCClaim(claim="x"), index=0, where="x")
    >>> url = "https://www.snopes.com/fact-check/x/"
    >>> evidence = DatedEvidence(AuditEvidence(url, parse_url(url)), published=None)
    >>> RULES.get("fact_checker_source").check(claim, evidence, ctx)
    Finding(date=None, detail='fact-checker snopes.com (shipped list)')
    >>> RULES.get("misinfo_source").check(claim, evidence, ctx) is None
    True
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from averitec_tools.leakage.dates import EvidenceDate
from averitec_tools.leakage.inputs import AuditClaim, AuditEvidence
from averitec_tools.leakage.urls import DomainList, ParsedUrl
from averitec_tools.registry import Registry


@dataclass(frozen=True)
class Finding:
    """Why a rule fired: the relevant date (ISO, or ``None``) and a one-line detail."""

    date: str | None
    detail: str


@dataclass(frozen=True)
class DatedEvidence:
    """One evidence item as the rules receive it, with its publication date found once.

    Attributes:
        evidence: The item.
        published: Its publication date (:func:`~averitec_tools.leakage.temporal.publication_date`:
            page metadata, else the URL), ``None`` when none is known.
    """

    evidence: AuditEvidence
    published: EvidenceDate | None


@dataclass(frozen=True)
class AuditContext:
    """Lists and derived data shared by the rules of one audit."""

    fact_checkers: DomainList
    split_fact_checkers: DomainList
    misinfo: DomainList


class Rule(ABC):
    """One audit rule: :meth:`check` is called once per evidence item whose URL parses."""

    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    def check(self, claim: AuditClaim, item: DatedEvidence, ctx: AuditContext) -> Finding | None:
        """A finding if ``item`` (an evidence item of ``claim`` and its publication date) breaks the rule."""


class SourceRule(Rule):
    """A rule about where evidence comes from: evidence whose URL does not parse never breaks it."""

    def check(self, claim: AuditClaim, item: DatedEvidence, ctx: AuditContext) -> Finding | None:
        parsed = item.evidence.parsed
        return None if parsed is None else self.check_source(claim, parsed, ctx)

    @abstractmethod
    def check_source(self, claim: AuditClaim, url: ParsedUrl, ctx: AuditContext) -> Finding | None:
        """A finding if evidence from ``url`` breaks the rule for ``claim``."""


RULES: Registry[Rule] = Registry("audit rule")


def register_rule(rule: Rule) -> Rule:
    RULES.add(rule.name, rule)
    return rule


__all__ = ["RULES", "AuditContext", "DatedEvidence", "Finding", "Rule", "SourceRule", "register_rule"]
