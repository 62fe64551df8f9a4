"""``averitec score``'s ``data:`` signature field: a gold file ``averitec data download`` fetched
(and unchanged since) is named by its source and commit; any other gold file keeps the signature
as it was (against the local hub of :mod:`_hub_server`)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _hub_server import FakeHub, HubServer
from _score_fixtures import GOLD, PRED_2024, write_json
from test_downloads import AV, _env, cli, result

from averitec_tools.cli.main import main
from averitec_tools.metrics.signature import parse_signature

COMMIT = "0c" * 20


def _signature(pred: Path, gold: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(["score", str(pred), str(gold), "--json", "--jobs", "1", *extra]) == 0
    return str(json.loads(capsys.readouterr().out)["signature"])


def test_a_downloaded_gold_file_is_named_by_its_commit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hub = FakeHub()
    hub.add(*AV, "data/test.json", json.dumps(GOLD).encode())
    hub.pin(*AV, COMMIT)
    with HubServer(hub) as url:
        got = result(cli(_env(tmp_path, url), "averitec", "--split", "test", "--revision", COMMIT,
                         "--out", str(tmp_path / "data"), "--json"))
    gold = tmp_path / "data" / "averitec" / "test.json"
    assert got["results"][0]["dest"] == str(gold)
    pred = write_json(tmp_path / "pred.json", PRED_2024)
    plain = write_json(tmp_path / "gold.json", GOLD)  # the same claims, no manifest above
    assert plain.read_bytes() == gold.read_bytes()
    without = _signature(pred, plain, capsys)
    signed = _signature(pred, gold, capsys)
    assert signed == f"{without}|data:averitec/test=chenxwh/AVeriTeC@{COMMIT[:12]}"
    assert parse_signature(signed)["data"] == f"averitec/test=chenxwh/AVeriTeC@{COMMIT[:12]}"
    assert "data" not in parse_signature(without)
    from averitec_tools.scoring import BatchScorer

    batch = BatchScorer("averitec2024", gold)  # the same result as averitec score, field included
    assert batch.score(pred).signature == batch.score(PRED_2024).signature == signed
    assert BatchScorer("averitec2024", plain).score(pred).signature == without
    subset = _signature(pred, gold, capsys, "--subset")  # the user's file, not the subset's copy
    assert subset.endswith(f"|subset:3/3|data:averitec/test=chenxwh/AVeriTeC@{COMMIT[:12]}")
    gold.write_text(json.dumps(GOLD, indent=1))  # changed since the download: no longer those bytes
    assert _signature(pred, gold, capsys) == without


def _manifest(root: Path, entry: dict[str, Any]) -> None:
    (root / "averitec-data-manifest.json").write_text(json.dumps({"format": 1, "sources": {"averitec/dev": entry}}))


def test_files_the_manifest_does_not_vouch_for_keep_the_signature(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import hashlib

    from averitec_tools.downloads.manifest import MANIFEST_NAME
    from averitec_tools.scoring.data_source import MANIFEST_NAME as NAME_HERE
    from averitec_tools.scoring.data_source import data_fields, mark_data
    from averitec_tools.scoring.profiles.base import ProfileResult

    assert NAME_HERE == MANIFEST_NAME
    (tmp_path / "averitec").mkdir()
    gold = write_json(tmp_path / "averitec" / "dev.json", GOLD)
    sha = hashlib.sha256(gold.read_bytes()).hexdigest()
    record = {"path": "data/dev.json", "dest": str(gold), "sha256": sha, "size": gold.stat().st_size}
    hub = {"name": "averitec", "split": "dev", "repo": "chenxwh/AVeriTeC", "repo_type": "model",
           "revision": COMMIT, "commit": COMMIT, "from": "hub", "status": "unverified", "files": [record]}
    _manifest(tmp_path, hub)
    assert data_fields(gold) == [("data", f"averitec/dev=chenxwh/AVeriTeC@{COMMIT[:12]}")]
    _manifest(tmp_path, {**hub, "from": str(tmp_path / "usb")})  # installed with --from, not verified
    assert data_fields(gold) == []
    _manifest(tmp_path, {**hub, "files": [{**record, "dest": str(tmp_path / "other.json")}]})
    assert data_fields(gold) == []
    shutil.copy(gold, tmp_path / "copy.json")
    assert data_fields(tmp_path / "copy.json") == []
    _manifest(tmp_path, hub)
    plan = ProfileResult(profile="fever8", signature="", n_claims=1, summary={"dry_run": True})
    assert mark_data(plan, references=gold) is plan  # a --dry-run scores nothing: no signature to extend
    scored = mark_data(replace(plan, signature="profile:x|version:1", summary={"signature": "profile:x|version:1"}),
                       references=gold)
    assert scored.summary["signature"] == scored.signature == f"profile:x|version:1|data:averitec/dev=chenxwh/AVeriTeC@{COMMIT[:12]}"


def test_a_baseline_run_signature_names_its_downloaded_claims(tmp_path: Path) -> None:
    import hashlib

    from averitec_tools.baselines._run.driver import mark_data
    from averitec_tools.baselines._run.summary import RunSummary

    (tmp_path / "averitec").mkdir()
    claims = write_json(tmp_path / "averitec" / "dev.json", GOLD)
    record = {"path": "data/dev.json", "dest": str(claims), "sha256": hashlib.sha256(claims.read_bytes()).hexdigest()}
    _manifest(tmp_path, {"name": "averitec", "split": "dev", "repo": "chenxwh/AVeriTeC", "repo_type": "model",
                         "revision": COMMIT, "commit": COMMIT, "from": "hub", "status": "verified", "files": [record]})
    run_sig = "r2vc-run|config:offline-minilm|corpus:exclude-own"
    summary = RunSummary(out="p.json", config="offline-minilm", output_format="2024", extra={"signature": run_sig})
    mark_data(summary, claims_path=str(claims))
    assert summary.extra["signature"] == f"{run_sig}|data:averitec/dev=chenxwh/AVeriTeC@{COMMIT[:12]}"
    assert parse_signature(summary.extra["signature"]).head == "r2vc-run"
    mine = write_json(tmp_path / "mine.json", GOLD)  # the same bytes, no manifest names it
    summary = RunSummary(out="p.json", config="offline-minilm", output_format="2024", extra={"signature": run_sig})
    mark_data(summary, claims_path=str(mine))
    assert summary.extra["signature"] == run_sig
    unsigned = RunSummary(out="p.json", config="c", output_format="2024")  # the AVeriTeC baseline: no run signature
    mark_data(unsigned, claims_path=str(claims))
    assert "signature" not in unsigned.extra
