"""Real processes on 127.0.0.1: a worker killed mid-scoring, and a bounded concurrent load.

The load test runs two server processes on one database (SQLite and PostgreSQL): 10
clients upload 50 files (20 distinct, the rest repeats) against a total quota of 15.
Every distinct file must be stored at most once, exactly 15 stored, the rest refused.
"""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from averitec_tools.leaderboard.store import Store, utcnow
from tests import _leaderboard_helpers as helpers
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS, competition_yaml, variant
from tests._leaderboard_server import cli, env, running_server

db_url = helpers.db_url

N_CLIENTS, PER_CLIENT, DISTINCT, QUOTA = 10, 5, 20, 15


def _big_phase(tmp_path, copies: int = 40):
    """Gold and predictions of ``copies`` × the 50 demo claims (slow enough to be killed)."""
    gold = json.loads(DEMO_GOLD.read_text()) * copies
    preds = []
    for k in range(copies):
        for p in json.loads(DEMO_PREDS.read_text()):
            preds.append({**p, "claim_id": p["claim_id"] + 50 * k})
    gold_path = tmp_path / "gold.json"
    gold_path.write_text(json.dumps(gold))
    return gold_path, json.dumps(preds).encode()


def _group_alive(pgid: int) -> bool:
    """Whether a live (non-zombie) process is left in process group ``pgid``."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


@pytest.mark.timeout(300)
def test_killed_worker_leaves_no_half_row_and_is_scored_again(tmp_path) -> None:
    gold, content = _big_phase(tmp_path)
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(db)
    store.init(competition_yaml(gold), where="c.yaml")
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=content, file_name="p.json").id
    # --jobs 2: the worker forks a kept scoring helper, which must die with it
    worker = subprocess.Popen(cli("work", "--db", db, "--lease-seconds", "2", "--jobs", "2"), env=env(),
                              start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while store.submission(sid)["state"] == "pending":
            assert time.monotonic() < deadline and worker.poll() is None
            time.sleep(0.005)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    deadline = time.monotonic() + 30  # a bound, not a timing assertion
    while _group_alive(worker.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _group_alive(worker.pid), "the worker's scoring helper outlived it"
    row = store.submission(sid)
    assert row["state"] == "running" and store.results() == {}  # killed mid-way: nothing half-written
    while store.submission(sid)["lease_until"] >= utcnow():  # the lease runs out (2 s)
        time.sleep(0.1)
    subprocess.run(cli("work", "--db", db, "--once", "--jobs", "2"), env=env(), check=True, timeout=240,
                   stdout=subprocess.DEVNULL)
    row = store.submission(sid)
    assert (row["state"], row["attempts"]) == ("finished", 2)
    (result,) = store.results()[sid]
    assert len(result["per_claim"]) == 2000
    assert result["summary"]["averitec_score"]["0.25"] == pytest.approx(0.16)


@pytest.mark.timeout(300)
def test_concurrent_uploads_to_two_servers_store_each_file_once_within_quota(tmp_path, db_url: str) -> None:
    import httpx

    store = Store(db_url)
    store.init(competition_yaml(limits={"total": QUOTA}), where="c.yaml")
    token = store.add_team("blue")
    files = [variant(seed) for seed in range(DISTINCT)]
    with running_server(db_url) as a, running_server(db_url) as b:

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
