"""Issue 30: teams can be removed (``averitec leaderboard team remove``).

* ``teams.removed_at``: when the organisers removed the team (``NULL``: an active team).
  A removed team keeps its row (its name stays taken, its cancelled submissions keep
  their team) but no token or session of it is accepted.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("teams") as batch:
        batch.add_column(sa.Column("removed_at", sa.DateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("teams") as batch:
        batch.drop_column("removed_at")
