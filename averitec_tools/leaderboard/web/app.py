"""The leaderboard web app: pages for the board, submissions, teams, an upload form, an
organisers' page. :func:`create_app` assembles one router per concern:

* :mod:`~averitec_tools.leaderboard.web.pages`: the public board pages (GET only);
* :mod:`~averitec_tools.leaderboard.web.audit`: a submission's audit flags (GET only);
* :mod:`~averitec_tools.leaderboard.web.team`: a team's sign-in and upload form;
* :mod:`~averitec_tools.leaderboard.web.api`: the scripts' bearer-token API;
* :mod:`~averitec_tools.leaderboard.web.admin`: the organisers' page and actions.

All pages are server-rendered, no script; Jinja2 with autoescaping, so user strings are
text. Every response carries the security headers of
:class:`~averitec_tools.leaderboard.web.security.SecurityHeaders`; unknown pages and bad
input get 4xx (an HTML page for browsers, JSON for the API), never a 500.

Example:
    >>> import tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> d = tempfile.mkdtemp()
    >>> _ = Store(f"sqlite:///{d}/lb.db").init("name: demo\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]\\n",
    ...                                        where="demo.yaml")
    >>> app = create_app(f"sqlite:///{d}/lb.db")
    >>> [(m, p) for m, p in route_table(app) if p.startswith("/admin")]  # doctest: +NORMALIZE_WHITESPACE
    [('GET', '/admin'), ('POST', '/admin/cancel/{sid}'), ('POST', '/admin/login'), ('POST', '/admin/rescore'),
     ('POST', '/admin/reveal/{phase}')]
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from averitec_tools.leaderboard.web import admin, api, audit, pages, team
from averitec_tools.leaderboard.web.errorlog import ErrorLog
from averitec_tools.leaderboard.web.pages import sort_key
from averitec_tools.leaderboard.web.security import BodySizeLimit, BodyTooLarge, SecurityHeaders
from averitec_tools.leaderboard.web.site import HERE, Refused, Site, request_guard

logger = logging.getLogger("averitec.leaderboard")
ROUTERS = (pages.router, audit.router, team.router, api.router, admin.router)


def _routes(routes: Any) -> Any:
    for route in routes:
        included = getattr(route, "original_router", None)  # FastAPI keeps included routers whole
        if included is not None:
            yield from _routes(included.routes)
        else:
            yield route


def route_table(app: Any) -> list[tuple[str, str]]:
    """Every ``(method, path)`` the app serves (``app``: :func:`create_app`'s result or the
    FastAPI app), sorted; HEAD and the static files left out."""
    while not isinstance(app, FastAPI):
        app = app.app
    return sorted({(m, r.path) for r in _routes(app.routes) for m in (getattr(r, "methods", None) or ()) if m != "HEAD"})


def _add_error_handlers(app: FastAPI, site: Site, sized: BodySizeLimit) -> None:
    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        return exc.response

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

    errors = ErrorLog(logger)

    @app.exception_handler(Exception)
    async def server_error(request: Request, exc: Exception) -> Response:
        route = getattr(request.scope.get("route"), "path", None) or "(no route)"  # the template: ids make no new entries
        errors.failure(request.method, route, exc)
        return site.error(request, "internal error (logged for the organisers)", 500)


def create_app(url: str, *, max_upload_bytes: int | None = None, secret_file: str | None = None,
               on_queued: Callable[[], None] | None = None, settled: Any | None = None) -> Any:
    """The ASGI app for the leaderboard stored at ``url`` (wrapped in the size limit and
    the security headers; the FastAPI app itself is ``.app.app``). Sessions are signed
    with the secret in ``secret_file`` (default: :func:`~averitec_tools.leaderboard.secret.secret_path`),
    created if absent. :func:`~averitec_tools.leaderboard.web.site.request_guard` runs
    before every route. ``on_queued`` is called after each upload is stored (``serve``
    wakes its workers with it); ``settled``, a ``multiprocessing`` event its workers set after
    each outcome, wakes the ``?wait=`` watcher (:mod:`~averitec_tools.leaderboard.web.waits`)."""
    site = Site(url, upload_limit=max_upload_bytes, secret_file=secret_file)
    site.store.on_queued = on_queued
    site.outcomes.signal = settled
    app = FastAPI(title=site.comp.title, docs_url=None, redoc_url=None, openapi_url=None, dependencies=[Depends(request_guard)])
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.state.store = site.store
    app.state.site = site
    for router in ROUTERS:
        app.include_router(router)
    sized = BodySizeLimit(app, max_bytes=site.upload_limit)
    _add_error_handlers(app, site, sized)
    return SecurityHeaders(sized)


__all__ = ["create_app", "route_table", "sort_key"]
