"""The rule contract and registry. One module per rule family registers its rules.

A rule looks at one evidence item of one claim and returns a :class:`Finding` when it
fires. ``count`` in reports is the number of evidence items flagged.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from averitec_tools.leakage.inputs import AuditClaim, AuditEvidence
from averitec_tools.leakage.urls import DomainList
from averitec_tools.registry import Registry


@dataclass(frozen=True)
class Finding:
    """Why a rule fired: the relevant date (ISO, or ``None``) and a one-line detail."""

    date: str | None
    detail: str


@dataclass(frozen=True)
class AuditContext:
    """Lists and derived data shared by the rules of one audit."""

    fact_checkers: DomainList
    split_fact_checkers: DomainList
    misinfo: DomainList


class Rule(ABC):
    """One audit rule."""

    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    def check(self, claim: AuditClaim, evidence: AuditEvidence, ctx: AuditContext) -> Finding | None:
        """A finding if ``evidence`` breaks the rule for ``claim``."""


RULES: Registry[Rule] = Registry("audit rule")


def register_rule(rule: Rule) -> Rule:
    RULES.add(rule.name, rule)
    return rule


__all__ = ["RULES", "AuditContext", "Finding", "Rule", "register_rule"]
