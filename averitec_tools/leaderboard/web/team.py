"""A team in the browser: ``GET /submit`` (sign in with the team token, then the upload
form), ``POST /login``, ``POST /logout``, ``POST /submit`` (origin check, session, CSRF
token; the session is checked before the body is read).

Example:
    >>> sorted((r.path, *r.methods) for r in router.routes)
    [('/login', 'POST'), ('/logout', 'POST'), ('/submit', 'GET'), ('/submit', 'POST')]
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from averitec_tools.leaderboard.web.api import receive_upload
from averitec_tools.leaderboard.web.security import CSRF_COOKIE, new_csrf_token
from averitec_tools.leaderboard.web.site import (
    FOREIGN_POST,
    TEAM_COOKIE,
    FormRefusals,
    Site,
    SiteDep,
)

router = APIRouter()
#: The refusals of a team's forms (sign-in, sign-out, upload).
TEAM_FORM = FormRefusals(origin=FOREIGN_POST,
                         csrf="the form expired or came from another site (CSRF check failed); reload the form")


@router.get("/submit", response_class=HTMLResponse)
def submit_form(request: Request, site: SiteDep) -> Response:
    token = request.cookies.get(CSRF_COOKIE) or new_csrf_token()
    response = site.page(request, "submit.html", csrf=token, disclosure=site.comp.disclosure, limit_mb=site.upload_limit / (1024 * 1024),
                         title="Submit")
    site.csrf_cookie(request, response, token)
    return response


async def form_guard(site: Site, request: Request) -> tuple[Any, Response | None]:
    """A browser form post: from this site (checked before the body is read), then its CSRF token."""
    return await site.guarded_form(request, TEAM_FORM)


@router.post("/login")
async def login(request: Request, site: SiteDep) -> Response:
    team, refusal = await site.form_token(request, TEAM_FORM, site.store.team_by_token)
    if refusal is not None:
        return refusal
    response = RedirectResponse("/submit", status_code=303)
    row = await run_in_threadpool(site.store.team, team)
    assert row is not None  # the token just named it
    site.set_session(request, response, cookie=TEAM_COOKIE, subject=f"team:{row['id']}", bound=row["token_hash"])
    return response


@router.post("/logout")
async def logout(request: Request, site: SiteDep) -> Response:
    form, refusal = await form_guard(site, request)
    if refusal is not None:
        return refusal
    response = RedirectResponse("/submit", status_code=303)
    response.delete_cookie(TEAM_COOKIE, path="/")
    return response


@router.post("/submit", response_class=HTMLResponse)
async def submit_post(request: Request, site: SiteDep) -> Response:
    if not site.form_origin_ok(request):
        return site.error(request, TEAM_FORM.origin, 403)
    team = await run_in_threadpool(site.team_of, request)  # the session, before the body is read
    if team is None:
        return site.error(request, "sign in with your team token first (Submit page)", 403)
    refusal = site.team_post_allowed(request, team)
    if refusal is not None:
        return refusal
    guarded, refusal = await site.read_upload(request, team, lambda: form_guard(site, request))
    if refusal is not None:
        return refusal
    form, refusal = guarded
    if refusal is not None:
        return refusal
    status, result = await receive_upload(site.store, team, form)
    if status != 200:
        return site.error(request, result, status)
    return RedirectResponse(f"/submission/{result.id}", status_code=303)


__all__ = ["router"]
