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


#: The first 16 bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL (``None``: another back-end, or in memory).

    Example:
        >>> sqlite_file("sqlite:////srv/lb.db"), sqlite_file("postgresql+psycopg://u@h/db")
        (PosixPath('/srv/lb.db'), None)
    """
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def database_files(url: str) -> list[tuple[Path, str]]:
    """The files of the database at ``url`` that no command may write over, with what they
    are (``--out``, ``--secret-file`` ... are checked against them; see
    :func:`averitec_tools.outputs.check_output_file`).

    Example:
        >>> [p.name for p, _ in database_files("sqlite:////srv/lb.db")]
        ['lb.db', 'lb.db-wal', 'lb.db-shm', 'lb.db-journal']
    """
    path = sqlite_file(url)
    if path is None:
        return []
    return [(path, "the leaderboard database")] + [(Path(f"{path}{s}"), "a file of the leaderboard database")
                                                  for s in ("-wal", "-shm", "-journal")]


def _writable(path: Path) -> bool:
    """Whether this process may write the SQLite file and create its WAL files beside it."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)


def _check_sqlite(engine: sa.Engine, url: str) -> sa.Engine:
    """``engine`` once SQLite has opened its file: a file that is not an SQLite database (a CSV
    written over it, ...) is one line, not a traceback. SQLite itself reads the header: a
    second handle on the file, opened and closed here, would drop this process's POSIX locks
    on it and let another process delete the WAL under a live connection."""
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SELECT count(*) FROM sqlite_master")
    except sa.exc.DatabaseError as exc:
        first = (str(exc.orig).strip().splitlines() or ["unreadable"])[0]
        engine.dispose()
        if "not a database" in first or "malformed" in first:
            raise UserError(f"--db {url}: {sqlite_file(url)} is not a leaderboard database (not an SQLite file)",
                            hint="restore the board from a backup, or pass the --db that `init` used") from None
        raise UserError(f"--db {url}: cannot open the database ({first})") from None
    return engine


def is_read_only(engine: sa.Engine) -> bool:
    """Whether ``engine`` was opened read-only (a SQLite file this process cannot write)."""
    return bool(getattr(engine, "averitec_read_only", False))


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
        path, existed = sqlite_file(url), False
        if path is not None:
            if not path.parent.is_dir():
                raise UserError(f"--db: folder {path.parent} does not exist")
            if not create and not path.exists():
                raise UserError(
                    f"--db {url}: no leaderboard database here",
                    hint="run `averitec leaderboard init COMPETITION.yaml --db URL` first, or pass the --db "
                    "(or $AVERITEC_LEADERBOARD_DB) that init used",
                )
            if path.exists() and not _writable(path):
                return _check_sqlite(_read_only_engine(path), url)
            existed = path.exists()
            if not existed:
                secure_sqlite_file(path)  # created owner-only
        engine = sa.create_engine(url, connect_args={"check_same_thread": False, "timeout": 60})
        event.listen(engine, "connect", _sqlite_pragmas)
        event.listen(engine, "begin", _sqlite_begin)
        _check_sqlite(engine, url)
        if path is not None and existed:
            secure_sqlite_file(path)  # tightened only once SQLite has found a database in it
        return engine
    try:
        return sa.create_engine(url, pool_pre_ping=True)
    except (ImportError, sa.exc.NoSuchModuleError) as exc:
        raise UserError(f"--db: cannot use {parsed.drivername} ({exc})", hint="pip install 'averitec-tools[leaderboard]'") from None


def _read_only_engine(path: Path) -> sa.Engine:
    """A read-only copy of a board (an archive, a file this process may not write): opened
    ``immutable`` -- SQLite takes no locks and needs no WAL files beside it, which a
    read-only folder could not hold -- so ``show``, ``status`` and ``export`` work, and every
    write is refused as read-only (:class:`~averitec_tools.leaderboard.store.Store` says so)."""
    from urllib.parse import quote

    wal = Path(f"{path}-wal")
    if wal.is_file() and wal.stat().st_size > 0:  # immutable would not read it: refuse rather than show an old board
        raise UserError(f"--db {path}: the read-only database has changes in {wal.name} that are not in the file yet",
                        hint=f"copy a board while no server runs on it, or with: sqlite3 {path.name} '.backup COPY.db'")
    engine = sa.create_engine(f"sqlite:///file:{quote(str(path.resolve()))}?mode=ro&immutable=1&uri=true",
                              connect_args={"check_same_thread": False})
    engine.averitec_read_only = True  # type: ignore[attr-defined]
    return engine


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


__all__ = ["create_db_engine", "database_files", "hash_token", "is_read_only", "new_token", "schema_revision", "sqlite_file",
           "upgrade_schema", "utcnow"]
