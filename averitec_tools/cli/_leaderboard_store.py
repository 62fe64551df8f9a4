"""The leaderboard database a ``averitec leaderboard`` command opens (``--db``, else
``$AVERITEC_LEADERBOARD_DB``): a module of its own so that the leaderboard commands do not
import each other in a circle."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from averitec_tools.errors import UserError

#: Stores opened by the running command; :func:`closing_stores` closes them when it ends.
_OPEN: list[Any] = []


def _db_default() -> str:
    return os.environ.get("AVERITEC_LEADERBOARD_DB", "sqlite:///leaderboard.db")


def _need_extra(*modules: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"the leaderboard needs {', '.join(missing)}", hint="pip install 'averitec-tools[leaderboard]'")


def _store(args: argparse.Namespace, *, create: bool = False, inputs: tuple[Any, ...] = ()) -> Any:
    """The store at ``--db``; with ``inputs`` (files the command reads) a SQLite database that
    is one of them is refused before it is opened (opening makes the file owner-only, then writes it)."""
    _need_extra("sqlalchemy", "alembic")
    from averitec_tools.leaderboard.db import sqlite_file
    from averitec_tools.leaderboard.store import Store

    url = args.db or _db_default()
    path = sqlite_file(url)
    if path is not None and inputs:
        from averitec_tools.outputs import check_not_input

        check_not_input(path, option="--db", inputs=inputs)
    store = Store(url, create=create)
    _OPEN.append(store)
    return store


def closing_stores(func: Callable[..., int]) -> Callable[..., int]:
    """``func`` closing the stores it opened when it ends: every connection closed, so SQLite
    folds its WAL into the file and removes the ``-wal``/``-shm`` files (a read of the board
    leaves nothing beside it)."""

    def run(args: Any) -> int:
        try:
            return func(args)
        finally:
            while _OPEN:
                _OPEN.pop().close()

    run.__wrapped__ = func  # type: ignore[attr-defined]
    return run


def check_secret_file(args: argparse.Namespace, *, store: Any = None, inputs: tuple[Any, ...] = ()) -> None:
    """``--secret-file`` may not be the database, a gold file or an input (a secret is written there, or made owner-only)."""
    if not getattr(args, "secret_file", None):
        return
    from averitec_tools.leaderboard.db import database_files
    from averitec_tools.outputs import check_not_input

    protected = store.protected_files() if store is not None else database_files(args.db or _db_default())
    check_not_input(args.secret_file, option="--secret-file", inputs=inputs,
                    protected=[(p, what) for p, what in protected if what != "the session secret"])
