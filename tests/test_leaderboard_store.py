"""Store on SQLite and PostgreSQL: migrations, idempotence, quotas, the state machine."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import sqlalchemy as sa

from averitec_tools.errors import UserError
from averitec_tools.leaderboard import models
from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.store import (
    QuotaExceeded,
    Store,
    hash_token,
    schema_revision,
    utcnow,
)
from averitec_tools.leaderboard.worker import process_one
from tests import _leaderboard_helpers as helpers
from tests._leaderboard_helpers import competition_yaml, variant

db_url = helpers.db_url  # the two-back-end fixture

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _store(url: str, **phase: object) -> Store:
    store = Store(url)
    store.init(competition_yaml(**phase), where="demo.yaml")
    return store


def test_migrations_create_the_model_schema(db_url: str) -> None:
    store = _store(db_url)
    assert schema_revision(store.engine) == "0005"
    inspector = sa.inspect(store.engine)
    for table in models.metadata.sorted_tables:
        assert {c["name"] for c in inspector.get_columns(table.name)} == {c.name for c in table.columns}
    # init again: same schema, competition updated, no second admin token
    assert store.init(competition_yaml(), where="demo.yaml") is None


def test_tokens_are_stored_hashed(db_url: str) -> None:
    store = _store(db_url)
    token = store.add_team("blue")
    with store.engine.connect() as conn:
        stored = conn.execute(sa.select(models.teams.c.token_hash)).scalar()
    assert stored == hash_token(token) and token not in stored
    assert store.team_by_token(token) == "blue"
    assert store.team_by_token("wrong") is None
    with pytest.raises(UserError, match="already exists"):
        store.add_team("blue")


def test_rotate_token_and_remove_team(db_url: str) -> None:
    from averitec_tools.leaderboard.teams import REMOVED_REASON, remove_team, rotate_token

    store = _store(db_url)
    old = store.add_team("blue")
    store.add_team("red")
    kept = store.submit(team="red", system="s", phase="dev", content=variant(0), file_name="p.json").id
    new = rotate_token(store, name="BLUE")  # names as add_team compares them
    assert (store.team_by_token(old), store.team_by_token(new)) == (None, "blue")
    first = store.submit(team="blue", system="s", phase="dev", content=variant(1), file_name="p.json").id
    second = store.submit(team="blue", system="t", phase="dev", content=variant(2), file_name="p.json").id
    store.cancel(second)  # already cancelled: not counted again
    assert remove_team(store, name="blue") == {"team": "blue", "removed": True, "submissions_cancelled": 1}
    row = store.submission(first)
    assert (row["state"], row["reason"], row["charged"]) == ("cancelled", REMOVED_REASON, False)
    assert store.team("blue") is None and store.team_by_token(new) is None and store.submission(kept)["state"] == "pending"
    for call in (lambda: remove_team(store, name="blue"), lambda: rotate_token(store, name="blue"),
                 lambda: store.submit(team="blue", system="u", phase="dev", content=variant(3), file_name="p.json")):
        with pytest.raises(UserError, match="team 'blue'"):
            call()
    with pytest.raises(UserError, match="already exists"):
        store.add_team("Blue")  # the name stays taken: nobody else appears under it


def test_same_file_twice_is_one_submission(db_url: str) -> None:
    store = _store(db_url)
    store.add_team("blue")
    a = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="../../etc/passwd")
    b = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="x.json")
    assert a.created and not b.created and a.id == b.id
    assert store.submission(a.id)["file_name"] == "passwd"  # a display name, never a path
    assert len(store.submissions()) == 1


def test_quotas_per_day_and_total(db_url: str) -> None:
    store = _store(db_url, limits={"per_day": 2, "total": 3})
    store.add_team("blue")
    for seed in (1, 2):
        store.submit(team="blue", system="s", phase="dev", content=variant(seed), file_name="p.json")
    with pytest.raises(QuotaExceeded, match="for today"):
        store.submit(team="blue", system="s", phase="dev", content=variant(3), file_name="p.json")
    # yesterday's submissions do not count against today's limit, but against the total
    with store.tx() as conn:
        conn.execute(models.submissions.update().values(created_at=utcnow() - dt.timedelta(days=1)))
    store.submit(team="blue", system="s", phase="dev", content=variant(3), file_name="p.json")
    with pytest.raises(QuotaExceeded, match="all 3"):
        store.submit(team="blue", system="s", phase="dev", content=variant(4), file_name="p.json")
    q = store.quota("blue", "dev")
    assert (q["used_total"], q["left_total"], q["left_today"]) == (3, 0, 1)


def test_state_machine_and_atomic_finish(db_url: str) -> None:
    store = _store(db_url)
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="p.json").id
    assert store.claim(lease_seconds=60) == sid
    assert store.claim(lease_seconds=60) is None  # nothing else pending
    assert store.recover() == 0  # lease still valid
    with store.tx() as conn:  # the worker died: its lease ran out
        conn.execute(models.submissions.update().values(lease_until=utcnow() - dt.timedelta(seconds=1)))
    assert store.recover() == 1
    assert store.submission(sid)["state"] == "pending"
    assert store.results() == {}
    assert process_one(store, Scorer(cache_dir=False, n_resamples=100)) == sid
    row = store.submission(sid)
    assert row["state"] == "finished" and row["attempts"] == 2
    (result,) = store.results()[sid]
    assert result["summary"]["averitec_score"]["0.25"] == pytest.approx(0.16)
    assert len(result["per_claim"]) == 50


def test_bad_submission_fails_counts_and_can_be_uploaded_again(db_url: str) -> None:
    store = _store(db_url, limits={"total": 5})
    store.add_team("blue")
    bad = b'[{"claim_id": 0}]'
    sid = store.submit(team="blue", system="s", phase="dev", content=bad, file_name="p.json").id
    process_one(store, Scorer(cache_dir=False))
    row = store.submission(sid)
    assert row["state"] == "failed" and row["reason"].startswith("p.json[0] (claim_id 0): missing key 'pred_label'")
    assert row["charged"] and store.quota("blue", "dev")["used_total"] == 1  # probing is not free
    # the same bytes after a failure: a new submission, scored again (and charged again)
    again = store.submit(team="blue", system="s", phase="dev", content=bad, file_name="p.json")
    assert again.created and again.again and again.id != sid and again.state == "pending"
    assert store.submit(team="blue", system="s", phase="dev", content=bad, file_name="p.json").id == again.id  # live twin
    assert store.quota("blue", "dev")["used_total"] == 2
    # an organiser cancellation gives the quota back
    assert store.cancel(again.id) == "pending"
    assert store.submission(again.id)["state"] == "cancelled" and store.quota("blue", "dev")["used_total"] == 1
    with pytest.raises(UserError, match="no submission 999"):
        store.cancel(999)


def test_names_and_metadata_rules(db_url: str) -> None:
    store = _store(db_url)
    store.add_team("blue")
    for twin in ("BLUE", "ｂｌｕｅ", " blue "):
        with pytest.raises(UserError, match="already exists"):
            store.add_team(twin)
    for bad in ("", "x" * 101, "evil\u202etxt", "nul\x00", "tab\tname", "zero\u200bwidth"):
        with pytest.raises(UserError, match="team name"):
            store.add_team(bad)
    assert store.team("BLUE")["name"] == "blue"  # lookups fold case and width too
    submit = {"team": "ＢＬＵＥ", "phase": "dev", "file_name": "p.json"}
    with pytest.raises(UserError, match="system name: character U\\+202E"):
        store.submit(system="s\u202e", content=variant(0), **submit)
    with pytest.raises(UserError, match="metadata key 'secret' is not one of the competition's disclosure keys: model, open_weights"):
        store.submit(system="s", content=variant(0), meta={"secret": "x"}, **submit)
    with pytest.raises(UserError, match="p.json: the file is empty"):
        store.submit(system="s", content=b" \n", **submit)
    new = store.submit(system="s", content=variant(0), meta={"model": "bloom\u3000 7b"}, **{**submit, "file_name": "../a\x00b.json"})
    row = store.submission(new.id)
    assert (row["team"], row["meta"], row["file_name"]) == ("blue", {"model": "bloom 7b"}, "ab.json")


def test_interrupted_submission_is_retried_behind_fresh_ones_then_failed(db_url: str) -> None:
    store = _store(db_url, limits={"total": 10})
    comp = json.loads(competition_yaml())
    comp["scoring"] = {"max_attempts": 2}
    store.init(json.dumps(comp), where="c.yaml")
    store.add_team("blue")
    first = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="p.json").id

    def worker_dies(sid: int) -> None:
        with store.tx() as conn:
            conn.execute(models.submissions.update().where(models.submissions.c.id == sid)
                         .values(lease_until=utcnow() - dt.timedelta(seconds=1)))
        assert store.recover() == 1

    assert store.claim(lease_seconds=60) == first
    worker_dies(first)
    fresh = store.submit(team="blue", system="s", phase="dev", content=variant(1), file_name="p.json").id
    assert store.claim(lease_seconds=60) == fresh  # the retried one waits behind the fresh one
    assert store.claim(lease_seconds=60) == first
    worker_dies(first)  # second run interrupted: the cap (2) is reached
    row = store.submission(first)
    assert row["state"] == "failed" and "interrupted 2 times" in row["reason"] and row["attempts"] == 2
    assert store.claim(lease_seconds=60) is None


def test_sqlite_database_and_wal_files_are_owner_only(tmp_path) -> None:
    import os
    import stat

    old = os.umask(0o022)
    try:
        store = _store(f"sqlite:///{tmp_path / 'lb.db'}")
        store.add_team("blue")
        with store.engine.connect() as conn:  # a reader keeps the WAL files in place
            conn.execute(sa.text("SELECT 1")).all()
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.glob("lb.db*")}
    finally:
        os.umask(old)
    assert {"lb.db", "lb.db-wal", "lb.db-shm"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes
    loose = tmp_path / "old.db"
    loose.touch(mode=0o644)
    Store(f"sqlite:///{loose}")
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600  # an existing world-readable one is tightened
    with pytest.raises(UserError, match="no leaderboard database here"):
        Store(f"sqlite:///{tmp_path / 'missing.db'}", create=False)
    assert not (tmp_path / "missing.db").exists()


def test_migration_from_0001_keeps_rows_and_hides_old_reasons(db_url: str) -> None:
    from alembic import command

    from averitec_tools.leaderboard.db import _alembic_config, upgrade_schema

    engine = Store(db_url).engine
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0001")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO teams (name, token_hash, created_at) VALUES ('blue', 'h1', '2024-01-01'), "
                             "('BLUE', 'h2', '2024-01-01')"))
        conn.execute(sa.text("INSERT INTO phases (name) VALUES ('dev')"))
        conn.execute(sa.text("INSERT INTO submissions (team_id, phase, system, content_hash, file_name, size, content, meta, state, "
                             "reason, attempts, created_at) VALUES (1, 'dev', 's', 'abc', 'f', 1, :c, '{}', 'failed', "
                             "'/tmp/averitec-lb-x/submission.json: bad; dev.json has 500 claims', 1, '2024-01-01')"), {"c": b"x"})
        conn.execute(sa.text("INSERT INTO results (submission_id, profile, scorer_version, signature, summary, cis, per_claim, "
                             "created_at) VALUES (1, 'p', 'v', 's', '{}', '{}', '[]', '2024-01-01')"))
    upgrade_schema(engine)
    assert schema_revision(engine) == "0005"
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT reason, server_reason, charged FROM submissions")).one()
        keys = conn.execute(sa.text("SELECT name_key FROM teams ORDER BY id")).scalars().all()
        assert conn.execute(sa.text("SELECT count(*) FROM results")).scalar() == 1
    assert "/tmp" not in row[0] and "500 claims" in row[1] and not row[2]
    assert keys == ["blue", "blue#2"]  # colliding old names keep distinct keys


def test_migration_0005_backfills_state_changes(db_url: str) -> None:
    """A board from before issue 39 keeps its rows; each submission gets the events its
    timestamps already tell (upload, start, end), ``late`` is false and results have no snapshot."""
    from alembic import command

    from averitec_tools.leaderboard.db import _alembic_config, upgrade_schema

    engine = Store(db_url).engine
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "0004")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO teams (name, name_key, token_hash, created_at) VALUES ('blue', 'blue', 'h1', '2024-01-01')"))
        conn.execute(sa.text("INSERT INTO phases (name) VALUES ('dev')"))
        for sid, state, started, finished in ((1, "finished", "2024-01-01 00:01:00", "2024-01-01 00:02:00"),
                                              (2, "pending", None, None)):
            conn.execute(sa.text("INSERT INTO submissions (id, team_id, phase, system, content_hash, file_name, size, content, meta, "
                                 "state, charged, attempts, created_at, started_at, finished_at) VALUES (:id, 1, 'dev', 's', :h, "
                                 "'f', 1, :c, '{}', :state, true, 1, '2024-01-01 00:00:00', :started, :finished)"),
                         {"id": sid, "h": f"h{sid}", "c": b"x", "state": state, "started": started, "finished": finished})
    upgrade_schema(engine)
    assert schema_revision(engine) == "0005"
    store = Store(db_url)
    assert [e["state"] for e in store.events(1)] == ["pending", "running", "finished"]
    assert [e["state"] for e in store.events(2)] == ["pending"]
    assert store.events(1)[2]["at"].minute == 2
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT late, fresh_judge FROM submissions WHERE id = 1")).one() == (False, False)


def test_unknown_names_are_user_errors(tmp_path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    with pytest.raises(UserError, match="no competition"):
        store.competition()
    store.init(competition_yaml(), where="demo.yaml")
    with pytest.raises(UserError, match="unknown phase"):
        store.submit(team="blue", system="s", phase="test", content=b"[]", file_name="p")
    with pytest.raises(UserError, match="unknown team"):
        store.submit(team="blue", system="s", phase="dev", content=b"[]", file_name="p")


def test_rescore_keeps_results_of_older_scorer_versions(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.leaderboard import processing
    from averitec_tools.leaderboard.ranking import rank_store

    store = _store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="p.json").id
    scorer = Scorer(cache_dir=tmp_path / "cache", n_resamples=100)
    process_one(store, scorer)
    monkeypatch.setattr(processing, "__version__", "99.0")
    assert store.requeue() == 1
    process_one(store, scorer)
    versions = [r["scorer_version"] for r in store.results()[sid]]
    assert versions[0] == "99.0" and len(versions) == 2  # newest first, the old one kept
    (entry,) = rank_store(store, "dev")
    assert entry.scorer_version == "99.0"
    # while queued again, the board keeps showing the current result
    assert store.requeue() == 1 and store.submission(sid)["state"] == "pending"
    (still,) = rank_store(store, "dev")
    assert still.rescoring and still.scorer_version == "99.0" and still.metrics == entry.metrics
    assert list((tmp_path / "cache").glob("gold-*.json"))  # the prepared gold side on disk


def test_primary_metric_must_be_a_per_claim_metric(tmp_path) -> None:
    """Checked at init against the profile's declared per-claim metrics, with close names."""
    with pytest.raises(UserError, match=r"primary_metric: .*'macro_f1'.*averitec_score@0\.25"):
        _store(f"sqlite:///{tmp_path / 'lb.db'}", primary_metric="macro_f1")
    with pytest.raises(UserError, match=r"did you mean: averitec_score@0\.25"):
        _store(f"sqlite:///{tmp_path / 'lb2.db'}", primary_metric="averitec_score@.25")


def test_one_declared_ranking_metric_is_checked_at_init(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: the ranking metric (and every shown column) is a per-claim metric the ranking
    profile declares, checked at ``init``; a profile that declares none cannot rank a board
    (it used to be found out when the first submission was scored)."""
    from averitec_tools.scoring.profiles.averitec2024 import Profile

    url = f"sqlite:///{tmp_path / 'lb.db'}"
    with pytest.raises(UserError, match=r"primary_metric: .*'macro_f1'.*known: .*averitec_score@0.25"):
        _store(url, primary_metric="macro_f1")
    with pytest.raises(UserError, match=r"columns: .*'questions_and_answers'.*questions_answers"):
        _store(url, columns=["averitec_score@0.25", "questions_and_answers"])
    monkeypatch.setattr(Profile, "per_claim_metrics", ())
    with pytest.raises(UserError, match="declares no per-claim metrics, so it cannot rank a board"):
        _store(url)


def test_warm_scorer_equals_a_cold_profile_run(tmp_path) -> None:
    import json

    from averitec_tools.leaderboard.competition import load_competition_text
    from averitec_tools.scoring.profiles import get_profile

    phase = load_competition_text(competition_yaml(), where="c.yaml").phase("dev")
    scorer = Scorer(cache_dir=tmp_path, n_resamples=50)
    scorer.score(phase=phase, content=variant(0))
    for content in (variant(0, n_wrong=7), variant(3)):  # same evidence, other labels; new strings
        warm = scorer.score(phase=phase, content=content)[0]
        path = tmp_path / "p.json"
        path.write_bytes(content)
        cold = get_profile("averitec2024").score(predictions=path, references=phase.gold)
        assert json.dumps(warm["summary"], sort_keys=True) == json.dumps(dict(cold.summary), sort_keys=True)
        assert [c["values"] for c in warm["per_claim"]] == [
            {k: round(v, 12) for k, v in c.values.items()} for c in cold.per_claim
        ]


def test_scorer_keeps_each_gold_files_current_version_bounded(tmp_path) -> None:
    import hashlib
    import os

    from averitec_tools.leaderboard.processing import GOLD_FILES_KEPT

    scorer = Scorer(cache_dir=False)
    gold = tmp_path / "gold.json"
    gold.write_bytes(b"[]")
    kept = scorer.gold_file(gold)
    kept.claims["parsed"] = 1
    assert scorer.gold_file(gold) is kept and kept.sha256 == hashlib.sha256(b"[]").hexdigest()
    gold.write_bytes(b"[ ]")  # a new version: digest and parsed claims built again, the old dropped
    os.utime(gold, ns=(1, 1))
    new = scorer.gold_file(gold)
    assert new.sha256 == hashlib.sha256(b"[ ]").hexdigest() and new.claims == {}
    others = [tmp_path / f"g{i}.json" for i in range(GOLD_FILES_KEPT)]
    for path in others:
        path.write_bytes(b"[]")
        scorer.gold_file(path)
    assert list(scorer._gold) == [str(p) for p in others]  # the least recently checked went first
