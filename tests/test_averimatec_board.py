"""AVerImaTeC on the board: uploads bounded in image count, bytes and pixels (before any
scoring), the image bounds of a competition's ``validation``, and previews re-encoded as PNG."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from _averimatec_fixtures import b64, image_bytes, prediction, write_dataset
from _judge_server import requests_sent, running
from PIL import Image

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.competition import parse_competition
from averitec_tools.leaderboard.limits import SubmissionLimits, check_submission
from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.ranking import rank_store
from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.worker import process_one
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.averimatec_images import decode_image, png_preview
from averitec_tools.scoring.profiles import get_profile


def _upload(items: list[dict]) -> bytes:
    return json.dumps(items).encode()


def test_images_are_counted_not_tokenised() -> None:
    items = [prediction(i) for i in range(4)]
    big = b64(image_bytes(3, size=(400, 300)))  # a few KB of base64: thousands of "tokens" if it were text
    items[0]["evidence"][0]["images"] = [big]
    stats = check_submission(_upload(items), limits=SubmissionLimits(max_tokens_per_string=50), file_name="s.json")
    assert stats.images == 4 and stats.max_tokens_per_string < 50


@pytest.mark.parametrize(("mutate", "limits", "message"), [
    (lambda e: e.update(images=[b64(image_bytes(1))] * 3, text="[IMG_1]"), SubmissionLimits(max_images_per_claim=2),
     r"s\.json\[0\] \(id 0\): 3 evidence images, the competition allows at most 2 per claim"),
    (lambda e: e.update(images=[b64(image_bytes(1, size=(300, 300)))]), SubmissionLimits(max_image_bytes=100),
     r"s\.json\[0\] \(id 0\): evidence\[0\]\.images\[0\]: an image of more than 100 bytes"),
    (lambda e: e.update(images=["bm90IGFuIGltYWdl"]), SubmissionLimits(), r"evidence\[0\]\.images\[0\]: not an image"),
    (lambda e: e.update(images=[3]), SubmissionLimits(), r"evidence\[0\]\.images\[0\]: an image must be a base64 string"),
])
def test_image_bounds(mutate, limits: SubmissionLimits, message: str) -> None:  # type: ignore[no-untyped-def]
    items = [prediction(0), prediction(1)]
    mutate(items[0]["evidence"][0])
    with pytest.raises(UserError, match=message):
        check_submission(_upload(items), limits=limits, file_name="s.json")


def test_a_bomb_is_refused_from_its_header() -> None:
    buf = io.BytesIO()
    Image.new("1", (10_000, 10_000)).save(buf, format="PNG")  # 100 megapixels in a few KB
    items = [prediction(0)]
    items[0]["evidence"][0]["images"] = [base64.b64encode(buf.getvalue()).decode()]
    with pytest.raises(UserError, match=r"an image of 10000x10000 pixels; the competition allows at most 40000000"):
        check_submission(_upload(items), limits=SubmissionLimits(), file_name="s.json")


def test_competition_validation_sets_the_image_bounds() -> None:
    c = parse_competition({"name": "fever9", "phases": [{
        "name": "val", "gold": "val.json", "profiles": ["averimatec"], "primary_metric": "verdict",
        "options": {"averimatec": {"judge_url": "http://127.0.0.1:8000/v1", "judge_model": "google/gemma-3-27b-it",
                                   "averimatec_preset": "notebook"}}}],
        "validation": {"max_images_per_claim": 8, "max_image_bytes": 2_000_000, "max_image_pixels": 4_000_000}},
        where="c.yaml")
    assert (c.validation.max_images_per_claim, c.validation.max_image_bytes, c.validation.max_image_pixels) == (
        8, 2_000_000, 4_000_000)
    assert c.phase("val").profile == "averimatec" and dict(c.phase("val").options[0][1])["averimatec_preset"] == "notebook"
    with pytest.raises(UserError, match="primary_metric"):
        parse_competition({"name": "x", "phases": [{"name": "val", "gold": "val.json", "profiles": ["averimatec"],
                                                    "primary_metric": "averitec_score@0.25"}]}, where="c.yaml")


def test_previews_are_new_png_bytes() -> None:
    jpeg = image_bytes(5, fmt="JPEG", size=(900, 300))
    png = png_preview(decode_image(b64(jpeg), where="w"), max_side=300)
    assert png != jpeg and png[:4] == b"\x89PNG"
    with Image.open(io.BytesIO(png)) as img:
        assert img.format == "PNG" and img.size == (300, 100) and not img.info.get("exif")
    gif = image_bytes(6, fmt="GIF")
    with Image.open(io.BytesIO(png_preview(decode_image(b64(gif), where="w")))) as img:
        assert img.format == "PNG" and img.mode in ("RGB", "RGBA")


def _finished(store: Store, sid: int) -> None:
    done = store.submission(sid)
    assert done is not None
    assert done["state"] == "finished", done["server_reason"]


FIXTURES = {"rules": [{"match": ["[QUES]: "], "responses": [{"content": "[STAT]: A statement."}]},
                      {"match": ["[IMG_SET_2]:"], "responses": [{"content": "9"}]}],
            "default": {"content": "[PRED in REF]: 1; (PRED_1, REF_1)\n[PRED in REF Exp]: 1. a. \n"
                                   "[REF in PRED]: 1; (REF_1, PRED_1)\n[REF in PRED Exp]: 1. x. 2. y."}}


def test_a_phase_scored_with_averimatec_and_its_viewer(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from averitec_tools.leaderboard.web.app import create_app

    gold = write_dataset(tmp_path / "data", 4)
    items = [prediction(i) for i in range(4)]
    jpeg = image_bytes(9, fmt="JPEG", size=(700, 200))
    items[0]["evidence"][0]["images"] = [b64(jpeg)]
    upload = json.dumps(items).encode()
    (tmp_path / "sub.json").write_bytes(upload)
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    with running(FIXTURES, tmp_path / "server") as (url, log):
        options = {"averimatec": {"judge_url": url, "judge_model": "fixture", "judge_cache": str(tmp_path / "cache")}}
        store = Store(db)
        store.init(json.dumps({"name": "fever9", "n_resamples": 100, "phases": [
            {"name": "val", "gold": str(gold), "profiles": ["averimatec"], "primary_metric": "verdict",
             "columns": ["verdict", "evidence", "question", "justification", "label_accuracy"], "options": options}],
            "validation": {"max_image_pixels": 1_000_000}}), where="c.yaml")
        token = store.add_team("blue")
        sid = store.submit(team="blue", system="s", phase="val", content=upload, file_name="sub.json").id
        process_one(store, Scorer(cache_dir=False, n_resamples=50), submission_id=sid)
        _finished(store, sid)
        n = len(requests_sent(log))
        cli = get_profile("averimatec").score(predictions=tmp_path / "sub.json", references=gold, judge_url=url,
                                              judge_model="fixture", judge_cache=str(tmp_path / "cache"))
        assert len(requests_sent(log)) == n  # the board's replies are in the cache: the same judgements
    (row,) = rank_store(store, "val")
    for k in ("question", "evidence", "verdict", "justification", "label_accuracy"):
        assert row.metrics[k] == pytest.approx(cli.summary[k], abs=1e-9)
    assert row.signature.split("|")[:2] == ["profile:averimatec", "metric:averimatec-score"]

    client = TestClient(create_app(db), base_url="http://127.0.0.1", headers={"Authorization": f"Bearer {token}"})
    page = client.get(f"/submission/{sid}/claim/0")
    assert page.status_code == 200, page.text[:300]
    src = f"/submission/{sid}/claim/0/image/0/0.png"
    assert f'src="{src}"' in page.text and "Evidence 0 of claim 0" in page.text and 'id="withheld"' in page.text
    image = client.get(src)
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content != jpeg and image.content[:4] == b"\x89PNG"
    with Image.open(io.BytesIO(image.content)) as img:
        assert img.format == "PNG" and img.size == (512, 146)
    for bad in (f"/submission/{sid}/claim/0/image/0/1.png", f"/submission/{sid}/claim/0/image/x/0.png",
                f"/submission/{sid}/claim/99/image/0/0.png"):
        assert client.get(bad).status_code == 404
    detail = client.get(f"/api/submissions/{sid}/claims/0").json()
    assert (detail["kind"], detail["evidence"][0]["images"], detail["gold_label"]) == ("averimatec", 1, None)

    # The competition's image bounds: refused at upload (header pixels), before any scoring.
    too_big = json.loads(json.dumps(items))
    too_big[1]["evidence"][0]["images"] = [b64(image_bytes(1, size=(1200, 900)))]
    sid2 = store.submit(team="blue", system="s2", phase="val", content=json.dumps(too_big).encode(), file_name="big.json").id
    process_one(store, Scorer(cache_dir=False, n_resamples=50), submission_id=sid2)
    failed = store.submission(sid2)
    assert failed is not None
    assert failed["state"] == "failed" and "evidence[0].images[0]: an image of 1200x900 pixels" in failed["reason"], failed


def _judge_phase(gold: Path, url: str, cache: Path) -> str:
    options = {"averimatec": {"judge_url": url, "judge_model": "fixture", "judge_cache": str(cache), "judge_retries": 0,
                              "judge_backoff": 0.01}}
    return json.dumps({"name": "fever9", "n_resamples": 100, "phases": [
        {"name": "val", "gold": str(gold), "profiles": ["averimatec"], "primary_metric": "verdict",
         "columns": ["verdict", "evidence", "question", "justification", "label_accuracy"], "options": options}]})


def test_the_board_s_judge_policy_applies_to_averimatec_as_to_fever8(tmp_path: Path) -> None:
    """No special case: the board's input bound (10 items of 2,000 characters), its failure mode
    (unscored) and its snapshot reach an averimatec phase. Claim 1's justification request
    fails on the judge's side: the row is incomplete; claim 2's 12 evidence items are cut to
    10. With the judge back, a rescore re-uses the snapshot and asks for the one missing reply."""
    gold = write_dataset(tmp_path / "data", 4)
    items = [prediction(i, n_evidence=12 if i == 2 else 2) for i in range(4)]
    down = {"rules": [{"match": ["Predicted justification for claim 1."], "responses": [{"status": 503}]},
                      *FIXTURES["rules"]], "default": FIXTURES["default"]}
    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    scorer = Scorer(cache_dir=False, n_resamples=50)
    with running(down, tmp_path / "down") as (url, log):
        store.init(_judge_phase(gold, url, tmp_path / "cache"), where="c.yaml")
        store.add_team("blue")
        sid = store.submit(team="blue", system="s", phase="val", content=json.dumps(items).encode(), file_name="s.json").id
        process_one(store, scorer, submission_id=sid)
        shown = " ".join(e["flat"] for e in requests_sent(log))
    _finished(store, sid)
    assert "Evidence 9 of claim 2" in shown and "Evidence 10 of claim 2" not in shown
    (row,) = rank_store(store, "val")
    sig = parse_signature(row.signature)
    assert row.status == "incomplete" and row.unscored == {"judge_request_failed": 1}
    assert (sig["input"], sig["failures"], sig["refused"]) == ("10x2000c", "unscored(1)", "zero(0)")
    judge = store.results([sid])[sid][0]["summary"]["judge"]
    assert judge["complete"] is False and judge["claims_cut"] == 1 and judge["input"] == "10x2000c"
    stored = store.judge_snapshots(sid)["averimatec"]
    assert stored["settings"]["input"] == "10x2000c" and sig["judge_snapshot"].startswith("sha256.")

    with running({"rules": FIXTURES["rules"], "default": FIXTURES["default"]}, tmp_path / "back") as (url2, log2):
        store.init(_judge_phase(gold, url2, tmp_path / "cache-2"), where="c.yaml")  # an empty cache: the snapshot serves
        assert store.requeue(submission_id=sid) == 1
        process_one(store, scorer, submission_id=sid)
        sent = requests_sent(log2)
    assert len(sent) == 1 and "Predicted justification for claim 1." in sent[0]["flat"]
    (again,) = rank_store(store, "val")
    assert again.status == "ranked" and again.n_unscored == 0
    assert parse_signature(again.signature)["judge_snapshot"] != sig["judge_snapshot"]
