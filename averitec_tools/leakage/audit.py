"""Run every audit rule over a gold file or a submission and aggregate the findings."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.leakage import sources as _sources
from averitec_tools.leakage import temporal as _temporal
from averitec_tools.leakage.inputs import AuditClaim, AuditInput, read_audit_input
from averitec_tools.leakage.rules import RULES, AuditContext, DatedEvidence, Rule
from averitec_tools.leakage.splits import SplitOverlap, SplitRange
from averitec_tools.leakage.urls import DomainEntry, DomainList
from averitec_tools.registry import Registry

#: Rules in report order (the ``--json`` ``rules`` keys).
RULE_ORDER: tuple[str, ...] = (
    _temporal.PUBLISHED_AFTER_CLAIM.name,
    _temporal.ARCHIVED_AFTER_CLAIM.name,
    _sources.FACT_CHECKER_SOURCE.name,
    _sources.OWN_FACT_CHECK_ARTICLE.name,
    _sources.MISINFO_SOURCE.name,
)
#: Extra ``--fail-on`` names for split-level problems.
SPLIT_OVERLAP = "split_overlap"


@dataclass(frozen=True)
class Row:
    """One flagged evidence item (or unparseable date / invalid URL)."""

    claim_index: int
    url: str | None
    date: str | None
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"claim_index": self.claim_index, "url": self.url, "date": self.date, "detail": self.detail}


@dataclass(frozen=True)
class RuleResult:
    name: str
    description: str
    rows: tuple[Row, ...]
    n_evidence: int

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def rate(self) -> float:
        return self.count / self.n_evidence if self.n_evidence else 0.0

    @property
    def n_claims(self) -> int:
        return len({r.claim_index for r in self.rows})

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "rate": self.rate, "rows": [r.to_json() for r in self.rows]}


@dataclass(frozen=True)
class AuditReport:
    """Counts, rates and offending rows for every rule, plus split-level checks."""

    path: str
    kind: str
    n_claims: int
    n_evidence: int
    n_evidence_without_url: int
    n_evidence_with_publication_date: int
    n_claims_without_date: int
    rules: dict[str, RuleResult]
    invalid_urls: tuple[Row, ...]
    unparseable_dates: tuple[Row, ...]
    split_ranges: tuple[SplitRange, ...]
    split_overlaps: tuple[SplitOverlap, ...]
    lists: dict[str, int] = field(default_factory=dict)

    def fired(self, rule: str) -> bool:
        """Whether ``rule`` (a rule name or ``split_overlap``) found anything."""
        if rule == SPLIT_OVERLAP:
            return bool(self.split_overlaps)
        return self.rules[rule].count > 0

    def to_json(self) -> dict[str, Any]:
        return {
            "n_claims": self.n_claims,
            "n_evidence": self.n_evidence,
            "rules": {name: self.rules[name].to_json() for name in RULE_ORDER},
            "file": self.path,
            "kind": self.kind,
            "n_evidence_without_url": self.n_evidence_without_url,
            "n_evidence_with_publication_date": self.n_evidence_with_publication_date,
            "n_claims_without_date": self.n_claims_without_date,
            "invalid_urls": {"count": len(self.invalid_urls), "rows": [r.to_json() for r in self.invalid_urls]},
            "unparseable_dates": {
                "count": len(self.unparseable_dates),
                "rows": [r.to_json() for r in self.unparseable_dates],
            },
            "splits": {
                "ranges": [r.to_json() for r in self.split_ranges],
                "overlaps": [o.to_json() for o in self.split_overlaps],
            },
            "lists": dict(self.lists),
            "version": __version__,
        }


def fail_on_names() -> tuple[str, ...]:
    """Every name ``--fail-on`` accepts."""
    return (*RULE_ORDER, SPLIT_OVERLAP)


def check_fail_on(rules: Iterable[str]) -> tuple[str, ...]:
    """Validate ``--fail-on`` names (UserError with suggestions for unknown ones)."""
    known: Registry[str] = Registry("--fail-on rule")
    for name in fail_on_names():
        known.add(name, name)
    return tuple(known.get(name) for name in rules)


def audit_claims(
    claims: Sequence[AuditClaim],
    *,
    context: AuditContext,
    rules: Sequence[Rule] | None = None,
) -> tuple[dict[str, RuleResult], tuple[Row, ...], tuple[Row, ...], int, int]:
    """Apply ``rules`` (default: all, in :data:`RULE_ORDER`) to every evidence item.

    Returns rule results, invalid-URL rows, unparseable-date rows, the evidence count and
    how many evidence items have a known publication date.
    """
    selected = list(rules) if rules is not None else [RULES.get(n) for n in RULE_ORDER]
    rows: dict[str, list[Row]] = {r.name: [] for r in selected}
    invalid: list[Row] = []
    unparseable: list[Row] = []
    n_evidence = n_dated = 0
    for claim in claims:
        if claim.claim_date is None and claim.claim_date_raw:
            unparseable.append(Row(claim.claim_index, None, claim.claim_date_raw, "claim_date does not parse"))
        for ev in claim.evidence:
            n_evidence += 1
            if ev.parsed is None:
                invalid.append(Row(claim.claim_index, ev.url, None, "not an http(s) URL"))
                continue
            published, bad = _temporal.publication_date(ev)  # once per item: the rules are handed it
            n_dated += published is not None
            unparseable.extend(Row(claim.claim_index, ev.url, b, "metadata date does not parse") for b in bad)
            item = DatedEvidence(ev, published)
            for rule in selected:
                finding = rule.check(claim, item, context)
                if finding is not None:
                    rows[rule.name].append(Row(claim.claim_index, ev.url, finding.date, finding.detail))
    results = {
        r.name: RuleResult(r.name, r.description, tuple(rows[r.name]), n_evidence) for r in selected
    }
    return results, tuple(invalid), tuple(unparseable), n_evidence, n_dated


def _context(audit_input: AuditInput, extra_fact_checkers: Iterable[str]) -> AuditContext:
    """The domain lists the rules read: the shipped fact-checkers with ``extra_fact_checkers``,
    the references' own fact-checking domains, the shipped misinformation list.

    Without extra domains the shipped lists are the process's own (read once), and a
    reference file's domains are kept with its claims (:class:`~averitec_tools.leakage.inputs.GoldFile`):
    a process that audits many submissions against one gold file (the leaderboard's worker)
    builds each list once, and their matches are remembered (:meth:`DomainList.match`)."""
    shipped = _sources.shipped_fact_checkers()
    extra = [e for e in map(DomainEntry.parse, extra_fact_checkers) if e is not None]
    fact_checkers = DomainList([*shipped.entries(), *extra], name="fact-checkers") if extra else shipped
    return AuditContext(fact_checkers=fact_checkers, split_fact_checkers=audit_input.split_fact_checkers,
                        misinfo=_sources.shipped_misinfo())


def run_audit(
    path: str | os.PathLike[str],
    *,
    references: Sequence[str | os.PathLike[str]] = (),
    extra_fact_checkers: Iterable[str] = (),
) -> AuditReport:
    """Audit a gold file or a 2024 submission for temporal leakage and evidence sources.

    Args:
        path: ``dev.json``-style gold file or a 2024-format submission.
        references: Gold files for a submission's claim dates and fact-checking articles
            (the first is aligned on ``claim_id``); every gold file also adds its
            ``fact_checking_article`` domains and its claim-date range (split checks).
        extra_fact_checkers: More fact-checker domains (``host[/path]``).

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.json").write_text(json.dumps([{"claim": "c", "claim_date": "01-10-2020",
        ...     "questions": [{"question": "q", "answers": [{"answer": "a",
        ...     "source_url": "https://news.example.com/2020/10/05/story"}]}]}]))
        >>> run_audit(d / "dev.json").rules["published_after_claim"].count
        1
    """
    audit_input = read_audit_input(path, references=references)
    if not audit_input.claims:
        raise UserError(f"{path}: no claims to audit")
    context = _context(audit_input, extra_fact_checkers)
    results, invalid, unparseable, n_evidence, n_dated = audit_claims(audit_input.claims, context=context)
    ranges = audit_input.split_ranges
    if audit_input.kind == "submission":  # a gold FILE's own dates are already counted
        for r in ranges:
            unparseable += tuple(
                Row(i, None, raw, f"claim_date in references {r.split!r} does not parse") for i, raw in r.unparseable
            )
    return AuditReport(
        path=str(path),
        kind=audit_input.kind,
        n_claims=len(audit_input.claims),
        n_evidence=n_evidence,
        n_evidence_without_url=sum(c.n_without_url for c in audit_input.claims),
        n_evidence_with_publication_date=n_dated,
        n_claims_without_date=sum(1 for c in audit_input.claims if c.claim_date is None),
        rules=results,
        invalid_urls=invalid,
        unparseable_dates=unparseable,
        split_ranges=ranges,
        split_overlaps=audit_input.split_overlaps,
        lists={
            "fact_checkers": len(context.fact_checkers),
            "split_fact_checker_domains": len(context.split_fact_checkers),
            "misinfo": len(context.misinfo),
        },
    )


__all__ = [
    "RULE_ORDER", "SPLIT_OVERLAP", "AuditReport", "Row", "RuleResult", "check_fail_on", "fail_on_names",
    "run_audit",
]
