"""Start ``averitec leaderboard serve``/``work`` as real processes on 127.0.0.1 for tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "averitec_tools.cli.main", "leaderboard", *args]


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [e.get("PYTHONPATH")])])
    return e


@contextmanager
def running_server(db: str, *, workers: int = 0, extra: Sequence[str] = (), timeout: float = 90.0) -> Iterator[str]:
    """A server on a free port; yields its base URL and stops it (and its workers) after."""
    port = free_port()
    proc = subprocess.Popen(
        cli("serve", "--db", db, "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), *extra),
        env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                out = proc.stdout.read().decode() if proc.stdout else ""
                raise RuntimeError(f"server exited with {proc.returncode}: {out}")
            try:
                with urllib.request.urlopen(base + "/submit", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
