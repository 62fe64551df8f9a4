"""Exports load under the oldest ``datasets`` the package supports, under 3.6 and under the newest.

Each old release is installed from PyPI into a scratch folder (``pip install --no-deps
--target``: ``datasets`` and the few packages whose versions it pins, ~10 MB; the rest —
pyarrow, numpy, pandas, Pillow, huggingface_hub — is the running environment's, the same
versions a fresh ``pip install datasets==X`` resolves to today) kept in pytest's cache, so a
repeated run installs nothing. A child process with only that folder on its path then reads
an AVeriTeC export and an AVerImaTeC export (embedded images) three ways: through the card
(``load_dataset(DIR)``), from the parquet files alone (``load_dataset("parquet")``, which
fails on files written the ``datasets`` 4+ way: "Feature type 'List' not found"), and
streaming; and, with the package on its path too, runs the loaders on the floor release
(the knowledge store streamed, AVerImaTeC loaded). The newest release is the installed one.
Cost: ~10 s per release on a cold pip cache, ~4 s warm (2 shared cores).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _averimatec_fixtures import write_dataset
from conftest import skip_or_fail
from test_loaders_averitec import CLAIMS
from test_loaders_knowledge_store import write_store

from averitec_tools.loaders.export import export_hf
from averitec_tools.loaders.hf_compat import DATASETS_FLOOR

REPO = Path(__file__).resolve().parents[1]
_AIOHTTP = ("aiohttp==3.14.5", "aiohappyeyeballs==2.7.1", "aiosignal==1.4.0", "frozenlist==1.8.0", "multidict==7.2.1",
            "propcache==0.5.4", "yarl==1.25.1")
#: Release → what ``pip install datasets==X`` adds to the running environment (resolved once, pinned here).
READERS: dict[str, tuple[str, ...]] = {
    "2.19.2": ("datasets==2.19.2", "fsspec==2024.3.1", "dill==0.3.8", "multiprocess==0.70.16", "pyarrow-hotfix==0.7",
               *_AIOHTTP),
    "3.6.0": ("datasets==3.6.0", "fsspec==2025.3.0", "dill==0.3.8", "multiprocess==0.70.16", *_AIOHTTP),
}

_READ = r"""
import json, sys, datasets
out = {"version": datasets.__version__}
av, im = sys.argv[1], sys.argv[2]
ds = datasets.load_dataset(av, split="dev")
out["card"] = [ds[i]["questions"][0]["answers"][0]["answer"] for i in range(len(ds))]
files = datasets.load_dataset("parquet", data_files=av + "/data/*.parquet", split="train")
out["parquet"] = [r["questions"][0]["answers"][0]["answer"] for r in files]
out["streaming"] = [r["claim"] for r in datasets.load_dataset(av, split="dev", streaming=True)]
img = datasets.load_dataset(im, split="val")
out["images"] = [[i.size for i in r["claim_images"]] for r in img]
raw = datasets.load_dataset("parquet", data_files=im + "/data/*.parquet", split="train")
out["image_answers"] = [len(a["image_answers"]) for r in raw for q in r["questions"] for a in q["answers"]]
if len(sys.argv) > 3:  # the package itself on the floor release
    from averitec_tools import loaders
    store = loaders.load("averitec/knowledge_store", split="dev", data_dir=sys.argv[3], streaming=True)
    out["store"] = [r["url"] for r in store]
    out["averimatec"] = loaders.load("averimatec", split="val", data_dir=sys.argv[4])["claim_text"]
print(json.dumps(out))
"""


def _reader(version: str, cache: Path) -> Path:
    target = cache / f"datasets-{version}"
    if (target / "datasets" / "__init__.py").is_file():
        return target
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
           "--target", str(target), *READERS[version]]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        skip_or_fail(f"cannot install datasets {version} from PyPI: {proc.stderr.strip()[-300:]}")
    return target


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import datasets

    root = tmp_path_factory.mktemp("exports")
    (root / "src").mkdir()
    (root / "src" / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    write_dataset(root / "im" / "averimatec", 3, split="val")
    write_store(root / "store", {0: 1, 4: 2})
    datasets.disable_progress_bars()
    export_hf("averitec", split="dev", data_dir=root / "src", out_dir=root / "av-hf")
    export_hf("averimatec", split="val", data_dir=root / "im", out_dir=root / "im-hf")
    return {"av": root / "av-hf", "im": root / "im-hf", "store": root / "store", "im_src": root / "im", "root": root}


def _expected(exports: dict[str, Path]) -> dict[str, Any]:
    """What the installed (newest) release reads from the same exports."""
    import datasets

    av, im = str(exports["av"]), str(exports["im"])
    ds = datasets.load_dataset(av, split="dev")
    img = datasets.load_dataset(im, split="val")
    answers = [ds[i]["questions"][0]["answers"][0]["answer"] for i in range(len(ds))]
    return {"card": answers, "parquet": answers, "streaming": [c["claim"] for c in CLAIMS],
            "images": [[list(i.size) for i in r["claim_images"]] for r in img],
            "image_answers": [len(a["image_answers"]) for r in img for q in r["questions"] for a in q["answers"]]}


@pytest.mark.parametrize("version", sorted(READERS))
def test_an_export_loads_with_older_datasets(version: str, exports: dict[str, Path], tmp_path: Path,
                                             request: pytest.FixtureRequest) -> None:
    target = _reader(version, request.config.cache.mkdir("datasets-readers"))
    floor = version.startswith(DATASETS_FLOOR + ".")
    path = [str(target)] + ([str(REPO)] if floor else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "HF_HOME": str(tmp_path / "hf"),
           "HF_DATASETS_CACHE": str(tmp_path / "hf-datasets"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    args = [str(exports["av"]), str(exports["im"])] + ([str(exports["store"]), str(exports["im_src"])] if floor else [])
    proc = subprocess.run([sys.executable, "-c", _READ, *args], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got.pop("version") == version
    if floor:
        assert got.pop("store") == ["https://e.org/0/0", "https://e.org/4/0", "https://e.org/4/1"]
        assert got.pop("averimatec") == [f"Claim {i}: the photo shows something." for i in range(3)]
    assert got == _expected(exports)


def test_the_card_states_the_floor_and_the_floor_is_the_package_s(exports: dict[str, Path]) -> None:
    card = (exports["av"] / "README.md").read_text(encoding="utf-8")
    assert f"`datasets` >= {DATASETS_FLOOR}" in card
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"datasets>={DATASETS_FLOOR}"' in pyproject
    assert min(READERS, key=lambda v: tuple(map(int, v.split(".")))).startswith(DATASETS_FLOOR + ".")
