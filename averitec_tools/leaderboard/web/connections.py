"""Bounds on the connections ``serve`` accepts (slow-client attacks: many connections
held open by clients that send their request headers a byte at a time, or never).

:func:`bounded_protocol` makes uvicorn's HTTP/1.1 protocol (h11) class with two bounds:

* **header timeout**: a request's headers must be complete within ``header_timeout``
  seconds of its first byte (of the connection, for the first request); otherwise the
  connection is closed. Idle keep-alive connections are closed by uvicorn after 5 s.
* **connections**: past ``max_connections`` open connections, a new one is closed at
  once, so slow clients cannot take every file descriptor.

The body of an upload is bounded by the size limit (``BodySizeLimit``), not by time.

Example:
    >>> proto = bounded_protocol(header_timeout=10, max_connections=200)
    >>> proto.header_timeout, proto.max_connections, proto.__name__
    (10.0, 200, 'BoundedH11Protocol')
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("averitec.leaderboard")

HEADER_TIMEOUT = 10.0
MAX_CONNECTIONS = 500


def bounded_protocol(*, header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> type:
    """uvicorn's h11 protocol with a header timeout and a connection cap (``uvicorn.Config(http=...)``)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11Protocol(H11Protocol):  # type: ignore[misc]
        _header_timer: Any = None
        header_timeout: float  # set below, per server
        max_connections: int

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > self.max_connections:
                logger.warning("refused a connection from %s: %d connections open", self.client, len(self.connections) - 1)
                transport.abort()
                return
            self._arm()

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the first byte of a further request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    BoundedH11Protocol.header_timeout = float(header_timeout)
    BoundedH11Protocol.max_connections = int(max_connections)
    return BoundedH11Protocol


__all__ = ["HEADER_TIMEOUT", "MAX_CONNECTIONS", "bounded_protocol"]
