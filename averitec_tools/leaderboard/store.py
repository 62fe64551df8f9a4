"""The leaderboard store: SQLite (WAL, one file) by default, PostgreSQL by URL.

All shared state lives in the database, so several server processes agree: quotas are
counted inside the transaction that inserts the submission (SQLite: ``BEGIN IMMEDIATE``;
PostgreSQL: the team row locked ``FOR UPDATE``), idempotence is a unique constraint on
(team, phase, content hash), and a submission's state moves only by guarded updates::

    pending ──claim──▶ running ──finish──▶ finished
                        │  └────fail────▶ failed      (invalid, time limit, retry cap)
                        └─lease expired (worker killed)─▶ pending, or failed after
                                                          ``scoring.max_attempts`` runs
    any state ──cancel (organisers)──▶ cancelled

Scores are written in the same transaction that marks a submission finished, so a crash
leaves either no result or a complete one; :meth:`Store.recover` returns submissions
whose worker stopped renewing its lease to ``pending`` (behind the fresh ones).

Quota: every submission counts (``charged``), failed ones included, so that probing
with broken files is not free; not charged are failures on the server's side (the
phase's reference file unreadable, an internal error) and organiser cancellations.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex
from averitec_tools.leaderboard import models as m
from averitec_tools.leaderboard.competition import Competition, load_competition_text
from averitec_tools.leaderboard.db import (
    create_db_engine,
    database_files,
    hash_token,
    is_read_only,
    new_token,
    schema_revision,
    upgrade_schema,
    utcnow,
)
from averitec_tools.leaderboard.events import SubmissionEvents, record
from averitec_tools.leaderboard.names import (
    check_meta,
    file_display_name,
    system_name,
)
from averitec_tools.leaderboard.phase_checks import count_gold_claims
from averitec_tools.leaderboard.queue import LIVE_STATES, SubmissionQueue
from averitec_tools.leaderboard.records import SubmissionRecords
from averitec_tools.leaderboard.team_records import TeamRecords

STATES = ("pending", "running", "finished", "failed", "cancelled")
#: States whose stored result may stand on the board (a rescore keeps the old one shown).
BOARD_STATES = ("finished", "pending", "running")


class QuotaExceeded(UserError):
    """A team has used its submissions for the day or the phase."""


class PhaseClosed(UserError):
    """The phase's deadline has passed and it refuses late submissions."""


def closed(phase: Any, *, now: Any) -> bool:
    """Whether an upload now is late (``True``: stored, marked late, never ranked); raises
    :class:`PhaseClosed` when the phase refuses uploads after its deadline."""
    if phase.deadline is None or now <= phase.deadline:
        return False
    if phase.after_deadline == "refuse":
        raise PhaseClosed(f"phase {phase.name!r} ended at {phase.deadline:%Y-%m-%d %H:%M} UTC; it takes no more submissions")
    return True


class StoreUnavailable(UserError):
    """The database refused an operation (disk full, locked, gone): the server's side.

    Its message names the database (for organisers and the CLI); the web app shows
    teams a neutral line instead."""


@dataclass(frozen=True)
class NewSubmission:
    """What :meth:`Store.submit` returns: the row id, whether it was new, and whether the
    same bytes had failed before (then they are scored again)."""

    id: int
    created: bool
    state: str
    again: bool = False


class Store(SubmissionQueue, SubmissionRecords, TeamRecords, SubmissionEvents):
    """Access to one leaderboard database.

    Args:
        url: SQLAlchemy URL (``sqlite:///file.db`` or ``postgresql+psycopg://...``).
        create: Whether a missing SQLite file may be created (``init``); otherwise a
            missing file is a :class:`UserError` saying to run ``init`` (or to pass the
            ``--db`` it used) instead of an empty database appearing.

    Example:
        >>> import tempfile, os
        >>> d = tempfile.mkdtemp()
        >>> yaml_text = "name: demo\\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]\\n"
        >>> store = Store(f"sqlite:///{d}/lb.db")
        >>> admin = store.init(yaml_text, where="demo.yaml")
        >>> token = store.add_team("blue")
        >>> store.submit(team="blue", system="s1", phase="dev", content=b"[]", file_name="p.json").created
        True
        >>> store.submit(team="blue", system="s1", phase="dev", content=b"[]", file_name="p.json").created
        False
    """

    def __init__(self, url: str, *, create: bool = True) -> None:
        self.url = url
        self.engine = create_db_engine(url, create=create)
        self.is_postgres = self.engine.dialect.name == "postgresql"
        self._competition: Competition | None = None

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def tx(self) -> Iterator[sa.Connection]:
        """One transaction (IMMEDIATE on SQLite)."""
        if is_read_only(self.engine):
            raise UserError(f"{self.url}: the database is read-only (this process cannot write the file or its folder); "
                            "only show, status and export work on it", hint="use a writable copy of the board")
        try:
            with self.engine.begin() as conn:
                yield conn
        except sa.exc.OperationalError as exc:
            raise StoreUnavailable(f"database {self.engine.url.render_as_string(hide_password=True)}: {exc.orig}") from None

    def check_writable(self) -> None:
        """Raise unless the database takes writes (a server that cannot record submissions
        must not start): a no-op update in a transaction that is rolled back.

        Raises:
            UserError: A read-only database file, folder or role, one line naming it.
        """
        if is_read_only(self.engine):
            raise UserError(f"{self.url}: the database is read-only (this process cannot write the file or its folder)",
                            hint="the server records submissions and scores: give it a database (file, folder or role) it can write")
        try:
            with self.engine.connect() as conn, conn.begin() as tx:
                conn.execute(m.competition.update().values(name=m.competition.c.name))
                tx.rollback()
        except sa.exc.DBAPIError as exc:
            first = (str(exc.orig).strip().splitlines() or ["not writable"])[0]
            raise UserError(f"{self.engine.url.render_as_string(hide_password=True)}: the database is read-only "
                            f"({first})", hint="the server records submissions and scores: give it a database "
                            "(file, folder or role) it can write") from None

    # ------------------------------------------------------------------ competition

    def init(self, yaml_text: str, *, where: str) -> str | None:
        """Create or update the schema and store the competition; returns a new admin
        token the first time (``None`` when the database already had a competition)."""
        comp = load_competition_text(yaml_text, where=where)
        upgrade_schema(self.engine)
        token = None
        with self.tx() as conn:
            row = conn.execute(sa.select(m.competition.c.id)).first()
            if row is None:
                token = new_token()
                conn.execute(
                    m.competition.insert().values(
                        id=1, name=comp.name, yaml=yaml_text, admin_token_hash=hash_token(token), created_at=utcnow()
                    )
                )
            else:
                conn.execute(m.competition.update().values(name=comp.name, yaml=yaml_text))
            known = set(conn.execute(sa.select(m.phases.c.name)).scalars())
            for phase in comp.phases:
                n_claims = count_gold_claims(phase.gold)  # the resolution floor is stated before any submission
                if phase.name not in known:
                    conn.execute(m.phases.insert().values(name=phase.name, n_claims=n_claims))
                elif n_claims is not None:
                    conn.execute(m.phases.update().where(m.phases.c.name == phase.name).values(n_claims=n_claims))
        self._competition = comp
        return token

    def competition(self) -> Competition:
        """The stored competition (UserError if ``init`` has not run)."""
        if self._competition is None:
            try:
                with self.engine.connect() as conn:
                    row = conn.execute(sa.select(m.competition.c.yaml)).first()
            except (sa.exc.OperationalError, sa.exc.ProgrammingError) as exc:
                if "no such table" not in str(exc.orig) and "does not exist" not in str(exc.orig):
                    raise UserError(f"{self.url}: cannot read the leaderboard database ({str(exc.orig).strip().splitlines()[0]})") from None
                row = None
            except sa.exc.DatabaseError as exc:
                raise UserError(f"{self.url}: not a leaderboard database ({str(exc.orig).strip().splitlines()[0]})") from None
            if row is None:
                raise UserError(f"{self.url}: no competition here", hint="run `averitec leaderboard init COMPETITION.yaml` first")
            # env="optional": listing or ranking needs no ${VAR} of the gold paths (scoring checks the file)
            self._competition = load_competition_text(row[0], where=f"{self.url} (stored competition)", env="optional")
        return self._competition

    def protected_files(self) -> list[tuple[str, str]]:
        """Files no command of this board may write over, with what they are: the database
        (and its WAL files), every phase's gold file, the session secret beside it."""
        from averitec_tools.leaderboard.secret import secret_path

        out = [(str(p), what) for p, what in database_files(self.url)]
        out += [(p.gold, f"the gold file of phase {p.name!r}") for p in self.competition().phases]
        return out + [(str(secret_path(self.url)), "the session secret")]

    def check_admin(self, token: str | None) -> bool:
        if not token:
            return False
        with self.engine.connect() as conn:
            stored = conn.execute(sa.select(m.competition.c.admin_token_hash)).scalar()
        return stored is not None and secrets.compare_digest(stored, hash_token(token))

    def phase_claims(self, phase: str) -> int | None:
        """The phase's claim count as read from its gold file at ``init`` (``None``: unread)."""
        with self.engine.connect() as conn:
            n = conn.execute(sa.select(m.phases.c.n_claims).where(m.phases.c.name == phase)).scalar()
        return None if n is None else int(n)

    def revealed(self, phase: str) -> bool:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(m.phases.c.revealed_at).where(m.phases.c.name == phase)).scalar() is not None

    def reveal(self, phase: str) -> None:
        """End ``phase``: private scores and hidden boards become visible."""
        self.competition().phase(phase)
        with self.tx() as conn:
            conn.execute(m.phases.update().where(m.phases.c.name == phase).values(revealed_at=utcnow()))

    # ------------------------------------------------------------------ submissions

    def submit(
        self,
        *,
        team: str,
        system: str,
        phase: str,
        content: bytes,
        file_name: str,
        meta: Mapping[str, str] | None = None,
        declaration: Mapping[str, str] | None = None,
    ) -> NewSubmission:
        """Store a submission as ``pending``; the same bytes again return the same row,
        unless it failed or was cancelled: then they are a new submission, scored again.

        Raises:
            UserError: an empty file, an invalid system name, metadata keys outside the
                competition's ``disclosure`` list or invalid values, unknown team/phase.
            QuotaExceeded: the team's limits are used up.

        ``declaration`` (checked by :func:`~averitec_tools.leaderboard.audit_flags.check_declaration`) is stored with it.
        """
        comp = self.competition()
        late = closed(comp.phase(phase), now=utcnow())
        system = system_name(system)
        display_name = file_display_name(file_name)
        if not content.strip():
            raise UserError(f"{display_name}: the file is empty")
        meta = check_meta(meta or {}, allowed=comp.disclosure)
        digest = sha256_hex(content)
        with self.tx() as conn:
            team_id = self._team_id(conn, team, lock=True)
            twins = self._twins(conn, team_id=team_id, phase=phase, digest=digest)
            live = [t for t in twins if t.state in LIVE_STATES]
            if live:
                return NewSubmission(int(live[0].id), False, live[0].state)
            self._check_quota(team, phase, conn)
            inserted = conn.execute(
                m.submissions.insert().values(
                    team_id=team_id,
                    phase=phase,
                    system=system,
                    content_hash=digest,
                    file_name=display_name,
                    size=len(content),
                    content=content,
                    meta=meta,
                    declaration=dict(declaration) if declaration else None,
                    late=late,
                    state="pending",
                    attempts=0,
                    charged=True,
                    created_at=utcnow(),
                )
            )
            new_id = int(inserted.inserted_primary_key[0])  # type: ignore[index]
            record(conn, new_id, "pending", "uploaded" + (" again after a failure" if twins else ""))
        self.queued()  # after the commit: a woken worker finds it
        return NewSubmission(new_id, True, "pending", again=bool(twins))

    @staticmethod
    def _twins(conn: sa.Connection, *, team_id: int, phase: str, digest: str) -> Sequence[sa.Row[int, str]]:
        """The team's earlier submissions of the same bytes (SHA-256 ``digest``) to ``phase``: their ids and states."""
        s = m.submissions.c
        return conn.execute(sa.select(s.id, s.state).where(s.team_id == team_id, s.phase == phase, s.content_hash == digest)).all()

    def _check_quota(self, team: str, phase: str, conn: sa.Connection) -> None:
        q = self.quota(team, phase, conn)
        if q["left_today"] == 0:
            raise QuotaExceeded(f"team {team!r} has used its {q['limit_per_day']} submissions for today in phase {phase!r}")
        if q["left_total"] == 0:
            raise QuotaExceeded(f"team {team!r} has used all {q['limit_total']} submissions of phase {phase!r}")

    def content(self, submission_id: int) -> bytes:
        with self.engine.connect() as conn:
            return bytes(conn.execute(sa.select(m.submissions.c.content).where(m.submissions.c.id == submission_id)).scalar_one())

    def submission(self, submission_id: int) -> dict[str, Any] | None:
        rows = self.submissions(submission_id=submission_id)
        return rows[0] if rows else None

    def submissions(
        self, *, phase: str | None = None, team: str | None = None, state: str | tuple[str, ...] | None = None,
        submission_id: int | None = None,
    ) -> list[dict[str, Any]]:
        """Submission rows (without content) joined with their team, oldest first."""
        s, t = m.submissions.c, m.teams.c
        cols = [c for c in m.submissions.c if c.name != "content"]
        query = sa.select(*cols, t.name.label("team")).join(m.teams, t.id == s.team_id).order_by(s.id)
        if team is not None:
            row = self.team(team)
            query = query.where(t.id == (row["id"] if row else None))
        for col, value in ((s.phase, phase), (s.state, state), (s.id, submission_id)):
            if value is not None:
                query = query.where(col.in_(value) if isinstance(value, (tuple, list)) else col == value)
        with self.engine.connect() as conn:
            return [dict(row._mapping) for row in conn.execute(query)]


__all__ = [
    "BOARD_STATES",
    "LIVE_STATES",
    "STATES",
    "NewSubmission",
    "PhaseClosed",
    "QuotaExceeded",
    "StoreUnavailable",
    "Store",
    "create_db_engine",
    "hash_token",
    "schema_revision",
    "upgrade_schema",
    "utcnow",
]
