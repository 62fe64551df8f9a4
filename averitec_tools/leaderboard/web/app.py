"""The leaderboard web app: pages for the board, submissions, teams, an upload form, an
organisers' page.

Routes (all server-rendered, no script; Jinja2 with autoescaping, so user strings are text):

* ``GET /`` → the first phase; ``GET /phase/{name}?sort=COL&order=asc|desc`` the ranked
  table with the comparisons behind its tiers;
* ``GET /submission/{id}`` state (refreshes itself while pending/running), scores,
  per-label and per-claim-type breakdowns, plots when confidences exist, signature;
  ``GET /submission/{id}/scores.json`` its per-claim scores. Only its team (signed in)
  and the organisers see a submission until it stands on a visible board;
* ``GET /team/{name}`` a team's submissions on the boards (its own team: all of them and
  the quota left);
* ``GET /submit`` sign in with the team token, then the upload form; ``POST /login``,
  ``POST /logout``, ``POST /submit`` (origin check, session, CSRF token);
* ``POST /api/submissions`` (``Authorization: Bearer TEAM_TOKEN``, checked before the body
  is read), ``GET /api/submissions/{id}`` (public once on the board, else the team's token);
* ``/admin``: :mod:`averitec_tools.leaderboard.web.admin`.

Every response carries the security headers of
:class:`~averitec_tools.leaderboard.web.security.SecurityHeaders`; unknown pages and bad
input get 4xx (an HTML page for browsers, JSON for the API), never a 500.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.store import QuotaExceeded, StoreUnavailable
from averitec_tools.leaderboard.web.security import (
    CSRF_COOKIE,
    BodySizeLimit,
    BodyTooLarge,
    SecurityHeaders,
    new_csrf_token,
)
from averitec_tools.leaderboard.web.site import HERE, TEAM_COOKIE, Site, parse_id
from averitec_tools.leaderboard.web.views import (
    breakdown,
    has_confidences,
    plot_png,
    visible_claims,
)

REFRESH_SECONDS = 2
#: Form fields of an upload that are not disclosure metadata.
UPLOAD_FIELDS = frozenset({"csrf", "token", "system", "phase", "file"})
#: What a team sees when the database cannot store an upload (the details go to the log).
STORE_UNAVAILABLE = ("the server could not store the submission because of a problem on the server's side "
                     "(it does not count against your quota); try again later")
logger = logging.getLogger("averitec.leaderboard")


def upload_fields(form: Any) -> tuple[Any, dict[str, str]] | str:
    """The one uploaded file and the text fields of an upload form, or why it is refused:
    no file, more than one ``file`` part, a file in a text field, a text field sent twice
    (a browser never sends any of these; the last part must not win silently).

    Example:
        >>> from starlette.datastructures import FormData, UploadFile
        >>> import io
        >>> f = UploadFile(io.BytesIO(b"[]"), filename="p.json")
        >>> upload_fields(FormData([("file", f), ("system", "s")]))[1]
        {'system': 's'}
        >>> upload_fields(FormData([("file", f), ("file", f)]))
        "more than one file uploaded (send one 'file' part)"
        >>> upload_fields(FormData([("file", f), ("model", f)]))
        "field 'model' must be text, not a file"
    """
    files = [v for k, v in form.multi_items() if k == "file"]
    if len(files) > 1:
        return "more than one file uploaded (send one 'file' part)"
    if not files or not hasattr(files[0], "read"):
        return "no file uploaded"
    text: dict[str, str] = {}
    for key, value in form.multi_items():
        if key == "file":
            continue
        if not isinstance(value, str):
            return f"field {str(key)[:40]!r} must be text, not a file"
        if key in text:
            return f"field {str(key)[:40]!r} sent more than once"
        text[key] = value
    return files[0], text


def sort_key(entry: Any, column: str) -> Any:
    """Sort key of a leaderboard column (unknown columns sort by rank)."""
    if column in ("team", "system"):
        return str(getattr(entry, column)).lower()
    if column in entry.metrics:
        return entry.metrics[column]
    return entry.rank


def create_app(url: str, *, max_upload_bytes: int | None = None) -> Any:
    """The ASGI app for the leaderboard stored at ``url`` (wrapped in the size limit and
    the security headers)."""
    from averitec_tools.leaderboard.web.admin import add_admin_routes

    site = Site(url, upload_limit=max_upload_bytes)
    store, comp, limit = site.store, site.comp, site.upload_limit
    app = FastAPI(title=comp.title, docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.state.store = store
    app.state.site = site

    @app.get("/", response_class=HTMLResponse)
    def index() -> RedirectResponse:
        return RedirectResponse(f"/phase/{comp.phases[0].name}", status_code=303)

    @app.get("/phase/{name}", response_class=HTMLResponse)
    def phase_page(request: Request, name: str, sort: str = "rank", order: str = "asc") -> Response:
        try:
            phase = comp.phase(name)
        except UserError as exc:
            return site.error(request, str(exc), 404)
        hidden = site.board_hidden(phase)
        entries = [] if hidden else site.ranked(name)
        by_id = {e.submission_id: e for e in entries}
        shown = sorted(entries, key=lambda e: sort_key(e, sort), reverse=order == "desc")
        pending = len(store.submissions(phase=name, state=("pending", "running")))
        return site.page(request, "phase.html", phase=phase, entries=shown, ranked=entries, by_id=by_id, sort=sort, order=order,
                         hidden=hidden, revealed=store.revealed(name), pending=pending, disclosure=comp.disclosure,
                         title=f"{comp.title}: {phase.title}")

    def submission_view(request: Request, raw_id: str) -> tuple[dict[str, Any] | None, Response | None]:
        sid = parse_id(raw_id)
        row = store.submission(sid) if sid is not None else None
        if row is None:
            return None, site.error(request, f"no submission {raw_id[:30]}", 404)
        if not site.may_see(request, row):
            return None, site.error(request, "this submission is visible to its team and the organisers until it is on the board "
                                    "(teams: sign in on the Submit page)", 403)
        phase = comp.phase(row["phase"])
        results = store.results([row["id"]]).get(row["id"], [])
        current = next((r for r in results if r["profile"] == phase.profile), None)
        revealed = store.revealed(phase.name)
        claims = visible_claims(phase, current["per_claim"], revealed=revealed) if current else None
        return {"row": row, "phase": phase, "results": results, "current": current, "claims": claims, "revealed": revealed}, None

    @app.get("/submission/{sid}", response_class=HTMLResponse)
    def submission_page(request: Request, sid: str) -> Response:
        view, refusal = submission_view(request, sid)
        if view is None:
            return refusal  # type: ignore[return-value]
        claims, phase = view["claims"], view["phase"]
        metrics = [k for k in phase.columns if claims and k in claims[0]["values"]]
        context: dict[str, Any] = {**view, "metrics": metrics, "refresh": REFRESH_SECONDS if view["row"]["state"] in ("pending", "running") else None}
        if claims:
            context["means"] = {m: sum(c["values"][m] for c in claims) / len(claims) for m in metrics}
            context["by_label"] = breakdown(claims, key="gold", metrics=metrics)
            context["by_type"] = breakdown(claims, key="types", metrics=metrics)
            context["plots"] = has_confidences(claims)
        return site.page(request, "submission.html", title=f"Submission {view['row']['id']}", **context)

    @app.get("/submission/{sid}/scores.json")
    def submission_scores(request: Request, sid: str) -> Response:
        view, refusal = submission_view(request, sid)
        if view is None:
            return refusal  # type: ignore[return-value]
        if view["claims"] is None:
            return JSONResponse({"error": "no visible scores"}, status_code=404)
        cur, row_id = view["current"], view["row"]["id"]
        return JSONResponse(
            {"submission_id": row_id, "profile": cur["profile"], "signature": cur["signature"], "scorer_version": cur["scorer_version"],
             "per_claim": view["claims"]},
            headers={"content-disposition": f'attachment; filename="submission-{row_id}-scores.json"'},
        )

    @app.get("/submission/{sid}/{kind}.png")
    def submission_plot(request: Request, sid: str, kind: str) -> Response:
        if kind not in ("reliability", "risk-coverage"):
            return site.error(request, f"no plot {kind[:30]!r}", 404)
        view, refusal = submission_view(request, sid)
        if view is None:
            return refusal  # type: ignore[return-value]
        claims = view["claims"]
        if not claims or not has_confidences(claims):
            return site.error(request, "no plot: this submission has no visible confidences", 404)
        key = (view["row"]["id"], kind, view["current"]["id"], view["revealed"])
        png = site.plot(key, lambda: plot_png(kind, claims))
        return Response(png, media_type="image/png", headers={"cache-control": "private, max-age=3600"})

    @app.get("/api/submissions/{sid}")
    def submission_api(request: Request, sid: str) -> Response:
        number = parse_id(sid)
        row = store.submission(number) if number is not None else None
        if row is None:
            return JSONResponse({"error": f"no submission {sid[:30]}"}, status_code=404)
        token = site.bearer(request)
        owner = False
        if token is not None:
            who, refusal = site.check_token(request, token, lambda t: store.team_by_token(t) or ("admin" if store.check_admin(t) else None))
            if refusal is not None:
                return refusal
            owner = who in (row["team"], "admin")
        if not owner and not site.on_board(row):
            return JSONResponse({"error": "this submission's details need its team's token (Authorization: Bearer TOKEN) "
                                          "until it is on the board"}, status_code=403)
        out = {"id": row["id"], "team": row["team"], "system": row["system"], "phase": row["phase"], "state": row["state"]}
        if owner:
            out["reason"] = row["reason"]
        return JSONResponse(out)

    @app.get("/team/{name:path}", response_class=HTMLResponse)
    def team_page(request: Request, name: str) -> Response:
        team = store.team(name)
        if team is None:
            return site.error(request, "no such team", 404)
        own = site.team_of(request) == team["name"] or site.is_admin(request)
        rows = store.submissions(team=team["name"])
        if not own:
            rows = [r for r in rows if r["state"] == "finished" and site.on_board(r)]
        quotas = {p.name: store.quota(team["name"], p.name) for p in comp.phases} if own else None
        return site.page(request, "team.html", team=team["name"], rows=rows, quotas=quotas, own=own, title=f"Team {team['name']}")

    @app.get("/submit", response_class=HTMLResponse)
    def submit_form(request: Request) -> Response:
        token = request.cookies.get(CSRF_COOKIE) or new_csrf_token()
        response = site.page(request, "submit.html", csrf=token, disclosure=comp.disclosure, limit_mb=limit / (1024 * 1024), title="Submit")
        site.csrf_cookie(request, response, token)
        return response

    async def form_guard(request: Request) -> tuple[Any, Response | None]:
        """A browser form post: from this site (checked before the body is read), then its CSRF token."""
        if not site.form_origin_ok(request):
            return None, site.error(request, "this form was posted from another site (Origin check failed); reload the form", 403)
        form = await request.form()
        if not site.csrf_ok(request, form):
            return None, site.error(request, "the form expired or came from another site (CSRF check failed); reload the form", 403)
        return form, None

    @app.post("/login")
    async def login(request: Request) -> Response:
        form, refusal = await form_guard(request)
        if refusal is not None:
            return refusal
        team, refusal = await run_in_threadpool(site.check_token, request, str(form.get("token", "")).strip(), store.team_by_token)
        if refusal is not None:
            return refusal
        response = RedirectResponse("/submit", status_code=303)
        row = await run_in_threadpool(store.team, team)
        assert row is not None  # the token just named it
        site.set_session(request, response, cookie=TEAM_COOKIE, key=row["token_hash"], subject=f"team:{row['id']}")
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        form, refusal = await form_guard(request)
        if refusal is not None:
            return refusal
        response = RedirectResponse("/submit", status_code=303)
        response.delete_cookie(TEAM_COOKIE, path="/")
        return response

    async def receive_upload(team: str, form: Any) -> tuple[int, Any]:
        fields = upload_fields(form)
        if isinstance(fields, str):
            return 400, fields
        upload, text = fields
        content = await upload.read()
        file_name = str(getattr(upload, "filename", "") or "upload")
        meta = {k: v for k, v in text.items() if k not in UPLOAD_FIELDS}
        try:
            new = await run_in_threadpool(
                lambda: store.submit(team=team, system=text.get("system", ""), phase=text.get("phase", ""),
                                     content=content, file_name=file_name, meta=meta)
            )
        except StoreUnavailable as exc:  # disk full, database gone: no path or server detail to the team
            logger.error("upload of team %s not stored: %s", team, exc)
            return 503, STORE_UNAVAILABLE
        except QuotaExceeded as exc:
            return 429, str(exc)
        except UserError as exc:
            return 400, str(exc)
        return 200, new

    @app.post("/submit", response_class=HTMLResponse)
    async def submit_post(request: Request) -> Response:
        if not site.form_origin_ok(request):
            return site.error(request, "this form was posted from another site (Origin check failed); reload the form", 403)
        team = await run_in_threadpool(site.team_of, request)  # the session, before the body is read
        if team is None:
            return site.error(request, "sign in with your team token first (Submit page)", 403)
        refusal = site.team_post_allowed(request, team)
        if refusal is not None:
            return refusal
        form, refusal = await form_guard(request)
        if refusal is not None:
            return refusal
        status, result = await receive_upload(team, form)
        if status != 200:
            return site.error(request, result, status)
        return RedirectResponse(f"/submission/{result.id}", status_code=303)

    @app.post("/api/submissions")
    async def submit_api(request: Request) -> Response:
        team, refusal = await run_in_threadpool(site.check_token, request, site.bearer(request), store.team_by_token)
        if refusal is not None:  # before the body is read
            return refusal
        refusal = site.team_post_allowed(request, team)
        if refusal is not None:
            return refusal
        form = await request.form()
        status, result = await receive_upload(team, form)
        if status != 200:
            return JSONResponse({"error": result}, status_code=status)
        return JSONResponse({"id": result.id, "created": result.created, "again": result.again, "state": result.state,
                             "url": f"/submission/{result.id}"}, status_code=201 if result.created else 200)

    add_admin_routes(app, site)
    sized = BodySizeLimit(app, max_bytes=limit)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        text = "no such page" if exc.status_code == 404 else str(exc.detail)
        return site.error(request, text, exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        return site.error(request, "malformed request", 400)

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: BodyTooLarge) -> Response:
        limit_bytes = exc.args[0] if exc.args else None
        return Response(sized.message(limit_bytes) + "\n", status_code=413, media_type="text/plain", headers={"connection": "close"})

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        logger.exception("internal error on %s %s", request.method, request.url.path)
        return site.error(request, "internal error (logged for the organisers)", 500)

    return SecurityHeaders(sized)


__all__ = ["STORE_UNAVAILABLE", "create_app", "sort_key", "upload_fields"]
