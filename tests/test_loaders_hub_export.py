"""Hub code path (on local hub-layout folders, never the network) and export round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_loaders_averitec import CLAIMS
from test_loaders_fever_vitaminc import FEVER_ROWS, VITAMINC_ROWS

from averitec_tools import loaders
from averitec_tools.errors import UserError
from averitec_tools.loaders.export import export_hf


@pytest.fixture(autouse=True)
def _isolated_hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    cache = tmp_path / "hf-cache"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def _hub_folder(root: Path, split: str, rows: list[dict], *, card_split: bool = True) -> Path:
    """A folder laid out like a hub dataset repository pushed with ``push_to_hub``."""
    (root / "data").mkdir(parents=True)
    (root / "data" / f"{split}-00000-of-00001.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    if card_split:
        (root / "README.md").write_text(
            f"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: {split}\n    path: data/{split}-*\n---\n",
            encoding="utf-8",
        )
    return root


def test_hub_path_reads_a_hub_layout_folder(tmp_path: Path) -> None:
    hub = _hub_folder(tmp_path / "hub", "dev", CLAIMS)
    recs = list(loaders.iter_dataset("averitec/dev", hub_id=str(hub)))
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    (local_dir / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    assert recs == list(loaders.iter_dataset("averitec/dev", data_dir=local_dir))
    ds = loaders.load("averitec/dev", hub_id=str(hub))
    assert ds.features == loaders.features_for("averitec/dev")


def test_hub_split_name_mapping(tmp_path: Path) -> None:
    # tals/vitaminc calls the dev split "validation"; no card: split inferred from file names
    hub = _hub_folder(tmp_path / "vc", "validation", VITAMINC_ROWS, card_split=False)
    recs = list(loaders.iter_dataset("vitaminc/dev", hub_id=str(hub)))
    assert [r.unique_id for r in recs] == ["a1", "a2", "a3", "a4"]


def test_hub_missing_split(tmp_path: Path) -> None:
    hub = _hub_folder(tmp_path / "hub", "dev", CLAIMS)
    with pytest.raises(UserError, match="cannot load split 'train'"):
        list(loaders.iter_dataset("averitec/train", hub_id=str(hub)))


def test_offline_refuses_remote_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    with pytest.raises(UserError, match="hub is disabled"):
        loaders.load("vitaminc/train")


@pytest.mark.parametrize(
    ("name", "split", "rows", "filename"),
    [
        ("averitec", "dev", CLAIMS, "dev.json"),
        ("fever", "paper_dev", FEVER_ROWS, "paper_dev.jsonl"),
        ("vitaminc", "dev", VITAMINC_ROWS, "dev.jsonl"),
        ("fever/r2vc", "paper_dev", FEVER_ROWS, "paper_dev.jsonl"),
        ("vitaminc/r2vc", "dev", VITAMINC_ROWS, "dev.jsonl"),
    ],
)
def test_export_round_trip(tmp_path: Path, name: str, split: str, rows: list[dict], filename: str) -> None:
    import datasets

    src = tmp_path / "src"
    src.mkdir()
    text = json.dumps(rows) if filename.endswith(".json") else "".join(json.dumps(r) + "\n" for r in rows)
    (src / filename).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    result = export_hf(name, split=split, data_dir=src, out_dir=out)
    back = datasets.load_dataset(str(out), split=split)
    assert back.features == loaders.features_for(name, split=split)
    assert list(loaders.records_from_dataset(back, name=name, split=split)) == list(
        loaders.iter_dataset(name, split=split, data_dir=src)
    )
    assert result.n_rows == len(back)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "configs:" in card and "license:" in card and "@inproceedings" in card and "dataset_info:" in card
    assert not list(out.rglob("*.tmp"))


def test_export_accumulates_splits_and_refuses_other_datasets(tmp_path: Path) -> None:
    import datasets

    src = tmp_path / "src"
    src.mkdir()
    (src / "dev.json").write_text(json.dumps(CLAIMS), encoding="utf-8")
    (src / "train.json").write_text(json.dumps(CLAIMS[:1]), encoding="utf-8")
    out = tmp_path / "out"
    export_hf("averitec", split="dev", data_dir=src, out_dir=out)
    export_hf("averitec", split="train", data_dir=src, out_dir=out)
    export_hf("averitec", split="dev", data_dir=src, out_dir=out)  # re-export replaces, no duplicates
    both = datasets.load_dataset(str(out))
    assert {k: len(v) for k, v in both.items()} == {"dev": 2, "train": 1}
    (src / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in VITAMINC_ROWS), encoding="utf-8")
    with pytest.raises(UserError, match="already holds an export of 'AVeriTeC'"):
        export_hf("vitaminc", split="dev", data_dir=src, out_dir=out)
    file_out = tmp_path / "file"
    file_out.write_text("x", encoding="utf-8")
    with pytest.raises(UserError, match="is not a directory"):
        export_hf("averitec", split="dev", data_dir=src, out_dir=file_out)


def test_failed_export_leaves_no_partial_files(tmp_path: Path) -> None:
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(CLAIMS + [{"claim": 3}]), encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(UserError, match="field 'claim' must be a string"):
        export_hf("averitec", split="dev", data_dir=src, out_dir=out)
    assert not out.exists() or not any(out.rglob("*"))


@pytest.mark.shared_data
def test_full_dev_round_trip_through_load_dataset(shared_data: Path, tmp_path: Path) -> None:
    import datasets

    out = tmp_path / "averitec-hf"
    export_hf("averitec", split="dev", data_dir=shared_data, out_dir=out)
    back = datasets.load_dataset(str(out), split="dev")
    assert len(back) == 500
    original = list(loaders.iter_dataset("averitec/dev", data_dir=shared_data))
    restored = list(loaders.records_from_dataset(back, name="averitec/dev"))
    assert restored == original
    assert [r.to_dict() for r in restored] == [r.to_dict() for r in original]
    assert [r.claim_id for r in restored] == list(range(500))
