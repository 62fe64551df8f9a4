"""The hostile harness, part two: attacks on a real ``averitec leaderboard serve`` on
127.0.0.1 (the uploads are part one, ``tests/test_leaderboard_hostile.py``).

Each attack is one case: cross-site posts to every state-changing route (enumerated from
the app, so a new route cannot be left out), sessions forged from what the database
holds, rate-limit lock-outs and escapes, gold labels on pages of an unrevealed phase,
the tokens of a removed team or a rotated token, slow connections that never finish
their headers. Every case must be refused cleanly (a 4xx or a closed connection, no
state changed); at the end a valid upload is still accepted and scored (the queue moves).
A summary goes to ``$AVERITEC_TEST_ARTIFACTS/leaderboard/hostile-server.json``; the table
in docs/leaderboard.md is printed from it by ``python -m tests.test_leaderboard_hostile_server``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_or_fail

try:
    import httpx
    from fastapi.testclient import TestClient  # noqa: F401  (the leaderboard extra)
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)

import sqlalchemy as sa  # noqa: E402

from averitec_tools.leaderboard import models as m  # noqa: E402
from averitec_tools.leaderboard.processing import Scorer  # noqa: E402
from averitec_tools.leaderboard.store import Store  # noqa: E402
from averitec_tools.leaderboard.web.app import create_app, route_table  # noqa: E402
from averitec_tools.leaderboard.web.security import sign_session  # noqa: E402
from averitec_tools.leaderboard.worker import process_one  # noqa: E402
from tests._leaderboard_helpers import DEMO_GOLD, REPO, variant  # noqa: E402
from tests._leaderboard_server import cli, env, running_server  # noqa: E402

FAILED_TOKENS = 4  # the competition's failed_tokens_per_client here
EVIL = "http://evil.example"
#: case name -> {"refused": bool, "detail": str}; written out by the last test.
RESULTS: dict[str, dict[str, Any]] = {}


def _competition() -> str:
    phase = {"gold": str(DEMO_GOLD), "profiles": ["averitec2024"], "primary_metric": "averitec_score@0.25",
             "columns": ["averitec_score@0.25", "label_accuracy"]}
    return json.dumps({
        "name": "attacks", "n_resamples": 50, "disclosure": ["model"],
        "rate_limits": {"posts_per_team_per_minute": 1000, "failed_tokens_per_client": FAILED_TOKENS},
        "phases": [
            {"name": "dev", **phase},
            {"name": "pub", **phase, "gold_private": True},
            {"name": "test", **phase, "visibility": "hidden"},
        ],
    })


#: test function -> the row of the docs table its cases go to (issue 30's item)
GROUPS = {
    "test_every_state_changing_route_refuses_cross_site_posts": "cross-site posts: every state-changing route × (foreign Origin, "
    "foreign Referer, neither, no CSRF field), admin and team session cookies sent (item 3)",
    "test_read_access_to_the_database_cannot_forge_a_session": "session cookies forged from the stored token hashes (item 4)",
    "test_rotating_the_secret_ends_every_session": "admin and team sessions after `secret rotate` (item 4)",
    "test_gold_labels_and_claim_types_stay_private_until_the_reveal": "gold labels / claim types on the per-claim page and JSON of "
    "unrevealed or gold_private phases: anonymous, team session, team bearer (item 6)",
    "test_a_rotated_token_and_a_removed_team_are_refused": "a rotated-out token, its session, a removed team's token, page and "
    "submission (item 7)",
    "test_bad_tokens_from_an_address_do_not_lock_out_a_valid_token": "bad tokens, then a valid one, from one address "
    "(valid: let through; bad: 429) (item 5)",
    "test_forwarded_for_is_ignored_unless_from_a_configured_proxy": "rotating X-Forwarded-For; bad bearer tokens on GET pages and "
    "/api/admin/status (item 5)",
    "test_slow_headers_are_cut_off_and_connections_bounded": "slow-header connections; connections past --max-connections (item 15)",
}


def _record(case: str, refused: bool, detail: str = "") -> None:
    import inspect

    group = GROUPS.get(inspect.stack()[1].function, "other")
    RESULTS[case] = {"group": group, "refused": refused, "detail": detail}
    assert refused, f"{case}: {detail}"


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli(*args), env=env(), capture_output=True, text=True, timeout=120)


def _csrf(client: httpx.Client, path: str) -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]


def _signed_in(base: str, token: str, *, admin: bool = False) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=30)
    csrf = _csrf(client, "/admin" if admin else "/submit")
    r = client.post("/admin/login" if admin else "/login", data={"csrf": csrf, "token": token}, headers={"origin": base})
    assert r.status_code == 303, r.text
    client.csrf = csrf  # type: ignore[attr-defined]
    return client


def _upload(base: str, token: str, content: bytes, *, phase: str = "dev", system: str = "s", **headers: str) -> httpx.Response:
    extra = {k.replace("_", "-"): v for k, v in headers.items()}
    return httpx.post(f"{base}/api/submissions", headers={"authorization": f"Bearer {token}", **extra},
                      data={"system": system, "phase": phase}, files={"file": ("p.json", content)}, timeout=30)


def _snapshot(url: str) -> dict[str, Any]:
    """Everything an attack could change."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            out = {name: sorted(map(tuple, conn.execute(sa.select(*cols)))) for name, cols in {
                "submissions": [m.submissions.c.id, m.submissions.c.state, m.submissions.c.charged],
                "results": [m.results.c.id],
                "phases": [m.phases.c.name, m.phases.c.revealed_at],
                "teams": [m.teams.c.id, m.teams.c.token_hash],
                "competition": [m.competition.c.admin_token_hash],
            }.items()}
    finally:
        engine.dispose()
    return out


@pytest.fixture(scope="module")
def arena(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacks")
    url = f"sqlite:///{root / 'lb.db'}"
    store = Store(url)
    admin = store.init(_competition(), where="attacks.yaml")
    tokens = {name: store.add_team(name) for name in ("blue", "red")}
    scorer = Scorer(cache_dir=False, n_resamples=50)
    scored = {}
    for phase in ("dev", "pub"):
        scored[phase] = store.submit(team="blue", system=f"sys-{phase}", phase=phase, content=variant(1), file_name="p.json").id
        assert process_one(store, scorer) == scored[phase]
    pending = store.submit(team="red", system="waiting", phase="dev", content=variant(2), file_name="p.json").id
    with running_server(url) as (base, log):
        yield {"url": url, "root": root, "store": store, "admin": admin, "tokens": tokens, "scored": scored, "pending": pending,
               "base": base, "log": log, "scorer": scorer}


# ---------------------------------------------------------------------------------- item 3

def test_every_state_changing_route_refuses_cross_site_posts(arena) -> None:
    """Each POST/PUT/PATCH/DELETE route of the app, with the admin and a team session
    cookie: from another Origin, without the CSRF field, without Origin or Referer —
    refused, nothing changed, no new session."""
    base, url = arena["base"], arena["url"]
    routes = [(m_, p) for m_, p in route_table(create_app(url)) if m_ not in ("GET", "HEAD", "OPTIONS")]
    assert {("POST", "/admin/reveal/{phase}"), ("POST", "/admin/rescore"), ("POST", "/submit")} <= set(routes)
    admin = _signed_in(base, arena["admin"], admin=True)
    team = _signed_in(base, arena["tokens"]["red"])
    cookies = {**dict(admin.cookies), **dict(team.cookies)}
    params = {"sid": str(arena["pending"]), "phase": "test", "kind": "reliability", "name": "red"}
    before = _snapshot(url)
    for method, path in routes:
        target = re.sub(r"\{(\w+)(:\w+)?\}", lambda g: params[g.group(1)], path)
        token = arena["admin"] if path.startswith("/admin") else arena["tokens"]["red"]
        for how, headers, with_csrf in (("foreign Origin", {"origin": EVIL}, True), ("no CSRF field", {"origin": base}, False),
                                        ("no Origin or Referer", {}, True), ("foreign Referer", {"referer": f"{EVIL}/x"}, True)):
            data = {"token": token, "system": "csrf", "phase": "dev", **({"csrf": admin.csrf} if with_csrf else {})}
            r = httpx.request(method, base + target, data=data, files={"file": ("p.json", variant(3))}, headers=headers,
                              cookies=cookies, timeout=30)
            new_cookies = [c for c in r.headers.get_list("set-cookie") if c.startswith(("lb_team=", "lb_admin="))]
            ok = r.status_code == 403 and not new_cookies and _snapshot(url) == before
            _record(f"CSRF: {method} {path}, {how}", ok, f"{r.status_code} {r.text[:200]}")
    # the same sessions with the right Origin and CSRF field do act (the refusals above are the checks, not a broken route)
    page = admin.get("/admin").text
    assert 'action="/admin/reveal/test"' in page and 'action="/admin/rescore"' in page  # the page's buttons
    r = admin.post("/admin/reveal/test", data={"csrf": admin.csrf}, headers={"origin": base})
    assert r.status_code == 303 and r.headers["location"] == "/admin", r.text
    assert arena["store"].revealed("test") and "test: revealed" in admin.get("/admin").text


# ---------------------------------------------------------------------------------- item 4

def _secret_file(root: Path) -> Path:
    return root / "lb.db.secret"


def test_read_access_to_the_database_cannot_forge_a_session(arena) -> None:
    base, url, store = arena["base"], arena["url"], arena["store"]
    now = int(time.time())
    team = store.team("blue")
    forged = {"lb_admin": sign_session(store.admin_token_hash(), "admin", issued=now),
              "lb_team": sign_session(team["token_hash"], f"team:{team['id']}", issued=now)}
    client = httpx.Client(base_url=base, cookies=forged, timeout=30)
    page = client.get("/admin").text
    _record("forged admin cookie from the stored token hash", "Recent submissions" not in page and 'id="admin-login"' in page)
    _record("forged team cookie from the stored token hash", "Signed in as team" not in client.get("/submit").text)
    secret = _secret_file(arena["root"])
    assert secret.is_file() and secret.stat().st_mode & 0o777 == 0o600
    # grep in another process: a handle closed here would drop this process's SQLite (POSIX) locks
    assert subprocess.run(["grep", "-qF", "-e", secret.read_text().strip(), url.removeprefix("sqlite:///")]).returncode == 1


def test_rotating_the_secret_ends_every_session(arena) -> None:
    base, url = arena["base"], arena["url"]
    admin = _signed_in(base, arena["admin"], admin=True)
    team = _signed_in(base, arena["tokens"]["blue"])
    assert "Recent submissions" in admin.get("/admin").text and "Signed in as team" in team.get("/submit").text
    old = _secret_file(arena["root"]).read_bytes()
    done = _run_cli("secret", "rotate", "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["secret_file"] == str(_secret_file(arena["root"]))
    assert _secret_file(arena["root"]).read_bytes() != old and _secret_file(arena["root"]).stat().st_mode & 0o777 == 0o600
    _record("admin session after the secret was rotated", "Recent submissions" not in admin.get("/admin").text)
    _record("team session after the secret was rotated", "Signed in as team" not in team.get("/submit").text)
    assert "Recent submissions" in _signed_in(base, arena["admin"], admin=True).get("/admin").text  # a new sign-in works


# ---------------------------------------------------------------------------------- item 6

def _gold_keys(per_claim: list[dict[str, Any]]) -> set[str]:
    return {k for c in per_claim for k in c} & {"gold", "types", "claim_types", "label", "gold_label"}


def _views(arena) -> dict[str, httpx.Client]:
    base = arena["base"]
    return {"anonymous": httpx.Client(base_url=base, timeout=30), "its team (session)": _signed_in(base, arena["tokens"]["blue"]),
            "its team (bearer)": httpx.Client(base_url=base, headers={"authorization": f"Bearer {arena['tokens']['blue']}"}, timeout=30)}


def _gold_shown(client: httpx.Client, sid: int) -> list[str]:
    found = []
    scores = client.get(f"/submission/{sid}/scores.json")
    assert scores.status_code in (200, 403), scores.text  # 403: no per-claim row at all until the gold is shown (issue 39)
    found += sorted(_gold_keys(scores.json()["per_claim"])) if scores.status_code == 200 else []
    page = client.get(f"/submission/{sid}").text
    found += [h for h in ("By gold label", "By claim type") if h in page]
    return found


def test_gold_labels_and_claim_types_stay_private_until_the_reveal(arena) -> None:
    for phase in ("dev", "pub"):
        for who, client in _views(arena).items():
            shown = _gold_shown(client, arena["scored"][phase])
            _record(f"gold labels / claim types of an unrevealed public phase ({phase}), {who}", not shown, str(shown))
    admin = {"authorization": f"Bearer {arena['admin']}"}
    for phase in ("dev", "pub"):
        assert httpx.post(f"{arena['base']}/admin/reveal/{phase}", headers=admin, timeout=30).status_code == 200
    anonymous = httpx.Client(base_url=arena["base"], timeout=30)
    assert set(_gold_shown(anonymous, arena["scored"]["dev"])) == {"gold", "types", "By gold label", "By claim type"}
    shown = _gold_shown(anonymous, arena["scored"]["pub"])
    _record("gold labels of a revealed phase marked gold_private", not shown, str(shown))


# ---------------------------------------------------------------------------------- item 7

def test_a_rotated_token_and_a_removed_team_are_refused(arena) -> None:
    base, url, store = arena["base"], arena["url"], arena["store"]
    old = store.add_team("green")
    session = _signed_in(base, old)
    r = _upload(base, old, variant(4), system="green-sys")
    assert r.status_code == 201, r.text
    sid = r.json()["id"]
    done = _run_cli("team", "rotate-token", "green", "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    new = json.loads(done.stdout)["token"]
    assert new != old
    _record("upload with a rotated-out token", _upload(base, old, variant(5)).status_code == 403)
    _record("session signed in with a rotated-out token", "Signed in as team" not in session.get("/submit").text)
    assert _upload(base, new, variant(5), system="green-new").status_code == 201
    done = _run_cli("team", "remove", "green", "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["team"] == "green" and out["removed"] and out["submissions_cancelled"] == 2
    _record("upload with a removed team's token", _upload(base, new, variant(6)).status_code == 403)
    _record("a removed team's page", httpx.get(f"{base}/team/green", timeout=30).status_code == 404)
    hidden = httpx.get(f"{base}/submission/{sid}", headers={"authorization": f"Bearer {new}"}, timeout=30).status_code
    _record("a removed team's submission, with its last token", hidden in (403, 404), str(hidden))
    assert store.submission(sid)["state"] == "cancelled"  # kept for the record, off every board
    for args, text in ((("remove", "green"), "no team 'green'"), (("rotate-token", "nobody"), "no team 'nobody'")):
        done = _run_cli("team", *args, "--db", url)
        assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1 and text in done.stderr, done.stderr


# ---------------------------------------------------------------------------------- item 5

def _bad_tokens(base: str, n: int, **headers: str) -> list[int]:
    return [_upload(base, f"wrong-{i}", b"[]", **{k: v(i) if callable(v) else v for k, v in headers.items()}).status_code
            for i in range(n)]


def test_bad_tokens_from_an_address_do_not_lock_out_a_valid_token(arena) -> None:
    with running_server(arena["url"]) as (base, _):
        statuses = _bad_tokens(base, FAILED_TOKENS + 2)
        assert statuses == [403] * FAILED_TOKENS + [429, 429]
        r = _upload(base, arena["tokens"]["red"], variant(7), system="after-the-flood")
        _record("valid token after bad ones from the same address (API)", r.status_code == 201, f"{r.status_code} {r.text[:200]}")
        client = httpx.Client(base_url=base, timeout=30)
        csrf = _csrf(client, "/submit")
        r = client.post("/login", data={"csrf": csrf, "token": arena["tokens"]["red"]}, headers={"origin": base})
        _record("valid token after bad ones from the same address (sign-in)", r.status_code == 303, f"{r.status_code}")
        r = client.post("/login", data={"csrf": csrf, "token": "wrong"}, headers={"origin": base})
        _record("bad sign-in token past the limit", r.status_code == 429 and int(r.headers["retry-after"]) >= 1)


def test_forwarded_for_is_ignored_unless_from_a_configured_proxy(arena) -> None:
    with running_server(arena["url"]) as (base, _):
        statuses = _bad_tokens(base, FAILED_TOKENS + 3, x_forwarded_for=lambda i: f"10.0.0.{i + 1}")
        _record("rotating X-Forwarded-For from an untrusted address", statuses[FAILED_TOKENS:] == [429] * 3, str(statuses))
    sid = arena["scored"]["dev"]
    with running_server(arena["url"], extra=("--trusted-proxy", "127.0.0.1")) as (base, _):
        assert _bad_tokens(base, FAILED_TOKENS + 1, x_forwarded_for="10.0.0.1")[-1] == 429
        assert _bad_tokens(base, 1, x_forwarded_for="10.0.0.2") == [403]  # another client behind the proxy
        # every token check counts, GET pages and the admin status included (one client address behind the proxy each)
        paths = ("/api/admin/status", f"/submission/{sid}", f"/api/submissions/{sid}", f"/submission/{sid}/scores.json")
        for k, path in enumerate(paths):
            headers = {"x-forwarded-for": f"10.0.1.{k + 1}"}
            statuses = [httpx.get(base + path, headers={**headers, "authorization": f"Bearer wrong-{i}"}, timeout=30).status_code
                        for i in range(FAILED_TOKENS + 1)]
            _record(f"bad bearer tokens on GET {path.replace(str(sid), '{id}')}", statuses[-1] == 429, str(statuses))
            right = httpx.get(base + "/api/admin/status", headers={**headers, "authorization": f"Bearer {arena['admin']}"}, timeout=30)
            assert right.status_code == 200  # the right token still passes


# ---------------------------------------------------------------------------------- item 15

def _slow(base: str, n: int) -> list[socket.socket]:
    host, port = base.removeprefix("http://").split(":")
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(b"GET /submit HTTP/1.1\r\nHost: x\r\nX-Slow: ")  # headers never finished
        socks.append(s)
    return socks


def _closed(s: socket.socket, wait: float) -> bool:
    s.settimeout(wait)
    try:
        while True:
            data = s.recv(4096)
            if not data:
                return True
    except TimeoutError:
        return False
    except OSError:
        return True


@pytest.mark.timeout(300)
def test_slow_headers_are_cut_off_and_connections_bounded(arena) -> None:
    with running_server(arena["url"], extra=("--header-timeout", "1", "--max-connections", "64")) as (base, _):
        socks = _slow(base, 12)
        closed = sum(_closed(s, 30) for s in socks)
        _record("12 connections that never finish their headers (header timeout 1 s)", closed == 12, f"{closed} closed")
        assert httpx.get(base + "/submit", timeout=30).status_code == 200
    with running_server(arena["url"], extra=("--header-timeout", "600", "--max-connections", "4")) as (base, _):
        held = _slow(base, 4)
        extra = _slow(base, 3)
        _record("connections past --max-connections", all(_closed(s, 30) for s in extra))
        assert not any(_closed(s, 0.2) for s in held)  # the first four are still waiting for their headers
        for s in held:
            s.close()


# ---------------------------------------------------------------------------------- the end

def test_the_queue_still_moves_and_the_summary(arena) -> None:
    r = _upload(arena["base"], arena["tokens"]["red"], variant(9), system="after-the-attacks")
    assert r.status_code == 201, r.text
    assert process_one(arena["store"], arena["scorer"]) is not None
    assert arena["store"].submission(r.json()["id"])["state"] in ("finished", "pending")
    while (sid := process_one(arena["store"], arena["scorer"])) is not None:
        assert arena["store"].submission(sid)["state"] in ("finished", "failed")
    assert arena["store"].submission(r.json()["id"])["state"] == "finished"
    summary = {"tried": len(RESULTS), "refused_cleanly": sum(v["refused"] for v in RESULTS.values()), "queue_moving": True,
               "cases": [{"case": k, **v} for k, v in RESULTS.items()]}
    out = Path(os.environ.get("AVERITEC_TEST_ARTIFACTS") or REPO / "test-artifacts") / "leaderboard"
    out.mkdir(parents=True, exist_ok=True)
    (out / "hostile-server.json").write_text(json.dumps(summary, indent=1))
    assert summary["tried"] == summary["refused_cleanly"]


def table(summary: dict[str, Any]) -> str:
    """The docs table of a summary: one row per group of cases."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for case in summary["cases"]:
        groups.setdefault(case["group"], []).append(case)
    rows = ["| attack | cases | refused cleanly |", "|---|---:|---:|"]
    rows += [f"| {name} | {len(cs)} | {sum(c['refused'] for c in cs)} |" for name, cs in groups.items()]
    rows.append(f"| **all** | **{summary['tried']}** | **{summary['refused_cleanly']}** |")
    moving = "yes" if summary["queue_moving"] else "no"
    return "\n".join(rows) + f"\n\nQueue still moving (a valid upload accepted and scored after every attack): {moving}."


if __name__ == "__main__":
    artifacts = Path(os.environ.get("AVERITEC_TEST_ARTIFACTS") or REPO / "test-artifacts") / "leaderboard"
    print(table(json.loads((artifacts / "hostile-server.json").read_text())))
