"""``averitec/knowledge_store``: the 2024 store layout streamed as rows, selections, bounded reads, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from averitec_tools import loaders
from averitec_tools.errors import UserError

STORE = "averitec/knowledge_store"


def doc(claim: int, i: int) -> dict[str, Any]:
    return {"claim_id": claim, "type": "question" if i else "claim", "query": f"q{claim}.{i}",
            "url": f"https://e.org/{claim}/{i}", "url2text": [f"Sentence {claim}.{i}.", "Second."]}


def write_store(folder: Path, docs: dict[int, int]) -> Path:
    """``docs``: claim id → number of documents; the 2024 layout (one JSON-lines file per claim)."""
    folder.mkdir(parents=True, exist_ok=True)
    for claim, n in docs.items():
        (folder / f"{claim}.json").write_text("".join(json.dumps(doc(claim, i)) + "\n" for i in range(n)))
    return folder


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    write_store(tmp_path / "data" / "averitec" / "knowledge_store" / "dev", {10: 2, 2: 1, 0: 3})
    return tmp_path / "data"


def test_stream_yields_one_row_per_document_in_claim_order(root: Path) -> None:
    import datasets

    ds = loaders.load(STORE, split="dev", data_dir=root, streaming=True)
    assert isinstance(ds, datasets.IterableDataset) and ds.n_shards == 3
    rows = list(ds)
    assert [(r["claim_id"], r["query"]) for r in rows] == [(0, "q0.0"), (0, "q0.1"), (0, "q0.2"), (2, "q2.0"),
                                                          (10, "q10.0"), (10, "q10.1")]
    assert rows[0] == {**doc(0, 0)} and ds.features == loaders.features_for(STORE)
    from averitec_tools.loaders.base import list_of

    assert ds.features["url2text"] == list_of(datasets.Value("string"))


def test_claim_ids_select_files_and_non_streaming_builds_a_dataset(root: Path) -> None:
    import datasets

    ds = loaders.load(STORE, split="dev", data_dir=root, claim_ids=["10", 0])
    assert isinstance(ds, datasets.Dataset) and ds["claim_id"] == [10, 10, 0, 0, 0]
    streamed = list(loaders.load(STORE, split="dev", data_dir=root, claim_ids=[10, 0], streaming=True))
    assert streamed == list(ds)
    records = list(loaders.iter_dataset(STORE, split="dev", data_dir=root, claim_ids=[2]))
    assert [r.url for r in records] == ["https://e.org/2/0"] and records[0].url2text == ("Sentence 2.0.", "Second.")
    assert list(loaders.records_from_dataset(ds, name=STORE))[0] == next(
        loaders.iter_dataset(STORE, split="dev", data_dir=root, claim_ids=[10]))
    frame = loaders.to_polars(STORE, split="dev", data_dir=root, claim_ids=[0])
    assert frame.shape == (3, 5) and frame["url2text"].to_list()[0] == ["Sentence 0.0.", "Second."]


@pytest.mark.parametrize("where", ["root", "store", "split", "env"])
def test_store_found_from_root_store_folder_split_folder_or_data_root(root: Path, where: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    given = {"root": root, "store": root / "averitec" / "knowledge_store", "split": root / "averitec" /
             "knowledge_store" / "dev", "env": None}[where]
    if where == "env":
        monkeypatch.setenv("AVERITEC_DATA_DIR", str(root))
    assert loaders.load(STORE, split="dev", data_dir=given)["claim_id"] == [0, 0, 0, 2, 10, 10]


def test_missing_store_says_how_to_install_it(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"no test_2025 store .*averitec data download averitec-store --split "
                                        r"test_2025"):
        loaders.load(STORE, split="test_2025", streaming=True)
    with pytest.raises(UserError, match="has no split 'val'"):
        loaders.load(STORE, split="val", data_dir=tmp_path)
    with pytest.raises(UserError, match="needs a split"):
        loaders.load(STORE, data_dir=tmp_path)


def test_bad_lines_are_named_by_file_and_line(root: Path) -> None:
    folder = root / "averitec" / "knowledge_store" / "dev"
    (folder / "2.json").write_text(json.dumps(doc(2, 0)) + "\n" + '{"url": "u", "url2text": [1]}\n')
    with pytest.raises(UserError, match=r"2\.json:2: field 'url2text' must be a list of strings"):
        list(loaders.load(STORE, split="dev", data_dir=root, streaming=True))
    (folder / "2.json").write_text(json.dumps(doc(2, 0)) + "\n\n" + '{"url": "u", "url2text": ["a"\n')
    with pytest.raises(UserError, match=r"2\.json:3:\d+: truncated JSON"):
        loaders.load(STORE, split="dev", data_dir=root, claim_ids=[2])
    (folder / "2.json").write_text("[1, 2]\n")
    with pytest.raises(UserError, match=r"2\.json:1: expected a JSON object"):
        list(loaders.iter_dataset(STORE, split="dev", data_dir=root, claim_ids=[2]))
    (folder / "notes.json").write_text("{}\n")
    with pytest.raises(UserError, match=r"notes\.json: not a knowledge-store file"):
        loaders.load(STORE, split="dev", data_dir=root, streaming=True)


def test_reads_are_bounded(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.jsonbounds import ReadLimits
    from averitec_tools.loaders import stores

    with monkeypatch.context() as patched, pytest.raises(UserError, match=r"0\.json:1: a line longer than 64 bytes"):
        patched.setattr(stores, "STORE_LIMITS", ReadLimits(max_bytes=1 << 20, max_line_bytes=64))
        list(loaders.load(STORE, split="dev", data_dir=root, streaming=True))
    size = sum(p.stat().st_size for p in (root / "averitec" / "knowledge_store" / "dev").iterdir())
    with pytest.raises(UserError, match=r"more than .* to read into memory \(pass streaming=True"):
        loaders.load(STORE, split="dev", data_dir=root, max_bytes=size - 1)
    assert len(loaders.load(STORE, split="dev", data_dir=root, claim_ids=[2], max_bytes=size - 1)) == 1


def test_requested_claims_and_options_are_checked(root: Path) -> None:
    with pytest.raises(UserError, match=r"no knowledge-store file for claim 5 \(5\.json\)"):
        loaders.load(STORE, split="dev", data_dir=root, claim_ids=[0, 5])
    for bad in (["x"], [-1], "0,1", [True]):
        with pytest.raises(UserError, match="claim_ids"):
            loaders.load(STORE, split="dev", data_dir=root, claim_ids=bad)
    with pytest.raises(UserError, match="hub_id do not apply to a knowledge store"):
        loaders.load(STORE, split="dev", data_dir=root, hub_id="x/y")
    with pytest.raises(UserError, match="claim_ids only applies to knowledge stores"):
        loaders.load("averitec", split="dev", data_dir=root, claim_ids=[0])
    with pytest.raises(UserError, match="did you mean: averitec/knowledge_store"):
        loaders.load("averitec/knowledge_stor", split="dev")
    with pytest.raises(UserError, match="is a knowledge store: read it with loaders.load"):
        loaders.dataset_stats(STORE, split="dev", data_dir=root)


def test_empty_selection_and_records_without_type_or_query(root: Path) -> None:
    folder = root / "averitec" / "knowledge_store" / "dev"
    (folder / "3.json").write_text(json.dumps({"url": "u", "url2text": []}) + "\n")
    row = loaders.load(STORE, split="dev", data_dir=root, claim_ids=[3])[0]
    assert row == {"claim_id": 3, "type": None, "query": None, "url": "u", "url2text": []}
    (folder / "4.json").write_text("")
    assert len(loaders.load(STORE, split="dev", data_dir=root, claim_ids=[4])) == 0


def test_streaming_a_claims_split_equals_loading_it(tmp_path: Path) -> None:
    from test_loaders_averitec import CLAIMS

    (tmp_path / "dev.json").write_text(json.dumps(CLAIMS))
    ds = loaders.load("averitec", split="dev", data_dir=tmp_path)
    streamed = loaders.load("averitec", split="dev", data_dir=tmp_path, streaming=True)
    assert list(streamed) == list(ds) and streamed.features == ds.features
    assert "revision unknown" in streamed.info.description
