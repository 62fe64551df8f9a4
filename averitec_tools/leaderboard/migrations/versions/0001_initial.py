"""Initial leaderboard schema.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "competition",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("yaml", sa.Text, nullable=False),
        sa.Column("admin_token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "phases",
        sa.Column("name", sa.String(40), primary_key=True),
        sa.Column("revealed_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("team_id", sa.Integer, sa.ForeignKey("teams.id"), nullable=False),
        sa.Column("phase", sa.String(40), sa.ForeignKey("phases.name"), nullable=False),
        sa.Column("system", sa.String(200), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("file_name", sa.String(200), nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("content", sa.LargeBinary, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("lease_until", sa.DateTime, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("started_at", sa.DateTime, nullable=True),
        sa.Column("finished_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("team_id", "phase", "content_hash", name="uq_submission_content"),
    )
    op.create_index("ix_submissions_state", "submissions", ["state"])
    op.create_table(
        "results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
        sa.Column("profile", sa.String(40), nullable=False),
        sa.Column("scorer_version", sa.String(40), nullable=False),
        sa.Column("signature", sa.Text, nullable=False),
        sa.Column("summary", sa.JSON, nullable=False),
        sa.Column("cis", sa.JSON, nullable=False),
        sa.Column("per_claim", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.UniqueConstraint("submission_id", "profile", "scorer_version", name="uq_result_version"),
    )


def downgrade() -> None:
    op.drop_table("results")
    op.drop_index("ix_submissions_state", table_name="submissions")
    op.drop_table("submissions")
    op.drop_table("teams")
    op.drop_table("phases")
    op.drop_table("competition")
