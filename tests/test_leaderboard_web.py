"""Web app through FastAPI's TestClient: pages, sign-in and upload (origin, CSRF), escaping,
limits, who may see what, security headers, rate limits, out-of-range input."""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest
from conftest import skip_or_fail

try:
    from fastapi.testclient import TestClient
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)

from averitec_tools.leaderboard.processing import Scorer  # noqa: E402
from averitec_tools.leaderboard.store import Store  # noqa: E402
from averitec_tools.leaderboard.web.app import create_app  # noqa: E402
from averitec_tools.leaderboard.worker import process_one  # noqa: E402
from tests import _leaderboard_helpers as helpers  # noqa: E402
from tests._leaderboard_helpers import competition_yaml, variant  # noqa: E402

XSS = "<script>alert('x')</script>"
BASE = "http://127.0.0.1"
SAME_SITE = {"origin": BASE}
db_url = helpers.db_url  # the two-back-end fixture


@pytest.fixture
def board(tmp_path):
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    admin = store.init(competition_yaml(limits={"total": 3}), where="demo.yaml")
    token = store.add_team("blue")
    xss_token = store.add_team(XSS)
    client = TestClient(create_app(url, max_upload_bytes=200_000), base_url=BASE)
    return store, client, token, xss_token, admin


def _form_csrf(client: TestClient, path: str = "/submit") -> str:
    page = client.get(path)
    assert page.status_code == 200
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def _sign_in(client: TestClient, token: str) -> str:
    csrf = _form_csrf(client)
    r = client.post("/login", data={"csrf": csrf, "token": token}, headers=SAME_SITE, follow_redirects=False)
    assert r.status_code == 303, r.text
    return csrf


def _score(store: Store) -> None:
    process_one(store, Scorer(cache_dir=False, n_resamples=100))


def _api_upload(client: TestClient, token: str, content: bytes, system: str = "s", **fields: str):
    return client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"}, data={"system": system, "phase": "dev", **fields},
                       files={"file": ("p.json", content)})


def test_upload_through_form_is_scored_and_ranked(board) -> None:
    store, client, token, _, _ = board
    csrf = _sign_in(client, token)
    assert "Signed in as team" in client.get("/submit").text
    r = client.post("/submit", data={"csrf": csrf, "system": "base", "phase": "dev", "model": "bloom"},
                    files={"file": ("../../etc/passwd", variant(0), "application/json")}, headers=SAME_SITE, follow_redirects=False)
    assert r.status_code == 303
    sid = int(r.headers["location"].rsplit("/", 1)[1])
    page = client.get(f"/submission/{sid}")
    assert "pending" in page.text and 'http-equiv="refresh"' in page.text
    _score(store)
    page = client.get(f"/submission/{sid}")
    assert "finished" in page.text and "refresh" not in page.text
    assert "By claim type" not in page.text and "profile:averitec2024" in page.text  # gold facts wait for the reveal
    store.reveal("dev")
    assert "By claim type" in client.get(f"/submission/{sid}").text
    assert store.submission(sid)["file_name"] == "passwd"
    assert len(client.get(f"/submission/{sid}/scores.json").json()["per_claim"]) == 50
    board_page = client.get("/phase/dev")
    assert "base" in board_page.text and "0.1600" in board_page.text and "How the tiers were formed" in board_page.text
    assert client.get("/phase/dev?sort=team&order=desc").status_code == 200
    team = client.get("/team/blue")
    assert re.search(r"<td>dev</td><td class=\"num\">1</td><td class=\"num\">∞</td><td class=\"num\">1</td><td class=\"num\">2</td>", team.text)
    assert "Quota" not in TestClient(client.app, base_url=BASE).get("/team/blue").text  # the quota is the team's own business


def test_user_strings_are_escaped(board) -> None:
    store, client, _, xss_token, _ = board
    r = _api_upload(client, xss_token, variant(1), system=XSS)
    assert r.status_code == 201
    _score(store)
    for path in ("/phase/dev", f"/submission/{r.json()['id']}", "/team/" + quote(XSS, safe="")):
        text = client.get(path).text
        assert "<script>alert" not in text
        assert "&lt;script&gt;alert(" in text


def test_form_posts_need_same_origin_csrf_and_a_session(board) -> None:
    _, client, token, _, _ = board
    files = {"file": ("p.json", variant(0))}
    csrf = _form_csrf(client)
    r = client.post("/login", data={"csrf": csrf, "token": token}, headers={"origin": "https://evil.example"})
    assert r.status_code == 403 and "Origin check failed" in r.text
    assert client.post("/login", data={"csrf": csrf, "token": token}).status_code == 403  # neither Origin nor Referer
    r = client.post("/login", data={"csrf": "forged", "token": token}, headers=SAME_SITE)
    assert r.status_code == 403 and "CSRF" in r.text
    r = client.post("/login", data={"csrf": csrf, "token": "wrong"}, headers=SAME_SITE)
    assert r.status_code == 403 and "invalid token" in r.text
    r = client.post("/submit", data={"csrf": csrf, "system": "s", "phase": "dev"}, files=files, headers=SAME_SITE)
    assert r.status_code == 403 and "sign in" in r.text
    assert client.post("/api/submissions", data={"system": "s", "phase": "dev"}, files=files).status_code == 403
    # the Referer is the fallback when a browser sends no Origin
    r = client.post("/login", data={"csrf": csrf, "token": token}, headers={"referer": f"{BASE}/submit"}, follow_redirects=False)
    assert r.status_code == 303
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    r = client.post("/submit", data={"csrf": csrf, "system": "s", "phase": "dev"}, files=files, headers={"origin": "https://evil.example"})
    assert r.status_code == 403  # signed in, but posted from another site


def test_token_is_checked_before_the_body_is_read(board) -> None:
    _, client, _, _, _ = board
    sent = []

    def body():
        for i in range(50):
            sent.append(i)
            yield b"x" * 1000

    r = client.post("/api/submissions", headers={"Authorization": "Bearer wrong", "content-type": "multipart/form-data; boundary=x"},
                    content=body())
    assert r.status_code == 403 and len(sent) < 50


def test_failed_token_attempts_and_team_posts_are_bounded(board) -> None:
    from averitec_tools.leaderboard.competition import RateLimits

    _, client, token, _, _ = board
    limits = RateLimits()
    for _ in range(limits.failed_tokens_per_client):
        assert _api_upload(client, "wrong", b"[]").status_code == 403
    r = _api_upload(client, "wrong", b"[]")
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1 and "failed token attempts" in r.json()["error"]
    assert _api_upload(client, token, b"[]").status_code == 201  # wrong tokens from an address do not lock a valid one out
    other = TestClient(client.app, base_url=BASE, client=("10.0.0.2", 5000))
    statuses = [_api_upload(other, token, b"", system=f"s{i}").status_code for i in range(limits.posts_per_team_per_minute)]
    assert statuses[:-1] == [400] * (limits.posts_per_team_per_minute - 1) and statuses[-1] == 429  # per team, from any address


def test_size_limit_while_streaming(board) -> None:
    _, client, token, _, _ = board
    r = _api_upload(client, token, b"[" + b" " * 300_000 + b"]")
    assert r.status_code == 413 and "limit" in r.text
    assert r.headers["x-content-type-options"] == "nosniff"  # the headers are on the 413 too

    def chunks():  # no Content-Length: counted as it streams
        yield b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"
        for _ in range(100):
            yield b" " * 10_000

    r = client.post("/api/submissions", headers={"Authorization": f"Bearer {token}", "content-type": "multipart/form-data; boundary=x"},
                    content=chunks())
    assert r.status_code == 413
    r = client.post("/login", headers=SAME_SITE, data={"csrf": "x", "token": "y" * 100_000})  # small routes: 64 KB
    assert r.status_code == 413 and "KB" in r.text


def test_api_idempotence_quota_and_upload_errors(board) -> None:
    _, client, token, _, _ = board
    ids = [(r.status_code, r.json().get("id")) for r in (_api_upload(client, token, variant(seed)) for seed in (0, 0, 1, 2, 3))]
    assert [s for s, _ in ids] == [201, 200, 201, 201, 429]
    assert ids[0][1] == ids[1][1]
    r = _api_upload(client, token, variant(4), secret="x")
    assert r.status_code == 400 and "metadata key 'secret'" in r.json()["error"]


def test_submission_details_need_the_team_until_on_the_board(board) -> None:
    store, client, token, xss_token, admin = board
    sid = _api_upload(client, token, b'[{"claim_id": 0}]').json()["id"]
    _score(store)
    anonymous = TestClient(client.app, base_url=BASE)
    r = anonymous.get(f"/api/submissions/{sid}")
    assert r.status_code == 403 and "token" in r.json()["error"]
    assert anonymous.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {xss_token}"}).status_code == 403
    assert anonymous.get(f"/submission/{sid}").status_code == 403
    mine = anonymous.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {token}"}).json()
    assert mine["state"] == "failed" and mine["reason"].startswith("p.json[0] (claim_id 0): missing key")
    assert anonymous.get(f"/api/submissions/{sid}", headers={"Authorization": f"Bearer {admin}"}).json()["reason"]
    ok = _api_upload(client, token, variant(0)).json()["id"]
    _score(store)
    public = anonymous.get(f"/api/submissions/{ok}").json()  # on the board: public, without the reason field
    assert public["state"] == "finished" and "reason" not in public
    assert anonymous.get(f"/submission/{ok}").status_code == 200
    assert [r.status_code for r in (anonymous.get(f"/submission/{sid}/scores.json"), anonymous.get(f"/submission/{sid}/reliability.png"))] == [403, 403]


def test_waiting_for_an_outcome_answers_when_it_comes(board) -> None:
    import time
    from concurrent.futures import ThreadPoolExecutor

    store, client, token, xss_token, _ = board
    auth = {"Authorization": f"Bearer {token}"}
    sid = _api_upload(client, token, variant(0)).json()["id"]
    watch = client.app.app.app.state.site.outcomes  # SecurityHeaders(BodySizeLimit(FastAPI))
    # nothing scores it: the wait runs out and the answer is the state then
    assert client.get(f"/api/submissions/{sid}?wait=0.1", headers=auth).json()["state"] == "pending"
    # another team's submission: refused at once, nothing waits
    assert client.get(f"/api/submissions/{sid}?wait=30", headers={"Authorization": f"Bearer {xss_token}"}).status_code == 403
    assert watch.count == 0
    for bad in ("-1", "31", "nan", "x", "1e400"):
        r = client.get(f"/api/submissions/{sid}?wait={bad}", headers=auth)
        assert r.status_code == 400 and r.json()["error"] == "wait must be a number of seconds from 0 to 30", bad
    # scored while the request waits: the answer is the outcome
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.get, f"/api/submissions/{sid}?wait=30", headers=auth)
        for _ in range(3000):  # until the request waits (or has failed)
            if watch.count == 1 or waiting.done():
                break
            time.sleep(0.01)
        assert watch.count == 1
        _score(store)
        answer = waiting.result()
    assert answer.status_code == 200 and answer.json()["state"] == "finished"
    assert watch.count == 0 and not watch._waiting


def test_security_headers_on_every_response(board) -> None:
    _, client, _, _, _ = board
    for path in ("/phase/dev", "/submit", "/static/style.css", "/nope", "/api/submissions/1", "/admin"):
        headers = client.get(path).headers
        assert "frame-ancestors 'none'" in headers["content-security-policy"] and "script-src" not in headers["content-security-policy"]
        assert (headers["x-frame-options"], headers["x-content-type-options"], headers["referrer-policy"]) == ("DENY", "nosniff", "same-origin")
        assert "server" not in headers


def test_out_of_range_input_gets_4xx_html_or_json(board) -> None:
    _, client, _, _, _ = board
    for path in ("/submission/9223372036854775808", "/submission/-1", "/submission/1e3", "/api/submissions/99999999999999999999999",
                 "/submission/1/x.png", "/team/%00", "/team/a%E2%80%AEb", "/phase/%00", "/nope", "/api/nope"):
        r = client.get(path)
        assert 400 <= r.status_code < 500, (path, r.status_code)
        is_api = path.startswith("/api/")
        assert r.headers["content-type"].startswith("application/json" if is_api else "text/html"), path
    assert client.get("/nope", headers={"accept": "application/json"}).json() == {"error": "no such page"}
    assert client.post("/phase/dev").status_code == 405


def test_admin_page_and_actions_need_the_admin_token(board) -> None:
    store, client, token, _, admin = board
    assert client.post("/admin/reveal/dev").status_code == 403
    assert client.post("/admin/reveal/dev", headers={"Authorization": "Bearer nope"}).status_code == 403
    r = client.post("/admin/reveal/dev", headers={"Authorization": f"Bearer {admin}"})
    assert r.status_code == 200 and store.revealed("dev")
    assert client.post("/admin/rescore", headers={"Authorization": f"Bearer {admin}"}).json() == {"queued": 0}
    sid = _api_upload(client, token, variant(0)).json()["id"]
    assert "Admin token" in client.get("/admin").text  # not signed in: the sign-in form only
    csrf = _form_csrf(client, "/admin")
    assert client.post(f"/admin/cancel/{sid}", data={"csrf": csrf}, headers=SAME_SITE).status_code == 403
    r = client.post("/admin/login", data={"csrf": csrf, "token": admin}, headers=SAME_SITE, follow_redirects=False)
    assert r.status_code == 303
    page = client.get("/admin").text
    assert 'id="workers"' in page and "1 pending" in page
    r = client.post(f"/admin/cancel/{sid}", data={"csrf": csrf}, headers=SAME_SITE, follow_redirects=False)
    assert r.status_code == 303 and store.submission(sid)["state"] == "cancelled"
    status = client.get("/api/admin/status", headers={"Authorization": f"Bearer {admin}"}).json()
    assert status["queue"]["cancelled"] == 1 and status["workers"] == []


def test_calibration_plots_are_drawn_once(board, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.leaderboard.web import pages as app_module

    store, client, token, _, _ = board
    preds = json.loads(variant(5))
    for i, p in enumerate(preds):
        p["confidence"] = 0.3 + 0.6 * ((i * 7) % 10) / 10
    sid = _api_upload(client, token, json.dumps(preds).encode(), system="calibrated").json()["id"]
    _score(store)
    drawn = []
    real = app_module.plot_png
    monkeypatch.setattr(app_module, "plot_png", lambda kind, claims: drawn.append(kind) or real(kind, claims))
    own = {"Authorization": f"Bearer {token}"}  # drawn from per-claim correctness: the team's until the gold is shown
    assert "reliability diagram" not in client.get(f"/submission/{sid}").text
    assert client.get(f"/submission/{sid}/reliability.png").status_code == 403
    assert "reliability diagram" in client.get(f"/submission/{sid}", headers=own).text
    for _ in range(3):
        for kind in ("reliability", "risk-coverage"):
            png = client.get(f"/submission/{sid}/{kind}.png", headers=own)
            assert png.status_code == 200 and png.content[:4] == b"\x89PNG" and "max-age" in png.headers["cache-control"]
    assert drawn == ["reliability", "risk-coverage"]
    assert client.get(f"/submission/{sid}/other.png").status_code == 404


def test_hidden_phase_shows_no_scores_until_revealed(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'hidden.db'}"
    store = Store(url)
    store.init(competition_yaml(visibility="hidden"), where="c.yaml")
    token = store.add_team("blue")
    sid = store.submit(team="blue", system="secret-sys", phase="dev", content=variant(0), file_name="p.json").id
    _score(store)
    client = TestClient(create_app(url), base_url=BASE)
    assert "hidden until it ends" in client.get("/phase/dev").text
    assert client.get(f"/submission/{sid}").status_code == 403  # not on a visible board
    _sign_in(client, token)
    page = client.get(f"/submission/{sid}").text
    assert "Scores are hidden" in page and "0.1600" not in page
    assert client.get(f"/submission/{sid}/scores.json").status_code == 404
    store.reveal("dev")
    assert "secret-sys" in client.get("/phase/dev").text
    assert "0.1600" in TestClient(client.app, base_url=BASE).get(f"/submission/{sid}").text


def test_board_is_ranked_again_only_when_it_changed(board, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.leaderboard.web import site as site_module

    store, client, token, _, _ = board
    calls = []
    real = site_module.rank_board
    monkeypatch.setattr(site_module, "rank_board", lambda s, name: calls.append(name) or real(s, name))
    client.get("/phase/dev")
    client.get("/phase/dev?sort=team")
    assert calls == ["dev"]
    _api_upload(client, token, variant(0))
    _score(store)
    assert "0.1600" in client.get("/phase/dev").text
    assert calls == ["dev", "dev"]


def test_nul_bytes_and_huge_ids_get_4xx_on_both_backends(db_url: str) -> None:
    """PostgreSQL refuses NUL in text and integers past 2^63 with errors of its own: they
    must be caught as bad input first."""
    store = Store(db_url)
    store.init(competition_yaml(), where="c.yaml")
    token = store.add_team("blue")
    client = TestClient(create_app(db_url), base_url=BASE)
    for path in ("/team/a%00b", "/phase/a%00", "/submission/9223372036854775807", "/submission/9223372036854775808",
                 "/api/submissions/18446744073709551616", "/submission/%00"):
        assert 400 <= client.get(path).status_code < 500, path
    assert client.get("/api/submissions/1", headers={"Authorization": "Bearer a\x00b"}).status_code in (403, 404)
    for fields, name in (({"system": "a\x00b"}, "p.json"), ({"model": "x\x00"}, "p.json"), ({"phase": "dev\x00"}, "p.json"),
                         ({}, "p\x00.json")):
        r = client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"}, data={"system": "s", "phase": "dev", **fields},
                        files={"file": (name, variant(0))})
        assert r.status_code in (201, 400), (fields, r.status_code, r.text)
    (row,) = store.submissions()  # only the upload with a NUL in its file name was accepted (the name is only a label)
    assert "\x00" not in row["file_name"]
    assert store.team("a\x00b") is None
