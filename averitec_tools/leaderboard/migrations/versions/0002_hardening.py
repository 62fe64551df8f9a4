"""Issue 19: team-safe failure reasons, quota charging, re-upload after failure, team
name keys, worker health.

* ``submissions.server_reason`` (the full failure message, organisers only) and
  ``submissions.charged`` (whether the submission counts against the quota);
* the unique (team, phase, content hash) constraint becomes a partial unique index over
  live submissions (not failed or cancelled), so the same bytes may be uploaded again
  after a failure;
* ``teams.name_key``: the NFKC + case-folded name, unique (existing names that collide
  under it keep distinct keys, suffixed with their id);
* the ``workers`` table (one row per supervised worker slot).

On SQLite the batch operations copy a table and drop the old one, so they run with
foreign keys off (``db.upgrade_schema`` turns them off around the migration and checks
them afterwards).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import unicodedata

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

_LIVE = "state NOT IN ('failed', 'cancelled')"


def _key(name: str) -> str:  # frozen copy of leaderboard.names.name_key at this revision
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("server_reason", sa.Text, nullable=True))
        batch.add_column(sa.Column("charged", sa.Boolean, nullable=False, server_default=sa.true()))
        batch.drop_constraint("uq_submission_content", type_="unique")
    op.create_index(
        "uq_submission_live_content", "submissions", ["team_id", "phase", "content_hash"], unique=True,
        sqlite_where=sa.text(_LIVE), postgresql_where=sa.text(_LIVE),
    )
    # Failure reasons recorded before this revision could name server paths and facts of
    # the gold file: they become the organisers' copy, teams see a neutral line. Those
    # failures did not count against the quota then, and do not now.
    op.execute(
        "UPDATE submissions SET server_reason = reason, "
        "reason = 'failed (recorded before the server was upgraded; the organisers have the reason)' "
        "WHERE reason IS NOT NULL"
    )
    op.execute("UPDATE submissions SET charged = false WHERE state = 'failed'")

    with op.batch_alter_table("teams") as batch:
        batch.add_column(sa.Column("name_key", sa.String(100), nullable=True))
    conn = op.get_bind()
    teams = sa.table("teams", sa.column("id", sa.Integer), sa.column("name", sa.String), sa.column("name_key", sa.String))
    seen: set[str] = set()
    for team_id, name in conn.execute(sa.select(teams.c.id, teams.c.name).order_by(teams.c.id)).all():
        key = _key(name)[:100]
        if key in seen:
            key = f"{key[:90]}#{team_id}"
        seen.add(key)
        conn.execute(teams.update().where(teams.c.id == team_id).values(name_key=key))
    with op.batch_alter_table("teams") as batch:
        batch.alter_column("name_key", existing_type=sa.String(100), nullable=False)
        batch.create_unique_constraint("uq_teams_name_key", ["name_key"])

    op.create_table(
        "workers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("pid", sa.Integer, nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("submission_id", sa.Integer, nullable=True),
        sa.Column("scored", sa.Integer, nullable=False, server_default="0"),
        sa.Column("restarts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("started_at", sa.DateTime, nullable=True),
        sa.Column("last_seen", sa.DateTime, nullable=True),
        sa.Column("last_exit", sa.Text, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("workers")
    with op.batch_alter_table("teams") as batch:
        batch.drop_constraint("uq_teams_name_key", type_="unique")
        batch.drop_column("name_key")
    op.drop_index("uq_submission_live_content", table_name="submissions")
    with op.batch_alter_table("submissions") as batch:
        batch.create_unique_constraint("uq_submission_content", ["team_id", "phase", "content_hash"])
        batch.drop_column("charged")
        batch.drop_column("server_reason")
