"""``averitec export-hf --push-to-hub``: the export uploaded with ``huggingface_hub`` to the local hub."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _averimatec_fixtures import write_dataset
from _hub_server import FakeHub, HubServer
from test_downloads import _env
from test_loaders_averitec import CLAIMS

from averitec_tools.cli.main import main

REPO = "someone/averimatec-val"


def export(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "export-hf", *args], env=env,
                          capture_output=True, text=True, timeout=180)


def test_push_uploads_card_and_shards_in_one_commit_each(tmp_path: Path) -> None:
    import datasets

    write_dataset(tmp_path / "im" / "averimatec", 3, split="val")
    (tmp_path / "im" / "averimatec" / "train.json").write_text(json.dumps([]), encoding="utf-8")
    out = tmp_path / "out"
    hub = FakeHub()
    with HubServer(hub) as url:
        env = {**_env(tmp_path, url), "HF_HUB_DISABLE_XET": "1", "HF_TOKEN": "hf_test", "HF_HUB_OFFLINE": "0"}
        first = export(env, "averimatec", "--split", "val", "--data-dir", str(tmp_path / "im"), "--out", str(out),
                       "--push-to-hub", REPO, "--json")
        assert first.returncode == 0, first.stderr
        second = export(env, "averimatec", "--split", "train", "--data-dir", str(tmp_path / "im"), "--out", str(out),
                        "--push-to-hub", REPO)
        assert second.returncode == 0, second.stderr
    pushed = json.loads(first.stdout)["pushed"]
    commits = hub.commits[("dataset", REPO)]
    assert pushed["repo"] == REPO and pushed["commit"] == commits[0] and len(commits) == 2
    assert f"at commit {commits[1]}" in second.stdout
    assert "averimatec/val (val, from sha256." in hub.commit_messages[0]
    stored = {path: f for (t, r, path), f in hub.files.items() if (t, r) == ("dataset", REPO)}
    local = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {p: f.data for p, f in stored.items()} == local  # the card and every shard, byte for byte
    assert stored["data/val-00000-of-00001.parquet"].lfs and not stored["README.md"].lfs
    assert [m for m, p, _ in hub.log if p.startswith("/lfs-upload/")].count("PUT") == 2  # one shard per commit
    assert ("POST", "/api/repos/create", None) in hub.log

    mirror = tmp_path / "mirror"  # the repository as a clone holds it: datasets reads it back
    for path, f in stored.items():
        (mirror / path).parent.mkdir(parents=True, exist_ok=True)
        (mirror / path).write_bytes(f.data)
    back = datasets.load_dataset(str(mirror), split="val", cache_dir=str(tmp_path / "hf-cache"))
    assert back["claim_text"] == [f"Claim {i}: the photo shows something." for i in range(3)]
    assert back[0]["claim_images"][0].size == (6, 4)


@pytest.mark.parametrize(("args", "message"), [
    (["--push-to-hub", "not a repo"], "expected OWNER/NAME"),
    (["--push-to-hub", "a/b", "--private"], "the hub is disabled"),
])
def test_push_refusals_come_before_any_work(args: list[str], message: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["export-hf", "averitec", "--split", "dev", "--data-dir", str(tmp_path), "--out",
                 str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
