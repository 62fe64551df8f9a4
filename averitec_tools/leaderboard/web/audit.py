"""A submission's audit flags: ``GET /submission/{sid}/audit`` (HTML) and
``GET /api/submissions/{sid}/audit`` (JSON): per rule (evidence published after the claim
date, fact-checker sources, the claim's own fact-check) the flagged count and the flagged
rows (claim id, the team's URL, the date the audit found), plus the team's declaration.

Who may see it is :func:`~averitec_tools.leaderboard.web.views.submission_view`'s; the
rows and counts are those of the claims the board shows now
(:func:`shown_audit`; organisers see all).

Example:
    >>> sorted((r.path, *r.methods) for r in router.routes)
    [('/api/submissions/{sid}/audit', 'GET'), ('/submission/{sid}/audit', 'GET')]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from averitec_tools.leaderboard.audit_flags import RULE_TITLES, SHOWN_RULES, visible_audit
from averitec_tools.leaderboard.ranking import claim_mask
from averitec_tools.leaderboard.web.site import Site, SiteDep

router = APIRouter()


def shown_audit(phase: Any, audit: Mapping[str, Any] | None, *, revealed: bool, organiser: bool) -> dict[str, Any] | None:
    """:func:`visible_audit` for a page: the organisers see every claim; anyone else the
    claims the board counts now (:func:`~averitec_tools.leaderboard.ranking.claim_mask`;
    none while a hidden phase is not revealed)."""
    if organiser or not audit or audit.get("status") != "audited":
        return visible_audit(audit, visible_ids=None)
    mask = claim_mask(phase, int(audit.get("n_gold") or 0), revealed=revealed)
    ids = set() if mask is None else {i for i, keep in enumerate(mask) if keep}
    return visible_audit(audit, visible_ids=ids)


def audit_view(site: Site, request: Request, sid: str) -> tuple[dict[str, Any] | None, Response | None]:
    """The audit a page may show of submission ``sid``, or the refusal."""
    from averitec_tools.leaderboard.web.views import submission_view

    view, refusal = submission_view(site, request, sid)
    if view is None:
        return None, refusal
    row = view["row"]
    audit = shown_audit(view["phase"], row.get("audit"), revealed=view["revealed"], organiser=site.is_admin(request))
    return {**view, "audit": audit, "declaration": row.get("declaration")}, None


@router.get("/submission/{sid}/audit", response_class=HTMLResponse)
def audit_page(request: Request, sid: str, site: SiteDep) -> Response:
    view, refusal = audit_view(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    return site.page(request, "audit.html", title=f"Submission {view['row']['id']}: audit", rules=SHOWN_RULES,
                     rule_titles=RULE_TITLES, **view)


@router.get("/api/submissions/{sid}/audit")
def audit_api(request: Request, sid: str, site: SiteDep) -> Response:
    view, refusal = audit_view(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    audit = view["audit"]
    rows = {k: [{"claim_id": r[0], "url": r[1], "date": r[2]} for r in v] for k, v in (audit or {}).get("rows", {}).items()}
    body = {"submission_id": view["row"]["id"], "status": None if audit is None else audit["status"],
            "reason": None if audit is None else audit.get("reason"), "counts": (audit or {}).get("counts", {}),
            "rows": rows, "declaration": view["declaration"]}
    return JSONResponse(body)


__all__ = ["router", "shown_audit"]
