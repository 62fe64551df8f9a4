"""FEVER from its sources in order: ``averitec data download fever`` / ``fever-wiki-pages`` against a
local server (:mod:`_hub_server`) standing in for both fever.ai's download folder
(``AVERITEC_URL_ROOT``) and the hub, into the layout the ``paper-fever`` recipe reads.

The fixture files cannot carry the official files' sha256, so the CLI runs in a subprocess whose
catalogue records the fixtures' checksums (computed here with ``hashlib``) in place of the
official ones; everything else (hub URLs, repository ``fever/fever``, layout, unpacking, the
recipe's built-in paths) is the package's own.
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

import pytest
from _hub_server import FakeHub, HubServer
from test_downloads import cli, one_line_error

from averitec_tools.loaders.catalogue import FEVER_COMMIT

_RUNNER = """
import dataclasses, json, sys
import averitec_tools.loaders.catalogue  # registers the sources
from averitec_tools.downloads.sources import SOURCES
for key, (sha, size) in json.loads(sys.argv[1]).items():
    src = SOURCES.get(key)
    f = dataclasses.replace(src.files[0], sha256=sha, size=size, checksum_source="test fixture")
    SOURCES._items[key] = dataclasses.replace(src, files=(f,))
from averitec_tools.cli.main import main
sys.exit(main(["data", "download", *sys.argv[2:]]))
"""

CLAIM = {"id": 7, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": "Oliver Reed was a film actor.",
         "evidence": [[[1, 2, "Oliver_Reed", 0]]]}
PAGE = {"id": "Oliver_Reed", "text": "Oliver Reed was an English actor .",
        "lines": "0\tOliver Reed was an English actor .\tactor"}


def _wiki_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("wiki-pages/wiki-001.jsonl", json.dumps(PAGE) + "\n")
        z.writestr("license.html", "<p>CC BY-SA 3.0</p>")
    return buf.getvalue()


def _env(tmp_path: Path, url: str) -> dict[str, str]:
    """The CLI's environment: the hub and fever.ai's download folder both at the local server ``url``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "AVERITEC_DATA_DIR")}
    return {**env, "AVERITEC_CACHE_DIR": str(tmp_path / "cache"), "HF_HOME": str(tmp_path / "hf"), "HF_ENDPOINT": url,
            "AVERITEC_URL_ROOT": url}


def _run(env: dict[str, str], sums: dict[str, tuple[str, int]], *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(sums), *args, "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["sources"][0]


def test_fever_downloads_from_the_hub_where_the_fever_recipe_reads_it(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No path given anywhere: claims and wiki-pages come from ``fever/fever`` into the download root,
    and the paper-fever recipe's data check (built-in paths) finds them."""
    from averitec_tools.baselines.r2vc.experiments.paper import load_recipe
    from averitec_tools.baselines.r2vc.experiments.paper_set import PaperSet
    from averitec_tools.errors import UserError

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "cache" / "data"
    with pytest.raises(UserError, match=r"fever/paper_dev\.jsonl: evaluation claims not found "
                                         r"\(download it: averitec data download fever --split paper_dev \(tries fever\.ai"):
        vc = root / "vitaminc"
        vc.mkdir(parents=True)
        (vc / "train.jsonl").write_text("{}\n")  # the recipe's training rows (VitaminC's test covers them)
        PaperSet([load_recipe("paper-fever")], work=tmp_path / "w").preflight()
    claims = (json.dumps(CLAIM) + "\n").encode()
    wiki = _wiki_zip()
    sums = {"fever/paper_dev": (hashlib.sha256(claims).hexdigest(), len(claims)),
            "fever-wiki-pages": (hashlib.sha256(wiki).hexdigest(), len(wiki))}
    hub = FakeHub()
    hub.add("dataset", "fever/fever", "paper_dev.jsonl", claims)
    hub.add("dataset", "fever/fever", "wiki-pages.zip", wiki, lfs=True)
    hub.forbidden = {"/download/fever/paper_dev.jsonl", "/download/fever/wiki-pages.zip"}  # fever.ai refuses: the hub
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        got_claims = _run(env, sums, "fever", "--split", "paper_dev")
        got_wiki = _run(env, sums, "fever-wiki-pages")
    assert ("HEAD", "/download/fever/paper_dev.jsonl", None) in hub.log  # fever.ai was tried first
    assert got_claims["repo"] == "fever/fever" and got_claims["repo_type"] == "dataset"
    assert got_claims["status"] == "verified" and got_wiki["status"] == "verified"
    assert {p for m, p, _ in hub.log if m == "GET" and "/resolve/" in p} == {f"/datasets/fever/fever/resolve/{FEVER_COMMIT}/paper_dev.jsonl",
                                                                                 f"/datasets/fever/fever/resolve/{FEVER_COMMIT}/wiki-pages.zip"}
    assert (root / "fever" / "paper_dev.jsonl").read_bytes() == claims
    assert [p.name for p in (root / "fever" / "wiki-pages").iterdir()] == ["wiki-001.jsonl"]
    recipe = load_recipe("paper-fever")
    assert (recipe.eval_claims, recipe.wiki_pages) == (str(root / "fever" / "paper_dev.jsonl"),
                                                       str(root / "fever" / "wiki-pages"))
    PaperSet([recipe], work=tmp_path / "w").preflight()  # the recipe's data check passes
    assert not (tmp_path / "w").exists()
    from averitec_tools.loaders.fever import FEVER

    assert [c.id for c in FEVER.read_file(Path(recipe.eval_claims))] == [7]
    have = tmp_path / "have"  # --from DIR: the user's own copies, the same checks, no hub
    have.mkdir()
    (have / "paper_dev.jsonl").write_bytes(claims)
    copied = _run(env, sums, "fever", "--split", "paper_dev", "--from", str(have), "--out", str(tmp_path / "o2"))
    assert copied["status"] == "verified" and copied["results"][0]["action"] == "copied"
    assert (tmp_path / "o2" / "fever" / "paper_dev.jsonl").read_bytes() == claims


def test_fever_comes_from_fever_ai_first(tmp_path: Path) -> None:
    """fever.ai's download folder serves the original files: they come from there, held to the recorded
    sha256, and the hub is not asked."""
    from _hub_server import HubFile

    claims = (json.dumps(CLAIM) + "\n").encode()
    sums = {"fever/paper_dev": (hashlib.sha256(claims).hexdigest(), len(claims))}
    hub = FakeHub()
    hub.plain["/download/fever/paper_dev.jsonl"] = HubFile(claims)
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        got = _run(env, sums, "fever", "--split", "paper_dev")
    assert (got["repo"], got["repo_type"], got["status"]) == ("https://fever.ai/download/fever", "url", "verified")
    assert not any("/resolve/" in p for _, p, _ in hub.log)
    assert (tmp_path / "cache" / "data" / "fever" / "paper_dev.jsonl").read_bytes() == claims


def test_fever_missing_from_the_hub_names_mirror_and_from(tmp_path: Path) -> None:
    """Where neither fever.ai nor fever/fever has the original files: one line, exit 2, naming both
    locations' answers, --repo and --from; nothing written."""
    hub = FakeHub()
    hub.add("dataset", "fever/fever", "README.md", b"# fever\n")
    with HubServer(hub) as url:
        env = _env(tmp_path, url)
        proc = subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "data", "download", "fever",
                               "--split", "paper_dev"], env=env, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "paper_dev.jsonl" in lines[0] and "--repo OWNER/NAME" in lines[0] and "--from DIR" in lines[0]
    assert "https://fever.ai/download/fever" in lines[0] and f"fever/fever (dataset, {FEVER_COMMIT})" in lines[0]
    assert not (tmp_path / "cache" / "data" / "fever").exists()


@pytest.mark.shared_data
def test_fever_mirror_is_verified_against_the_recorded_checksums(shared_data: Path, tmp_path: Path) -> None:
    """A mirror named with --repo is held to the official files' checksums: ../shared's paper_dev
    (63 bytes off the official file) is refused."""
    ours = (shared_data / "fever" / "paper_dev.jsonl").read_bytes()
    hub = FakeHub()
    hub.add("dataset", "someone/fever-mirror", "paper_dev.jsonl", ours)
    with HubServer(hub) as url:
        line = one_line_error(cli(_env(tmp_path, url), "fever", "--split", "paper_dev",
                                  "--repo", "someone/fever-mirror", "--repo-type", "dataset"))
    assert "41158707810008747946bf23471e82df53e77a513524b9e3ec1c2e674ef5ef8c" in line
    assert "huggingface/datasets" in line


def test_fever_revision_applies_to_the_hub_location(tmp_path: Path) -> None:
    """--revision without --repo names a commit of fever/fever (fever.ai's folder has no revisions)."""
    claims = (json.dumps(CLAIM) + "\n").encode()
    sums = {"fever/paper_dev": (hashlib.sha256(claims).hexdigest(), len(claims))}
    hub = FakeHub()
    hub.add("dataset", "fever/fever", "paper_dev.jsonl", claims)
    rev = "feedface" * 5
    with HubServer(hub) as url:
        got = _run(_env(tmp_path, url), sums, "fever", "--split", "paper_dev", "--revision", rev)
    assert (got["repo"], got["revision"], got["status"]) == ("fever/fever", rev, "verified")
    assert {p for m, p, _ in hub.log if m == "GET" and "/resolve/" in p} == {f"/datasets/fever/fever/resolve/{rev}/paper_dev.jsonl"}
