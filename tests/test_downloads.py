"""``averitec data download`` against a real local HTTP server answering the hub's endpoints.

The CLI runs as a subprocess with ``HF_ENDPOINT`` pointed at :mod:`_hub_server` (and the
hub not disabled), exactly as a user's machine would talk to huggingface.co; what it sends
is read from the server's request log. Checksums the tests compare against are computed
here with ``hashlib`` from the fixture bytes, independently of the code under test.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from _hub_server import FakeHub, HubServer

from averitec_tools.cli.main import main

AV = ("model", "chenxwh/AVeriTeC")
#: A commit named with --revision where the catalogue pins none (the local hub resolves any 40-hex revision).
REV = "feedface" * 5
CLAIM = {"claim": "A claim.", "claim_date": "01-05-2025", "speaker": "someone", "questions": []}


def _env(tmp: Path, url: str | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "AVERITEC_DATA_DIR")}
    env.update(AVERITEC_CACHE_DIR=str(tmp / "cache"), HF_HOME=str(tmp / "hf"), HF_HUB_DISABLE_TELEMETRY="1")
    if url:
        env["HF_ENDPOINT"] = url
    env.update(extra)
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "data", "download", *args],
                          env=env, capture_output=True, text=True, timeout=120)


def result(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["sources"][0]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def store_zip(members: dict[str, list[dict[str, Any]]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, docs in members.items():
            z.writestr(name, "".join(json.dumps(d) + "\n" for d in docs))
    return buf.getvalue()


def doc(i: int) -> dict[str, Any]:
    return {"claim_id": i, "type": "claim", "query": "q", "url": f"https://e.org/{i}", "url2text": [f"Page {i}."]}


@pytest.mark.shared_data
def test_fresh_machine_loads_dev_in_one_line_then_offline(shared_data: Path, tmp_path: Path) -> None:
    """Issue 20 §3: no local files, the hub reachable: loaders.load downloads the verified file."""
    dev = (shared_data / "averitec" / "dev.json").read_bytes()
    hub = FakeHub()
    hub.add(*AV, "data/dev.json", dev)
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        code = "from averitec_tools import loaders; print(len(loaders.load('averitec', split='dev')))"
        first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == "500"
        assert "downloading averitec/dev" in first.stderr and "sha256-verified" in first.stderr
        again = result(cli(env, "averitec", "--split", "dev", "--json"))
    root = tmp_path / "cache" / "data"
    assert again["results"][0]["action"] == "present" and again["results"][0]["status"] == "verified"
    assert again["results"][0]["sha256"] == hashlib.sha256(dev).hexdigest()
    entry = json.loads((root / "averitec-data-manifest.json").read_text())["sources"]["averitec/dev"]
    assert entry["repo"] == "chenxwh/AVeriTeC" and entry["repo_type"] == "model" and entry["complete"]
    assert entry["files"][0]["hub_hash_match"] is True and entry["files"][0]["contents"] == "500 claims"
    assert [m for m, p, _ in hub.log if p.endswith("data/dev.json")] == ["HEAD", "GET"]
    offline = subprocess.run([sys.executable, "-c", code], env={**_env(tmp_path, None), "HF_HUB_OFFLINE": "1"},
                             capture_output=True, text=True, timeout=120)
    assert offline.returncode == 0 and offline.stdout.strip() == "500", offline.stderr
    assert offline.stderr == ""


def test_interrupted_download_resumes(tmp_path: Path) -> None:
    claims = [{**CLAIM, "claim": f"claim {i} " + "x" * 1000} for i in range(11500)]
    data = json.dumps(claims).encode()
    assert len(data) > 11_000_000
    hub = FakeHub()
    hub.add(*AV, "data/test.json", data, cut_after=10_600_000, script=["cut", "fail"])
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        line = one_line_error(cli(env, "averitec", "--split", "test", "--revision", REV, "--json"))
        assert "download interrupted" in line and "run the same command again to resume" in line
        kept = int(line.split(" bytes kept in ")[0].rsplit("(", 1)[1].split(" of ")[0])
        assert kept >= 1 << 20  # at least a chunk was kept
        done = result(cli(env, "averitec", "--split", "test", "--revision", REV, "--json"))
    ranges = [r for m, p, r in hub.log if m == "GET" and p.endswith("data/test.json")]
    assert ranges[-1] == f"bytes={kept}-"
    res = done["results"][0]
    assert res["action"] == "resumed" and res["sha256"] == hashlib.sha256(data).hexdigest()
    assert res["status"] == "unverified" and res["hub_hash_match"] is True  # git blob id checked
    assert (tmp_path / "cache" / "data" / "averitec" / "test.json").read_bytes() == data
    assert not list((tmp_path / "cache" / "data" / ".partial").rglob("*.part"))


def test_corrupted_files_are_refused(tmp_path: Path) -> None:
    wrong = json.dumps([CLAIM]).encode()
    real = json.dumps([CLAIM, CLAIM]).encode()
    hub = FakeHub()
    hub.add(*AV, "data/dev.json", wrong)  # served consistently, but not the file the package records
    hub.add(*AV, "data/test.json", real, serve=real[:-3] + b"]]]")  # damaged in transit
    root = tmp_path / "cache" / "data"
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        line = one_line_error(cli(env, "averitec", "--split", "dev"))
        assert f"sha256 {hashlib.sha256(wrong).hexdigest()} does not match 4997937" in line
        assert "recorded in the package" in line and "nothing was installed" in line
        line = one_line_error(cli(env, "averitec", "--split", "test", "--revision", REV))
        assert "the transfer was damaged" in line
    assert not (root / "averitec").exists() and not list(root.rglob("*.part"))


def test_disk_space_refused_before_any_byte(tmp_path: Path) -> None:
    hub = FakeHub()
    hub.add(*AV, "data/test.json", json.dumps([CLAIM]).encode())
    with HubServer(hub) as url:
        line = one_line_error(cli(_env(tmp_path, url), "averitec", "--split", "test", "--reserve", "1E",
                                  "--revision", REV))
    assert "needs" in line and "free" in line and "nothing was downloaded" in line
    assert [m for m, p, _ in hub.log if p.endswith("test.json")] == ["HEAD"]
    assert not (tmp_path / "cache" / "data" / "averitec").exists()


def test_disk_space_counts_unpacked_members(tmp_path: Path) -> None:
    """The check adds the members' unpacked size (from the archive's directory) to the archive."""
    from averitec_tools.downloads import DataSource, RemoteFile, Unpack, check_space, plan
    from averitec_tools.errors import UserError

    archive = store_zip({f"s/{i}.json": [doc(i)] * 50 for i in range(3)})
    (tmp_path / "have").mkdir()
    src = DataSource(name="t", split="x", title="t", license="x", hub=None, dest="t",
                     files=(RemoteFile("a.zip", size=len(archive)),), unpack=Unpack("store", "*.json"))
    out = tmp_path / "out"
    (out / ".partial" / "t--x").mkdir(parents=True)
    (out / ".partial" / "t--x" / "a.zip").write_bytes(archive)  # already fetched, not unpacked
    unpacked = sum(len(json.dumps(doc(i)) + "\n") * 50 for i in range(3))
    p = plan(src, out=out, online=False, free_space=lambda _: unpacked - 1)
    assert p.files[0].unpacked_size == unpacked and p.files[0].unpacked_measured
    assert p.download_bytes == 0 and p.disk_needed == unpacked
    with pytest.raises(UserError, match="nothing was downloaded"):
        check_space(p)
    check_space(plan(src, out=out, online=False, free_space=lambda _: unpacked))


def test_dry_run_lists_every_name_and_measures_stores(tmp_path: Path) -> None:
    import averitec_tools.loaders.catalogue  # noqa: F401
    from averitec_tools.downloads import all_sources

    parts = {"s1": store_zip({f"test_2025/{i}.json": [doc(i)] * 3 for i in range(2)}),
             "s2": store_zip({f"{i}.json": [doc(i)] for i in range(2, 4)})}
    hub = FakeHub()
    for name, data in parts.items():
        hub.add(*AV, f"data_store/knowledge_store/test_2025/{name}.zip", data, lfs=True)
    hub.add(*AV, "data/dev.json", b"[]")
    with HubServer(hub) as url:
        out = json.loads(cli(_env(tmp_path, url), "--dry-run", "--json", "--out", str(tmp_path / "o")).stdout)
    assert not (tmp_path / "o").exists()
    by_key = {s["source"]: s for s in out["sources"]}
    assert list(by_key) == [s.key for s in all_sources()]
    store = by_key["fever8-store/test"]
    with_members = [zipfile.ZipFile(io.BytesIO(d)) for d in parts.values()]
    members = sum(i.file_size for z in with_members for i in z.infolist())
    assert store["download_bytes"] == sum(len(d) for d in parts.values())
    assert store["unpacked_bytes"] == members and store["disk_needed"] == members + store["download_bytes"]
    assert all(f["unpacked_measured"] for f in store["files"])
    assert by_key["averitec/dev"]["total_bytes"] == 1785475 and by_key["averitec/dev"]["verified"]
    assert by_key["averitec-store/dev"]["repo_type"] == "model"
    assert by_key["fever/paper_dev"]["repo"] == "fever/fever" and by_key["vitaminc"]["repo_type"] == "dataset"
    gets = [(p, r) for m, p, r in hub.log if m == "GET" and p.endswith(".zip")]
    assert gets and all(r is not None for _, r in gets)  # only ranged reads of the directories


def test_dry_run_offline_uses_recorded_sizes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["data", "download", "--dry-run", "--json", "--out", str(tmp_path / "o")]) == 0
    sources = {s["source"]: s for s in json.loads(capsys.readouterr().out)["sources"]}
    assert sources["averitec-store/dev"]["download_bytes"] == 11537899362
    assert sources["averitec-store/train"]["total_bytes"] == 20730339734 + 21273604733 + 21520772573
    assert sources["fever-wiki-pages"]["total_bytes"] == 1713485474
    assert sources["fever8-store/test"]["files_listed_at_download"] and sources["fever8-store/test"]["download_bytes"] is None
    assert not (tmp_path / "o").exists()
    assert main(["data", "download", "--dry-run", "averitec-store", "--split", "dev"]) == 0
    text = capsys.readouterr().out
    assert "chenxwh/AVeriTeC (model, 8a4d25e17a70bbeda5fe2abda53c80e2c8bc99af)" in text and "10.7 GiB" in text
    assert "cc-by-nc-4.0" in text


def _closed_port() -> str:
    import socket

    with socket.socket() as sock:  # a port nothing listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_unreachable_hub_fails_fast_and_once(tmp_path: Path) -> None:
    """Issue 30 item 17: offline (no HF_HUB_OFFLINE), a dry run over every name took 70 s and
    printed 18 retry lines (huggingface_hub retries each listing 5 times). The hub is probed
    once: the dry run is planned from the package's records with one note; a download is one
    line, exit 2."""
    closed = _closed_port()
    env = _env(tmp_path, closed, AVERITEC_URL_ROOT=closed, AVERITEC_GITHUB_RAW=closed)
    proc = cli(env, "--dry-run", "--json", "--out", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    assert "Retry" not in proc.stderr and proc.stderr.strip() == "", proc.stderr
    sources = {s["source"]: s for s in json.loads(proc.stdout)["sources"]}
    # meta-eval's files are on GitHub and FEVER's first at fever.ai, not the hub: their own notes (those
    # hosts unreachable too) are not counted here
    notes = [n for s in sources.values() if s["repo_type"] not in ("github", "url") for n in s["notes"]
             if "is unreachable" in n or "not consulted" in n]
    assert len(notes) == 1 and "is unreachable" in notes[0], notes
    assert sources["averitec-store/dev"]["download_bytes"] == 11537899362  # the recorded sizes
    text = cli(env, "--dry-run", "--out", str(tmp_path / "o"))
    assert text.returncode == 0 and "Retry" not in text.stderr and text.stdout.count("is unreachable") == 1
    err = one_line_error(cli(env, "averitec", "--split", "dev", "--out", str(tmp_path / "o")))
    assert "is unreachable" in err and "--from DIR" in err
    assert not (tmp_path / "o").exists()


def test_transformers_offline_is_offline_as_for_huggingface_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub reads TRANSFORMERS_OFFLINE=1 as HF_HUB_OFFLINE=1: so does hub_offline
    (a dry run planned each source online, then noted 9 times that the hub was disabled)."""
    from averitec_tools.downloads import hub_offline

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    assert not hub_offline()
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert hub_offline()


def test_store_and_claims_unpack_where_the_baselines_look(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = FakeHub()
    hub.add(*AV, "data/test_2025.json", json.dumps([CLAIM] * 4).encode())
    hub.add(*AV, "data_store/knowledge_store/test_2025/a.zip",
            store_zip({"x/0.json": [doc(0)], "x/1.json": [doc(1)], "x/notes.txt": []}), lfs=True)
    hub.add(*AV, "data_store/knowledge_store/test_2025/b.zip", store_zip({"2.json": [doc(2)], "3.json": [doc(3)]}),
            lfs=True)
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        claims = result(cli(env, "fever8", "--revision", REV, "--json"))
        store = result(cli(env, "fever8-store", "--revision", REV, "--json"))
    root = tmp_path / "cache" / "data"
    assert claims["results"][0]["contents"] == "4 claims"
    assert store["unpacked"]["files"] == 4 and store["unpacked"]["skipped"] == 1
    assert sorted(p.name for p in (root / "averitec" / "knowledge_store" / "test_2025").iterdir()) == \
        ["0.json", "1.json", "2.json", "3.json"]
    assert not list((root / ".partial").rglob("*.zip"))  # archives deleted after unpacking

    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.loaders import load
    from averitec_tools.loaders.locate import store_for_claims

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    assert len(load("averitec", split="test_2025")) == 4
    found = store_for_claims(root / "averitec" / "test_2025.json")
    assert found == root / "averitec" / "knowledge_store" / "test_2025"
    assert [d.url for d in KnowledgeStore(found).documents(2)] == ["https://e.org/2"]


def test_baselines_default_to_downloaded_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.baselines.averitec import build as averitec_build
    from averitec_tools.baselines.averitec.config import builtin_config, train_path
    from averitec_tools.baselines.r2vc.offline.data import data_dir
    from averitec_tools.errors import UserError

    root = tmp_path / "cache" / "data"
    (root / "averitec" / "knowledge_store" / "dev").mkdir(parents=True)
    (root / "averitec" / "knowledge_store" / "dev" / "0.json").write_text(json.dumps(doc(0)) + "\n")
    (root / "averitec" / "dev.json").write_text(json.dumps([CLAIM]))
    (root / "averitec" / "train.json").write_text(json.dumps([CLAIM]))
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    assert data_dir() == root  # R2VC offline configuration
    assert train_path(builtin_config("offline-minilm")) == root / "averitec" / "train.json"
    seen: dict[str, Any] = {}

    def capture(**kw: Any) -> None:
        seen.update(kw)
        raise UserError("stop after the inputs are resolved")

    monkeypatch.setattr(averitec_build, "build_pipeline", capture)
    assert main(["baseline", "averitec", "--config", "offline-minilm", "--out", str(tmp_path / "p.json")]) == 2
    assert seen["store"] == str(root / "averitec" / "knowledge_store" / "dev")
    assert [c.claim for c in seen["claims"]] == ["A claim."]


@pytest.mark.shared_data
def test_from_dir_installs_verified_copies(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["data", "download", "averitec", "--split", "dev", "--from", str(shared_data / "averitec"),
                 "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["sources"][0]
    assert res["status"] == "verified" and res["results"][0]["action"] == "copied"
    assert (out / "averitec" / "dev.json").read_bytes() == (shared_data / "averitec" / "dev.json").read_bytes()
    assert main(["data", "list", "--out", str(out), "--json"]) == 0
    listed = {s["source"]: s for s in json.loads(capsys.readouterr().out)["sources"]}
    assert listed["averitec/dev"]["installed"] == "verified" and listed["averitec/train"]["installed"] is None


@pytest.mark.parametrize(("argv", "message"), [
    (["averitek"], "did you mean: averitec"),
    (["averitec"], "has several splits"),
    (["averitec", "--split", "nope"], "has no split 'nope'"),
    (["averitec", "--split", "dev", "--reserve", "lots"], "not a size"),
    (["averitec", "--split", "dev", "--from", "/nonexistent-dir"], "not a directory"),
    (["averitec", "--split", "dev", "--repo", "no-slash"], "expected OWNER/NAME"),
    (["fever", "--split", "paper_dev"], "hub is disabled"),
    (["averitec", "--split", "test"], "no commit of chenxwh/AVeriTeC is pinned"),
    (["averimatec", "--split", "all"], "no commit of Rui4416/AVerImaTeC is pinned"),
    (["averitec", "--split", "dev"], "hub is disabled"),
    ([], "NAME is required"),
])
def test_bad_input_is_one_line_exit_2(argv: list[str], message: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["data", "download", *argv, "--out", str(tmp_path / "o")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err and len(captured.err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_archive_members_that_clash_are_refused(tmp_path: Path) -> None:
    from averitec_tools.downloads.archive import extract_all
    from averitec_tools.errors import UserError

    a, b = tmp_path / "a.zip", tmp_path / "b.zip"
    a.write_bytes(store_zip({"x/0.json": [doc(0)]}))
    b.write_bytes(store_zip({"y/0.json": [doc(1)]}))
    with pytest.raises(UserError, match="both unpack to '0.json'"):
        extract_all([a, b], tmp_path / "store", pattern="*.json")
    assert not (tmp_path / "store").exists()
    (tmp_path / "c.zip").write_bytes(b"not a zip")
    with pytest.raises(UserError, match="not a zip archive"):
        extract_all([tmp_path / "c.zip"], tmp_path / "store", pattern="*.json")


def test_from_dir_resolves_store_listings_and_unpacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    have = tmp_path / "have"
    have.mkdir()
    (have / "a.zip").write_bytes(store_zip({"0.json": [doc(0)], "1.json": [doc(1)]}))
    (have / "b.zip").write_bytes(store_zip({"deep/2.json": [doc(2)]}))
    before = {p.name: p.read_bytes() for p in have.iterdir()}
    out = tmp_path / "out"
    assert main(["data", "download", "fever8-store", "--from", str(have), "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["sources"][0]
    assert [Path(f["path"]).name for f in res["files"]] == ["a.zip", "b.zip"] and res["unpacked"]["files"] == 3
    assert sorted(p.name for p in (out / "averitec" / "knowledge_store" / "test_2025").iterdir()) == \
        ["0.json", "1.json", "2.json"]
    assert {p.name: p.read_bytes() for p in have.iterdir()} == before  # inputs untouched, not deleted


def test_listed_paths_cannot_leave_the_destination(tmp_path: Path) -> None:
    from averitec_tools.downloads import DataSource, FolderListing, plan
    from averitec_tools.errors import UserError

    have = tmp_path / "have" / "sub"
    have.mkdir(parents=True)
    (have / "x.jsonl").write_text("{}\n")
    src = DataSource(name="t", split=None, title="t", license="x", hub=None, dest="t",
                     listing=FolderListing("", ("*.jsonl",), keep_paths=True))
    assert plan(src, out=tmp_path / "o", online=False, local=tmp_path / "have").files[0].dest == \
        tmp_path / "o" / "t" / "sub" / "x.jsonl"
    from averitec_tools.downloads.plan import _safe_rel

    for bad in ("../x.jsonl", "/etc/x.jsonl", "a/../../x.jsonl"):
        with pytest.raises(UserError, match="leave the destination"):
            _safe_rel(bad, src)
