"""Stopping one submission's scoring: its time limit, or an organiser's cancel.

Scoring is CPU-bound Python in the worker's main thread, so a stop is an exception raised
there: :class:`Deadline` arms ``SIGALRM`` (``setitimer``) for the time limit, and
:meth:`Deadline.interrupt` (called from another thread, e.g. the lease heartbeat that
finds the submission cancelled) sends the same signal early. The handler raises
:class:`Interrupted`, a ``BaseException`` so that no ``except Exception`` in the scoring
code swallows it.

A signal handler runs between bytecodes; a long C call (a huge regular-expression match)
would delay it. For that, ``hard_after`` starts a watchdog thread that calls
``on_hard_stop`` (the worker records the failure and exits; its supervisor restarts it).
Outside the main thread there is no soft stop (Python delivers signals only there): only
the watchdog, if asked for. An alarm armed before (pytest-timeout's, say) is put back
with its remaining time when the block ends.

Example:
    >>> import time
    >>> try:
    ...     with Deadline(0.05):
    ...         while True:
    ...             time.sleep(0.01)
    ... except Interrupted as stop:
    ...     stop.kind
    'time'
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any


class Interrupted(BaseException):
    """Scoring was stopped: ``kind`` is ``"time"`` (the limit) or ``"cancelled"``."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Deadline:
    """Raise :class:`Interrupted` in the main thread after ``seconds`` (or on
    :meth:`interrupt`) while the ``with`` block runs.

    Args:
        seconds: The time limit.
        hard_after: Seconds after the limit at which the watchdog calls ``on_hard_stop``
            if the block is still running (``None``: no watchdog).
        on_hard_stop: What the watchdog does (e.g. record the failure and ``os._exit``).
    """

    def __init__(self, seconds: float, *, hard_after: float | None = None, on_hard_stop: Callable[[], None] | None = None) -> None:
        self.seconds = seconds
        self.hard_after = hard_after
        self.on_hard_stop = on_hard_stop
        self._lock = threading.Lock()
        self._kind: str | None = None  # set while armed: what the next SIGALRM means
        self._armed = False
        self._soft = False
        self._previous: Any = None
        self._outer: tuple[float, float] = (0.0, 0.0)  # an ITIMER_REAL armed before us: (remaining, interval)
        self._started = 0.0
        self._done = threading.Event()
        self._watchdog: threading.Thread | None = None

    def _handler(self, _signum: int, _frame: Any) -> None:
        if self._armed:
            self._armed = False
            raise Interrupted(self._kind or "time")

    def __enter__(self) -> Deadline:
        self._soft = threading.current_thread() is threading.main_thread()
        if self._soft:
            self._previous = signal.signal(signal.SIGALRM, self._handler)
            self._kind, self._armed = "time", True
            self._started = time.monotonic()
            self._outer = signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 1e-3))
        if self.hard_after is not None and self.on_hard_stop is not None:
            self._watchdog = threading.Thread(target=self._watch, name="scoring-watchdog", daemon=True)
            self._watchdog.start()
        return self

    def _watch(self) -> None:
        assert self.hard_after is not None and self.on_hard_stop is not None
        if not self._done.wait(self.seconds + self.hard_after):
            self.on_hard_stop()

    def interrupt(self, kind: str = "cancelled") -> bool:
        """Stop the block now (from any thread); whether a stop was sent."""
        with self._lock:
            if not (self._soft and self._armed):
                return False
            self._kind = kind
            signal.setitimer(signal.ITIMER_REAL, 1e-3)  # the handler runs in the main thread
            return True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._done.set()
        if self._soft:
            with self._lock:
                self._armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, self._previous)
                remaining, interval = self._outer
                if remaining > 0:  # late rather than never
                    signal.setitimer(signal.ITIMER_REAL, max(remaining - (time.monotonic() - self._started), 1e-3), interval)
        if self._watchdog is not None:
            self._watchdog.join()


__all__ = ["Deadline", "Interrupted"]
