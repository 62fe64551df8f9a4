"""Alembic environment: runs on the connection the store hands over (online only)."""

from __future__ import annotations

from alembic import context

from averitec_tools.leaderboard.models import metadata

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
