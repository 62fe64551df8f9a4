"""Temporal-leakage and evidence-source audits (``averitec audit``).

One module per rule family: :mod:`.temporal` (published / archived after the claim date),
:mod:`.sources` (fact-checkers, the claim's own fact-check, misinformation domains) and
:mod:`.splits` (claim-date ranges and overlaps between splits). Dates come from
:mod:`.dates`, URL handling and the domain lists from :mod:`.urls`.

Example:
    >>> from averitec_tools.leakage import RULE_ORDER
    >>> RULE_ORDER[0]
    'published_after_claim'
"""

from averitec_tools.leakage.audit import (
    RULE_ORDER,
    SPLIT_OVERLAP,
    AuditReport,
    Row,
    RuleResult,
    check_fail_on,
    fail_on_names,
    run_audit,
)

__all__ = ["RULE_ORDER", "SPLIT_OVERLAP", "AuditReport", "Row", "RuleResult", "check_fail_on", "fail_on_names", "run_audit"]
