"""Worker health in the database: every worker slot's state, heartbeat and restarts.

A worker process writes its row when it starts, when it takes or finishes a submission
and at least every :data:`HEARTBEAT_SECONDS` while idle; the server that supervises it
records each exit and restart. Any server process (or ``averitec leaderboard status``)
reads every row, so organisers see all workers of all server processes in one place
(the ``/admin`` page, ``status --json``).

Example:
    >>> import tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> store = Store(f"sqlite:///{tempfile.mkdtemp()}/lb.db")
    >>> _ = store.init("name: d\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]", where="d.yaml")
    >>> health = WorkerHealth(store, "host/1/0")
    >>> health.started(pid=4242)
    >>> [(w["name"], w["state"], w["alive"]) for w in workers(store)]
    [('host/1/0', 'idle', True)]
"""

from __future__ import annotations

import datetime as dt
import socket
from typing import Any

import sqlalchemy as sa

from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.db import utcnow

#: An idle worker writes its heartbeat at least this often.
HEARTBEAT_SECONDS = 2.0
#: A worker silent for longer than this is shown as not alive.
SILENT_AFTER = dt.timedelta(seconds=10 * HEARTBEAT_SECONDS)


def worker_name(slot: int | str, *, server_pid: int) -> str:
    """The row name of worker ``slot`` of the server process ``server_pid`` on this host.

    Example:
        >>> worker_name(1, server_pid=77).endswith("/77/1")
        True
    """
    return f"{socket.gethostname()[:120]}/{server_pid}/{slot}"


class WorkerHealth:
    """Writes one worker slot's row (``name`` from :func:`worker_name`)."""

    def __init__(self, store: Any, name: str) -> None:
        self.store = store
        self.name = name
        self._last_beat: dt.datetime | None = None

    def _upsert(self, **values: Any) -> None:
        with self.store.tx() as conn:
            self._write(conn, **values)

    def _write(self, conn: sa.Connection, **values: Any) -> None:
        w = m.workers.c
        updated = conn.execute(m.workers.update().where(w.name == self.name).values(**values)).rowcount
        if not updated:
            conn.execute(m.workers.insert().values(name=self.name, host=self.name.split("/", 1)[0], **{"state": "starting", **values}))

    def started(self, *, pid: int) -> None:
        now = utcnow()
        self._upsert(pid=pid, state="idle", submission_id=None, started_at=now, last_seen=now)
        self._last_beat = now

    def beat(self, *, state: str, submission_id: int | None = None, scored: int = 0, force: bool = False) -> None:
        """Record the worker's state (throttled to one write per :data:`HEARTBEAT_SECONDS`
        unless ``force`` or something to count)."""
        now = utcnow()
        if not force and not scored and self._last_beat is not None and (now - self._last_beat).total_seconds() < HEARTBEAT_SECONDS:
            return
        with self.store.tx() as conn:
            self.beat_in(conn, state=state, submission_id=submission_id, scored=scored)

    def beat_in(self, conn: sa.Connection, *, state: str, submission_id: int | None = None, scored: int = 0) -> None:
        """:meth:`beat` (forced) inside the caller's transaction ``conn``: the worker's row
        changes with the submission it took or finished, one commit for both."""
        now = utcnow()
        values: dict[str, Any] = {"state": state, "submission_id": submission_id, "last_seen": now}
        if scored:
            values["scored"] = m.workers.c.scored + scored
        self._write(conn, **values)
        self._last_beat = now

    def exited(self, *, how: str, restarting: bool) -> None:
        """Called by the supervisor when the worker process ended (``how``: exit code or signal)."""
        values: dict[str, Any] = {"state": "restarting" if restarting else "stopped", "submission_id": None,
                                  "last_exit": f"{utcnow():%Y-%m-%d %H:%M:%S} UTC: {how}"}
        if restarting:
            values["restarts"] = m.workers.c.restarts + 1
        self._upsert(**values)


def workers(store: Any) -> list[dict[str, Any]]:
    """Every worker row with ``alive`` (heard from within :data:`SILENT_AFTER`, not stopped)
    and ``seen_seconds_ago``."""
    now = utcnow()
    with store.engine.connect() as conn:
        rows = [dict(r._mapping) for r in conn.execute(sa.select(m.workers).order_by(m.workers.c.name))]
    for row in rows:
        seen = row["last_seen"]
        row["seen_seconds_ago"] = None if seen is None else round((now - seen).total_seconds(), 1)
        row["alive"] = row["state"] in ("idle", "scoring") and seen is not None and now - seen <= SILENT_AFTER
    return rows


def prune(store: Any, *, older_than: dt.timedelta = dt.timedelta(days=1)) -> int:
    """Forget worker rows not heard from for ``older_than`` (earlier server runs)."""
    w = m.workers.c
    with store.tx() as conn:
        return int(conn.execute(m.workers.delete().where(sa.or_(w.last_seen.is_(None), w.last_seen < utcnow() - older_than))).rowcount)


def queue(store: Any) -> dict[str, int]:
    """How many submissions are in each state."""
    from averitec_tools.leaderboard.store import STATES

    s = m.submissions.c
    with store.engine.connect() as conn:
        counts = dict(conn.execute(sa.select(s.state, sa.func.count()).group_by(s.state)).all())
    return {state: int(counts.get(state, 0)) for state in STATES}


__all__ = ["WorkerHealth", "prune", "queue", "worker_name", "workers"]
