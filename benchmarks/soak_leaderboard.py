"""Soak run: mixed uploads from many clients to two server processes while a worker is killed.

Two ``averitec leaderboard serve`` processes (one supervised worker each) share one
database. ``--clients`` threads upload ``--uploads`` files over HTTP, alternating between
the servers: valid submissions (each one new), exact re-uploads of an earlier valid one
(same team, same bytes), ``--worst`` worst-case legal ones (near the competition's
``max_tokens_total`` of 150,000: long strings of distinct words, 1.7 MB, so each is
scored in a memory-capped child process), hostile files (each one new: bad labels,
out-of-range ids, 100k-repeat answers, nesting), uploads with a wrong token and uploads
over the size limit. The resident memory of every worker process (and the private
memory of its scoring children) is sampled every 0.1 s throughout.
While they run, the worker of the first server is killed with SIGKILL ``--kills`` times
while it is scoring. Then the run waits until the queue is empty and checks that nothing
was lost or duplicated:

* every accepted upload has its row; a re-upload got its original's id;
* every valid submission is finished with exactly one result, every hostile one failed,
  none is left pending or running;
* refused uploads (403, 413) left no row; the worker restarts recorded equal the kills;
* no worker process was ever past ``--worker-rss-bound-mb`` resident.

Not part of ``make test`` (it takes minutes); the bounded versions of each check are in
``tests/test_leaderboard_{hostile,reliability,web}.py``. Usage::

    python benchmarks/soak_leaderboard.py                      # SQLite in a temporary folder
    python benchmarks/soak_leaderboard.py --db postgresql+psycopg://user@host/db   # an empty database
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
from bench_leaderboard import Server, cli  # noqa: E402

DEMO_GOLD, DEMO_PREDS = REPO / "examples/demo_gold.json", REPO / "examples/demo_predictions.json"


def valid(tag: str) -> bytes:
    preds = json.loads(DEMO_PREDS.read_text())
    preds[0]["evidence"][0]["answer"] += f" {tag}"
    return json.dumps(preds).encode()


def hostile(k: int, tag: str) -> bytes:
    preds = json.loads(DEMO_PREDS.read_text())
    kind = k % 5
    if kind == 0:
        preds[1]["pred_label"] = f"True {tag}"
    elif kind == 1:
        preds.append({**preds[0], "claim_id": 10**6, "claim": tag})
    elif kind == 2:
        preds[0]["evidence"][0]["answer"] = f"{tag} " + "yes " * 100_000
    elif kind == 3:
        return (b"[" * 1000 + b"]" * 1000).replace(b"[]", f'["{tag}"]'.encode(), 1)
    else:
        preds[2]["confidence"] = 1.5
        preds[2]["claim"] = tag
    return json.dumps(preds).encode()


def worst_legal(tag: str, *, tokens: int, max_evidence: int = 200, compact: bool = False) -> bytes:
    """A legal submission near a competition's ``max_tokens_total`` of ``tokens``: every
    claim's evidence made of long strings of distinct words (nothing any cache has seen),
    at most ``max_evidence`` items per claim (strings get longer instead). ``compact``
    words (a hex counter) keep 5,000,000 tokens under the default 50 MB upload limit."""
    preds = json.loads(DEMO_PREDS.read_text())
    per_string = max(100, -(-tokens // (2 * len(preds) * max_evidence)))
    per_claim = max(1, tokens // per_string // (2 * len(preds)))
    counter = 0

    def words(kind: str) -> str:
        nonlocal counter
        if compact:
            counter += per_string
            return " ".join(f"{tag}{n:x}" for n in range(counter - per_string, counter))
        counter += 1
        return " ".join(f"{tag}{kind}{counter}w{i}" for i in range(per_string))

    for p in preds:
        p["evidence"] = [{"question": words("q"), "answer": words("a"), "url": "https://example.org"} for _ in range(per_claim)]
    return json.dumps(preds).encode()


class MemoryWatch:
    """Samples, every ``every`` s, the resident memory of every live worker process and the
    private memory of its scoring children (:func:`~averitec_tools.leaderboard.isolation.private_bytes`)."""

    def __init__(self, db: str, every: float = 0.1) -> None:
        self.db, self.every = db, every
        self.worker_rss = 0
        self.child_private = 0
        self.samples = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def _rss(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/statm") as fh:
                return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    @staticmethod
    def _children(pid: int) -> list[int]:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as fh:
                return [int(c) for c in fh.read().split()]
        except OSError:
            return []

    def _run(self) -> None:
        from averitec_tools.leaderboard.health import workers
        from averitec_tools.leaderboard.isolation import private_bytes
        from averitec_tools.leaderboard.store import Store

        store = Store(self.db)
        pids: list[int] = []
        last = 0.0
        while not self.stop.is_set():
            if time.monotonic() - last > 1.0:  # the worker list changes only on restarts
                pids = [int(w["pid"]) for w in workers(store) if w["alive"] and w["pid"]]
                last = time.monotonic()
            for pid in pids:
                self.worker_rss = max(self.worker_rss, self._rss(pid))
                for child in self._children(pid):
                    self.child_private = max(self.child_private, private_bytes(child))
            self.samples += 1
            self.stop.wait(self.every)
        store.close()


def upload(base: str, token: str, system: str, content: bytes) -> tuple[int, dict[str, Any]]:
    boundary = uuid.uuid4().hex
    body = b"".join([
        f'--{boundary}\r\nContent-Disposition: form-data; name="system"\r\n\r\n{system}\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="phase"\r\n\r\ndev\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.json"\r\n\r\n'.encode(),
        content, f"\r\n--{boundary}--\r\n".encode(),
    ])
    req = urllib.request.Request(base + "/api/submissions", data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except (ConnectionError, urllib.error.URLError):  # a 413 may close the connection mid-upload
        return 413, {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="soak run: mixed uploads, two servers, a worker killed")
    parser.add_argument("--uploads", type=int, default=200)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--kills", type=int, default=2)
    parser.add_argument("--db", default=None, help="database URL (default: SQLite in a temporary folder); must be empty")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worst", type=int, default=20, help="worst-case legal uploads among --uploads")
    parser.add_argument("--worst-tokens", type=int, default=140_000,
                        help="tokens in each worst-case upload (the soak competition allows 150,000)")
    parser.add_argument("--memory-mb", type=int, default=1024, help="scoring.memory_mb of the soak competition")
    parser.add_argument("--worker-rss-bound-mb", type=int, default=1536,
                        help="the bound checked on every worker process's resident memory throughout")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("NLTK_DATA", str(REPO.parent / "shared" / "nltk_data"))
    env["AVERITEC_NO_DOWNLOAD"] = "1"

    with tempfile.TemporaryDirectory(prefix="soak-lb-") as tmp:
        env["AVERITEC_CACHE_DIR"] = str(Path(tmp) / "cache")
        db = args.db or f"sqlite:///{tmp}/lb.db"
        comp = {"name": "soak", "n_resamples": 100, "max_upload_mb": 2, "rate_limits": {"posts_per_team_per_minute": 100_000,
                                                                                  "uploads_per_team": 100, "connections_per_client": 1000},
                "validation": {"max_tokens_total": 150_000}, "scoring": {"memory_mb": args.memory_mb},
                "phases": [{"name": "dev", "gold": str(DEMO_GOLD), "profiles": ["averitec2024"], "primary_metric": "averitec_score@0.25",
                            "columns": ["averitec_score@0.25", "label_accuracy"]}]}
        (Path(tmp) / "soak.yaml").write_text(json.dumps(comp))
        cli(env, "init", str(Path(tmp) / "soak.yaml"), "--db", db)
        tokens = [cli(env, "team", "add", f"team{i}", "--db", db)["token"] for i in range(3)]

        kinds = rng.choices(["valid", "again", "hostile", "wrong-token", "too-large"], weights=[60, 15, 15, 5, 5], k=args.uploads)
        for k in rng.sample(range(args.uploads), args.worst):
            kinds[k] = "worst"
        plan: list[tuple[str, int, bytes]] = []
        originals: list[tuple[int, bytes]] = []
        for k, kind in enumerate(kinds):
            team = rng.randrange(len(tokens))
            if kind == "again" and originals:
                team, content = rng.choice(originals)
            elif kind in ("valid", "again"):
                kind, content = "valid", valid(f"soak-{k}")
                originals.append((team, content))
            elif kind == "hostile":
                content = hostile(k, f"soak-{k}")
            elif kind == "too-large":
                content = b"[" + b" " * (2 * 1024 * 1024 + 10) + b"]"
            elif kind == "worst":
                content = worst_legal(f"s{k}x", tokens=args.worst_tokens)
            else:
                content = valid(f"soak-{k}")
            plan.append((kind, team, content))

        # a short lease: the submission a killed worker held is taken again after 3 s
        servers = [Server(db, 1, env, extra=("--lease-seconds", "3")), Server(db, 1, env, extra=("--lease-seconds", "3"))]
        outcomes: list[tuple[str, int, bytes, int, dict[str, Any]]] = []
        lock = threading.Lock()
        posted = [0]
        started = time.monotonic()

        def client(i: int) -> None:
            for k in range(i, len(plan), args.clients):
                kind, team, content = plan[k]
                token = "wrong-token" if kind == "wrong-token" else tokens[team]
                status, body = upload(servers[k % 2].base, token, f"s{k}", content)
                with lock:
                    outcomes.append((kind, team, content, status, body))
                    posted[0] += 1

        kills: list[float] = []
        killed: set[int] = set()

        def killer() -> None:
            from averitec_tools.leaderboard.health import workers
            from averitec_tools.leaderboard.store import Store

            store = Store(db)
            server_pid = servers[0].proc.pid
            for n in range(args.kills):
                while posted[0] < (n + 1) * len(plan) // (args.kills + 1):
                    time.sleep(0.05)
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline:
                    mine = [w for w in workers(store) if f"/{server_pid}/" in w["name"] and w["state"] == "scoring"
                            and w["alive"] and int(w["pid"]) not in killed]  # the restarted worker, not the dead one
                    if mine:
                        killed.add(int(mine[0]["pid"]))
                        os.kill(int(mine[0]["pid"]), signal.SIGKILL)
                        kills.append(time.monotonic() - started)
                        break
                    time.sleep(0.02)
            store.close()

        watch = MemoryWatch(db)
        watch.thread.start()
        kill_thread = threading.Thread(target=killer)
        kill_thread.start()
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(client, range(args.clients)))
        uploaded = time.monotonic() - started
        kill_thread.join()

        from averitec_tools.leaderboard.health import queue, workers
        from averitec_tools.leaderboard.store import Store

        store = Store(db)
        deadline = time.monotonic() + 1800
        while (q := queue(store))["pending"] + q["running"] and time.monotonic() < deadline:
            time.sleep(0.5)
        drained = time.monotonic() - started
        watch.stop.set()
        watch.thread.join()
        rows = {r["id"]: r for r in store.submissions()}
        results = store.results()
        restarts = sum(w["restarts"] for w in workers(store))
        for s in servers:
            s.stop()

        problems: list[str] = []
        by_content: dict[tuple[int, bytes], int] = {}
        for kind, team, content, status, body in outcomes:
            if kind == "wrong-token":
                problems += [] if status == 403 else [f"wrong token got {status}"]
                continue
            if kind == "too-large":
                problems += [] if status == 413 else [f"too-large upload got {status}"]
                continue
            if status not in (200, 201):
                problems.append(f"{kind} upload got {status}")
                continue
            sid = int(body["id"])
            if sid not in rows:
                problems.append(f"accepted upload {sid} has no row (lost)")
                continue
            if kind in ("valid", "again", "worst"):
                first = by_content.setdefault((team, content), sid)
                if first != sid:
                    problems.append(f"re-upload got {sid}, its original is {first} (duplicated)")
        valid_ids = set(by_content.values())
        for sid, row in rows.items():
            want = "finished" if sid in valid_ids else "failed"
            if row["state"] != want:
                problems.append(f"submission {sid} is {row['state']}, expected {want}")
            n_results = len(results.get(sid, []))
            if n_results != (1 if want == "finished" else 0):
                problems.append(f"submission {sid} has {n_results} results")
        accepted = sum(1 for o in outcomes if o[3] in (200, 201))
        if len(rows) != len(valid_ids) + sum(1 for o in outcomes if o[0] == "hostile" and o[3] in (200, 201)):
            problems.append(f"{len(rows)} rows for {len(valid_ids)} valid and the hostile uploads")
        if restarts != len(kills):
            problems.append(f"{restarts} worker restarts recorded for {len(kills)} kills")
        if watch.worker_rss > args.worker_rss_bound_mb << 20:
            problems.append(f"a worker reached {watch.worker_rss >> 20} MiB resident, past the bound of {args.worker_rss_bound_mb} MiB")
        report = {
            "uploads": len(outcomes), "accepted": accepted, "statuses": dict(Counter(o[3] for o in outcomes)),
            "kinds": dict(Counter(o[0] for o in outcomes)), "rows": len(rows), "states": dict(Counter(r["state"] for r in rows.values())),
            "kills_at_s": [round(t, 1) for t in kills], "restarts": restarts, "uploaded_s": round(uploaded, 1),
            "drained_s": round(drained, 1), "lost": sum("lost" in p for p in problems),
            "duplicated": sum("duplicated" in p for p in problems), "problems": problems[:20],
            "db": "postgresql" if db.startswith("postgresql") else "sqlite", "load_average": os.getloadavg()[0],
            "worst_case_uploads": sum(1 for o in outcomes if o[0] == "worst"),
            "worst_case_bytes": max((len(o[2]) for o in outcomes if o[0] == "worst"), default=0),
            "peak_worker_rss_mib": watch.worker_rss >> 20, "peak_scoring_child_private_mib": watch.child_private >> 20,
            "memory_samples": watch.samples,
        }
        print(json.dumps(report, indent=1))
        return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
