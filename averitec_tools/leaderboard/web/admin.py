"""The organisers' routes: ``/admin`` (queue, worker health, recent submissions with their
full failure reasons, cancel buttons) behind the admin token, and the bearer-token API.

* ``GET /admin`` the page (sign in with the admin token: ``POST /admin/login``);
* ``POST /admin/cancel/{id}`` (page button or ``Bearer ADMIN_TOKEN``);
* ``POST /admin/reveal/{phase}``, ``POST /admin/rescore`` (``Bearer ADMIN_TOKEN``);
* ``GET /api/admin/status``: queue counts and workers as JSON (``Bearer ADMIN_TOKEN``).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.health import queue, workers
from averitec_tools.leaderboard.web.security import CSRF_COOKIE, new_csrf_token
from averitec_tools.leaderboard.web.site import ADMIN_COOKIE, Site, parse_id

RECENT = 50


def add_admin_routes(app: FastAPI, site: Site) -> None:
    """Register the routes of this module on ``app``.

    Example:
        >>> from types import SimpleNamespace
        >>> app = FastAPI()
        >>> add_admin_routes(app, SimpleNamespace(store=None))  # routes only; a real Site serves them
        >>> sorted(r.path for r in app.routes if "admin" in r.path)  # doctest: +NORMALIZE_WHITESPACE
        ['/admin', '/admin/cancel/{sid}', '/admin/login', '/admin/rescore', '/admin/reveal/{phase}',
         '/api/admin/status']
    """
    store = site.store

    def need_admin(request: Request) -> Response | None:
        if site.is_admin(request):
            return None
        if site.bearer(request) is not None:
            site.auth_failures.hit(site.client(request))
        return JSONResponse({"error": "admin token required"}, status_code=403)

    async def admin_form(request: Request) -> tuple[Any, Response | None]:
        """A page post: an admin session, from this site, with its CSRF token; or a bearer call."""
        if site.bearer(request) is not None:
            return None, need_admin(request)
        if not site.form_origin_ok(request):
            return None, site.error(request, "this form was posted from another site (Origin check failed)", 403)
        if not site.is_admin(request):
            return None, site.error(request, "sign in with the admin token first (/admin)", 403)
        form = await request.form()
        if not site.csrf_ok(request, form):
            return None, site.error(request, "the form expired (CSRF check failed); reload the page", 403)
        return form, None

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request) -> Response:
        token = request.cookies.get(CSRF_COOKIE) or new_csrf_token()
        if not site.is_admin(request):
            response = site.page(request, "admin.html", admin=False, csrf=token, title="Organisers")
        else:
            recent = store.submissions()[-RECENT:][::-1]
            response = site.page(request, "admin.html", admin=True, csrf=token, queue=queue(store), workers=workers(store),
                                 recent=recent, title="Organisers")
        site.csrf_cookie(request, response, token)
        return response

    @app.post("/admin/login")
    async def admin_login(request: Request) -> Response:
        if not site.form_origin_ok(request):
            return site.error(request, "this form was posted from another site (Origin check failed)", 403)
        form = await request.form()
        if not site.csrf_ok(request, form):
            return site.error(request, "the form expired (CSRF check failed); reload the page", 403)
        ok, refusal = await run_in_threadpool(site.check_token, request, str(form.get("token", "")).strip(), store.check_admin)
        if refusal is not None:
            return refusal
        response = RedirectResponse("/admin", status_code=303)
        site.set_session(request, response, cookie=ADMIN_COOKIE, key=store.admin_token_hash(), subject="admin")
        return response

    @app.post("/admin/cancel/{sid}")
    async def admin_cancel(request: Request, sid: str) -> Response:
        _, refusal = await admin_form(request)
        if refusal is not None:
            return refusal
        number = parse_id(sid)
        try:
            was = await run_in_threadpool(store.cancel, number) if number is not None else None
        except UserError as exc:
            return site.error(request, str(exc), 404)
        if was is None:
            return site.error(request, f"no submission {sid[:30]}", 404)
        if site.bearer(request) is not None:
            return JSONResponse({"id": number, "state": "cancelled", "was": was})
        return RedirectResponse("/admin", status_code=303)

    @app.post("/admin/reveal/{phase}")
    def admin_reveal(request: Request, phase: str) -> Response:
        refusal = need_admin(request)
        if refusal is not None:
            return refusal
        try:
            store.reveal(phase)
        except UserError as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        return JSONResponse({"phase": phase, "revealed": True})

    @app.post("/admin/rescore")
    def admin_rescore(request: Request) -> Response:
        refusal = need_admin(request)
        if refusal is not None:
            return refusal
        return JSONResponse({"queued": store.requeue()})

    @app.get("/api/admin/status")
    def admin_status(request: Request) -> Response:
        refusal = need_admin(request)
        if refusal is not None:
            return refusal
        rows = [{k: (str(v) if hasattr(v, "isoformat") else v) for k, v in w.items()} for w in workers(store)]
        return JSONResponse({"queue": queue(store), "workers": rows})


__all__ = ["add_admin_routes"]
