"""Real processes on 127.0.0.1: a supervised worker killed mid-scoring, and a bounded concurrent load.

The load test runs two server processes on one database (SQLite and PostgreSQL): 10
clients upload 50 files (20 distinct, the rest repeats) against a total quota of 15.
Every distinct file must be stored at most once, exactly 15 stored, the rest refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from averitec_tools.leaderboard.store import Store
from tests import _leaderboard_helpers as helpers
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS, competition_yaml, variant
from tests._leaderboard_server import cli, env, running_server

db_url = helpers.db_url

N_CLIENTS, PER_CLIENT, DISTINCT, QUOTA = 10, 5, 20, 15


def _big_phase(tmp_path, copies: int = 20):
    """Gold and predictions of ``copies`` × the 50 demo claims (slow enough to be killed)."""
    gold = json.loads(DEMO_GOLD.read_text()) * copies
    preds = []
    for k in range(copies):
        for p in json.loads(DEMO_PREDS.read_text()):
            preds.append({**p, "claim_id": p["claim_id"] + 50 * k})
    gold_path = tmp_path / "gold.json"
    gold_path.write_text(json.dumps(gold))
    return gold_path, json.dumps(preds).encode()


def _proc_stat(pid: int) -> list[str] | None:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    """Live child processes of ``pid``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = _proc_stat(int(stat.parent.name))
        if fields is not None and int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _alive(pid: int) -> bool:
    fields = _proc_stat(pid)
    return fields is not None and fields[0] != "Z"


def _worker_row(store: Store) -> dict:
    from averitec_tools.leaderboard.health import workers

    rows = workers(store)
    return rows[0] if rows else {}


@pytest.mark.timeout(300)
def test_killed_worker_is_restarted_and_finishes_the_submission_once(tmp_path) -> None:
    """``serve`` supervises its worker: SIGKILL it mid-scoring; no half-written result, the
    supervisor logs the exit and starts a new worker, which takes the submission again once
    its lease runs out and stores exactly one result. Worker health shows the restart."""
    from averitec_tools.leaderboard.health import workers

    gold, content = _big_phase(tmp_path)
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    store.init(competition_yaml(gold), where="c.yaml")
    store.add_team("blue")
    # --jobs 2: the worker forks a kept scoring helper, which must die with it
    with running_server(db, workers=1, extra=("--lease-seconds", "2", "--jobs", "2")) as (base, log):
        with urllib.request.urlopen(base + "/phase/dev") as page:  # uvicorn's `server` header is gone
            assert page.headers.get("server") is None and page.headers["x-frame-options"] == "DENY"
        sid = store.submit(team="blue", system="s", phase="dev", content=content, file_name="p.json").id
        deadline = time.monotonic() + 180
        while store.submission(sid)["state"] == "pending" or _worker_row(store).get("state") != "scoring":
            assert time.monotonic() < deadline, log()
            time.sleep(0.01)
        victim = _worker_row(store)["pid"]
        helpers = _children(victim)
        assert helpers, "the worker forked no scoring helper"
        os.kill(victim, signal.SIGKILL)
        assert store.submission(sid)["state"] == "running" and store.results() == {}  # killed mid-way: nothing half-written
        while store.submission(sid)["state"] != "finished":
            assert time.monotonic() < deadline, log()
            time.sleep(0.1)
        row = store.submission(sid)
        (result,) = store.results()[sid]  # exactly one result
        assert row["attempts"] == 2 and len(result["per_claim"]) == 50 * 20
        assert result["summary"]["averitec_score"]["0.25"] == pytest.approx(0.16)
        (worker,) = workers(store)
        assert worker["restarts"] == 1 and worker["pid"] != victim and worker["alive"]
        assert "SIGKILL" in worker["last_exit"]
        status = subprocess.run(cli("status", "--db", db, "--json"), env=env(), capture_output=True, text=True, check=True)
        assert json.loads(status.stdout)["workers"][0]["restarts"] == 1
        assert "killed by SIGKILL; restarting it in 1 s" in log()
        deadline = time.monotonic() + 30  # a bound, not a timing assertion
        while any(map(_alive, helpers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(map(_alive, helpers)), "the killed worker's scoring helper outlived it"


@pytest.mark.timeout(300)
def test_concurrent_uploads_to_two_servers_store_each_file_once_within_quota(tmp_path, db_url: str) -> None:
    import httpx

    store = Store(db_url)
    spec = json.loads(competition_yaml(limits={"total": QUOTA}))
    spec["rate_limits"] = {"uploads_per_team": N_CLIENTS}  # the store's concurrency is the point: every client's upload in flight
    store.init(json.dumps(spec), where="c.yaml")
    token = store.add_team("blue")
    files = [variant(seed) for seed in range(DISTINCT)]
    with running_server(db_url) as (a, _), running_server(db_url) as (b, _):

        def client(i: int) -> list[tuple[int, int, int | None]]:
            out = []
            with httpx.Client(timeout=60, headers={"Authorization": f"Bearer {token}"}) as http:
                for j in range(PER_CLIENT):
                    k = (i * PER_CLIENT + j * 7) % DISTINCT
                    base = (a, b)[(i + j) % 2]
                    r = http.post(base + "/api/submissions", data={"system": f"s{k}", "phase": "dev"}, files={"file": ("p.json", files[k])})
                    out.append((k, r.status_code, r.json().get("id")))
            return out

        with ThreadPoolExecutor(N_CLIENTS) as pool:
            outcomes = [o for part in pool.map(client, range(N_CLIENTS)) for o in part]
    assert len(outcomes) == N_CLIENTS * PER_CLIENT
    assert {status for _, status, _ in outcomes} <= {200, 201, 429}
    rows = store.submissions()
    assert len(rows) == QUOTA == sum(status == 201 for _, status, _ in outcomes)
    assert len({r["content_hash"] for r in rows}) == QUOTA
    stored = {r["content_hash"]: r["id"] for r in rows}
    for k, status, sid in outcomes:
        digest = hashlib.sha256(files[k]).hexdigest()
        if status in (200, 201):
            assert stored[digest] == sid  # every accepted upload maps to the one stored row
        else:
            assert status == 429 and digest not in stored
    assert store.quota("blue", "dev")["left_total"] == 0
