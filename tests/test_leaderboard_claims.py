"""The per-claim viewer through FastAPI's TestClient: what a claim page and its JSON show,
before and after the reveal, on a gold_private phase and on private and hidden splits;
the paginated, searchable claim list; bad input (one message, nothing stored); escaping."""

from __future__ import annotations

import json

import pytest
from conftest import skip_or_fail

try:
    from fastapi.testclient import TestClient
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)

from averitec_tools.leaderboard.processing import Scorer  # noqa: E402
from averitec_tools.leaderboard.ranking import claim_mask  # noqa: E402
from averitec_tools.leaderboard.store import Store  # noqa: E402
from averitec_tools.leaderboard.web.app import create_app  # noqa: E402
from averitec_tools.leaderboard.worker import process_one  # noqa: E402
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS, competition_yaml  # noqa: E402

BASE = "http://127.0.0.1"
XSS = "<script>alert('claim')</script>"


def _board(tmp_path, **phase):
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    store.init(competition_yaml(**phase), where="demo.yaml")
    token = store.add_team("blue")
    preds = json.loads(DEMO_PREDS.read_text())
    preds[0]["evidence"][0]["answer"] += " " + XSS
    store.submit(team="blue", system="base", phase="dev", content=json.dumps(preds).encode(), file_name="p.json")
    process_one(store, Scorer(cache_dir=False, n_resamples=20))
    # as the submitting team: until the gold is shown per-claim scores are its own, never anonymous (issue 39)
    return store, TestClient(create_app(url), base_url=BASE, headers={"Authorization": f"Bearer {token}"}), token


def test_claim_before_and_after_the_reveal(tmp_path) -> None:
    store, client, token = _board(tmp_path)
    before = client.get("/api/submissions/1/claims/0")
    assert before.status_code == 200
    got = before.json()
    assert got["gold_label"] is None and got["gold_qa"] is None and got["matrix"] is None and got["assignment"] is None
    assert got["withheld"] and got["predicted_qa"] and got["scores"]["averitec_score@0.25"] in (0.0, 1.0)
    page = client.get("/submission/1/claim/0")
    assert page.status_code == 200 and 'id="gold-label"' not in page.text and 'id="matrix"' not in page.text
    assert XSS not in page.text and "&lt;script&gt;alert(&#39;claim&#39;)&lt;/script&gt;" in page.text  # escaped

    store.reveal("dev")
    gold = json.loads(DEMO_GOLD.read_text())
    stored = {c["id"]: c for c in client.get("/submission/1/scores.json").json()["per_claim"]}
    for claim_id in (0, 1, 17):
        got = client.get(f"/api/submissions/1/claims/{claim_id}").json()
        assert got["claim"] == gold[claim_id]["claim"] and got["gold_label"] == gold[claim_id]["label"]
        n_pred, n_gold = len(got["predicted_qa"]), len(got["gold_qa"])
        assert [len(r) for r in got["matrix"]] == [n_gold] * n_pred
        assert len(got["assignment"]) == min(n_pred, n_gold)
        rows, cols = zip(*got["assignment"], strict=True)
        assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols)  # a matching
        # the marked pairs add up to the scorer's stored Q+A score of this claim
        total = sum(got["matrix"][i][j] for i, j in got["assignment"]) / n_gold
        assert total == pytest.approx(stored[claim_id]["values"]["questions_answers"], abs=1e-5)
        assert got["questions_answers_recomputed"] == pytest.approx(stored[claim_id]["values"]["questions_answers"], abs=1e-6)
        assert got["scores"] == stored[claim_id]["values"]
        page = client.get(f"/submission/1/claim/{claim_id}").text
        assert page.count('class="num assigned"') == len(got["assignment"]) and 'id="gold-label"' in page


def test_gold_private_phase_never_shows_gold(tmp_path) -> None:
    store, client, _ = _board(tmp_path, gold_private=True, per_claim_feedback=True)
    store.reveal("dev")
    got = client.get("/api/submissions/1/claims/3").json()
    assert got["gold_label"] is None and got["gold_qa"] is None and got["matrix"] is None
    page = client.get("/submission/1/claim/3").text
    assert 'id="gold-label"' not in page and 'id="gold-qa"' not in page and 'id="matrix"' not in page and 'id="withheld"' in page


def test_private_split_claims_stay_hidden_until_the_reveal(tmp_path) -> None:
    store, client, token = _board(tmp_path, visibility="private", split={"public_fraction": 0.5, "seed": 13})
    phase = store.competition().phase("dev")
    public = [i for i, keep in enumerate(claim_mask(phase, 50, revealed=False)) if keep]
    private = [i for i in range(50) if i not in public]
    auth = {"Authorization": f"Bearer {token}"}  # even the submission's own team
    listed = client.get("/api/submissions/1/claims", headers=auth).json()
    assert [c["id"] for c in listed["claims"]] == public and listed["total"] == len(public)
    unknown = client.get("/api/submissions/1/claims/999", headers=auth)
    hidden = client.get(f"/api/submissions/1/claims/{private[0]}", headers=auth)
    assert hidden.status_code == unknown.status_code == 404  # a hidden claim is as unknown as a missing one
    assert hidden.json()["error"] == f"no visible claim '{private[0]}' in submission 1"
    assert client.get(f"/api/submissions/1/claims?q={private[0]}", headers=auth).json()["total"] == 0
    assert client.get(f"/api/submissions/1/claims/{public[0]}", headers=auth).status_code == 200
    store.reveal("dev")
    assert client.get(f"/api/submissions/1/claims/{private[0]}", headers=auth).status_code == 200


def test_hidden_phase_shows_no_claim_before_the_reveal(tmp_path) -> None:
    store, client, token = _board(tmp_path, visibility="hidden")
    auth = {"Authorization": f"Bearer {token}"}
    for path in ("/api/submissions/1/claims", "/api/submissions/1/claims/0"):
        r = client.get(path, headers=auth)
        assert r.status_code == 404 and "hidden until the organisers reveal" in r.json()["error"]
    assert "hidden until the organisers reveal" in client.get("/submission/1/claim/0", headers=auth).text
    store.reveal("dev")
    assert client.get("/api/submissions/1/claims/0", headers=auth).status_code == 200


def test_claim_list_pages_and_search(tmp_path) -> None:
    _, client, _ = _board(tmp_path)
    first = client.get("/api/submissions/1/claims").json()
    assert (first["page"], first["pages"], first["total"], len(first["claims"])) == (1, 1, 50, 50)
    assert [c["id"] for c in client.get("/api/submissions/1/claims?q=17").json()["claims"]] == [17]
    page = client.get("/submission/1/claims?q=17")
    assert page.status_code == 200 and 'href="/submission/1/claim/17"' in page.text and 'href="/submission/1/claim/18"' not in page.text
    assert 'id="claims-link"' in client.get("/submission/1").text


@pytest.mark.parametrize(("path", "status", "message"), [
    ("/api/submissions/99/claims/0", 404, "no submission 99"),
    ("/api/submissions/abc/claims", 404, "no submission abc"),
    ("/api/submissions/1/claims/abc", 404, "no visible claim 'abc'"),
    ("/api/submissions/1/claims/-1", 404, "no visible claim '-1'"),
    ("/api/submissions/1/claims/" + "9" * 5000, 404, "no visible claim '999999999999'"),
    ("/api/submissions/1/claims?page=0", 400, "page must be a whole number"),
    ("/api/submissions/1/claims?page=x", 400, "page must be a whole number"),
    ("/api/submissions/1/claims?page=2", 400, "page 2 is past the last page (1)"),
    ("/api/submissions/1/claims?page=" + "9" * 5000, 400, "page must be a whole number"),
    ("/api/submissions/1/claims?q=abc", 400, "digits only"),
    ("/api/submissions/1/claims?q=" + "1" * 5000, 400, "digits only"),
])
def test_bad_input_is_one_clear_message_and_nothing_is_stored(tmp_path, path: str, status: int, message: str) -> None:
    store, client, _ = _board(tmp_path)
    before = (store.submissions(), store.results())
    r = client.get(path)
    assert r.status_code == status and message in r.json()["error"] and len(r.json()["error"]) < 200
    html = client.get(path.replace("/api/submissions/", "/submission/").replace("/claims/", "/claim/"))
    assert html.status_code == status and message.replace("'", "&#39;") in html.text and "Traceback" not in html.text
    assert (store.submissions(), store.results()) == before


def test_missing_nltk_data_on_the_server_is_one_message(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.errors import ResourceError
    from averitec_tools.leaderboard.web import claims

    store, client, _ = _board(tmp_path)
    store.reveal("dev")

    def no_wordnet(site):
        raise ResourceError("NLTK resource 'wordnet' not found")

    monkeypatch.setattr(claims, "_engine", no_wordnet)
    r = client.get("/api/submissions/1/claims/0")
    assert r.status_code == 503 and r.json() == {"error": "the claim cannot be shown now: NLTK resource 'wordnet' not found"}
    monkeypatch.undo()
    assert client.get("/api/submissions/1/claims/0").status_code == 200
