"""Web app through FastAPI's TestClient: pages, upload with token and CSRF, escaping, limits."""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.store import Store  # noqa: E402
from averitec_tools.leaderboard.web.app import create_app  # noqa: E402
from averitec_tools.leaderboard.worker import process_one  # noqa: E402
from tests._leaderboard_helpers import competition_yaml, variant  # noqa: E402

XSS = "<script>alert('x')</script>"


@pytest.fixture
def board(tmp_path):
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    admin = store.init(competition_yaml(limits={"total": 3}), where="demo.yaml")
    token = store.add_team("blue")
    xss_token = store.add_team(XSS)
    client = TestClient(create_app(url, max_upload_bytes=200_000), base_url="http://127.0.0.1")
    return store, client, token, xss_token, admin


def _form_csrf(client: TestClient) -> str:
    page = client.get("/submit")
    assert page.status_code == 200
    return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)


def test_upload_through_form_is_scored_and_ranked(board) -> None:
    store, client, token, xss_token, _ = board
    csrf = _form_csrf(client)
    r = client.post("/submit", data={"csrf": csrf, "token": token, "system": "base", "phase": "dev", "model": "bloom"},
                    files={"file": ("../../etc/passwd", variant(0), "application/json")}, follow_redirects=False)
    assert r.status_code == 303
    sid = int(r.headers["location"].rsplit("/", 1)[1])
    page = client.get(f"/submission/{sid}")
    assert "pending" in page.text and 'http-equiv="refresh"' in page.text
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    page = client.get(f"/submission/{sid}")
    assert "finished" in page.text and "refresh" not in page.text
    assert "By claim type" in page.text and "profile:averitec2024" in page.text
    assert store.submission(sid)["file_name"] == "passwd"
    scores = client.get(f"/submission/{sid}/scores.json").json()
    assert len(scores["per_claim"]) == 50
    board_page = client.get("/phase/dev")
    assert "base" in board_page.text and "0.1600" in board_page.text
    assert client.get("/phase/dev?sort=team&order=desc").status_code == 200
    team = client.get("/team/blue")
    assert re.search(r"<td>dev</td><td class=\"num\">1</td><td class=\"num\">∞</td><td class=\"num\">1</td><td class=\"num\">2</td>", team.text)


def test_user_strings_are_escaped(board) -> None:
    store, client, token, xss_token, _ = board
    r = client.post("/api/submissions", headers={"Authorization": f"Bearer {xss_token}"},
                    data={"system": XSS, "phase": "dev"}, files={"file": ("p.json", variant(1))})
    assert r.status_code == 201
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    for path in ("/phase/dev", f"/submission/{r.json()['id']}", "/team/" + quote(XSS, safe="")):
        text = client.get(path).text
        assert "<script>alert" not in text
        assert "&lt;script&gt;alert(" in text


def test_csrf_and_token_are_required(board) -> None:
    _, client, token, _, _ = board
    files = {"file": ("p.json", variant(0))}
    r = client.post("/submit", data={"csrf": "forged", "token": token, "system": "s", "phase": "dev"}, files=files)
    assert r.status_code == 403 and "CSRF" in r.text
    csrf = _form_csrf(client)
    r = client.post("/submit", data={"csrf": csrf, "token": "wrong", "system": "s", "phase": "dev"}, files=files)
    assert r.status_code == 403 and "invalid team token" in r.text
    assert client.post("/api/submissions", data={"system": "s", "phase": "dev"}, files=files).status_code == 403


def test_size_limit_while_streaming(board) -> None:
    _, client, token, _, _ = board
    headers = {"Authorization": f"Bearer {token}"}
    big = b"[" + b" " * 300_000 + b"]"
    r = client.post("/api/submissions", headers=headers, data={"system": "s", "phase": "dev"}, files={"file": ("p.json", big)})
    assert r.status_code == 413 and "limit" in r.text

    def chunks():  # no Content-Length: counted as it streams
        yield b"--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\n"
        for _ in range(100):
            yield b" " * 10_000

    r = client.post("/api/submissions", headers={**headers, "content-type": "multipart/form-data; boundary=x"}, content=chunks())
    assert r.status_code == 413


def test_api_idempotence_and_quota(board) -> None:
    _, client, token, _, _ = board
    headers = {"Authorization": f"Bearer {token}"}
    ids = []
    for seed in (0, 0, 1, 2, 3):
        r = client.post("/api/submissions", headers=headers, data={"system": "s", "phase": "dev"}, files={"file": ("p.json", variant(seed))})
        ids.append((r.status_code, r.json().get("id")))
    assert [s for s, _ in ids] == [201, 200, 201, 201, 429]
    assert ids[0][1] == ids[1][1]


def test_admin_actions_need_the_admin_token(board) -> None:
    store, client, _, _, admin = board
    assert client.post("/admin/reveal/dev").status_code == 403
    assert client.post("/admin/reveal/dev", headers={"Authorization": "Bearer nope"}).status_code == 403
    r = client.post("/admin/reveal/dev", headers={"Authorization": f"Bearer {admin}"})
    assert r.status_code == 200 and store.revealed("dev")
    assert client.post("/admin/rescore", headers={"Authorization": f"Bearer {admin}"}).json() == {"queued": 0}


def test_calibration_plots_when_confidences_exist(board) -> None:
    import json

    store, client, token, _, _ = board
    preds = json.loads(variant(5))
    for i, p in enumerate(preds):
        p["confidence"] = 0.3 + 0.6 * ((i * 7) % 10) / 10
    r = client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"}, data={"system": "calibrated", "phase": "dev"},
                    files={"file": ("p.json", json.dumps(preds).encode())})
    sid = r.json()["id"]
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    assert "reliability diagram" in client.get(f"/submission/{sid}").text
    for kind in ("reliability", "risk-coverage"):
        png = client.get(f"/submission/{sid}/{kind}.png")
        assert png.status_code == 200 and png.content[:4] == b"\x89PNG"
    assert client.get(f"/submission/{sid}/other.png").status_code == 404


def test_hidden_phase_shows_no_scores_until_revealed(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'hidden.db'}"
    store = Store(url)
    store.init(competition_yaml(visibility="hidden"), where="c.yaml")
    store.add_team("blue")
    sid = store.submit(team="blue", system="secret-sys", phase="dev", content=variant(0), file_name="p.json").id
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    assert "hidden until it ends" in client.get("/phase/dev").text
    page = client.get(f"/submission/{sid}").text
    assert "Scores are hidden" in page and "0.1600" not in page
    assert client.get(f"/submission/{sid}/scores.json").status_code == 404
    store.reveal("dev")
    assert "secret-sys" in client.get("/phase/dev").text
    assert "0.1600" in client.get(f"/submission/{sid}").text


def test_board_is_ranked_again_only_when_it_changed(board, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.leaderboard.web import app as app_module

    store, client, token, _, _ = board
    calls = []
    real = app_module.rank_store
    monkeypatch.setattr(app_module, "rank_store", lambda s, name: calls.append(name) or real(s, name))
    client.get("/phase/dev")
    client.get("/phase/dev?sort=team")
    assert calls == ["dev"]
    client.post("/api/submissions", headers={"Authorization": f"Bearer {token}"}, data={"system": "s", "phase": "dev"},
                files={"file": ("p.json", variant(0))})
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    assert "0.1600" in client.get("/phase/dev").text
    assert calls == ["dev", "dev"]
