"""``loaders.load("averimatec", ...)``: records with ``Image()`` columns, polars, stats, exports with image bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _averimatec_fixtures import gold_claim, image_names, write_dataset

from averitec_tools import loaders
from averitec_tools.errors import UserError


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    write_dataset(tmp_path / "data" / "averimatec", 4, split="val")
    return tmp_path / "data"


def test_val_loads_with_every_image_as_an_image_value(root: Path) -> None:
    import datasets

    ds = loaders.load("averimatec", split="val", data_dir=root)
    from averitec_tools.loaders.base import list_of

    assert ds.features["claim_images"] == list_of(datasets.Image())
    assert ds["claim_id"] == [0, 1, 2, 3] and ds["label"] == [gold_claim(i)["label"] for i in range(4)]
    claim = ds[2]  # claim 2: three questions; image answers in questions 0 and 1, an input image in question 1
    assert [im.size for im in claim["claim_images"]] == [(6, 4)]
    answers = [a for q in claim["questions"] for a in q["answers"]]
    assert [len(a["image_answers"]) for a in answers] == [1, 0, 1, 0]
    assert [len(q["input_images"]) for q in claim["questions"]] == [0, 1, 0]
    assert claim["date_parsed"].isoformat() == "2023-03-12" and claim["metadata"]["speaker"] == "Speaker 2"
    assert ds.features == loaders.features_for("averimatec/val")


def test_records_round_trip_through_the_dataset_and_polars(root: Path) -> None:
    ds = loaders.load("averimatec/val", data_dir=root)
    records = list(loaders.iter_dataset("averimatec/val", data_dir=root))
    assert list(loaders.records_from_dataset(ds, name="averimatec/val")) == records
    assert [r.to_dict() for r in records] == [gold_claim(i) for i in range(4)]
    frame = loaders.to_polars("averimatec", split="val", data_dir=root)
    assert frame.shape == (4, 11)
    paths = [im["path"] for ims in frame["claim_images"].to_list() for im in ims]
    assert [Path(p).name for p in paths] == [f"{i}_claim.jpg" for i in range(4)]


def test_stats_compare_with_the_published_split_size(root: Path) -> None:
    stats = loaders.dataset_stats("averimatec", split="val", data_dir=root)
    assert (stats["n_claims"], stats["published_n_claims"], stats["matches_published_size"]) == (4, 152, False)
    assert stats["labels"] == {"Conflicting Evidence/Cherrypicking": 1, "Not Enough Evidence": 1, "Refuted": 1,
                               "Supported": 1}
    n_questions = sum(len(gold_claim(i)["questions"]) for i in range(4))  # 1 + 2 + 3 + 1
    assert stats["n_questions"] == n_questions == 7 and stats["questions_per_claim"] == 7 / 4
    images = sum(len(image_names(gold_claim(i))) - 1 for i in range(4))  # minus each claim's own image
    assert stats["evidence_images_per_question"] == images / 7 and stats["claim_images_per_claim"] == 1.0


def test_test_split_without_gold_and_images_beside_it(tmp_path: Path) -> None:
    write_dataset(tmp_path / "averimatec", 2, split="val")
    claims = [{k: v for k, v in gold_claim(i).items() if k not in ("label", "justification", "questions")}
              for i in range(2)]
    (tmp_path / "averimatec" / "test_data").mkdir()
    (tmp_path / "averimatec" / "test_data" / "test.json").write_text(json.dumps(claims), encoding="utf-8")
    ds = loaders.load("averimatec", split="test", data_dir=tmp_path)
    assert ds["label"] == [None, None] and ds["questions"] == [[], []] and ds[1]["claim_images"][0].size == (6, 4)


def test_an_unknown_label_is_refused_and_a_spelling_variant_read(root: Path) -> None:
    path = root / "averimatec" / "val.json"
    claims = json.loads(path.read_text(encoding="utf-8"))
    claims[1]["label"] = "conflicting evidence/cherry-picking"
    path.write_text(json.dumps(claims), encoding="utf-8")
    assert loaders.load("averimatec", split="val", data_dir=root)[1]["label"] == claims[1]["label"]
    claims[2]["label"] = "Maybe"
    path.write_text(json.dumps(claims), encoding="utf-8")
    with pytest.raises(UserError, match=r"val\.json\[2\]: unknown label 'Maybe' \(valid labels: Supported, "):
        loaders.load("averimatec", split="val", data_dir=root)


def test_a_missing_image_names_the_claim_and_the_file(root: Path) -> None:
    (root / "averimatec" / "images" / "1_claim.jpg").unlink()
    with pytest.raises(UserError, match=r"claim 1: image '1_claim\.jpg' not found in .*images \(install the "
                                        r"images: averitec data download averimatec --split images\)"):
        loaders.load("averimatec", split="val", data_dir=root)


def test_export_embeds_the_image_bytes(root: Path, tmp_path: Path) -> None:
    import datasets
    import pyarrow.parquet as pq

    from averitec_tools.loaders.export import export_hf

    result = export_hf("averimatec", split="val", data_dir=root, out_dir=tmp_path / "hf")
    table = pq.read_table(result.shards[0])
    first = table.column("claim_images").to_pylist()[0][0]
    assert first["path"] == "0_claim.jpg"  # the file name only: no path of the exporting machine
    assert first["bytes"] == (root / "averimatec" / "images" / "0_claim.jpg").read_bytes()
    (root / "averimatec" / "images" / "0_claim.jpg").unlink()  # the export needs no image folder
    back = datasets.load_dataset(str(tmp_path / "hf"), split="val")
    assert back[0]["claim_images"][0].size == (6, 4)
    assert [r.to_dict() for r in loaders.records_from_dataset(back, name="averimatec/val")] == \
        [gold_claim(i) for i in range(4)]
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "pretty_name: AVerImaTeC" in card and "list: image" in card and "cao2025averimatec" in card


@pytest.mark.parametrize(("damage", "message"), [
    (lambda b: b"not an image", "not an image Pillow can read"),
    (lambda b: b[: len(b) // 2], "damaged image data"),
])
def test_export_refuses_a_damaged_image_and_writes_nothing(damage: Any, message: str, root: Path,
                                                           tmp_path: Path) -> None:
    from averitec_tools.loaders.export import export_hf

    image = root / "averimatec" / "images" / "2_claim.jpg"
    image.write_bytes(damage(image.read_bytes()))
    with pytest.raises(UserError, match=rf"averimatec/val \(val\): image 2_claim\.jpg: {message}"):
        export_hf("averimatec", split="val", data_dir=root, out_dir=tmp_path / "hf")
    assert not (tmp_path / "hf").exists()


def test_importing_the_loaders_and_catalogue_stays_light() -> None:
    import subprocess
    import sys

    code = ("import sys, averitec_tools.loaders, averitec_tools.loaders.catalogue; "
            "print([m for m in ('datasets', 'polars', 'PIL', 'pyarrow', 'huggingface_hub') if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", (proc.stdout, proc.stderr)
