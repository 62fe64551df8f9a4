"""Database plumbing of the leaderboard store: engines, SQLite settings, migrations, tokens."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from averitec_tools.errors import UserError


def utcnow() -> dt.datetime:
    """Naive UTC now (both back-ends store naive UTC timestamps)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def hash_token(token: str) -> str:
    """SHA-256 of a token; only hashes are stored.

    Example:
        >>> len(hash_token("abc"))
        64
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(24)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we issue BEGIN ourselves
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def _sqlite_begin(conn: Any) -> None:
    # IMMEDIATE takes the write lock at BEGIN: read-then-write transactions (quota
    # checks, claiming a job) cannot interleave between processes.
    conn.exec_driver_sql("BEGIN IMMEDIATE")


def create_db_engine(url: str) -> sa.Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and IMMEDIATE transactions."""
    from sqlalchemy import event

    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        raise UserError(f"--db: not a database URL: {url!r} (e.g. sqlite:///leaderboard.db)") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            parent = Path(parsed.database).parent
            if not parent.is_dir():
                raise UserError(f"--db: folder {parent} does not exist")
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        return engine
    try:
        return sa.create_engine(url, pool_pre_ping=True)
    except (ImportError, sa.exc.NoSuchModuleError) as exc:
        raise UserError(f"--db: cannot use {parsed.drivername} ({exc})", hint="pip install 'averitec-tools[leaderboard]'") from None


def _alembic_config(connection: sa.Connection) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    cfg.attributes["connection"] = connection
    return cfg


def upgrade_schema(engine: sa.Engine) -> None:
    """Bring the database to the newest migration (a no-op when it is there)."""
    from alembic import command

    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "head")


def schema_revision(engine: sa.Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


__all__ = ["create_db_engine", "hash_token", "new_token", "schema_revision", "upgrade_schema", "utcnow"]
