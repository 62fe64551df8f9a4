"""What protects the web app from its users: request-size limits (enforced while the body
streams in), security headers on every response, the origin check and double-submit CSRF
tokens of form posts, signed session cookies, and per-client / per-team rate limits."""

from __future__ import annotations

import secrets
from typing import Any

CSRF_COOKIE = "lb_csrf"


class BodyTooLarge(Exception):
    """Raised by the counting ``receive`` once the body passes the limit."""


class BodySizeLimit:
    """ASGI wrapper: a request body over the limit gets 413 as soon as it is seen.

    The limit is ``max_bytes`` for the upload routes (``upload_paths``) and
    ``small_bytes`` for every other request (sign-in, admin forms). A too-large
    ``Content-Length`` is refused before anything is read; a chunked or lying body is
    counted as it arrives and cut off at the limit, so an upload is never buffered
    beyond it.
    """

    def __init__(self, app: Any, *, max_bytes: int, small_bytes: int = 64 * 1024,
                 upload_paths: tuple[str, ...] = ("/submit", "/api/submissions")) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.small_bytes = min(small_bytes, max_bytes)
        self.upload_paths = upload_paths

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes if scope.get("path") in self.upload_paths else self.small_bytes
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > limit:
                await self._refuse(send, limit)
                return
        seen = 0
        started = False

        async def counting_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def tracking_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(send, limit)

    def message(self, limit: int | None = None) -> str:
        limit = self.max_bytes if limit is None else limit
        if limit >= 1024 * 1024:
            return f"upload too large: the limit is {limit / (1024 * 1024):g} MB"
        return f"request too large: the limit is {limit / 1024:g} KB"

    async def _refuse(self, send: Any, limit: int) -> None:
        body = (self.message(limit) + "\n").encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def new_csrf_token() -> str:
    return secrets.token_urlsafe(32)


def csrf_ok(cookie: str | None, field: str | None) -> bool:
    """Double-submit check: the form field must equal the (SameSite=Strict) cookie.

    Example:
        >>> csrf_ok("abc", "abc"), csrf_ok("abc", "abd"), csrf_ok(None, None)
        (True, False, False)
    """
    return bool(cookie) and bool(field) and secrets.compare_digest(str(cookie), str(field))


#: Sent with every response (``SecurityHeaders``). The pages use no script at all, so the
#: policy allows none; images and styles come from this site only.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy", b"default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
                                 b"frame-ancestors 'none'; base-uri 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # same-origin: our own form posts still carry a Referer (the fallback of the origin check)
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), interest-cohort=()"),
)


class SecurityHeaders:
    """ASGI wrapper: :data:`SECURITY_HEADERS` on every response (pages, API, static files,
    errors, the 413 of :class:`BodySizeLimit`), ``cache-control: no-store`` where the app
    set no caching of its own, and no ``server`` header."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"server"]
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                if b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def same_origin(*, origin: str | None, referer: str | None, own: str) -> bool:
    """Whether a form post comes from this site: its ``Origin`` header (or, without one,
    its ``Referer``) must be ``own`` (``scheme://host[:port]``). Neither header: refused
    (every current browser sends ``Origin`` with a form post).

    Example:
        >>> same_origin(origin="http://lb.example", referer=None, own="http://lb.example")
        True
        >>> same_origin(origin="https://evil.example", referer=None, own="http://lb.example")
        False
        >>> same_origin(origin=None, referer="http://lb.example/submit", own="http://lb.example")
        True
    """
    from urllib.parse import urlsplit

    if origin and origin != "null":
        return origin.rstrip("/") == own
    if referer:
        parts = urlsplit(referer)
        return f"{parts.scheme}://{parts.netloc}" == own
    return False


class RateLimiter:
    """At most ``limit`` events per key in a sliding ``window`` (seconds), in this process.

    Keys are bounded (``max_keys``, least recently used forgotten), so a flood of new
    clients cannot grow it without end.

    Example:
        >>> rl = RateLimiter(limit=2, window=60)
        >>> rl.hit("a", now=0), rl.hit("a", now=1), rl.retry_after("a", now=2)
        (None, None, 58)
        >>> rl.retry_after("a", now=61)
    """

    def __init__(self, *, limit: int, window: float, max_keys: int = 10_000) -> None:
        from collections import OrderedDict, deque

        self.limit, self.window, self.max_keys = limit, window, max_keys
        self._events: OrderedDict[str, deque[float]] = OrderedDict()
        self._deque = deque

    def _recent(self, key: str, now: float) -> Any:
        events = self._events.get(key)
        if events is None:
            return None
        while events and events[0] <= now - self.window:
            events.popleft()
        return events

    def retry_after(self, key: str, *, now: float | None = None) -> int | None:
        """Seconds until ``key`` may act again (``None``: now)."""
        import math
        import time

        now = time.monotonic() if now is None else now
        events = self._recent(key, now)
        if events is None or len(events) < self.limit:
            return None
        return max(1, math.ceil(events[0] + self.window - now))

    def hit(self, key: str, *, now: float | None = None) -> int | None:
        """Record one event for ``key``; returns :meth:`retry_after` if it was over the limit
        (the event is then not recorded)."""
        import time

        now = time.monotonic() if now is None else now
        wait = self.retry_after(key, now=now)
        if wait is not None:
            return wait
        events = self._events.pop(key, None) or self._deque()
        events.append(now)
        self._events[key] = events
        while len(self._events) > self.max_keys:
            self._events.popitem(last=False)
        return None


class InFlight:
    """At most ``limit`` requests per key at once (a team's uploads whose bodies are still
    arriving), in this process.

    Example:
        >>> slots = InFlight(limit=1)
        >>> slots.enter("blue"), slots.enter("blue"), slots.leave("blue"), slots.enter("blue")
        (True, False, None, True)
    """

    def __init__(self, *, limit: int) -> None:
        import threading

        self.limit = limit
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, key: str) -> bool:
        with self._lock:
            if self._open.get(key, 0) >= self.limit:
                return False
            self._open[key] = self._open.get(key, 0) + 1
            return True

    def leave(self, key: str) -> None:
        with self._lock:
            left = self._open.get(key, 1) - 1
            if left > 0:
                self._open[key] = left
            else:
                self._open.pop(key, None)


def sign_session(key: bytes | str, subject: str, *, issued: int, bound: str = "") -> str:
    """A session cookie value ``subject.issued.mac``: HMAC-SHA256 keyed by ``key`` (the
    server secret of :mod:`averitec_tools.leaderboard.secret`, never anything stored in
    the database) over the subject, the time and ``bound`` (the hash of the token signed
    in with, so that a new token ends the session; it is not sent in the cookie).

    Example:
        >>> value = sign_session(b"k", "team:3", issued=100, bound="h1")
        >>> check_session(b"k", value, subject="team:3", now=101, max_age=60, bound="h1")
        True
        >>> check_session(b"k", value, subject="team:4", now=101, max_age=60, bound="h1")
        False
        >>> check_session(b"k", value, subject="team:3", now=101, max_age=60, bound="h2")  # the token was rotated
        False
        >>> check_session(b"other", value, subject="team:3", now=101, max_age=60, bound="h1")  # the secret was rotated
        False
    """
    import hashlib
    import hmac

    raw = key.encode() if isinstance(key, str) else key
    mac = hmac.new(raw, f"{subject}.{issued}.{bound}".encode(), hashlib.sha256).hexdigest()
    return f"{subject}.{issued}.{mac}"


def check_session(key: bytes | str, value: str | None, *, subject: str, now: float, max_age: float, bound: str = "") -> bool:
    """Whether ``value`` is a session for ``subject`` signed with ``key`` over ``bound``
    and younger than ``max_age``."""
    if not value or value.count(".") < 2:
        return False
    rest, _, _mac = value.rpartition(".")
    got_subject, _, issued = rest.rpartition(".")
    if got_subject != subject or not issued.isdigit() or len(issued) > 12 or not 0 <= now - int(issued) <= max_age:
        return False
    return secrets.compare_digest(value, sign_session(key, subject, issued=int(issued), bound=bound))


def session_subject(value: str | None) -> str | None:
    """The subject a session cookie claims (checked later with :func:`check_session`)."""
    if not value or value.count(".") < 2:
        return None
    return value.rpartition(".")[0].rpartition(".")[0] or None
