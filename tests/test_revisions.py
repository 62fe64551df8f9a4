"""Revisions pinned: the catalogue's commits, ``--revision``, and the commit read recorded in
``DatasetInfo``, ``stats --json`` and signatures (against the local hub of :mod:`_hub_server`)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _hub_server import FakeHub, HubServer
from test_downloads import AV, CLAIM, _env, cli, one_line_error, result

from averitec_tools.cli.main import main

OLD, NEW = "0a" * 20, "0b" * 20


def test_every_hub_source_is_pinned_to_a_commit_or_refuses_unpinned(capsys: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    assert main(["data", "list", "--json", "--out", str(tmp_path)]) == 0
    rows = json.loads(capsys.readouterr().out)["sources"]
    # FEVER's first location is fever.ai's plain HTTPS folder: no revisions, its files held to their recorded sha256
    folders = {r["repo"] for r in rows if r["repo_type"] == "url"}
    assert folders == {"https://fever.ai/download/fever"}
    hub_rows = [r for r in rows if r["repo"] is not None and r["repo_type"] != "url"]
    assert {r["repo"] for r in hub_rows} >= {"chenxwh/AVeriTeC", "tals/vitaminc"}
    for r in hub_rows:
        assert r["pinned"] == (r["revision"] is not None), r
        assert r["revision"] is None or re.fullmatch(r"[0-9a-f]{40}", r["revision"]), r
    by_key = {r["source"]: r for r in rows}
    assert by_key["averitec/dev"]["revision"] == "8a4d25e17a70bbeda5fe2abda53c80e2c8bc99af"
    for r in hub_rows:
        if not r["pinned"]:
            split = ["--split", r["split"]] if r["split"] else []
            assert main(["data", "download", r["name"], *split, "--out", str(tmp_path / "o")]) == 2
            err = capsys.readouterr().err.strip()
            assert len(err.splitlines()) == 1 and "is pinned" in err and "--revision COMMIT" in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.shared_data
def test_a_pinned_download_asks_for_the_commit_and_records_it(shared_data: Path, tmp_path: Path) -> None:
    from averitec_tools.loaders.catalogue import AVERITEC_HUB

    dev = (shared_data / "averitec" / "dev.json").read_bytes()  # the file the package records
    pin = AVERITEC_HUB.revision
    assert pin is not None
    hub = FakeHub()
    hub.add(*AV, "data/dev.json", dev)
    hub.pin(*AV, pin, NEW)  # main has moved on since the pinned commit
    env = _env(tmp_path, None)
    code = ("import json; from averitec_tools import loaders; ds = loaders.load('averitec', split='dev'); "
            "print(json.dumps([ds.info.description, ds.info.download_checksums, "
            "loaders.provenance('averitec/dev').to_dict()]))")
    with HubServer(hub) as url:
        proc = subprocess.run([sys.executable, "-c", code], env={**env, "HF_ENDPOINT": url}, capture_output=True,
                              text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    description, checksums, prov = json.loads(proc.stdout)
    assert {p for m, p, _ in hub.log if p.endswith("dev.json")} == {f"/chenxwh/AVeriTeC/resolve/{pin}/data/dev.json"}
    assert f"commit {pin}" in description
    assert checksums == {f"hf://chenxwh/AVeriTeC@{pin}/data/dev.json": {
        "num_bytes": len(dev), "checksum": hashlib.sha256(dev).hexdigest()}}
    assert prov["origin"] == "download" and prov["revision"] == pin and prov["pinned"]
    assert prov["data"] == f"chenxwh/AVeriTeC@{pin[:12]}"


def test_revision_overrides_the_pin_and_a_local_file_of_another_commit_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    hub = FakeHub()
    hub.add(*AV, "data/test.json", json.dumps([CLAIM] * 2).encode())
    hub.pin(*AV, OLD, NEW)
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        got = result(cli(env, "averitec", "--split", "test", "--revision", OLD, "--json"))
        line = one_line_error(cli(env, "averitec", "--split", "test", "--revision", "nope", "--out", str(tmp_path / "x")))
    assert "revision not found" in line and "--revision" in line
    assert [p for m, p, _ in hub.log if m == "GET" and p.endswith("test.json")] == \
        [f"/chenxwh/AVeriTeC/resolve/{OLD}/data/test.json"]
    manifest = json.loads((tmp_path / "cache" / "data" / "averitec-data-manifest.json").read_text())
    entry = manifest["sources"]["averitec/test"]
    assert (entry["revision"], entry["commit"]) == (OLD, OLD) and got["revision"] == OLD

    from averitec_tools import loaders

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)  # offline, read from the download root only
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert loaders.provenance("averitec/test", revision=OLD[:10]).revision == OLD
    capsys.readouterr()
    assert main(["stats", "averitec", "--split", "test", "--revision", NEW]) == 2
    assert f"at chenxwh/AVeriTeC@{OLD}, not the revision {NEW}" in capsys.readouterr().err


def test_stats_json_names_the_bytes_it_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.metrics.signature import parse_signature, render_signature

    dev = tmp_path / "dev.json"
    dev.write_text(json.dumps([CLAIM]))
    assert main(["stats", "averitec", "--split", "dev", "--data-dir", str(tmp_path), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["source"]
    sha = hashlib.sha256(dev.read_bytes()).hexdigest()
    assert source["origin"] == "local" and source["revision"] is None and source["files"][0]["sha256"] == sha
    assert source["data"] == f"sha256.{sha[:12]}"
    from averitec_tools.loaders import provenance
    from averitec_tools.loaders.provenance import data_field

    sig = render_signature([("profile", "x"), data_field(provenance("averitec/dev", data_dir=tmp_path))])
    assert parse_signature(sig)["data"] == f"averitec/dev=sha256.{sha[:12]}"


@pytest.mark.shared_data
def test_the_official_dev_file_is_known_by_its_checksum(shared_data: Path) -> None:
    """A copy of dev.json that is byte-identical to the recorded file is named by the pinned commit."""
    from averitec_tools import loaders

    prov = loaders.provenance("averitec/dev", data_dir=shared_data)
    assert prov.origin == "catalogue" and prov.pinned and prov.repo == "chenxwh/AVeriTeC"
    assert prov.signature_value() == "chenxwh/AVeriTeC@8a4d25e17a70"
    ds = loaders.load("averitec/dev", data_dir=shared_data)
    assert "commit 8a4d25e17a70bbeda5fe2abda53c80e2c8bc99af" in ds.info.description


def test_a_downloaded_store_is_named_by_its_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_downloads import doc, store_zip

    hub = FakeHub()
    hub.add(*AV, "data_store/knowledge_store/test_2025/a.zip", store_zip({"x/0.json": [doc(0)]}), lfs=True)
    hub.pin(*AV, OLD)
    with HubServer(hub) as url:
        result(cli(_env(tmp_path, url), "fever8-store", "--revision", OLD, "--json"))
    from averitec_tools import loaders

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    prov = loaders.provenance("averitec/knowledge_store", split="test_2025")
    assert (prov.origin, prov.revision, prov.what) == ("download", OLD, "averitec/knowledge_store:test_2025")
    assert list(prov.checksums()) == [f"hf://chenxwh/AVeriTeC@{OLD}/data_store/knowledge_store/test_2025/a.zip"]
    ds = loaders.load("averitec/knowledge_store", split="test_2025", streaming=True)
    assert f"commit {OLD}" in ds.info.description and [r["url"] for r in ds] == ["https://e.org/0"]
