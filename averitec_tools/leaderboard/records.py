"""Reading results and writing audits: a part of :class:`~averitec_tools.leaderboard.store.Store`.

:class:`SubmissionRecords` holds the store's result queries (every stored result per
submission, the board's change marker) and the audit write of the scoring worker
(:mod:`averitec_tools.leaderboard.audit_flags`).

Example:
    >>> import pathlib, tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "records.db"
    >>> store = Store(f"sqlite:///{db}")
    >>> yaml_text = "name: r\\nphases: [{name: test, gold: t.json, primary_metric: label_accuracy}]"
    >>> store.init(yaml_text, where="r.yaml") is not None and store.add_team("green") is not None
    True
    >>> sid = store.submit(team="green", system="t", phase="test", content=b"[2]", file_name="q.json",
    ...                    declaration={"training_data": "train.json"}).id
    >>> store.save_audit(sid, {"status": "not_audited", "reason": "r"})
    >>> row = store.submission(sid)
    >>> row["audit"]["status"], row["declaration"]
    ('not_audited', {'training_data': 'train.json'})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from averitec_tools.leaderboard import models as m


class SubmissionRecords:
    """Result reads and audit writes of a store (mixed into :class:`~averitec_tools.leaderboard.store.Store`)."""

    engine: sa.Engine

    def tx(self) -> Any:  # provided by Store
        raise NotImplementedError

    def board_version(self, phase: str) -> tuple[Any, ...]:
        """Changes whenever the ranking of ``phase`` can change (new results, states, reveal)."""
        s, r = m.submissions.c, m.results.c
        with self.engine.connect() as conn:
            finished = conn.execute(
                sa.select(sa.func.count(), sa.func.max(s.finished_at)).where(s.phase == phase, s.state == "finished")
            ).one()
            cancelled = conn.execute(sa.select(sa.func.count()).where(s.phase == phase, s.state == "cancelled")).scalar()
            newest = conn.execute(sa.select(sa.func.max(r.id))).scalar()
            revealed = conn.execute(sa.select(m.phases.c.revealed_at).where(m.phases.c.name == phase)).scalar()
        return (int(finished[0]), str(finished[1]), int(cancelled or 0), newest, str(revealed))

    def results(self, submission_ids: list[int] | None = None) -> dict[int, list[dict[str, Any]]]:
        """Every stored result per submission, newest first."""
        r = m.results.c
        query = sa.select(m.results).order_by(r.id.desc())
        if submission_ids is not None:
            query = query.where(r.submission_id.in_(submission_ids))
        out: dict[int, list[dict[str, Any]]] = {}
        with self.engine.connect() as conn:
            for row in conn.execute(query):
                out.setdefault(int(row.submission_id), []).append(dict(row._mapping))
        return out

    def settled(self, submission_ids: list[int]) -> set[int]:
        """The ids among ``submission_ids`` that have an outcome (no longer pending or
        running; unknown ids too): one query, for waiting requests
        (:mod:`~averitec_tools.leaderboard.web.waits`)."""
        s = m.submissions.c
        with self.engine.connect() as conn:
            waiting = set(conn.execute(sa.select(s.id).where(s.id.in_(submission_ids), s.state.in_(("pending", "running")))).scalars())
        return {i for i in submission_ids if i not in waiting}

    def judge_snapshots(self, submission_id: int) -> dict[str, Any]:
        """The newest stored judge snapshot of the submission per profile (re-used by a rescore)."""
        r = m.results.c
        out: dict[str, Any] = {}
        query = sa.select(r.profile, r.judge_snapshot).where(r.submission_id == submission_id, r.judge_snapshot.is_not(None))
        with self.engine.connect() as conn:
            for profile, snapshot in conn.execute(query.order_by(r.id.desc())):
                if snapshot:  # a JSON null is not a snapshot
                    out.setdefault(profile, snapshot)
        return out

    def save_audit(self, submission_id: int, audit: Mapping[str, Any]) -> None:
        """Store the evidence audit of a submission (the worker, before its outcome)."""
        with self.tx() as conn:
            conn.execute(m.submissions.update().where(m.submissions.c.id == submission_id).values(audit=dict(audit)))


__all__ = ["SubmissionRecords"]
