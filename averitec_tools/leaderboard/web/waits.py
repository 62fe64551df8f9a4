"""Waiting for a submission's outcome: ``GET /api/submissions/{id}?wait=SECONDS``.

A script that uploads and wants its score asks once with ``wait`` instead of polling:
the answer comes as soon as the submission has left ``pending`` and ``running``
(finished, failed or cancelled), or after ``wait`` seconds (at most :data:`MAX_WAIT`),
whichever is first. Polling costs the server a whole request per look (and a client
that polls every 50 ms learns the outcome 25 ms late on average, more under load);
here one watcher task per server process looks up every waited-on submission in one
query while anyone waits, so the database work does not grow with the number of waiting
requests. It looks every :data:`CHECK_SECONDS`, unless it has a ``signal``: ``serve``'s
workers set that ``multiprocessing`` event after each outcome they commit, and then the
watcher looks when it is set, when a request starts waiting, and at the latest every
:data:`FALLBACK_SECONDS` (outcomes from elsewhere: a cancel, a worker started with
``work``): a 500-claim submission's wait had cost ~30 look-ups, each a thread hop and a
query. At most :data:`MAX_WAITERS` requests wait at once
(past that, the answer is immediate, as without ``wait``); connections stay bounded by
the server's per-client and total caps (:mod:`~averitec_tools.leaderboard.web.connections`).

Example:
    >>> wait_seconds(None), wait_seconds("2.5"), wait_seconds("60")
    (0.0, 2.5, 'wait must be a number of seconds from 0 to 30')
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import Any

from fastapi.concurrency import run_in_threadpool

logger = logging.getLogger("averitec.leaderboard")
#: The longest wait one request may ask for (seconds).
MAX_WAIT = 30.0
#: How often the watcher looks up the waited-on submissions (seconds).
CHECK_SECONDS = 0.01
#: With a ``signal``: the longest time between two look-ups (seconds).
FALLBACK_SECONDS = 0.1
#: Requests waiting at once in one server process; more are answered at once.
MAX_WAITERS = 256


def wait_seconds(text: str | None) -> float | str:
    """The ``wait`` query parameter as seconds (absent: 0), or why it is refused."""
    if text is None or text == "":
        return 0.0
    try:
        value = float(text[:20])
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= MAX_WAIT:  # NaN fails too
        return f"wait must be a number of seconds from 0 to {MAX_WAIT:g}"
    return value


class OutcomeWatch:
    """Waits of one server process on submissions' outcomes (see the module docstring).

    ``settled(ids)`` (the store's :meth:`~averitec_tools.leaderboard.records.SubmissionRecords.settled`)
    returns the ids among ``ids`` that are no longer pending or running.
    """

    def __init__(self, settled: Any, signal: Any | None = None) -> None:
        self.settled = settled
        self.signal = signal
        self._waiting: dict[int, list[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._kick: asyncio.Event | None = None  # made with each watcher task, on its loop
        # at most one thread of the pool blocks on the signal, shared by successive watchers
        self._signalled: asyncio.Future[Any] | None = None
        self.count = 0

    async def wait(self, submission_id: int, seconds: float) -> None:
        """Return once ``submission_id`` has an outcome, or after ``seconds``."""
        if seconds <= 0 or self.count >= MAX_WAITERS:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        self._waiting.setdefault(submission_id, []).append(future)
        self.count += 1
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._kick = asyncio.Event()
            self._task = loop.create_task(self._watch())
        assert self._kick is not None
        self._kick.set()  # a look now: an outcome signalled before this waiter came is not missed
        try:
            await asyncio.wait({future}, timeout=seconds)
        finally:
            self.count -= 1
            waiters = self._waiting.get(submission_id, [])
            with contextlib.suppress(ValueError):
                waiters.remove(future)
            if not waiters:
                self._waiting.pop(submission_id, None)
            if not self._waiting and self._task is not None:
                self._task.cancel()  # nobody waits: no more look-ups
                self._task = None

    async def _next_look(self) -> None:
        if self.signal is None or self._kick is None:
            await asyncio.sleep(CHECK_SECONDS)
            return
        if self._signalled is None or self._signalled.done() or self._signalled.get_loop() is not asyncio.get_running_loop():
            self._signalled = asyncio.ensure_future(run_in_threadpool(self.signal.wait, FALLBACK_SECONDS))
        kick = asyncio.ensure_future(self._kick.wait())
        try:
            await asyncio.wait({self._signalled, kick}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            kick.cancel()
        self._kick.clear()
        self.signal.clear()  # before the look-up: an outcome committed after it sets it again

    async def _watch(self) -> None:
        while self._waiting:
            await self._next_look()
            ids = list(self._waiting)
            try:
                done = await run_in_threadpool(self.settled, ids)
            except Exception as exc:  # the database failing: answer the waiters now, with what the request finds
                logger.warning("outcome watch: %s", exc)
                done = set(ids)
            for sid in done:
                for future in self._waiting.pop(sid, []):
                    if not future.done():
                        future.set_result(None)


__all__ = ["CHECK_SECONDS", "FALLBACK_SECONDS", "MAX_WAIT", "MAX_WAITERS", "OutcomeWatch", "wait_seconds"]
