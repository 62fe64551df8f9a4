"""VitaminC from the hub (``tals/vitaminc`` pinned at be6febb): every upstream field kept, in the layout the
R2VC paper recipes read. The catalogue records the sha256 of the real ``test.jsonl``; fixtures stand in for it
through :func:`cli_recorded`."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _hub_server import FakeHub, HubServer
from test_downloads import _env, result


def cli_recorded(env: dict[str, str], sums: dict[str, tuple[str, int]], *args: str) -> subprocess.CompletedProcess[str]:
    """``cli`` with the first recorded checksum of each source key in ``sums`` replaced by the fixture's."""
    from test_downloads_fever import _RUNNER

    return subprocess.run([sys.executable, "-c", _RUNNER, json.dumps(sums), *args], env=env, capture_output=True,
                          text=True, timeout=120)


def vitaminc_sums(test_jsonl: bytes) -> dict[str, tuple[str, int]]:
    """The catalogue records the sha256 of the real ``tals/vitaminc`` test.jsonl: fixtures stand in for it."""
    return {"vitaminc": (hashlib.sha256(test_jsonl).hexdigest(), len(test_jsonl))}


def test_vitaminc_snapshot_keeps_every_upstream_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    row = {"unique_id": "5ed4_1", "case_id": "5ed4", "label": "REFUTES", "claim": "X grew 7%.",
           "evidence": "X grew 5%.", "page": "X", "revision_type": "real", "wiki_revision_id": "927477259",
           "FEVER_id": ""}
    hub = FakeHub()
    for split in ("train", "dev", "test"):
        hub.add("dataset", "tals/vitaminc", f"{split}.jsonl", (json.dumps(row) + "\n").encode())
    hub.add("dataset", "tals/vitaminc", ".gitattributes", b"*.jsonl filter=lfs\n")
    with HubServer(hub) as url:
        got = result(cli_recorded(_env(tmp_path, url), vitaminc_sums((json.dumps(row) + "\n").encode()), "vitaminc",
                                  "--json"))
    assert sorted(Path(f["dest"]).name for f in got["results"]) == ["dev.jsonl", "test.jsonl", "train.jsonl"]
    assert all(p.startswith("/datasets/tals/vitaminc/") for m, p, _ in hub.log if m == "HEAD" and p != "/")  # "/": the reachability probe

    import datasets

    from averitec_tools import loaders

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    rec = next(iter(loaders.iter_dataset("vitaminc/dev")))  # offline: the downloaded snapshot
    assert rec.wiki_revision_id == "927477259" and rec.fever_id == "" and rec.to_dict() == row
    ds = loaders.load("vitaminc", split="dev")
    assert ds[0]["wiki_revision_id"] == "927477259" and set(ds.column_names) == set(row)


def test_vitaminc_download_is_where_the_paper_recipe_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One layout: `averitec data download vitaminc` (default root, no path given) writes
    vitaminc/{train,dev,test}.jsonl, and the paper-vitaminc recipe's data check finds them."""
    from averitec_tools.baselines.r2vc.experiments.paper import load_recipe
    from averitec_tools.baselines.r2vc.experiments.paper_set import PaperSet
    from averitec_tools.errors import UserError

    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    recipe = load_recipe("paper-vitaminc")
    with pytest.raises(UserError, match=r"vitaminc/train\.jsonl: training rows not found "
                                         r"\(download it: averitec data download vitaminc\)"):
        PaperSet([recipe], work=tmp_path / "w").preflight()
    row = {"unique_id": "a_1", "case_id": "a", "label": "SUPPORTS", "claim": "X grew.", "evidence": "X grew 5%.",
           "page": "X", "revision_type": "real", "wiki_revision_id": "1", "FEVER_id": ""}
    hub = FakeHub()
    for split in ("train", "dev", "test"):
        hub.add("dataset", "tals/vitaminc", f"{split}.jsonl", (json.dumps(row) + "\n").encode())
    with HubServer(hub) as url:
        got = result(cli_recorded(_env(tmp_path, url), vitaminc_sums((json.dumps(row) + "\n").encode()), "vitaminc",
                                  "--json"))
    root = tmp_path / "cache" / "data"
    assert sorted(f["dest"] for f in got["results"]) == [str(root / "vitaminc" / f"{s}.jsonl")
                                                         for s in ("dev", "test", "train")]
    recipe = load_recipe("paper-vitaminc")  # built-in paths: the first data root holding the files
    assert (recipe.train_rows, recipe.eval_claims) == (str(root / "vitaminc" / "train.jsonl"),
                                                       str(root / "vitaminc" / "test.jsonl"))
    PaperSet([recipe], work=tmp_path / "w").preflight()  # the recipe's data check passes
    assert not (tmp_path / "w").exists()
