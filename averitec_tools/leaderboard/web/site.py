"""What every route of the web app shares: the store, the templates, who is asking
(team or admin session, bearer tokens), the request guard, the rate limits, and the error pages.

Sessions: signing in with a team token (the upload page) or the admin token (``/admin``)
sets an ``HttpOnly``, ``SameSite=Strict`` cookie (``Secure`` over HTTPS) signed with the
server secret (:mod:`averitec_tools.leaderboard.secret`, a file apart from the database)
over the hash of the token signed in with
(:func:`~averitec_tools.leaderboard.web.security.sign_session`), valid for
:data:`SESSION_SECONDS`: rotating the secret ends every session, a new token (or a removed
team) ends that team's.

:func:`request_guard` runs before every route: a request with a bearer token is
authenticated by that token alone (it cannot come from another site's form: browsers
add no ``Authorization`` header across sites); any other POST/PUT/PATCH/DELETE must come
from this site (``Origin``, else ``Referer``), before its body is read, and each such
route then checks the form's CSRF token.

Failed token checks (bearer tokens on every route, sign-in forms) are counted per client
address; past the competition's ``rate_limits.failed_tokens_per_client`` per
:data:`AUTH_WINDOW` seconds a wrong token gets 429 with ``Retry-After``, while a valid
token still passes (so nobody sharing the address is locked out). A team's
authenticated posts are bounded per team (``posts_per_team_per_minute`` per
:data:`TEAM_WINDOW`). Client addresses come from the connection; ``X-Forwarded-For`` is
honoured only from the proxies given to ``serve --trusted-proxy``. Limits are per server
process.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import jinja2
from fastapi import Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates

from averitec_tools.leaderboard.competition import metric_title
from averitec_tools.leaderboard.ranking import Board, rank_board
from averitec_tools.leaderboard.secret import SecretKey, secret_path
from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.tiers import rank_cell, tier_cell
from averitec_tools.leaderboard.web.security import (
    CSRF_COOKIE,
    InFlight,
    RateLimiter,
    check_session,
    csrf_ok,
    same_origin,
    session_subject,
    sign_session,
)
from averitec_tools.leaderboard.web.waits import OutcomeWatch

HERE = Path(__file__).parent
TEAM_COOKIE = "lb_team"
ADMIN_COOKIE = "lb_admin"
SESSION_SECONDS = 12 * 3600
AUTH_WINDOW, TEAM_WINDOW = 300.0, 60.0
MAX_ID = 2**31 - 1  # the id columns are 32-bit INTEGER on PostgreSQL
PLOT_CACHE_ENTRIES = 128


def score_text(value: Any, digits: int = 4) -> str:
    """A score as page text; an unscored value (``None`` or NaN) as ``unscored``.

    Example:
        >>> score_text(0.25), score_text(None), score_text(float("nan")), score_text(1 / 3, 3)
        ('0.2500', 'unscored', 'unscored', '0.333')
    """
    if value is None or value != value:
        return "unscored"
    return f"{float(value):.{digits}f}"


def parse_id(text: str) -> int | None:
    """A submission id from a URL (``None`` unless 1 <= id <= :data:`MAX_ID`: never a database error).

    Example:
        >>> parse_id("17"), parse_id("9223372036854775808"), parse_id("-1"), parse_id("1e3")
        (17, None, None, None)
    """
    if not text.isascii() or not text.isdigit() or len(text) > 10:
        return None
    value = int(text)
    return value if 1 <= value <= MAX_ID else None


def wants_json(request: Request) -> bool:
    """API paths, and clients that ask for JSON rather than HTML, get JSON errors."""
    path = request.url.path
    if path.startswith("/api/") or (path.startswith("/admin/") and request.method == "POST" and "authorization" in request.headers):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


@dataclass(frozen=True)
class FormRefusals:
    """The messages of a form post's two 403s (:meth:`Site.guarded_form`): posted from
    another site (``Origin``), or without the page's CSRF token."""

    origin: str
    csrf: str


def site_of(request: Request) -> Site:
    """The :class:`Site` of the app serving ``request`` (a FastAPI dependency of every route)."""
    return request.app.state.site  # type: ignore[no-any-return]


class Site:
    """Shared state of one app instance (one per server process)."""

    def __init__(self, url: str, *, upload_limit: int | None = None, secret_file: str | None = None) -> None:
        self.store = Store(url)
        self.secret = SecretKey(secret_path(url, secret_file))
        self.comp = self.store.competition()
        self.upload_limit = upload_limit or self.comp.max_upload_bytes
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
        env.globals.update(metric_title=metric_title, competition=self.comp, rank_cell=rank_cell, tier_cell=tier_cell)
        env.filters["ts"] = lambda d: d.strftime("%Y-%m-%d %H:%M:%S") if d is not None else ""
        env.filters["score"] = score_text
        self.templates = Jinja2Templates(env=env)
        limits = self.comp.rate_limits
        self.auth_failures = RateLimiter(limit=limits.failed_tokens_per_client, window=AUTH_WINDOW)
        self.team_posts = RateLimiter(limit=limits.posts_per_team_per_minute, window=TEAM_WINDOW)
        self.uploads = InFlight(limit=limits.uploads_per_team)
        self.outcomes = OutcomeWatch(self.store.settled)  # ?wait= of GET /api/submissions/{id}
        self._boards: dict[str, tuple[tuple[Any, ...], Board]] = {}
        self._plots: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()

    # ------------------------------------------------------------------ pages and errors

    def page(self, request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.setdefault("signed_in", self.team_of(request))
        return self.templates.TemplateResponse(request, name, {"phases": self.comp.phases, **context}, status_code=status)

    def error(self, request: Request, text: str, status: int, *, headers: dict[str, str] | None = None) -> Response:
        """``text`` as JSON (``{"error": ...}``) for API clients, else as an HTML page."""
        if wants_json(request):
            return JSONResponse({"error": text}, status_code=status, headers=headers)
        response = self.page(request, "message.html", status=status, text=text, title="Error" if status >= 400 else "Note")
        for k, v in (headers or {}).items():
            response.headers[k] = v
        return response

    def too_many(self, request: Request, wait: int, what: str) -> Response:
        return self.error(request, f"too many {what}; try again in {wait} s", 429, headers={"retry-after": str(wait)})

    # ------------------------------------------------------------------ who is asking

    @staticmethod
    def client(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    @staticmethod
    def bearer(request: Request) -> str | None:
        auth = request.headers.get("authorization", "")
        return auth[7:].strip() if auth.lower().startswith("bearer ") else None

    def bearer_identity(self, request: Request) -> tuple[tuple[str, str] | None, Response | None]:
        """Whom the request's bearer token names, ``("admin", "")`` or ``("team", NAME)``
        (``None``: no token), or the 403/429 refusal; checked (and counted) once per request."""
        cached = getattr(request.state, "bearer_identity", None)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        token = self.bearer(request)
        result: tuple[Any, Response | None] = (None, None)
        request.state.bearer_identity = result  # nobody, while the refusal page is drawn
        if token is not None:
            result = self.check_token(request, token, self._token_owner)
        request.state.bearer_identity = result
        return result

    def _token_owner(self, token: str) -> tuple[str, str] | None:
        if self.store.check_admin(token):
            return ("admin", "")
        team = self.store.team_by_token(token)
        return ("team", team) if team is not None else None

    def team_of(self, request: Request) -> str | None:
        """The team of the request: its bearer token's, else its session cookie's (``None``:
        none, expired, signed with an old secret or token, or the team was removed)."""
        if self.bearer(request) is not None:
            who, _ = self.bearer_identity(request)
            return who[1] if who is not None and who[0] == "team" else None
        value = request.cookies.get(TEAM_COOKIE)
        subject = session_subject(value)
        if not subject or not subject.startswith("team:") or not subject[5:].isdigit() or len(subject) > 20:
            return None
        row = self.store.team_by_id(int(subject[5:]))
        if row is None or not check_session(self.secret.current(), value, subject=subject, now=time.time(), max_age=SESSION_SECONDS,
                                            bound=row["token_hash"]):
            return None
        return str(row["name"])

    def is_admin(self, request: Request) -> bool:
        """An admin session cookie, or ``Authorization: Bearer ADMIN_TOKEN``."""
        if self.bearer(request) is not None:
            who, _ = self.bearer_identity(request)
            return who is not None and who[0] == "admin"
        return check_session(self.secret.current(), request.cookies.get(ADMIN_COOKIE), subject="admin", now=time.time(),
                             max_age=SESSION_SECONDS, bound=self.store.admin_token_hash())

    def set_session(self, request: Request, response: Response, *, cookie: str, subject: str, bound: str) -> None:
        """Sign ``subject`` in (``bound``: the hash of the token it signed in with)."""
        value = sign_session(self.secret.current(), subject, issued=int(time.time()), bound=bound)
        response.set_cookie(cookie, value, max_age=SESSION_SECONDS, httponly=True, samesite="strict",
                            secure=request.url.scheme == "https", path="/")

    def csrf_cookie(self, request: Request, response: Response, token: str) -> None:
        response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/")

    def check_token(self, request: Request, token: str | None, lookup: Callable[[str], Any]) -> tuple[Any, Response | None]:
        """``lookup(token)``: (result, None) for a valid token, always; a wrong one is
        counted for the client address and gets 403, or 429 past the bound. No token at
        all is a 403 that is not counted (nothing was guessed)."""
        if not token:
            return None, self.error(request, "invalid token", 403)
        result = lookup(token)
        if result:
            return result, None
        wait = self.auth_failures.hit(self.client(request))
        if wait is not None:
            return None, self.too_many(request, wait, "failed token attempts from this address")
        return None, self.error(request, "invalid token", 403)

    async def read_upload(self, request: Request, team: str, read: Callable[[], Any]) -> tuple[Any, Response | None]:
        """``await read()`` (the form, body and all) holding one of ``team``'s upload slots
        (``rate_limits.uploads_per_team`` at once, so one team cannot hold every connection with
        bodies that trickle in); 429 when none is free, 400 when the client hung up (or was cut
        off at ``rate_limits.request_seconds``)."""
        from starlette.requests import ClientDisconnect

        if not self.uploads.enter(team):
            return None, self.too_many(request, 5, f"uploads in flight for team {team!r}")
        try:
            return await read(), None
        except ClientDisconnect:
            return None, self.error(request, "the upload did not arrive whole", 400)
        finally:
            self.uploads.leave(team)

    def team_post_allowed(self, request: Request, team: str) -> Response | None:
        """Count one authenticated post of ``team``; the 429 response past its bound."""
        wait = self.team_posts.hit(team)
        return None if wait is None else self.too_many(request, wait, f"requests for team {team!r}")

    def form_origin_ok(self, request: Request) -> bool:
        own = f"{request.url.scheme}://{request.url.netloc}"
        return same_origin(origin=request.headers.get("origin"), referer=request.headers.get("referer"), own=own)

    @staticmethod
    def csrf_ok(request: Request, form: Any) -> bool:
        return csrf_ok(request.cookies.get(CSRF_COOKIE), str(form.get("csrf", "")))

    async def guarded_form(self, request: Request, refusals: FormRefusals, *,
                           before_body: Callable[[], Response | None] | None = None) -> tuple[Any, Response | None]:
        """A browser form post's form, or the 403 refusing it: the ``Origin`` check, then
        ``before_body`` (its refusal, if any: a check that must pass before the body is read),
        then the form is read and its CSRF token checked."""
        if not self.form_origin_ok(request):
            return None, self.error(request, refusals.origin, 403)
        refusal = before_body() if before_body is not None else None
        if refusal is not None:
            return None, refusal
        form = await request.form()
        if not self.csrf_ok(request, form):
            return None, self.error(request, refusals.csrf, 403)
        return form, None

    async def form_token(self, request: Request, refusals: FormRefusals, lookup: Callable[[str], Any]) -> tuple[Any, Response | None]:
        """A sign-in form post: its guarded form (:meth:`guarded_form`), then the form's
        ``token`` field checked with ``lookup`` (:meth:`check_token`)."""
        form, refusal = await self.guarded_form(request, refusals)
        if refusal is not None:
            return None, refusal
        return await run_in_threadpool(self.check_token, request, str(form.get("token", "")).strip(), lookup)

    # ------------------------------------------------------------------ boards

    def board(self, phase: str) -> Board:
        """The phase's board (entries, floor, signature), computed again only when it can have changed."""
        version = self.store.board_version(phase)
        cached = self._boards.get(phase)
        if cached is None or cached[0] != version:
            self._boards[phase] = (version, rank_board(self.store, phase))
        return self._boards[phase][1]

    def ranked(self, phase: str) -> list[Any]:
        """The phase's entries (ranked first, then the unranked ones)."""
        return list(self.board(phase).entries)

    def board_hidden(self, phase: Any) -> bool:
        return phase.visibility == "hidden" and not self.store.revealed(phase.name)

    def on_board(self, row: dict[str, Any]) -> bool:
        """Whether the submission stands on a board anyone can see (then it is public)."""
        phase = self.comp.phase(row["phase"])
        if self.board_hidden(phase):
            return False
        return any(e.submission_id == row["id"] for e in self.ranked(phase.name))

    def may_see(self, request: Request, row: dict[str, Any]) -> bool:
        """A submission's details: its team, the organisers, or anyone once it is on the board."""
        return self.team_of(request) == row["team"] or self.is_admin(request) or self.on_board(row)

    # ------------------------------------------------------------------ plots

    def plot(self, key: tuple[Any, ...], draw: Callable[[], bytes]) -> bytes:
        """A plot drawn once per key (submission, kind, result, visible claims), LRU-bounded."""
        if key in self._plots:
            self._plots.move_to_end(key)
            return self._plots[key]
        png = draw()
        self._plots[key] = png
        while len(self._plots) > PLOT_CACHE_ENTRIES:
            self._plots.popitem(last=False)
        return png


class Refused(Exception):  # noqa: N818 (a refusal, not an error)
    """Raised by :func:`request_guard` with the response that refuses the request."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: The 403 message of a state-changing request from another site without a bearer token
#: (:func:`request_guard`); the team forms' ``Origin`` refusal too.
FOREIGN_POST = "this form was posted from another site (Origin check failed); reload the form"


async def request_guard(request: Request) -> None:
    """Run before every route (a dependency of the app): a bearer token is checked (and
    counted) here; a state-changing request without one must come from this site."""
    site = site_of(request)
    if site.bearer(request) is not None:
        _, refusal = await run_in_threadpool(site.bearer_identity, request)
        if refusal is not None:
            raise Refused(refusal)
    elif request.method not in SAFE_METHODS and not site.form_origin_ok(request):
        raise Refused(site.error(request, FOREIGN_POST, 403))


#: A route parameter ``site: SiteDep`` receives the app's :class:`Site`.
SiteDep = Annotated[Site, Depends(site_of)]


__all__ = ["ADMIN_COOKIE", "FOREIGN_POST", "FormRefusals", "Refused", "SiteDep", "request_guard", "TEAM_COOKIE", "Site", "parse_id"]
