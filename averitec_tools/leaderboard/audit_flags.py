"""Audit flags and declarations of board submissions.

The scoring worker runs the leakage audit of ``averitec audit``
(:func:`averitec_tools.leakage.run_audit`: the temporal and source rules) on every
submission's evidence against the phase's gold file and stores, per rule, how many
evidence items each claim has flagged and a bounded sample of the flagged rows
(:func:`audit_submission`). What a page shows is :func:`visible_audit`: the counts and
rows of the claims the board shows now (the private half of a split, or a hidden phase,
stays out until the reveal, so the audit tells nothing about claims a team cannot see).
A phase rule (``reject_own_factcheck``, ``reject_published_after_claim``) refuses a
submission with a flag of that rule (:func:`rejection`), with the reason shown to the team.

A file the audit cannot read (another format, no URLs) is stored as ``not_audited`` with
a neutral reason; nothing of the gold file (its path, its claim count, its fact-checking
articles, their domains: fact-checker sources are those of the shipped list) is stored for the team to see: a row is (claim id, the team's own URL, the
evidence date the audit found).

Teams declare per submission what they trained on and whether any dev claim was used
(:func:`check_declaration`: bounded plain text, ``yes``/``no``), shown on the board.

Example:
    >>> audit = {"status": "audited", "by_claim": {"own_fact_check_article": {"0": 1, "3": 2}},
    ...          "rows": {"own_fact_check_article": [[0, "https://x.org/a", None], [3, "https://x.org/b", None]]}}
    >>> visible_audit(audit, visible_ids={0, 1, 2})["counts"]
    {'published_after_claim': 0, 'fact_checker_source': 0, 'own_fact_check_article': 1}
    >>> check_declaration(training_data=" AVeriTeC train ", dev_claims_used="no")
    {'training_data': 'AVeriTeC train', 'dev_claims_used': 'no'}
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.names import clean_text
from averitec_tools.leaderboard.phase_rules import REJECT_RULES

logger = logging.getLogger("averitec.leaderboard")
#: The rules a board row shows, in order: evidence published after the claim date,
#: fact-checker sources, the claim's own fact-check.
SHOWN_RULES = ("published_after_claim", "fact_checker_source", "own_fact_check_article")
RULE_TITLES = {"published_after_claim": "published after the claim date", "fact_checker_source": "fact-checker sources",
               "own_fact_check_article": "the claim's own fact-check"}
#: Flagged rows kept per rule (the counts are complete).
MAX_ROWS = 200
MAX_URL = 300
TRAINING_DATA_MAX = 500
DECLARATION_FIELDS = ("training_data", "dev_claims_used")
#: Fact-checker sources count by the shipped list only: the gold file's own fact-checking
#: article domains (``averitec audit`` adds them) would tell which sites hidden claims cite.
SHIPPED_FACT_CHECKER = "fact-checker "
NOT_AUDITED = "not audited: the audit reads 2024-format evidence with URLs against an AVeriTeC gold file"


def audit_submission(content: bytes, *, gold: str) -> dict[str, Any]:
    """The stored audit of a submission's bytes against the phase's ``gold`` file."""
    from averitec_tools.leakage import RULE_ORDER, run_audit

    with tempfile.TemporaryDirectory(prefix="averitec-lb-audit-") as tmp:
        path = Path(tmp) / "submission.json"
        path.write_bytes(content)
        try:
            report = run_audit(path, references=[gold])
        except Exception as exc:  # another format, no evidence objects: not a refusal (UserError and the rest)
            logger.info("submission not audited: %s", exc)
            return {"status": "not_audited", "reason": NOT_AUDITED}
    by_claim: dict[str, dict[str, int]] = {}
    rows: dict[str, list[list[Any]]] = {}
    for name in RULE_ORDER:
        result = report.rules[name]
        counts: dict[str, int] = {}
        flagged = [r for r in result.rows if name != "fact_checker_source" or r.detail.startswith(SHIPPED_FACT_CHECKER)]
        for r in flagged:
            counts[str(r.claim_index)] = counts.get(str(r.claim_index), 0) + 1
        by_claim[name] = counts
        rows[name] = [[r.claim_index, (r.url or "")[:MAX_URL], r.date] for r in flagged[:MAX_ROWS]]
    n_gold = report.split_ranges[0].n_claims if report.split_ranges else 0
    return {"status": "audited", "n_evidence": report.n_evidence, "n_gold": n_gold, "by_claim": by_claim, "rows": rows}


def visible_audit(audit: Mapping[str, Any] | None, *, visible_ids: Collection[Any] | None) -> dict[str, Any] | None:
    """What may be shown of ``audit``: counts and rows of the claims in ``visible_ids``
    (``None``: every claim, for the organisers); ``None`` when there is no audit."""
    if not audit:
        return None
    if audit.get("status") != "audited":
        return {"status": audit.get("status"), "reason": audit.get("reason"), "counts": {}, "rows": {}}
    keep = None if visible_ids is None else {str(i) for i in visible_ids}
    counts, rows = {}, {}
    for name in SHOWN_RULES:
        per_claim = audit.get("by_claim", {}).get(name, {})
        counts[name] = sum(n for cid, n in per_claim.items() if keep is None or cid in keep)
        rows[name] = [r for r in audit.get("rows", {}).get(name, []) if keep is None or str(r[0]) in keep]
    flagged = bool(counts["published_after_claim"] or counts["own_fact_check_article"])  # leakage, not just a source
    return {"status": "audited", "counts": counts, "rows": rows, "flagged": flagged}


def rejection(audit: Mapping[str, Any], *, rules: Collection[str], file_name: str) -> str | None:
    """The team-visible reason a phase rule refuses the submission (``None``: none does).

    Only counts are named, not claim ids: a refusal must not tell which hidden claim's
    fact-check an URL is.

    Example:
        >>> rejection({"status": "audited", "by_claim": {"own_fact_check_article": {"4": 2}}},
        ...           rules=["reject_own_factcheck"], file_name="p.json")
        "p.json: refused by the phase rule reject_own_factcheck: 2 evidence item(s) are the claim's own fact-checking article"
    """
    if audit.get("status") != "audited":
        return None
    what = {"own_fact_check_article": "are the claim's own fact-checking article",
            "published_after_claim": "were published after the claim date"}
    for rule in rules:
        name = REJECT_RULES[rule]
        n = sum(audit.get("by_claim", {}).get(name, {}).values())
        if n:
            return f"{file_name}: refused by the phase rule {rule}: {n} evidence item(s) {what[name]}"
    return None


def check_declaration(*, training_data: str | None, dev_claims_used: str | None) -> dict[str, str] | None:
    """The declaration as stored (``None``: nothing declared), or a :class:`UserError`
    naming the field: ``training_data`` plain text of at most 500 characters,
    ``dev_claims_used`` ``yes`` or ``no``.

    Example:
        >>> check_declaration(training_data="", dev_claims_used="maybe")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: field 'dev_claims_used' must be 'yes' or 'no' (or left empty)
    """
    if len(training_data or "") > 4 * TRAINING_DATA_MAX:  # before normalising an unbounded field
        raise UserError(f"field 'training_data': more than {TRAINING_DATA_MAX} characters")
    data = clean_text(training_data or "", what="field 'training_data'", max_len=TRAINING_DATA_MAX, allow_empty=True)
    used = (dev_claims_used or "").strip().lower()
    if used not in ("", "yes", "no"):
        raise UserError("field 'dev_claims_used' must be 'yes' or 'no' (or left empty)")
    out = {k: v for k, v in (("training_data", data), ("dev_claims_used", used)) if v}
    return out or None


__all__ = ["RULE_TITLES", "SHOWN_RULES", "audit_submission", "check_declaration", "rejection", "visible_audit"]
