"""The organisers' routes: ``/admin`` (queue, worker health, recent submissions with their
full failure reasons, cancel buttons) behind the admin token, and the bearer-token API.

* ``GET /admin`` the page (sign in with the admin token: ``POST /admin/login``);
* ``POST /admin/cancel/{id}``, ``POST /admin/reveal/{phase}``, ``POST /admin/rescore`` (page buttons):
  ``Bearer ADMIN_TOKEN``, or the admin session with this site's ``Origin`` and the page's
  CSRF token (:func:`admin_form`; every state-changing route is behind the same checks);
* ``GET /api/admin/status``: queue counts and workers as JSON (``Bearer ADMIN_TOKEN``).

Example:
    >>> sorted((r.path, *r.methods) for r in router.routes)  # doctest: +NORMALIZE_WHITESPACE
    [('/admin', 'GET'), ('/admin/cancel/{sid}', 'POST'), ('/admin/login', 'POST'), ('/admin/rescore', 'POST'),
     ('/admin/reveal/{phase}', 'POST'), ('/api/admin/status', 'GET')]
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.health import queue, workers
from averitec_tools.leaderboard.web.security import CSRF_COOKIE, new_csrf_token
from averitec_tools.leaderboard.web.site import ADMIN_COOKIE, FormRefusals, Site, SiteDep, parse_id

RECENT = 50
router = APIRouter()
#: The refusals of the admin page's forms (sign-in and buttons).
ADMIN_FORM = FormRefusals(origin="this form was posted from another site (Origin check failed)",
                          csrf="the form expired (CSRF check failed); reload the page")


def need_admin(site: Site, request: Request) -> Response | None:
    """``None`` for an admin session or the admin bearer token, else the 403."""
    if site.is_admin(request):  # a bearer token was checked (and counted) by the request guard
        return None
    return JSONResponse({"error": "admin token required"}, status_code=403)


async def admin_form(site: Site, request: Request) -> tuple[Any, Response | None]:
    """A page post: an admin session, from this site, with its CSRF token; or a bearer call."""
    if site.bearer(request) is not None:
        return None, need_admin(site, request)

    def signed_in() -> Response | None:
        return None if site.is_admin(request) else site.error(request, "sign in with the admin token first (/admin)", 403)

    return await site.guarded_form(request, ADMIN_FORM, before_body=signed_in)


@router.get("/admin", response_class=HTMLResponse)
def admin_page(request: Request, site: SiteDep) -> Response:
    token = request.cookies.get(CSRF_COOKIE) or new_csrf_token()
    if not site.is_admin(request):
        response = site.page(request, "admin.html", admin=False, csrf=token, title="Organisers")
    else:
        store = site.store
        recent = store.submissions()[-RECENT:][::-1]
        revealed = {p.name: store.revealed(p.name) for p in site.comp.phases}
        response = site.page(request, "admin.html", admin=True, csrf=token, queue=queue(store), workers=workers(store),
                             recent=recent, revealed=revealed, title="Organisers")
    site.csrf_cookie(request, response, token)
    return response


@router.post("/admin/login")
async def admin_login(request: Request, site: SiteDep) -> Response:
    _, refusal = await site.form_token(request, ADMIN_FORM, site.store.check_admin)
    if refusal is not None:
        return refusal
    response = RedirectResponse("/admin", status_code=303)
    site.set_session(request, response, cookie=ADMIN_COOKIE, subject="admin", bound=site.store.admin_token_hash())
    return response


@router.post("/admin/cancel/{sid}")
async def admin_cancel(request: Request, sid: str, site: SiteDep) -> Response:
    _, refusal = await admin_form(site, request)
    if refusal is not None:
        return refusal
    number = parse_id(sid)
    try:
        was = await run_in_threadpool(site.store.cancel, number) if number is not None else None
    except UserError as exc:
        return site.error(request, str(exc), 404)
    if was is None:
        return site.error(request, f"no submission {sid[:30]}", 404)
    if site.bearer(request) is not None:
        return JSONResponse({"id": number, "state": "cancelled", "was": was})
    return RedirectResponse("/admin", status_code=303)


@router.post("/admin/reveal/{phase}")
async def admin_reveal(request: Request, phase: str, site: SiteDep) -> Response:
    _, refusal = await admin_form(site, request)
    if refusal is not None:
        return refusal
    try:
        await run_in_threadpool(site.store.reveal, phase)
    except UserError as exc:
        return site.error(request, str(exc), 404) if site.bearer(request) is None else JSONResponse({"error": str(exc)}, status_code=404)
    if site.bearer(request) is None:
        return RedirectResponse("/admin", status_code=303)
    return JSONResponse({"phase": phase, "revealed": True})


@router.post("/admin/rescore")
async def admin_rescore(request: Request, site: SiteDep) -> Response:
    _, refusal = await admin_form(site, request)
    if refusal is not None:
        return refusal
    queued = await run_in_threadpool(site.store.requeue)
    if site.bearer(request) is None:
        return RedirectResponse("/admin", status_code=303)
    return JSONResponse({"queued": queued})


@router.get("/api/admin/status")
def admin_status(request: Request, site: SiteDep) -> Response:
    refusal = need_admin(site, request)
    if refusal is not None:
        return refusal
    rows = [{k: (str(v) if hasattr(v, "isoformat") else v) for k, v in w.items()} for w in workers(site.store)]
    return JSONResponse({"queue": queue(site.store), "workers": rows})


__all__ = ["router"]
