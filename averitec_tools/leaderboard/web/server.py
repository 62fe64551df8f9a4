"""``averitec leaderboard serve``: uvicorn for the web app plus scoring worker processes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from typing import Any

from averitec_tools.cli._json import print_json
from averitec_tools.leaderboard.store import Store, upgrade_schema


def start_workers(url: str, *, n: int, lease_seconds: float, poll_seconds: float = 0.5, jobs: int | None = 1) -> list[Any]:
    """Start ``n`` scoring worker processes (each keeps its own warm gold cache)."""
    from averitec_tools.leaderboard.processing import worker_jobs, worker_main

    jobs = worker_jobs(jobs, workers=n)
    context = multiprocessing.get_context("spawn")
    procs = []
    for _ in range(n):
        proc = context.Process(target=worker_main, args=(url, lease_seconds, poll_seconds, os.getpid(), jobs), daemon=True)
        proc.start()
        procs.append(proc)
    return procs


def stop_workers(procs: list[Any]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()


def serve(*, url: str, host: str = "127.0.0.1", port: int = 8000, workers: int = 1, lease_seconds: float = 120.0,
          poll_seconds: float = 0.5, jobs: int | None = 1, json_out: bool = False) -> None:
    """Run the leaderboard at ``http://host:port/`` until interrupted."""
    import uvicorn

    from averitec_tools.leaderboard.web.app import create_app

    store = Store(url)
    store.competition()  # UserError if `init` has not run
    upgrade_schema(store.engine)
    store.close()
    app = create_app(url)
    address = f"http://{host}:{port}/"
    if json_out:
        print_json({"url": address, "db": url, "workers": workers})
    else:
        print(f"averitec leaderboard: serving {address} (database {url}, {workers} scoring worker(s)); Ctrl-C stops", flush=True)
    sys.stdout.flush()
    procs = start_workers(url, n=workers, lease_seconds=lease_seconds, poll_seconds=poll_seconds, jobs=jobs)
    # uvicorn re-raises SIGTERM after its graceful shutdown; with the default handler that
    # would end the process before `finally` stops the workers (they also watch our pid).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()
    finally:
        stop_workers(procs)
