"""Bounds on the connections ``serve`` accepts (slow-client attacks: many connections
held open by clients that send their request headers, or their bodies, a byte at a time).

:func:`bounded_protocol` makes uvicorn's HTTP/1.1 protocol (h11) class with four bounds:

* **header timeout**: a request's headers must be complete within ``header_timeout``
  seconds of its first byte (of the connection, for the first request); otherwise the
  connection is closed. Idle keep-alive connections are closed by uvicorn after 5 s.
* **request timeout** (issue 39): the whole request, body included, must arrive within
  ``request_seconds`` of its first byte (the competition's ``rate_limits.request_seconds``);
  a body that trickles in (1 byte every 0.5 s) is cut off then, whoever sends it.
* **connections**: past ``max_connections`` open connections, a new one is closed at
  once, so slow clients cannot take every file descriptor.
* **connections per client**: past ``per_client`` open connections from one address, a
  new one from it is closed at once (``rate_limits.connections_per_client``; not applied
  behind a trusted reverse proxy, where every client has the proxy's address).

The size of a body is bounded by ``BodySizeLimit``; uploads of one team in flight at once
by the web app (``rate_limits.uploads_per_team``).

Example:
    >>> proto = bounded_protocol(header_timeout=10, max_connections=200, request_seconds=60, per_client=20)
    >>> proto.header_timeout, proto.max_connections, proto.request_seconds, proto.per_client, proto.__name__
    (10.0, 200, 60.0, 20, 'BoundedH11Protocol')
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("averitec.leaderboard")

HEADER_TIMEOUT = 10.0
MAX_CONNECTIONS = 500
#: Competition defaults (``rate_limits``), for a server started without one at hand.
REQUEST_SECONDS = 60.0
PER_CLIENT = 20


class _Bounds:
    """The bounds, as a mix-in before uvicorn's ``H11Protocol`` (:func:`bounded_protocol` sets
    the class attributes; ``open_per_client`` and ``stats`` are shared by the connections of one server)."""

    header_timeout: float
    max_connections: int
    request_seconds: float
    per_client: int | None
    open_per_client: dict[str, int]
    stats: dict[str, int]
    _header_timer: Any = None
    _request_timer: Any = None
    _counted: str | None = None
    # provided by H11Protocol
    connections: Any
    client: Any
    loop: Any
    conn: Any
    transport: Any

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        if len(self.connections) > self.max_connections:
            logger.warning("refused a connection from %s: %d connections open", self.client, len(self.connections) - 1)
            transport.abort()
            return
        host = self.client[0] if self.client else "unknown"
        if self.per_client is not None and self.open_per_client.get(host, 0) >= self.per_client:
            self.stats["refused_per_client"] += 1  # counted, not logged: a flood must not grow the log
            transport.abort()
            return
        self.open_per_client[host] = self.open_per_client.get(host, 0) + 1
        self._counted = host
        self._arm()

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)
        if self._request_timer is None:
            self._request_timer = self.loop.call_later(self.request_seconds, self._request_too_slow)

    def _disarm(self, *, request: bool = False) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if request and self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _headers_too_slow(self) -> None:
        import h11

        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def _request_too_slow(self) -> None:
        import h11

        self._request_timer = None
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY) and not self.transport.is_closing():
            self.stats["request_timeouts"] += 1
            self.transport.abort()  # the body is not finished: drop it, whoever sends it

    def data_received(self, data: bytes) -> None:
        import h11

        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._arm()  # the first byte of a further request on a kept-alive connection
        super().data_received(data)  # type: ignore[misc]
        if self.conn.their_state is not h11.IDLE:
            self._disarm(request=self.conn.their_state is not h11.SEND_BODY)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm(request=True)
        if self._counted is not None:
            left = self.open_per_client.get(self._counted, 1) - 1
            if left > 0:
                self.open_per_client[self._counted] = left
            else:
                self.open_per_client.pop(self._counted, None)
            self._counted = None
        super().connection_lost(exc)  # type: ignore[misc]


def bounded_protocol(*, header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS,
                     request_seconds: float = REQUEST_SECONDS, per_client: int | None = PER_CLIENT) -> type:
    """uvicorn's h11 protocol with the bounds of the module docstring (``uvicorn.Config(http=...)``)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return type("BoundedH11Protocol", (_Bounds, H11Protocol), {
        "header_timeout": float(header_timeout), "max_connections": int(max_connections),
        "request_seconds": float(request_seconds), "per_client": per_client, "open_per_client": {},
        "stats": {"request_timeouts": 0, "refused_per_client": 0},
    })


__all__ = ["HEADER_TIMEOUT", "MAX_CONNECTIONS", "PER_CLIENT", "REQUEST_SECONDS", "bounded_protocol"]
