"""Issue 28: audit flags and the team's declaration per submission.

* ``submissions.audit``: the leakage audit of the submission's evidence
  (:mod:`averitec_tools.leaderboard.audit_flags`: per rule, the flagged evidence count per
  claim id and a bounded sample of rows; or why it was not audited). ``NULL``: not audited
  yet (scored before this revision, or still pending).
* ``submissions.declaration``: what the team declared on upload (the training data, whether
  any dev claim was used); ``NULL``: nothing declared.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("audit", sa.JSON, nullable=True))
        batch.add_column(sa.Column("declaration", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("declaration")
        batch.drop_column("audit")
