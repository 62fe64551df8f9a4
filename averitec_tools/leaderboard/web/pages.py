"""The public pages of the board: ``/``, ``/phase/{name}``, ``/submission/{id}`` (with its
``scores.json`` and plots), ``/team/{name}`` and ``/status`` (the queue). Only safe methods (GET).

A submission's details are shown to its team (signed in, or its bearer token) and the
organisers until it stands on a visible board, then to everyone; its gold labels and
claim types only once the phase is revealed (never on a ``gold_private`` phase).

Example:
    >>> sorted(r.path for r in router.routes)  # doctest: +NORMALIZE_WHITESPACE
    ['/', '/phase/{name}', '/status', '/submission/{sid}', '/submission/{sid}/claim/{claim_id}',
     '/submission/{sid}/claim/{claim_id}/image/{item}/{k}.png', '/submission/{sid}/claims',
     '/submission/{sid}/scores.json', '/submission/{sid}/{kind}.png', '/team/{name:path}']
"""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.phase_rules import uses_judge
from averitec_tools.leaderboard.ranking import unscored_reasons
from averitec_tools.leaderboard.web.site import SiteDep
from averitec_tools.leaderboard.web.views import (
    PER_CLAIM_HIDDEN,
    breakdown,
    has_confidences,
    mean_scored,
    plot_png,
    submission_view,
)

REFRESH_SECONDS = 2
router = APIRouter()


def sort_key(entry: Any, column: str) -> Any:
    """Sort key of a leaderboard column (unknown columns sort by rank).

    Example:
        >>> from types import SimpleNamespace
        >>> e = SimpleNamespace(team="Blue", system="s", metrics={"m": 0.5}, rank=2)
        >>> sort_key(e, "team"), sort_key(e, "m"), sort_key(e, "nope")
        ('blue', 0.5, 2)
        >>> sort_key(SimpleNamespace(p_first=None, rank=3), "p_first")
        -1.0
    """
    if column == "p_first":
        return -1.0 if entry.p_first is None else entry.p_first
    if column in ("team", "system"):
        return str(getattr(entry, column)).lower()
    if column in entry.metrics:
        return entry.metrics[column]
    return entry.rank


@router.get("/", response_class=HTMLResponse)
def index(site: SiteDep) -> RedirectResponse:
    return RedirectResponse(f"/phase/{site.comp.phases[0].name}", status_code=303)


@router.get("/phase/{name}", response_class=HTMLResponse)
def phase_page(request: Request, site: SiteDep, name: str, sort: str = "rank", order: str = "asc") -> Response:
    comp, store = site.comp, site.store
    try:
        phase = comp.phase(name)
    except UserError as exc:
        return site.error(request, str(exc), 404)
    hidden = site.board_hidden(phase)
    board = site.board(name)
    entries = [] if hidden else list(board.entries)
    ranked = [e for e in entries if e.status == "ranked"]
    by_id = {e.submission_id: e for e in entries}
    shown = sorted(ranked, key=lambda e: sort_key(e, sort), reverse=order == "desc")
    pending = len(store.submissions(phase=name, state=("pending", "running")))
    return site.page(request, "phase.html", phase=phase, entries=shown, ranked=ranked, by_id=by_id, sort=sort, order=order,
                     unranked=[e for e in entries if e.status != "ranked"], hidden=hidden, revealed=store.revealed(name),
                     pending=pending, disclosure=comp.disclosure, floor=board.floor, board_signature=board.signature,
                     title=f"{comp.title}: {phase.title}", judge=uses_judge(phase.profiles))


@router.get("/submission/{sid}", response_class=HTMLResponse)
def submission_page(request: Request, sid: str, site: SiteDep) -> Response:
    view, refusal = submission_view(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    claims, phase = view["claims"], view["phase"]
    metrics = [k for k in phase.columns if claims and k in claims[0]["values"]]
    context: dict[str, Any] = {**view, "metrics": metrics, "refresh": REFRESH_SECONDS if view["row"]["state"] in ("pending", "running") else None}
    if claims:
        context["means"] = {m: mean_scored([c["values"][m] for c in claims]) for m in metrics}  # unscored claims left out
        context["unscored"] = unscored_reasons(claims, np.ones(len(claims), dtype=bool))
        if view["gold"]:
            context["breakdowns"] = [(heading, breakdown(claims, key=key, metrics=metrics))
                                     for heading, key in (("By gold label", "gold"), ("By claim type", "types"))]
        context["plots"] = has_confidences(claims) and view["per_claim"]
    from averitec_tools.leaderboard.web.audit import shown_audit

    row = view["row"]
    context["audit"] = shown_audit(phase, row.get("audit"), revealed=view["revealed"], organiser=site.is_admin(request))
    context["events"] = [e if view["organiser"] or e["state"] != "running" else {**e, "note": None}  # worker names: organisers only
                         for e in site.store.events(row["id"])]
    return site.page(request, "submission.html", title=f"Submission {row['id']}", declaration=row.get("declaration"), **context)


@router.get("/submission/{sid}/claims", response_class=HTMLResponse)
def claims_page(request: Request, sid: str, site: SiteDep) -> Response:
    """The submission's visible claims, 50 a page, searchable by claim id (``?q=``)."""
    from averitec_tools.leaderboard.web.claims import claim_list

    view, refusal = claim_list(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    claims = view["claims"]
    metrics = [k for k in view["phase"].columns if claims and k in claims[0]["values"]]
    return site.page(request, "claims.html", title=f"Submission {view['row']['id']}: claims", metrics=metrics, **view)


@router.get("/submission/{sid}/claim/{claim_id}", response_class=HTMLResponse)
def claim_page_route(request: Request, sid: str, claim_id: str, site: SiteDep) -> Response:
    """One claim: labels, question-answer pairs, the Hu-METEOR matrix with the assignment, scores."""
    from averitec_tools.leaderboard.web.claims import claim_view

    view, refusal = claim_view(site, request, sid, claim_id)
    if view is None:
        return refusal  # type: ignore[return-value]
    title = f"Submission {view['row']['id']}: claim {view['detail']['claim_id']}"
    if view["detail"].get("kind") == "averimatec":  # evidence with images (each a re-encoded PNG, the route below)
        return site.page(request, "claim_averimatec.html", title=title, **view)
    pairs = {tuple(p) for p in view["detail"]["assignment"] or ()}
    return site.page(request, "claim.html", title=title, pairs=pairs, **view)


@router.get("/submission/{sid}/claim/{claim_id}/image/{item}/{k}.png")
def claim_image_route(request: Request, sid: str, claim_id: str, item: str, k: str, site: SiteDep) -> Response:
    """An AVerImaTeC evidence image of a visible claim: always a PNG re-encoded on the server,
    never the uploaded bytes (:mod:`~averitec_tools.leaderboard.claim_view_averimatec`)."""
    from averitec_tools.leaderboard.web.claims import claim_image

    png, refusal = claim_image(site, request, sid, claim_id, item, k)
    if png is None:
        return refusal  # type: ignore[return-value]
    return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=3600"})


@router.get("/submission/{sid}/scores.json")
def submission_scores(request: Request, sid: str, site: SiteDep) -> Response:
    view, refusal = submission_view(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    if view["claims"] is None:
        return JSONResponse({"error": "no visible scores"}, status_code=404)
    if not view["per_claim"]:
        return JSONResponse({"error": PER_CLAIM_HIDDEN}, status_code=403)
    cur, row_id = view["current"], view["row"]["id"]
    return JSONResponse(
        {"submission_id": row_id, "profile": cur["profile"], "signature": cur["signature"], "scorer_version": cur["scorer_version"],
         "per_claim": view["claims"]},
        headers={"content-disposition": f'attachment; filename="submission-{row_id}-scores.json"'},
    )


@router.get("/submission/{sid}/{kind}.png")
def submission_plot(request: Request, sid: str, kind: str, site: SiteDep) -> Response:
    if kind not in ("reliability", "risk-coverage"):
        return site.error(request, f"no plot {kind[:30]!r}", 404)
    view, refusal = submission_view(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    claims = view["claims"]
    if claims and not view["per_claim"]:  # a reliability diagram tells each confident claim's correctness
        return site.error(request, PER_CLAIM_HIDDEN, 403)
    if not claims or not has_confidences(claims):
        return site.error(request, "no plot: this submission has no visible confidences", 404)
    key = (view["row"]["id"], kind, view["current"]["id"], view["revealed"])
    png = site.plot(key, lambda: plot_png(kind, claims))
    return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=3600"})


@router.get("/status", response_class=HTMLResponse)
def status_page(request: Request, site: SiteDep) -> Response:
    """The queue as anyone may see it: its length, the oldest waiting job's age, the workers
    heard from lately, the time limit and the watchdog (counts and ages only)."""
    return site.page(request, "status.html", health=site.store.queue_health(), title=f"{site.comp.title}: status",
                     refresh=10)


@router.get("/team/{name:path}", response_class=HTMLResponse)
def team_page(request: Request, name: str, site: SiteDep) -> Response:
    store = site.store
    team = store.team(name)
    if team is None:
        return site.error(request, "no such team", 404)
    own = site.team_of(request) == team["name"] or site.is_admin(request)
    rows = store.submissions(team=team["name"])
    if not own:
        rows = [r for r in rows if r["state"] == "finished" and site.on_board(r)]
    quotas = {p.name: store.quota(team["name"], p.name) for p in site.comp.phases} if own else None
    return site.page(request, "team.html", team=team["name"], rows=rows, quotas=quotas, own=own, title=f"Team {team['name']}")


__all__ = ["router", "sort_key"]
