"""The server secret that signs session cookies, in a file of its own, apart from the
database: read access to the database (a backup, a leaked dump) is not enough to forge
a session.

The file holds 64 hexadecimal characters (256 random bits), is created owner-only
(``0600``) by ``init`` and ``serve`` when it is absent (a wider mode is tightened), and
is replaced atomically by ``averitec leaderboard secret rotate``, which ends every
session: each server process reads the file again when it changes. Its path:
``--secret-file``, else ``$AVERITEC_LEADERBOARD_SECRET_FILE``, else next to a SQLite
database (``lb.db`` → ``lb.db.secret``), else (PostgreSQL)
``$XDG_CONFIG_HOME/averitec-tools/leaderboard-<hash of the URL>.secret``. Several server
processes on one database must share the file.

Example:
    >>> import tempfile, os
    >>> path = secret_path("sqlite:///" + tempfile.mkdtemp() + "/lb.db")
    >>> path.name
    'lb.db.secret'
    >>> key = SecretKey(path)
    >>> len(key.current()), oct(path.stat().st_mode & 0o777)
    (32, '0o600')
    >>> old = key.current()
    >>> rotate_secret(path)
    >>> key.current() != old
    True
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex

SECRET_ENV = "AVERITEC_LEADERBOARD_SECRET_FILE"


def secret_path(url: str, explicit: str | os.PathLike[str] | None = None) -> Path:
    """Where the secret of the database at ``url`` lives (see the module docstring).

    Example:
        >>> str(secret_path("sqlite:////srv/lb/lb.db", explicit="/etc/lb.secret"))
        '/etc/lb.secret'
    """
    if explicit:
        return Path(explicit)
    if os.environ.get(SECRET_ENV):
        return Path(os.environ[SECRET_ENV])
    import sqlalchemy as sa

    parsed = sa.engine.make_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        return Path(parsed.database + ".secret")
    where = sha256_hex(parsed.render_as_string(hide_password=True), length=16)
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "averitec-tools" / f"leaderboard-{where}.secret"


def _parse(path: Path, text: str) -> bytes:
    text = text.strip()
    if len(text) < 64 or any(c not in "0123456789abcdef" for c in text):
        raise UserError(f"{path}: not a leaderboard secret (64 hexadecimal characters)",
                        hint="remove the file (every session ends) or run `averitec leaderboard secret rotate`")
    return bytes.fromhex(text[:64])


def _write_new(path: Path, *, exclusive: bool) -> None:
    """A new secret in ``path``, published whole (a temporary file, then a link or rename),
    so that another process never reads half a secret; ``exclusive``: only if absent."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        if exclusive:
            os.link(tmp, path)  # FileExistsError when another process was first
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def ensure_secret(path: Path) -> bytes:
    """The secret in ``path``, created (``0600``) if absent; a wider mode is tightened."""
    try:
        _write_new(path, exclusive=True)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UserError(f"{path}: cannot create the leaderboard secret ({exc.strerror})", hint="pass --secret-file PATH") from None
    try:
        if path.stat().st_mode & 0o077:
            path.chmod(0o600)
        return _parse(path, path.read_text(encoding="ascii", errors="replace"))
    except OSError as exc:
        raise UserError(f"{path}: cannot read the leaderboard secret ({exc.strerror})") from None


def rotate_secret(path: Path) -> None:
    """Replace the secret in ``path`` by a new one (atomically): every session ends."""
    try:
        _write_new(path, exclusive=False)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the leaderboard secret ({exc.strerror})") from None


class SecretKey:
    """The secret of ``path``, read again whenever the file changes (a rotation)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._key = ensure_secret(path)

    def current(self) -> bytes:
        try:
            st = self.path.stat()
            seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            seen = None
        with self._lock:
            if seen != self._seen:
                self._key = ensure_secret(self.path)
                self._seen = seen
            return self._key


__all__ = ["SecretKey", "ensure_secret", "rotate_secret", "secret_path"]
