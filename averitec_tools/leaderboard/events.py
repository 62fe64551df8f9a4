"""Jobs that never silently stall: every state change timestamped, a watchdog, the queue's health.

* :func:`record` writes one ``submission_events`` row per state change, in the
  transaction that makes the change (upload, taken by a worker, finished, failed,
  cancelled, re-queued), with a note saying who or what moved it.
* :meth:`SubmissionEvents.watchdog` fails a submission still ``running`` past its phase's
  time limit plus :data:`WATCHDOG_GRACE` -- its worker is alive (it renews the lease) but
  the in-worker time limit did not stop it -- with the reason, not charged (a stall is the
  server's problem); the organisers re-run it with ``rescore --submission ID``. Every
  worker runs it before taking a job, and ``serve`` runs it every few seconds besides.
* :meth:`SubmissionEvents.queue_health` is what the public status page shows: queue
  length, the oldest waiting job's age, workers heard from lately, incomplete results.

Example:
    >>> import pathlib, tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> board = Store("sqlite:///" + str(pathlib.Path(tempfile.mkdtemp()) / "events.db"))
    >>> board.init("name: e\\nphases: [{name: test, gold: t.json, primary_metric: label_accuracy}]", where="e.yaml") is not None
    True
    >>> job = board.submit(team=board.add_team("red") and "red", system="t", phase="test", content=b"[2]", file_name="q.json")
    >>> [e["state"] for e in board.events(job.id)], board.queue_health()["queue_length"], board.watchdog()
    (['pending'], 1, [])
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.db import utcnow

if TYPE_CHECKING:
    from averitec_tools.leaderboard.competition import Competition

#: Seconds past a phase's time limit after which the watchdog fails a running submission
#: (the worker's own stop lands at the limit, its hard stop 30 s later).
WATCHDOG_GRACE = 60.0
#: A worker not heard from for this long is not counted as alive on the status page.
WORKER_SILENT_AFTER = 90.0


def record(conn: sa.Connection, submission_ids: int | Iterable[int], state: str, note: str | None = None,
           *, at: dt.datetime | None = None) -> None:
    """One event per submission: it entered ``state`` now (or ``at``), ``note`` saying why."""
    ids = [submission_ids] if isinstance(submission_ids, int) else list(submission_ids)
    if ids:
        when = at or utcnow()
        conn.execute(m.submission_events.insert(), [{"submission_id": i, "at": when, "state": state,
                                                    "note": None if note is None else note[:2000]} for i in ids])


def watchdog_reason(limit: float, ran: float) -> str:
    """The reason the watchdog gives (team-visible: no server detail).

    Example:
        >>> print(watchdog_reason(600, 671.4))
        watchdog: scoring ran 671 s, past the time limit of 600 s and its grace of 60 s, and was not stopped; stopped by the watchdog (a problem on the server's side: it does not count against your quota; the organisers can score it again)
    """
    return (f"watchdog: scoring ran {ran:.0f} s, past the time limit of {limit:g} s and its grace of {WATCHDOG_GRACE:g} s, "
            "and was not stopped; stopped by the watchdog (a problem on the server's side: it does not count against "
            "your quota; the organisers can score it again)")


class SubmissionEvents:
    """Event reads, the watchdog and the queue's health (mixed into :class:`~averitec_tools.leaderboard.store.Store`)."""

    engine: sa.Engine

    def tx(self) -> AbstractContextManager[sa.Connection]:  # provided by Store
        raise NotImplementedError

    def competition(self) -> Competition:  # provided by Store
        raise NotImplementedError

    def events(self, submission_id: int) -> list[dict[str, Any]]:
        """The submission's state changes, oldest first: ``{at, state, note}``."""
        e = m.submission_events.c
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(e.at, e.state, e.note).where(e.submission_id == submission_id).order_by(e.id))
            return [dict(r._mapping) for r in rows]

    def watchdog(self, *, now: dt.datetime | None = None) -> list[int]:
        """Fail running submissions past their time limit plus :data:`WATCHDOG_GRACE`; their ids."""
        limit = self.competition().scoring.timeout_seconds
        now = now or utcnow()
        s = m.submissions.c
        cutoff = now - dt.timedelta(seconds=limit + WATCHDOG_GRACE)
        with self.tx() as conn:
            stuck = conn.execute(sa.select(s.id, s.started_at).where(s.state == "running", s.started_at < cutoff)).all()
            for sid, started in stuck:
                reason = watchdog_reason(limit, (now - started).total_seconds())
                done = conn.execute(m.submissions.update().where(s.id == sid, s.state == "running").values(
                    state="failed", reason=reason, server_reason=f"submission {sid}: {reason}", charged=False,
                    finished_at=now, lease_until=None)).rowcount
                if done:
                    record(conn, sid, "failed", reason, at=now)
        return [int(sid) for sid, _ in stuck]

    def queue_health(self, *, now: dt.datetime | None = None) -> dict[str, Any]:
        """What the public status page shows (no team, system or claim: counts and ages only)."""
        now = now or utcnow()
        s, w, e = m.submissions.c, m.workers.c, m.submission_events.c
        queued_at = sa.func.coalesce(sa.select(sa.func.max(e.at)).where(e.submission_id == s.id, e.state == "pending")
                                     .correlate(m.submissions).scalar_subquery(), s.created_at)
        with self.engine.connect() as conn:
            pending = conn.execute(sa.select(sa.func.count(), sa.func.min(queued_at)).where(s.state == "pending")).one()
            running = conn.execute(sa.select(sa.func.count(), sa.func.min(s.started_at)).where(s.state == "running")).one()
            alive = conn.execute(sa.select(sa.func.count()).where(
                w.state.in_(("starting", "idle", "scoring")),
                w.last_seen >= now - dt.timedelta(seconds=WORKER_SILENT_AFTER))).scalar()
        oldest = None if pending[1] is None else max(0.0, (now - pending[1]).total_seconds())
        longest = None if running[1] is None else max(0.0, (now - running[1]).total_seconds())
        return {"queue_length": int(pending[0]) + int(running[0]), "pending": int(pending[0]), "running": int(running[0]),
                "oldest_waiting_seconds": oldest, "longest_running_seconds": longest, "workers_alive": int(alive or 0),
                "time_limit_seconds": self.competition().scoring.timeout_seconds, "watchdog_grace_seconds": WATCHDOG_GRACE,
                "at": now.replace(microsecond=0).isoformat() + "Z"}


__all__ = ["WATCHDOG_GRACE", "WORKER_SILENT_AFTER", "SubmissionEvents", "record", "watchdog_reason"]
