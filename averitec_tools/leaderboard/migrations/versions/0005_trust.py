"""Issue 39: timestamps on every state change, late submissions, judge snapshots, claim counts.

* ``submission_events``: one row per state change of a submission (``pending`` on upload,
  ``running`` when a worker takes it, ``finished``/``failed``/``cancelled``, ``pending``
  again when it is re-queued), with its time and a note (the worker, the watchdog's
  reason, the organisers' rescore). Existing submissions get the events their timestamps
  already tell (upload, start, end).
* ``submissions.late``: uploaded after its phase's deadline under ``after_deadline: late``
  (shown apart, never ranked); false for every earlier row.
* ``submissions.fresh_judge``: the organisers asked for a fresh judge when they queued it
  again (``rescore --fresh-judge``); otherwise its stored judge replies are re-used.
* ``results.judge_snapshot``: every judge reply the result depends on, with the judge's
  model, endpoint, prompt hashes and settings (:class:`averitec_tools.metrics.judge_policy.JudgeSnapshot`);
  ``NULL`` for a profile without a judge.
* ``phases.n_claims``: the phase's claim count, read from its gold file at ``init`` (the
  resolution floor is stated before any submission).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submission_events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("at", sa.DateTime, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text, nullable=True),
    )
    op.create_index("ix_submission_events_submission", "submission_events", ["submission_id"])
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("late", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("fresh_judge", sa.Boolean, nullable=False, server_default=sa.false()))
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("judge_snapshot", sa.JSON, nullable=True))
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("n_claims", sa.Integer, nullable=True))
    # the events the existing timestamps already tell (copied in SQL: the values keep their type on both back-ends)
    op.execute("INSERT INTO submission_events (submission_id, at, state, note) "
               "SELECT id, created_at, 'pending', 'uploaded (before events were kept)' FROM submissions")
    op.execute("INSERT INTO submission_events (submission_id, at, state, note) "
               "SELECT id, started_at, 'running', NULL FROM submissions WHERE started_at IS NOT NULL")
    op.execute("INSERT INTO submission_events (submission_id, at, state, note) SELECT id, finished_at, state, NULL "
               "FROM submissions WHERE finished_at IS NOT NULL AND state IN ('finished', 'failed', 'cancelled')")


def downgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("n_claims")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("judge_snapshot")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("fresh_judge")
        batch.drop_column("late")
    op.drop_index("ix_submission_events_submission", table_name="submission_events")
    op.drop_table("submission_events")
