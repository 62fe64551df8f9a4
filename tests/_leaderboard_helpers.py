"""Fixtures shared by the leaderboard tests: databases on both back-ends, a tiny competition.

PostgreSQL comes from ``AVERITEC_TEST_POSTGRES_URL`` (``.ci/run`` starts a throwaway
cluster); each test gets its own database, dropped afterwards. Without the URL the
PostgreSQL cases skip, except in CI, where they fail.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[1]
DEMO_GOLD = REPO / "examples" / "demo_gold.json"
DEMO_PREDS = REPO / "examples" / "demo_predictions.json"


def competition_yaml(gold: Path = DEMO_GOLD, **phase: object) -> str:
    spec = {
        "name": "demo",
        "title": "Demo board",
        "n_resamples": 200,
        "disclosure": ["model", "open_weights"],
        "phases": [
            {
                "name": "dev",
                "gold": str(gold),
                "profiles": ["averitec2024"],
                "primary_metric": "averitec_score@0.25",
                "columns": ["averitec_score@0.25", "questions_answers", "label_accuracy"],
                **phase,
            }
        ],
    }
    return json.dumps(spec)  # YAML is a superset of JSON


def variant(seed: int, *, n_wrong: int = 0) -> bytes:
    """The demo predictions with the first ``n_wrong`` labels made wrong (a different, worse system)."""
    preds = json.loads(DEMO_PREDS.read_text())
    gold = json.loads(DEMO_GOLD.read_text())
    for i, p in enumerate(preds[:n_wrong]):
        p["pred_label"] = "Refuted" if gold[i]["label"] != "Refuted" else "Supported"
        p["evidence"][0]["answer"] += f" v{seed}-{i}"
    if seed:
        preds[-1]["evidence"][0]["url"] = f"https://example.org/{seed}"
    return json.dumps(preds).encode()


def _pg_database(base_url: str) -> Iterator[str]:
    import sqlalchemy as sa

    name = f"lbtest_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = sa.engine.make_url(base_url).set(database=name).render_as_string(hide_password=False)
    try:
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database URL on each back-end."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'lb.db'}"
        return
    base = os.environ.get("AVERITEC_TEST_POSTGRES_URL")
    if not base:
        skip_or_fail("AVERITEC_TEST_POSTGRES_URL (a PostgreSQL server) not available")
    yield from _pg_database(base)  # type: ignore[arg-type]
