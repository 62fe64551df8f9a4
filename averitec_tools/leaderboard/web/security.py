"""Request-size limit (enforced while the body streams in) and double-submit CSRF tokens."""

from __future__ import annotations

import secrets
from typing import Any

CSRF_COOKIE = "lb_csrf"


class BodyTooLarge(Exception):
    """Raised by the counting ``receive`` once the body passes the limit."""


class BodySizeLimit:
    """ASGI wrapper: a request body over ``max_bytes`` gets 413 as soon as it is seen.

    A too-large ``Content-Length`` is refused before anything is read; a chunked or
    lying body is counted as it arrives and cut off at the limit, so an upload is never
    buffered beyond ``max_bytes``.
    """

    def __init__(self, app: Any, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(send)
                return
        seen = 0
        started = False

        async def counting_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge
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
                await self._refuse(send)

    def message(self) -> str:
        return f"upload too large: the limit is {self.max_bytes / (1024 * 1024):g} MB"

    async def _refuse(self, send: Any) -> None:
        body = (self.message() + "\n").encode()
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
