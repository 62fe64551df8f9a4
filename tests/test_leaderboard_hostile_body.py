"""Issue 39 against a real ``serve`` on 127.0.0.1: a request whose body trickles in is cut off,
per client and per team, with the competition file's limits.

On main an authenticated upload sending 1 byte every 0.5 s stayed open past 45 s, and one
team holding 500 of them locked every other client out. Now (``rate_limits``):
``request_seconds`` bounds a whole request, body included; ``uploads_per_team`` bounds a
team's uploads in flight (the next gets 429 at once, another team's upload goes through);
``connections_per_client`` bounds the connections one address holds open. How long the cut
took is written to ``$AVERITEC_TEST_ARTIFACTS/leaderboard/slow-body.json`` (no test asserts a
wall-clock time beyond a generous ceiling).
"""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from averitec_tools.leaderboard.store import Store
from tests._leaderboard_helpers import competition_yaml, variant
from tests._leaderboard_server import running_server

httpx = pytest.importorskip("httpx")
REQUEST_SECONDS = 3


def _arena(tmp_path: Path) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    spec = json.loads(competition_yaml())
    spec["rate_limits"] = {"request_seconds": REQUEST_SECONDS, "uploads_per_team": 2, "connections_per_client": 6}
    store.init(json.dumps(spec), where="c.yaml")
    tokens = {team: store.add_team(team) for team in ("blue", "red")}
    store.close()
    return url, tokens


def _trickle_start(base: str, token: str) -> socket.socket:
    """An authenticated upload whose headers arrive at once and whose body never finishes."""
    host, port = base.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall((f"POST /api/submissions HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
               "Content-Type: multipart/form-data; boundary=xyz\r\nContent-Length: 100000\r\n\r\n--xyz\r\n").encode())
    return s


def _trickle_until_cut(s: socket.socket, *, start: float, ceiling: float) -> float:
    """Send one byte every 0.5 s until the server closes the connection; the seconds since the request's first byte."""
    s.settimeout(0.5)
    while time.monotonic() - start < ceiling:
        try:
            s.sendall(b"a")
            if s.recv(4096) == b"":
                break
        except TimeoutError:
            continue
        except OSError:
            break
    return time.monotonic() - start


def _upload(base: str, token: str, system: str) -> Any:  # httpx.Response
    return httpx.post(f"{base}/api/submissions", headers={"authorization": f"Bearer {token}"},
                      data={"system": system, "phase": "dev"}, files={"file": ("p.json", variant(0))}, timeout=30)


@pytest.mark.timeout(240)
def test_a_trickling_body_is_cut_off_per_team_and_per_client(tmp_path: Path) -> None:
    url, tokens = _arena(tmp_path)
    with running_server(url) as (base, log):
        started = time.monotonic()
        held = [_trickle_start(base, tokens["blue"]) for _ in range(2)]
        time.sleep(0.5)
        third = _upload(base, tokens["blue"], "third")
        assert third.status_code == 429 and "uploads in flight" in third.json()["error"], third.text
        assert _upload(base, tokens["red"], "other team").status_code == 201  # nobody else is locked out
        cut = [_trickle_until_cut(s, start=started, ceiling=60) for s in held]
        assert all(t < 60 for t in cut), cut  # cut, not served to the end (the body would take 50,000 s)
        assert _upload(base, tokens["blue"], "after the cut").status_code == 201
        host, port = base.removeprefix("http://").split(":")
        idle = [socket.create_connection((host, int(port)), timeout=5) for _ in range(6)]
        extra = socket.create_connection((host, int(port)), timeout=5)
        extra.settimeout(5)
        try:
            refused = extra.recv(1) == b""
        except OSError:
            refused = True
        assert refused, "a 7th connection from one address must be closed at once"
        for s in [*idle, extra, *held]:
            s.close()
        assert "Traceback" not in log()
    out = Path(os.environ.get("AVERITEC_TEST_ARTIFACTS", "test-artifacts")) / "leaderboard"
    out.mkdir(parents=True, exist_ok=True)
    (out / "slow-body.json").write_text(json.dumps({"request_seconds": REQUEST_SECONDS, "cut_after_seconds": cut}))
