"""Store on SQLite and PostgreSQL: migrations, idempotence, quotas, the state machine."""

from __future__ import annotations

import datetime as dt

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
    assert schema_revision(store.engine) == "0002"
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


def test_bad_submission_fails_with_reason(db_url: str) -> None:
    store = _store(db_url)
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=b'[{"claim_id": 0}]', file_name="p.json").id
    process_one(store, Scorer(cache_dir=False))
    row = store.submission(sid)
    assert row["state"] == "failed" and "pred_label" in row["reason"]
    # failed submissions do not use the quota
    assert store.quota("blue", "dev")["used_total"] == 0


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
    assert list((tmp_path / "cache").glob("gold-*.json"))  # the prepared gold side on disk


def test_primary_metric_must_be_a_per_claim_metric(tmp_path) -> None:
    """Checked at init against the profile's declared per-claim metrics, with close names."""
    with pytest.raises(UserError, match=r"primary_metric: .*'macro_f1'.*averitec_score@0\.25"):
        _store(f"sqlite:///{tmp_path / 'lb.db'}", primary_metric="macro_f1")
    with pytest.raises(UserError, match=r"did you mean: averitec_score@0\.25"):
        _store(f"sqlite:///{tmp_path / 'lb2.db'}", primary_metric="averitec_score@.25")


def test_undeclared_primary_metric_fails_the_submission(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A profile without declared metrics (e.g. fever8's are named after an option) is
    checked when the first submission is scored."""
    from averitec_tools.leaderboard.profiles.averitec2024 import Profile

    monkeypatch.setattr(Profile, "per_claim_metrics", ())
    store = _store(f"sqlite:///{tmp_path / 'lb.db'}", primary_metric="macro_f1")
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=variant(0), file_name="p.json").id
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    row = store.submission(sid)
    assert row["state"] == "failed" and "averitec_score@0.25" in row["reason"] and "macro_f1" in row["reason"]


def test_warm_scorer_equals_a_cold_profile_run(tmp_path) -> None:
    import json

    from averitec_tools.leaderboard.competition import load_competition_text
    from averitec_tools.leaderboard.profiles import get_profile

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
