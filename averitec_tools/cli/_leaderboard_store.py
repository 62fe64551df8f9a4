"""The leaderboard database a ``averitec leaderboard`` command opens (``--db``, else
``$AVERITEC_LEADERBOARD_DB``): a module of its own so that the leaderboard commands do not
import each other in a circle."""

from __future__ import annotations

import argparse
import os
from typing import Any

from averitec_tools.errors import UserError


def _db_default() -> str:
    return os.environ.get("AVERITEC_LEADERBOARD_DB", "sqlite:///leaderboard.db")


def _need_extra(*modules: str) -> None:
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise UserError(f"the leaderboard needs {', '.join(missing)}", hint="pip install 'averitec-tools[leaderboard]'")


def _store(args: argparse.Namespace, *, create: bool = False) -> Any:
    _need_extra("sqlalchemy", "alembic")
    from averitec_tools.leaderboard.store import Store

    return Store(args.db or _db_default(), create=create)
