"""Teams and quotas: a part of :class:`~averitec_tools.leaderboard.store.Store`.

:class:`TeamRecords` adds teams (names as :mod:`averitec_tools.leaderboard.names` compares
them: ``blue``, ``BLUE`` and ``ｂｌｕｅ`` are one team, a look-alike is refused), finds them
by token, name or id, and counts a team's charged submissions against its phase limits.

Example:
    >>> import tempfile
    >>> from averitec_tools.leaderboard.store import Store
    >>> store = Store(f"sqlite:///{tempfile.mkdtemp()}/lb.db")
    >>> _ = store.init("name: d\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy, limits: {total: 3}}]",
    ...                where="d.yaml")
    >>> token = store.add_team("blue")
    >>> store.team_by_token(token), store.team("BLUE")["name"], store.quota("blue", "dev")["left_total"]
    ('blue', 'blue', 3)
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from averitec_tools.errors import UserError
from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.db import hash_token, new_token, utcnow
from averitec_tools.leaderboard.names import confusable_with, name_key, team_name

if TYPE_CHECKING:
    from averitec_tools.leaderboard.competition import Competition


class TeamRecords:
    """Team rows and quotas of a store (mixed into :class:`~averitec_tools.leaderboard.store.Store`)."""

    engine: sa.Engine
    is_postgres: bool

    def tx(self) -> AbstractContextManager[sa.Connection]:  # provided by Store
        raise NotImplementedError

    def competition(self) -> Competition:  # provided by Store
        raise NotImplementedError

    def add_team(self, name: str) -> str:
        """Create a team and return its token (shown once; only its hash is stored).

        Names follow :mod:`averitec_tools.leaderboard.names`; ``blue``, ``BLUE`` and
        ``ｂｌｕｅ`` are the same name, and a look-alike of an existing team (``bIue``)
        is refused.
        """
        name = team_name(name)
        key = name_key(name)
        token = new_token()
        try:
            with self.tx() as conn:
                taken = conn.execute(sa.select(m.teams.c.name).where(m.teams.c.name_key == key)).scalar()
                if taken is not None:
                    raise UserError(f"team {name!r} already exists" + (f" (as {taken!r}; names are compared case- and width-insensitively)" if taken != name else ""))
                similar = confusable_with(name, conn.execute(sa.select(m.teams.c.name)).scalars())
                if similar is not None:
                    raise UserError(f"team name {name!r} looks like the existing team {similar!r} (Unicode confusables)",
                                    hint="choose a name that does not read as another team's")
                conn.execute(m.teams.insert().values(name=name, name_key=key, token_hash=hash_token(token), created_at=utcnow()))
        except sa.exc.IntegrityError:
            raise UserError(f"team {name!r} already exists") from None
        return token

    def team_by_token(self, token: str) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(
                sa.select(m.teams.c.name).where(m.teams.c.token_hash == hash_token(token), m.teams.c.removed_at.is_(None))
            ).scalar()

    def team_by_id(self, team_id: int) -> dict[str, Any] | None:
        """``{id, name, token_hash}`` of team ``team_id`` (``None`` if there is none)."""
        t = m.teams.c
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.id, t.name, t.token_hash).where(t.id == team_id, t.removed_at.is_(None))).first()
        return dict(row._mapping) if row is not None else None

    def admin_token_hash(self) -> str:
        with self.engine.connect() as conn:
            return str(conn.execute(sa.select(m.competition.c.admin_token_hash)).scalar() or "")

    def team(self, name: str) -> dict[str, Any] | None:
        """The team called ``name`` (compared as :func:`~averitec_tools.leaderboard.names.name_key`
        does), as ``{id, name, token_hash}``; ``None`` for no such team, a removed one or an invalid name."""
        try:
            key = name_key(team_name(name))
        except UserError:
            return None
        t = m.teams.c
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.id, t.name, t.token_hash).where(t.name_key == key, t.removed_at.is_(None))).first()
        return dict(row._mapping) if row is not None else None

    def _team_id(self, conn: sa.Connection, team: str, *, lock: bool = False) -> int:
        try:
            key = name_key(team_name(team))
        except UserError:
            key = None
        query = sa.select(m.teams.c.id).where(m.teams.c.name_key == key, m.teams.c.removed_at.is_(None))
        if lock and self.is_postgres:
            query = query.with_for_update()
        team_id = conn.execute(query).scalar()
        if team_id is None:
            raise UserError(f"unknown team {team!r}", hint="add it with `averitec leaderboard team add NAME`")
        return int(team_id)

    def quota(self, team: str, phase: str, conn: sa.Connection | None = None) -> dict[str, Any]:
        """Submissions used and left today (UTC) and in total: every charged submission
        (failed ones too; see the module docstring)."""
        limits = self.competition().phase(phase).limits
        day_start = utcnow().replace(hour=0, minute=0, second=0, microsecond=0)

        def count(c: sa.Connection) -> tuple[int, int]:
            s = m.submissions.c
            base = sa.select(sa.func.count()).where(s.team_id == self._team_id(c, team), s.phase == phase, s.charged.is_(True))
            return int(c.execute(base).scalar() or 0), int(c.execute(base.where(s.created_at >= day_start)).scalar() or 0)

        if conn is None:
            with self.engine.connect() as c:
                total, today = count(c)
        else:
            total, today = count(conn)
        return {
            "used_total": total,
            "used_today": today,
            "limit_total": limits.total,
            "limit_per_day": limits.per_day,
            "left_total": None if limits.total is None else max(0, limits.total - total),
            "left_today": None if limits.per_day is None else max(0, limits.per_day - today),
        }


__all__ = ["TeamRecords"]
