"""Database plumbing of the leaderboard store: engines, SQLite settings, migrations, tokens."""

from __future__ import annotations

import datetime as dt
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex


def utcnow() -> dt.datetime:
    """Naive UTC now (both back-ends store naive UTC timestamps)."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def hash_token(token: str) -> str:
    """SHA-256 of a token; only hashes are stored.

    Example:
        >>> len(hash_token("abc"))
        64
    """
    return sha256_hex(token)


def new_token() -> str:
    return secrets.token_urlsafe(24)


#: The database holds every team's uploaded predictions: owner-only, like an SSH key.
DB_FILE_MODE = 0o600


def secure_sqlite_file(path: Path) -> None:
    """Create the SQLite file owner-only (SQLite gives its ``-wal``/``-shm`` files the
    same mode), and take group/other permissions off an existing one and its WAL files.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "lb.db"
        >>> secure_sqlite_file(p)
        >>> oct(p.stat().st_mode & 0o777)
        '0o600'
    """
    if not path.exists():
        try:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, DB_FILE_MODE))
        except OSError as exc:
            raise UserError(f"--db: cannot create {path} ({exc.strerror})") from None
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
        try:
            st = candidate.stat()
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077 and st.st_uid == os.geteuid():
                os.chmod(candidate, stat.S_IMODE(st.st_mode) & ~0o077)
        except OSError:
            continue


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


def create_db_engine(url: str, *, create: bool = True) -> sa.Engine:
    """An engine for ``url``; SQLite gets WAL, a busy timeout and IMMEDIATE transactions,
    and its file is owner-only (:func:`secure_sqlite_file`). Without ``create`` a missing
    SQLite file is a :class:`UserError`."""
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
            if not create and not Path(parsed.database).exists():
                raise UserError(
                    f"--db {url}: no leaderboard database here",
                    hint="run `averitec leaderboard init COMPETITION.yaml --db URL` first, or pass the --db "
                    "(or $AVERITEC_LEADERBOARD_DB) that init used",
                )
            secure_sqlite_file(Path(parsed.database))
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
    """Bring the database to the newest migration (a no-op when it is there).

    On SQLite, foreign keys are off while migrating (a batch migration drops a table that
    other rows reference and renames its copy into place) and checked afterwards.
    """
    from alembic import command

    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        raw: Any = conn.connection.driver_connection
        if sqlite:
            raw.execute("PRAGMA foreign_keys=OFF")  # outside a transaction, where it takes effect
        try:
            with conn.begin():
                command.upgrade(_alembic_config(conn), "head")
            if sqlite and raw.execute("PRAGMA foreign_key_check").fetchall():
                raise UserError(f"{engine.url}: the schema migration left rows whose references are broken")
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")


def schema_revision(engine: sa.Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


__all__ = ["create_db_engine", "hash_token", "new_token", "schema_revision", "upgrade_schema", "utcnow"]
