"""The leaderboard's tables (SQLAlchemy 2 Core). Alembic migrations create them.

Every schema change gets a new revision in ``migrations/versions/``; the tables here
describe the head revision (``tests/test_leaderboard_store.py`` checks they agree).
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

competition = sa.Table(
    "competition",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
    sa.Column("yaml", sa.Text, nullable=False),
    sa.Column("admin_token_hash", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
)

phases = sa.Table(
    "phases",
    metadata,
    sa.Column("name", sa.String(40), primary_key=True),
    sa.Column("revealed_at", sa.DateTime, nullable=True),
    sa.Column("n_claims", sa.Integer, nullable=True),  # the gold file's claim count, read at init (resolution floor)
)

teams = sa.Table(
    "teams",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(100), nullable=False, unique=True),
    # NFKC + case-folded name (leaderboard.names.name_key): one team per key
    sa.Column("name_key", sa.String(100), nullable=False, unique=True),
    sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("removed_at", sa.DateTime, nullable=True),  # `team remove`: no token or session accepted
)

submissions = sa.Table(
    "submissions",
    metadata,
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
    sa.Column("reason", sa.Text, nullable=True),  # what the team sees
    sa.Column("server_reason", sa.Text, nullable=True),  # the full message, for organisers only
    sa.Column("charged", sa.Boolean, nullable=False, server_default=sa.true()),  # counts against the quota
    sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("lease_until", sa.DateTime, nullable=True),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("started_at", sa.DateTime, nullable=True),
    sa.Column("finished_at", sa.DateTime, nullable=True),
    sa.Column("audit", sa.JSON, nullable=True),  # leaderboard.audit_flags: the evidence audit (NULL: not yet)
    sa.Column("declaration", sa.JSON, nullable=True),  # the team's declaration: training data, dev claims used
    sa.Column("late", sa.Boolean, nullable=False, server_default=sa.false()),  # after the phase's deadline: never ranked
    sa.Column("fresh_judge", sa.Boolean, nullable=False, server_default=sa.false()),  # rescore: ask the judge again
    sa.Index("ix_submissions_state", "state"),
    # the same bytes are one live submission; after a failure they may be uploaded again
    sa.Index(
        "uq_submission_live_content", "team_id", "phase", "content_hash", unique=True,
        sqlite_where=sa.text("state NOT IN ('failed', 'cancelled')"),
        postgresql_where=sa.text("state NOT IN ('failed', 'cancelled')"),
    ),
)

results = sa.Table(
    "results",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
    sa.Column("profile", sa.String(40), nullable=False),
    sa.Column("scorer_version", sa.String(40), nullable=False),
    sa.Column("signature", sa.Text, nullable=False),
    sa.Column("summary", sa.JSON, nullable=False),
    sa.Column("cis", sa.JSON, nullable=False),
    sa.Column("per_claim", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime, nullable=False),
    sa.Column("judge_snapshot", sa.JSON, nullable=True),  # every judge reply the result depends on (judged profiles)
    sa.UniqueConstraint("submission_id", "profile", "scorer_version", name="uq_result_version"),
)

submission_events = sa.Table(
    "submission_events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("submission_id", sa.Integer, sa.ForeignKey("submissions.id"), nullable=False),
    sa.Column("at", sa.DateTime, nullable=False),
    sa.Column("state", sa.String(16), nullable=False),  # the state entered
    sa.Column("note", sa.Text, nullable=True),  # who or what moved it (a worker, the watchdog, a rescore)
    sa.Index("ix_submission_events_submission", "submission_id"),
)

workers = sa.Table(
    "workers",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(200), nullable=False, unique=True),  # host/server pid/slot
    sa.Column("host", sa.String(200), nullable=False),
    sa.Column("pid", sa.Integer, nullable=True),
    sa.Column("state", sa.String(16), nullable=False),  # starting | idle | scoring | restarting | stopped
    sa.Column("submission_id", sa.Integer, nullable=True),
    sa.Column("scored", sa.Integer, nullable=False, server_default="0"),
    sa.Column("restarts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("started_at", sa.DateTime, nullable=True),
    sa.Column("last_seen", sa.DateTime, nullable=True),
    sa.Column("last_exit", sa.Text, nullable=True),
)
