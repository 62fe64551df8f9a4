"""The server log of internal errors, bounded whatever a client sends (issue 39: each failing
request once wrote ~11 KB of traceback; 100 requests grew the log by 1.15 MB in 6 s).

:class:`ErrorLog` writes **one line per failure** (method, route, exception type and
message, cut to :data:`MAX_LINE` characters), the full traceback only the **first time** a
(route, exception type) pair fails (so the organisers can debug it; there are finitely many
pairs), and at most ``limit`` lines per ``window`` seconds in all: past that, failures are
only counted, and the next line written says how many were suppressed.

Example:
    >>> import logging
    >>> log = ErrorLog(logging.getLogger("doctest-errors"), limit=2, window=60.0)
    >>> [log.decide("GET /x", KeyError, now=t) for t in (0.0, 1.0, 2.0, 3.0, 61.0)]
    [('traceback', 0), ('line', 0), (None, 0), (None, 0), ('line', 2)]
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque

#: The longest line written for one failure, and the longest traceback (the first of a kind).
MAX_LINE = 500
MAX_TRACEBACK = 6000


class ErrorLog:
    """Rate-limited, one-line-per-failure logging of internal errors (see the module docstring)."""

    def __init__(self, logger: logging.Logger, *, limit: int = 20, window: float = 60.0) -> None:
        self.logger, self.limit, self.window = logger, limit, window
        self._seen: set[tuple[str, str]] = set()
        self._times: deque[float] = deque()
        self._suppressed = 0
        self._lock = threading.Lock()

    def decide(self, where: str, kind: type, *, now: float | None = None) -> tuple[str | None, int]:
        """What to write for one failure: ``"traceback"`` (its pair's first), ``"line"`` or
        ``None`` (over the limit), and how many failures were suppressed before it."""
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._times and self._times[0] <= now - self.window:
                self._times.popleft()
            if len(self._times) >= self.limit:
                self._suppressed += 1
                return None, 0
            self._times.append(now)
            suppressed, self._suppressed = self._suppressed, 0
            first = (where, kind.__name__) not in self._seen
            self._seen.add((where, kind.__name__))
            return ("traceback" if first else "line"), suppressed

    def failure(self, method: str, route: str, exc: BaseException) -> None:
        """Log one failed request (route: the route's template, so ids do not make new pairs)."""
        where = f"{method} {route}"
        what, suppressed = self.decide(where, type(exc))
        if what is None:
            return
        detail = " ".join(str(exc).split())
        line = f"internal error on {where}: {type(exc).__name__}: {detail}"[:MAX_LINE]
        if suppressed:
            line += f" ({suppressed} more internal error(s) not logged in the last {self.window:g} s)"
        if what == "traceback":
            self.logger.error("%s (the first of its kind: traceback follows)\n%s", line, short_traceback(exc))
        else:
            self.logger.error(line)


def short_traceback(exc: BaseException) -> str:
    """The traceback of ``exc``, cut in the middle past :data:`MAX_TRACEBACK` characters (a long
    message repeated in it cannot make it long).

    Example:
        >>> len(short_traceback(ValueError("x" * 100_000))) <= MAX_TRACEBACK + 40
        True
    """
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip()
    if len(text) <= MAX_TRACEBACK:
        return text
    half = MAX_TRACEBACK // 2
    return f"{text[:half]}\n... ({len(text) - 2 * half} characters cut) ...\n{text[-half:]}"


__all__ = ["MAX_LINE", "MAX_TRACEBACK", "ErrorLog", "short_traceback"]
