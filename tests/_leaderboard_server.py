"""Start ``averitec leaderboard serve``/``work`` as real processes on 127.0.0.1 for tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

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
def running_server(db: str, *, workers: int = 0, extra: Sequence[str] = (), timeout: float = 90.0) -> Iterator[tuple[str, Callable[[], str]]]:
    """A server on a free port; yields its base URL and a function returning its log so far
    (stdout and stderr, kept in a file so that a chatty server never blocks on a full pipe),
    and stops it (and its workers) after."""
    port = free_port()
    with tempfile.NamedTemporaryFile(prefix="averitec-serve-", suffix=".log") as log_file:
        yield from _serve(db, port, log_file, workers=workers, extra=extra, timeout=timeout)


def _serve(db: str, port: int, log_file: IO[bytes], *, workers: int, extra: Sequence[str], timeout: float) -> Iterator[tuple[str, Callable[[], str]]]:
    proc = subprocess.Popen(
        cli("serve", "--db", db, "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), *extra),
        env=env(), stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"

    def log() -> str:
        return Path(log_file.name).read_text(errors="replace")

    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {log()}")
            try:
                with urllib.request.urlopen(base + "/submit", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"server did not start: {log()}")
            time.sleep(0.2)
        yield base, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
