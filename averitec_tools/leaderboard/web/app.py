"""The leaderboard web app: pages for the board, submissions, teams, and an upload form.

Routes (all server-rendered; Jinja2 with autoescaping, so user strings are text):

* ``GET /`` → the first phase; ``GET /phase/{name}?sort=COL&order=asc|desc`` the ranked table;
* ``GET /submission/{id}`` state (refreshes itself while pending/running), scores,
  per-label and per-claim-type breakdowns, plots when confidences exist, signature;
  ``GET /submission/{id}/scores.json`` its per-claim scores;
* ``GET /team/{name}`` a team's submissions and quota left;
* ``GET /submit`` + ``POST /submit`` the upload form (team token, CSRF token);
* ``POST /api/submissions`` (``Authorization: Bearer TEAM_TOKEN``), ``GET /api/submissions/{id}``;
* ``POST /admin/reveal/{phase}`` and ``POST /admin/rescore`` (``Bearer ADMIN_TOKEN``).
"""

from __future__ import annotations

# This module is imported only by `serve` and the tests: FastAPI is needed here anyway.
from pathlib import Path
from typing import Any

import jinja2
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.competition import metric_title
from averitec_tools.leaderboard.ranking import rank_store
from averitec_tools.leaderboard.store import QuotaExceeded, Store
from averitec_tools.leaderboard.web.security import (
    CSRF_COOKIE,
    BodySizeLimit,
    BodyTooLarge,
    csrf_ok,
    new_csrf_token,
)
from averitec_tools.leaderboard.web.views import (
    breakdown,
    has_confidences,
    plot_png,
    visible_claims,
)

HERE = Path(__file__).parent
REFRESH_SECONDS = 2


def sort_key(entry: Any, column: str) -> Any:
    """Sort key of a leaderboard column (unknown columns sort by rank)."""
    if column in ("team", "system"):
        return str(getattr(entry, column)).lower()
    if column in entry.metrics:
        return entry.metrics[column]
    return entry.rank


def create_app(url: str, *, max_upload_bytes: int | None = None) -> Any:
    """The ASGI app for the leaderboard stored at ``url`` (wrapped in the size limit)."""

    store = Store(url)
    comp = store.competition()
    limit = max_upload_bytes or comp.max_upload_bytes
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    env.globals.update(metric_title=metric_title, competition=comp)
    env.filters["ts"] = lambda d: d.strftime("%Y-%m-%d %H:%M:%S") if d is not None else ""
    templates = Jinja2Templates(env=env)
    app = FastAPI(title=comp.title, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.state.store = store

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, {"phases": comp.phases, **context}, status_code=status)

    def message(request: Request, text: str, status: int) -> HTMLResponse:
        return page(request, "message.html", status=status, text=text, title="Error" if status >= 400 else "Note")

    board_cache: dict[str, tuple[tuple[Any, ...], list[Any]]] = {}

    def ranked(name: str) -> list[Any]:
        # Paired tests cost time per system: rank again only when the board can have changed.
        version = store.board_version(name)
        cached = board_cache.get(name)
        if cached is None or cached[0] != version:
            board_cache[name] = (version, rank_store(store, name))
        return list(board_cache[name][1])

    def bearer(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        return auth[7:].strip() if auth.lower().startswith("bearer ") else None

    @app.get("/", response_class=HTMLResponse)
    def index() -> RedirectResponse:
        return RedirectResponse(f"/phase/{comp.phases[0].name}", status_code=303)

    @app.get("/phase/{name}", response_class=HTMLResponse)
    def phase_page(request: Request, name: str, sort: str = "rank", order: str = "asc") -> HTMLResponse:
        try:
            phase = comp.phase(name)
        except UserError as exc:
            return message(request, str(exc), 404)
        revealed = store.revealed(name)
        hidden = phase.visibility == "hidden" and not revealed
        entries = [] if hidden else ranked(name)
        entries = sorted(entries, key=lambda e: sort_key(e, sort), reverse=order == "desc")
        pending = len(store.submissions(phase=name, state="pending")) + len(store.submissions(phase=name, state="running"))
        return page(request, "phase.html", phase=phase, entries=entries, sort=sort, order=order, hidden=hidden,
                    revealed=revealed, pending=pending, disclosure=comp.disclosure, title=f"{comp.title}: {phase.title}")

    def submission_view(sid: int) -> dict[str, Any] | None:
        row = store.submission(sid)
        if row is None:
            return None
        phase = comp.phase(row["phase"])
        results = store.results([sid]).get(sid, [])
        current = next((r for r in results if r["profile"] == phase.profile), None)
        claims = visible_claims(phase, current["per_claim"], revealed=store.revealed(phase.name)) if current else None
        return {"row": row, "phase": phase, "results": results, "current": current, "claims": claims}

    @app.get("/submission/{sid}", response_class=HTMLResponse)
    def submission_page(request: Request, sid: int) -> HTMLResponse:
        view = submission_view(sid)
        if view is None:
            return message(request, f"no submission {sid}", 404)
        claims, phase = view["claims"], view["phase"]
        metrics = [k for k in phase.columns if claims and k in claims[0]["values"]]
        context: dict[str, Any] = {**view, "metrics": metrics, "refresh": REFRESH_SECONDS if view["row"]["state"] in ("pending", "running") else None}
        if claims:
            context["means"] = {m: sum(c["values"][m] for c in claims) / len(claims) for m in metrics}
            context["by_label"] = breakdown(claims, key="gold", metrics=metrics)
            context["by_type"] = breakdown(claims, key="types", metrics=metrics)
            context["plots"] = has_confidences(claims)
        return page(request, "submission.html", title=f"Submission {sid}", **context)

    @app.get("/submission/{sid}/scores.json")
    def submission_scores(sid: int) -> Response:
        view = submission_view(sid)
        if view is None or view["claims"] is None:
            return JSONResponse({"error": "no visible scores"}, status_code=404)
        cur = view["current"]
        return JSONResponse(
            {"submission_id": sid, "profile": cur["profile"], "signature": cur["signature"], "scorer_version": cur["scorer_version"], "per_claim": view["claims"]},
            headers={"content-disposition": f'attachment; filename="submission-{sid}-scores.json"'},
        )

    @app.get("/submission/{sid}/{kind}.png")
    def submission_plot(sid: int, kind: str) -> Response:
        view = submission_view(sid)
        if kind not in ("reliability", "risk-coverage") or view is None or not view["claims"] or not has_confidences(view["claims"]):
            return Response(status_code=404)
        return Response(plot_png(kind, view["claims"]), media_type="image/png")

    @app.get("/api/submissions/{sid}")
    def submission_api(sid: int) -> JSONResponse:
        row = store.submission(sid)
        if row is None:
            return JSONResponse({"error": f"no submission {sid}"}, status_code=404)
        return JSONResponse({"id": sid, "team": row["team"], "system": row["system"], "phase": row["phase"], "state": row["state"], "reason": row["reason"]})

    @app.get("/team/{name:path}", response_class=HTMLResponse)
    def team_page(request: Request, name: str) -> HTMLResponse:
        rows = store.submissions(team=name)
        try:
            quotas = {p.name: store.quota(name, p.name) for p in comp.phases}
        except UserError as exc:
            return message(request, str(exc), 404)
        return page(request, "team.html", team=name, rows=rows, quotas=quotas, title=f"Team {name}")

    @app.get("/submit", response_class=HTMLResponse)
    def submit_form(request: Request) -> HTMLResponse:
        token = request.cookies.get(CSRF_COOKIE) or new_csrf_token()
        response = page(request, "submit.html", csrf=token, disclosure=comp.disclosure, limit_mb=limit / (1024 * 1024), title="Submit")
        response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict")
        return response

    async def receive_upload(request: Request, token: str | None, form: Any) -> tuple[int, Any]:
        team = await run_in_threadpool(store.team_by_token, token or "")
        if team is None:
            return 403, "invalid team token"
        upload = form.get("file")
        if upload is None or not hasattr(upload, "read"):
            return 400, "no file uploaded"
        content = await upload.read()
        if not content:
            return 400, "the uploaded file is empty"
        meta = {k: str(form.get(k, "")).strip()[:200] for k in comp.disclosure if str(form.get(k, "")).strip()}
        try:
            new = await run_in_threadpool(
                lambda: store.submit(team=team, system=str(form.get("system", "")), phase=str(form.get("phase", "")),
                                     content=content, file_name=str(getattr(upload, "filename", "") or "upload"), meta=meta)
            )
        except QuotaExceeded as exc:
            return 429, str(exc)
        except UserError as exc:
            return 400, str(exc)
        return 200, new

    @app.post("/submit", response_class=HTMLResponse)
    async def submit_post(request: Request) -> Response:
        form = await request.form()
        if not csrf_ok(request.cookies.get(CSRF_COOKIE), str(form.get("csrf", ""))):
            return message(request, "the form expired or came from another site (CSRF check failed); reload the form", 403)
        status, result = await receive_upload(request, str(form.get("token", "")).strip(), form)
        if status != 200:
            return message(request, result, status)
        return RedirectResponse(f"/submission/{result.id}", status_code=303)

    @app.post("/api/submissions")
    async def submit_api(request: Request) -> JSONResponse:
        form = await request.form()
        status, result = await receive_upload(request, bearer(request), form)
        if status != 200:
            return JSONResponse({"error": result}, status_code=status)
        return JSONResponse({"id": result.id, "created": result.created, "state": result.state, "url": f"/submission/{result.id}"},
                            status_code=201 if result.created else 200)

    @app.post("/admin/reveal/{phase}")
    def admin_reveal(request: Request, phase: str) -> JSONResponse:
        if not store.check_admin(bearer(request)):
            return JSONResponse({"error": "admin token required"}, status_code=403)
        try:
            store.reveal(phase)
        except UserError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        return JSONResponse({"phase": phase, "revealed": True})

    @app.post("/admin/rescore")
    def admin_rescore(request: Request) -> JSONResponse:
        if not store.check_admin(bearer(request)):
            return JSONResponse({"error": "admin token required"}, status_code=403)
        return JSONResponse({"queued": store.requeue()})

    wrapped = BodySizeLimit(app, max_bytes=limit)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: BodyTooLarge) -> Response:
        return Response(wrapped.message() + "\n", status_code=413, media_type="text/plain", headers={"connection": "close"})

    return wrapped


__all__ = ["create_app"]
