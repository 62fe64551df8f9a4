"""AVerImaTeC downloads (local hub) and both store layouts installed with ``--from DIR``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from _averimatec_fixtures import gold_claim, image_bytes, image_names
from _hub_server import FakeHub, HubServer
from test_downloads import _env, cli, doc, one_line_error
from test_loaders_knowledge_store import write_store

from averitec_tools.cli.main import main

IM = ("dataset", "Rui4416/AVerImaTeC")
REV = "c0ffee00" * 5


def zip_of(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def hub_with_averimatec() -> FakeHub:
    """The hub dataset as listed publicly: train.json, val.json, images.zip, test_data.zip, README.md."""
    claims = [gold_claim(i) for i in range(3)]
    test = [{k: v for k, v in c.items() if k not in ("label", "justification", "questions")} for c in claims]
    images = {f"images/{n}": image_bytes(k) for k, n in enumerate(n for c in claims for n in image_names(c))}
    hub = FakeHub()
    hub.add(*IM, "README.md", b"---\nlicense: unknown\n---\n")
    hub.add(*IM, "train.json", json.dumps(claims[:2]).encode())
    hub.add(*IM, "val.json", json.dumps(claims).encode())
    hub.add(*IM, "images.zip", zip_of({**images, "__MACOSX/images/._0_claim.jpg": b"junk"}), lfs=True)
    hub.add(*IM, "test_data.zip", zip_of({"test_data/test.json": json.dumps(test).encode()}), lfs=True)
    hub.pin(*IM, REV)
    return hub


def test_download_averimatec_at_a_revision_into_the_loader_layout(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    hub = hub_with_averimatec()
    with HubServer(hub) as url:
        proc = cli(_env(tmp_path, url), "averimatec", "--split", "all", "--revision", REV, "--json")
    assert proc.returncode == 0, proc.stderr
    got = {s["source"]: s for s in json.loads(proc.stdout)["sources"]}
    assert set(got) == {"averimatec/train", "averimatec/val", "averimatec/test", "averimatec/images"}
    assert got["averimatec/val"]["results"][0]["contents"] == "3 claims"
    assert got["averimatec/images"]["unpacked"]["skipped"] == 1  # macOS debris left out
    assert {p for m, p, _ in hub.log if m == "GET" and "/resolve/" in p} == {
        f"/datasets/Rui4416/AVerImaTeC/resolve/{REV}/{f}" for f in ("train.json", "val.json", "images.zip",
                                                                       "test_data.zip")}
    root = tmp_path / "cache" / "data" / "averimatec"
    assert sorted(p.name for p in root.iterdir()) == ["images", "test_data", "train.json", "val.json"]
    from averitec_tools import loaders

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)  # offline, read from the download root only
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = loaders.load("averimatec", split="test")
    assert (len(ds), ds[2]["claim_images"][0].size) == (3, (6, 4))
    prov = loaders.provenance("averimatec/val")
    assert (prov.origin, prov.repo, prov.revision) == ("download", "Rui4416/AVerImaTeC", REV)


def test_loading_a_missing_split_downloads_claims_and_images(tmp_path: Path) -> None:
    hub = hub_with_averimatec()
    code = ("import sys; from averitec_tools import loaders; "
            "print(len(loaders.load('averimatec', split='train', revision=sys.argv[1])))")
    with HubServer(hub) as url:
        proc = subprocess.run([sys.executable, "-c", code, REV], env=_env(tmp_path, url), capture_output=True,
                              text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "2", proc.stderr
    gets = {p.rsplit("/", 1)[-1] for m, p, _ in hub.log if m == "GET" and "/resolve/" in p}
    assert gets == {"train.json", "images.zip"}


def _converted_datastore(split: str) -> dict[str, bytes]:
    """A store archive as the organisers distribute val/test: everything under converted_datastore/."""
    base = "converted_datastore"
    files = {}
    for i in range(2):
        files[f"{base}/text_related/text_related_store_text_{split}/{i}.json"] = (json.dumps(doc(i)) + "\n").encode()
        files[f"{base}/text_related/image_related_store_text_{split}/{i}.json"] = \
            (json.dumps({"url": f"https://img.org/{i}", "url2text": [f"Seen {i}."]}) + "\n").encode()
        files[f"{base}/image_related/image_related_store_image_{split}/{i}/0.jpg"] = image_bytes(i, fmt="JPEG")
    return files


@pytest.mark.parametrize("form", ["zip", "unpacked", "renamed"])
def test_averimatec_store_installs_from_the_archive_or_unpacked_and_loads(form: str, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    have = tmp_path / "have"
    files = _converted_datastore("val")
    if form == "zip":
        have.mkdir()
        (have / "val.zip").write_bytes(zip_of(files))
    for name, data in files.items() if form != "zip" else ():
        rel = name if form == "unpacked" else name.replace("converted_datastore", "Knowledge_Store/val")
        (have / rel).parent.mkdir(parents=True, exist_ok=True)
        (have / rel).write_bytes(data)
    out = tmp_path / "out"
    assert main(["data", "download", "averimatec-store", "--split", "val", "--from", str(have), "--out", str(out),
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["sources"][0]
    assert res["unpacked"]["files"] == 6
    store = out / "averimatec" / "Knowledge_Store" / "val"
    assert (store / "text_related" / "text_related_store_text_val" / "1.json").is_file()
    from averitec_tools import loaders

    rows = list(loaders.load("averimatec/knowledge_store", split="val", data_dir=out, streaming=True))
    assert [(r["claim_id"], r["store"], r["url"]) for r in rows] == [
        (0, "text", "https://e.org/0"), (0, "image", "https://img.org/0"),
        (1, "text", "https://e.org/1"), (1, "image", "https://img.org/1")]
    images = loaders.load("averimatec/knowledge_store_images", split="val", data_dir=out)
    assert images["claim_id"] == [0, 1] and images[1]["image"].size == (6, 4)
    assert Path(images[1]["file"]).parts[-2:] == ("1", "0.jpg")


def test_a_store_of_another_split_is_refused(tmp_path: Path) -> None:
    have = tmp_path / "have"
    have.mkdir()
    (have / "test.zip").write_bytes(zip_of(_converted_datastore("test")))
    line = one_line_error(subprocess.run(
        [sys.executable, "-m", "averitec_tools.cli.main", "data", "download", "averimatec-store", "--split", "val",
         "--from", str(have), "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120))
    assert "is the 'test' store, not 'val'" in line and "--split test" in line
    assert not (tmp_path / "out" / "averimatec").exists()


def test_averitec_store_installs_from_an_unpacked_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_store(tmp_path / "have" / "output_dev", {0: 2, 7: 1})
    (tmp_path / "have" / "output_dev" / "notes.txt").write_text("not a claim file")
    out = tmp_path / "out"
    assert main(["data", "download", "averitec-store", "--split", "dev", "--from", str(tmp_path / "have"), "--out",
                 str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["sources"][0]
    assert (res["unpacked"]["files"], res["unpacked"]["skipped"]) == (2, 1) and res["status"] == "unverified"
    assert sorted(p.name for p in (out / "averitec" / "knowledge_store" / "dev").iterdir()) == ["0.json", "7.json"]
    from averitec_tools import loaders

    assert loaders.provenance("averitec/knowledge_store", split="dev", data_dir=out).origin == "local"
    assert len(loaders.load("averitec/knowledge_store", split="dev", data_dir=out)) == 3
