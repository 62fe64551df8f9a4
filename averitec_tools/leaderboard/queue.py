"""The scoring queue of the leaderboard store: claiming, leases, outcomes, cancel, rescore.

:class:`SubmissionQueue` is a part of :class:`~averitec_tools.leaderboard.store.Store`
(see the state machine in its module docstring); every state change is a guarded update
in one transaction, so several workers in several processes never take one submission
twice or finish one that was taken back.

Example:
    >>> import tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> store = Store(f"sqlite:///{tempfile.mkdtemp()}/lb.db")
    >>> _ = store.init("name: d\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]", where="d.yaml")
    >>> _ = store.add_team("blue")
    >>> sid = store.submit(team="blue", system="s", phase="dev", content=b"[1]", file_name="p.json").id
    >>> store.claim(lease_seconds=60) == sid, store.claim(lease_seconds=60)
    (True, None)
    >>> store.cancel(sid), store.renew(sid, lease_seconds=60)  # its worker learns at the next heartbeat
    ('running', False)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from averitec_tools.errors import UserError
from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.db import utcnow
from averitec_tools.leaderboard.events import record

if TYPE_CHECKING:
    from averitec_tools.leaderboard.competition import Competition

#: States whose content hash is unique per team and phase (the same bytes again return
#: the row); after a failure or cancel the same bytes are a new submission.
LIVE_STATES = ("pending", "running", "finished")


class _LostLease(Exception):
    """The submission was taken back (lease expired) or cancelled while this worker scored it."""


class SubmissionQueue:
    """The queue operations of a store (mixed into :class:`~averitec_tools.leaderboard.store.Store`)."""

    is_postgres: bool
    #: Called after a submission became pending (``serve`` wakes its workers with it);
    #: workers also poll, so a wake-up that is lost costs only the poll interval.
    on_queued: Callable[[], None] | None = None

    def queued(self) -> None:
        """Tell this process's workers that a submission is pending (:attr:`on_queued`)."""
        if self.on_queued is not None:
            self.on_queued()

    def tx(self) -> AbstractContextManager[sa.Connection]:  # provided by Store
        raise NotImplementedError

    def competition(self) -> Competition:  # provided by Store
        raise NotImplementedError

    def claim(self, *, lease_seconds: float, submission_id: int | None = None, by: str | None = None,
              also: Callable[[sa.Connection, int], None] | None = None) -> int | None:
        """Move the next pending submission (or ``submission_id``) to ``running``: fewest
        runs first, then the oldest, so a submission whose worker died waits behind the
        fresh ones. ``by`` (the worker) goes into the event; ``also(conn, id)`` writes more
        in the same transaction (the worker's health row)."""
        s = m.submissions.c
        with self.tx() as conn:
            query = sa.select(s.id).where(s.state == "pending").order_by(s.attempts, s.id).limit(1)
            if submission_id is not None:
                query = query.where(s.id == submission_id)
            if self.is_postgres:
                query = query.with_for_update(skip_locked=True)
            job = conn.execute(query).scalar()
            if job is None:
                return None
            now = utcnow()
            done = conn.execute(
                m.submissions.update()
                .where(s.id == job, s.state == "pending")
                .values(state="running", started_at=now, attempts=s.attempts + 1, lease_until=now + dt.timedelta(seconds=lease_seconds))
            ).rowcount
            if done == 1:
                record(conn, int(job), "running", f"taken by {by or 'a worker'}", at=now)
                if also is not None:
                    also(conn, int(job))
        return int(job) if done == 1 else None

    def _update_running(self, submission_id: int, *, note: str | None = None, **values: Any) -> bool:
        """Update a submission only while it is ``running``; whether it was (a new state is recorded with ``note``)."""
        s = m.submissions.c
        with self.tx() as conn:
            query = m.submissions.update().where(s.id == submission_id, s.state == "running").values(**values)
            done = bool(conn.execute(query).rowcount)
            if done and "state" in values:
                record(conn, submission_id, values["state"], note)
            return done

    def renew(self, submission_id: int, *, lease_seconds: float) -> bool:
        """Extend a running submission's lease; ``False`` once it is no longer running
        (cancelled, or taken back after its lease expired)."""
        return self._update_running(submission_id, lease_until=utcnow() + dt.timedelta(seconds=lease_seconds))

    def recover(self) -> int:
        """Return running submissions whose lease expired (their worker died) to
        ``pending``, or fail them once they had ``scoring.max_attempts`` runs; returns how
        many were recovered either way."""
        s = m.submissions.c
        cap = self.competition().scoring.max_attempts
        expired = sa.and_(s.state == "running", s.lease_until < utcnow())
        reason = (f"scoring was interrupted {cap} times (the worker stopped while scoring it); the submission is not "
                  "retried (a problem on the server's side: it does not count against your quota)")
        with self.tx() as conn:
            last = [int(i) for i in conn.execute(sa.select(s.id).where(expired, s.attempts >= cap)).scalars()]
            if last:  # an infrastructure failure: not charged (issue 39)
                conn.execute(m.submissions.update().where(s.id.in_(last), s.state == "running").values(
                    state="failed", reason=reason, server_reason=reason, finished_at=utcnow(), lease_until=None, charged=False))
                record(conn, last, "failed", reason)
            back = [int(i) for i in conn.execute(sa.select(s.id).where(expired)).scalars()]
            if back:
                conn.execute(m.submissions.update().where(s.id.in_(back), s.state == "running").values(state="pending", lease_until=None))
                record(conn, back, "pending", "its worker stopped renewing the lease: queued again")
        return len(last) + len(back)

    def finish(self, submission_id: int, results: list[dict[str, Any]], *, audit: Mapping[str, Any] | None = None,
               also: Callable[[sa.Connection], None] | None = None) -> bool:
        """Store every profile's result (and the evidence ``audit``) and mark the submission
        finished, atomically; ``also(conn)`` writes more in the same transaction (the
        worker's health row). One commit: the submission is finished when it returns."""
        s = m.submissions.c
        extra: dict[str, Any] = {} if audit is None else {"audit": dict(audit)}
        with self.tx() as conn:
            now = utcnow()
            updated = conn.execute(
                m.submissions.update()
                .where(s.id == submission_id, s.state == "running")
                .values(state="finished", finished_at=now, lease_until=None, reason=None, fresh_judge=False, **extra)
            ).rowcount
            if updated != 1:
                raise _LostLease()
            record(conn, submission_id, "finished", None, at=now)
            r = m.results.c
            for res in results:
                conn.execute(
                    m.results.delete().where(
                        r.submission_id == submission_id, r.profile == res["profile"], r.scorer_version == res["scorer_version"]
                    )
                )
                conn.execute(m.results.insert().values(submission_id=submission_id, created_at=now, **res))
            if also is not None:
                also(conn)
        return True

    def fail(self, submission_id: int, reason: str, *, server_reason: str | None = None, charged: bool = True,
             drop_content: bool = False) -> bool:
        """Mark a running submission failed. ``reason`` is what the team sees (their file,
        line and claim id only); ``server_reason`` the full message, for organisers;
        ``charged=False`` gives the quota back (a failure on the server's side);
        ``drop_content`` empties the stored bytes (a refused file; its size and hash stay,
        and :meth:`requeue` leaves it failed)."""
        extra: dict[str, Any] = {"content": b""} if drop_content else {}
        return self._update_running(submission_id, state="failed", reason=reason[:2000], server_reason=(server_reason or reason)[:20000],
                                    charged=charged, finished_at=utcnow(), lease_until=None, note=reason[:2000], **extra)

    def cancel(self, submission_id: int) -> str:
        """Cancel a submission (organisers): it leaves the queue or the board, its worker
        stops scoring it, and it does not count against the quota. Returns the old state."""
        s = m.submissions.c
        with self.tx() as conn:
            state = conn.execute(sa.select(s.state).where(s.id == submission_id)).scalar()
            if state is None:
                raise UserError(f"no submission {submission_id}")
            if state == "cancelled":
                return state
            conn.execute(
                m.submissions.update()
                .where(s.id == submission_id)
                .values(state="cancelled", reason="cancelled by the organisers", charged=False, lease_until=None, finished_at=utcnow())
            )
            record(conn, submission_id, "cancelled", "cancelled by the organisers")
        return str(state)

    def requeue(self, *, phase: str | None = None, submission_id: int | None = None, fresh_judge: bool = False,
                incomplete: bool = False) -> int:
        """Queue submissions to be scored again; how many were queued.

        Without ``submission_id``: finished ones (only those with an incomplete result under
        ``incomplete``) and failed ones not uploaded again since. With it: that one, also
        when it is stuck ``running`` (its worker learns at its next heartbeat and drops it).
        A finished one stays on the board with its current result until the new one
        replaces it; a refused file whose bytes were dropped stays failed. Its stored judge
        replies are re-used unless ``fresh_judge``.
        """
        s = m.submissions.c
        twin = m.submissions.alias("twin")
        newer_live = sa.exists().where(
            twin.c.team_id == s.team_id, twin.c.phase == s.phase, twin.c.content_hash == s.content_hash,
            twin.c.id != s.id, twin.c.state.in_(LIVE_STATES),
        )
        kept = sa.func.length(s.content) > 0
        again = sa.or_(s.state == "finished", sa.and_(s.state == "failed", ~newer_live, kept))
        if submission_id is not None:
            again = sa.and_(s.id == submission_id, sa.or_(again, s.state == "running"))
        with self.tx() as conn:
            query = sa.select(s.id).where(again)
            if phase is not None:
                query = query.where(s.phase == phase)
            ids = [int(i) for i in conn.execute(query).scalars()]
            if incomplete:
                ids = [i for i in ids if not self._complete(conn, i)]
            if ids:
                conn.execute(m.submissions.update().where(s.id.in_(ids)).values(
                    state="pending", attempts=0, lease_until=None, fresh_judge=fresh_judge))
                record(conn, ids, "pending", "queued again by the organisers" + (" (a fresh judge)" if fresh_judge else ""))
        if ids:
            self.queued()
        return len(ids)

    @staticmethod
    def _complete(conn: sa.Connection, submission_id: int) -> bool:
        """Whether the submission's newest results are complete (no claim left waiting for a judge)."""
        from averitec_tools.leaderboard.judging import result_complete

        r = m.results.c
        rows = conn.execute(sa.select(r.summary).where(r.submission_id == submission_id).order_by(r.id.desc()).limit(1)).all()
        return bool(rows) and result_complete(rows[0].summary)


__all__ = ["LIVE_STATES", "SubmissionQueue"]
