"""Revoking a team's access: a new token (``team rotate-token``) or the team removed
(``team remove``).

* :func:`rotate_token` stores the hash of a new token; the old token and every session
  signed in with it stop working at once (sessions are bound to the token they were
  opened with).
* :func:`remove_team` marks the team removed (no token or session of it is accepted, its
  page is gone, its name stays taken so no one else can appear under it), gives it a
  token nobody holds, and cancels every submission of it that is not cancelled yet: they
  leave the queue and the boards and do not count against any quota, and stay in the
  database for the organisers' record (``status``, ``/admin``).

Example:
    >>> import tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> store = Store(f"sqlite:///{tempfile.mkdtemp()}/lb.db")
    >>> _ = store.init("name: demo\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]\\n", where="demo.yaml")
    >>> old = store.add_team("blue")
    >>> new = rotate_token(store, name="blue")
    >>> store.team_by_token(old), store.team_by_token(new)
    (None, 'blue')
    >>> _ = store.submit(team="blue", system="s", phase="dev", content=b"[]", file_name="p.json")
    >>> remove_team(store, name="BLUE")
    {'team': 'blue', 'removed': True, 'submissions_cancelled': 1}
    >>> store.team("blue") is None, store.team_by_token(new)
    (True, None)
"""

from __future__ import annotations

from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.db import hash_token, new_token, utcnow
from averitec_tools.leaderboard.store import Store

REMOVED_REASON = "cancelled: the team was removed by the organisers"


def _active(store: Store, name: str) -> dict[str, Any]:
    row = store.team(name)
    if row is None:
        raise UserError(f"no team {name!r}", hint="`averitec leaderboard status` lists the teams' submissions")
    return row


def rotate_token(store: Store, *, name: str) -> str:
    """Give team ``name`` a new token (returned, shown once) and revoke the old one."""
    row = _active(store, name)
    token = new_token()
    with store.tx() as conn:
        conn.execute(m.teams.update().where(m.teams.c.id == row["id"]).values(token_hash=hash_token(token)))
    return token


def remove_team(store: Store, *, name: str) -> dict[str, Any]:
    """Remove team ``name``: no access any more, its submissions cancelled (kept in the
    database). Returns ``{team, removed, submissions_cancelled}``."""
    row = _active(store, name)
    s = m.submissions.c
    with store.tx() as conn:
        conn.execute(m.teams.update().where(m.teams.c.id == row["id"]).values(removed_at=utcnow(), token_hash=hash_token(new_token())))
        cancelled = conn.execute(
            m.submissions.update()
            .where(s.team_id == row["id"], s.state != "cancelled")
            .values(state="cancelled", reason=REMOVED_REASON, charged=False, lease_until=None, finished_at=utcnow())
        ).rowcount
    return {"team": row["name"], "removed": True, "submissions_cancelled": int(cancelled or 0)}


__all__ = ["REMOVED_REASON", "remove_team", "rotate_token"]
