"""FEVER and VitaminC loaders, wiki-pages resolution and the R2VC-standardised views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from averitec_tools import loaders
from averitec_tools.errors import UserError
from averitec_tools.loaders.fever import flatten_evidence, page_title
from averitec_tools.records import FeverClaim, StandardizedExample, VitaminCClaim

FEVER_ROWS: list[dict[str, Any]] = [
    {"id": 1, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": "Soul Food is a film.",
     "evidence": [[[10, 20, "Soul_Food_-LRB-film-RRB-", 0]], [[11, 21, "Soul_Food_-LRB-film-RRB-", 0], [11, 21, "Fox_2000", 3]]]},
    {"id": 2, "verifiable": "NOT VERIFIABLE", "label": "NOT ENOUGH INFO", "claim": "Tilda is vegan.",
     "evidence": [[[30, None, None, None]]]},
    {"id": 3, "verifiable": "VERIFIABLE", "label": "REFUTES", "claim": "   ", "evidence": [[[40, 41, "X", 1]]]},
]
WIKI_LINES = [
    {"id": "Soul_Food_-LRB-film-RRB-", "text": "...", "lines": "0\tSoul Food is a 1997 film .\tfilm\n1\tIt was produced by Fox ."},
    {"id": "Fox_2000", "text": "...", "lines": "0\tFox 2000 Pictures .\n1\t\n2\tx\n3\tIt released Soul Food .\tSoul Food"},
    {"id": "Unrelated", "text": "", "lines": "0\tnothing"},
]
VITAMINC_ROWS = [
    {"unique_id": "a1", "case_id": "c1", "claim": "X grew by 5%.", "evidence": "X grew by 5% in 2020.", "label": "SUPPORTS", "page": "X", "revision_type": "real"},
    {"unique_id": "a2", "case_id": "c1", "claim": "X grew by 7%.", "evidence": "X grew by 5% in 2020.", "label": "REFUTES", "page": "X", "revision_type": "real"},
    {"unique_id": "a3", "case_id": "c2", "claim": "", "evidence": "Y.", "label": "NOT ENOUGH INFO", "page": "Y", "revision_type": "synthetic"},
    {"unique_id": "a4", "case_id": "c3", "claim": "Z is tall.", "evidence": "Z.", "label": "NOT ENOUGH INFO", "page": "Z", "revision_type": "synthetic"},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    _jsonl(tmp_path / "fever" / "paper_dev.jsonl", FEVER_ROWS)
    _jsonl(tmp_path / "fever" / "wiki-pages" / "wiki-001.jsonl", WIKI_LINES)
    _jsonl(tmp_path / "vitaminc" / "dev.jsonl", VITAMINC_ROWS)
    return tmp_path


def test_fever_records_and_features(data_dir: Path) -> None:
    ds = loaders.load("fever/paper_dev", data_dir=data_dir)
    assert len(ds) == 3
    ev = ds.features["evidence"].feature.feature
    assert set(ev) == {"annotation_id", "evidence_id", "page", "line", "text"}
    assert ds[1]["evidence"] == [[{"annotation_id": 30, "evidence_id": None, "page": None, "line": None, "text": None}]]
    recs = list(loaders.records_from_dataset(ds, name="fever/paper_dev"))
    assert all(isinstance(r, FeverClaim) for r in recs)
    assert recs == list(loaders.iter_dataset("fever", split="paper_dev", data_dir=data_dir))
    assert recs[0].to_dict() == FEVER_ROWS[0]


def test_fever_wiki_text_resolution(data_dir: Path) -> None:
    recs = list(loaders.iter_dataset("fever/paper_dev", data_dir=data_dir, wiki_dir=data_dir / "fever" / "wiki-pages"))
    assert recs[0].evidence[1][1].text == "It released Soul Food ."
    assert recs[0].evidence[0][0].text == "Soul Food is a 1997 film ."
    assert recs[1].evidence[0][0].text is None
    with pytest.raises(UserError, match="no wiki-pages"):
        list(loaders.iter_dataset("fever/paper_dev", data_dir=data_dir, wiki_dir=data_dir))
    with pytest.raises(UserError, match="only applies to FEVER"):
        list(loaders.iter_dataset("vitaminc/dev", data_dir=data_dir, wiki_dir=data_dir))


def test_flatten_evidence_is_documented_concatenation(data_dir: Path) -> None:
    assert page_title("A_-LSB-b-RSB-_-COLON-_c") == "A [b] : c"
    plain = list(loaders.iter_dataset("fever/paper_dev", data_dir=data_dir))
    assert flatten_evidence(plain[0]) == "[Soul Food (film), line 0] [Fox 2000, line 3]"
    assert flatten_evidence(plain[1]) == ""
    wiki = list(loaders.iter_dataset("fever/paper_dev", data_dir=data_dir, wiki_dir=data_dir / "fever" / "wiki-pages"))
    assert flatten_evidence(wiki[0]) == "[Soul Food (film), line 0] Soul Food is a 1997 film . [Fox 2000, line 3] It released Soul Food ."


def test_fever_r2vc_view(data_dir: Path) -> None:
    ds = loaders.load("fever/r2vc", split="paper_dev", data_dir=data_dir)
    # the whitespace-only claim is filtered; NEI is kept and mapped to the ternary space
    assert ds["label"] == ["SUPPORTS", "NEI"]
    assert ds["source"] == ["fever/paper_dev"] * 2 and ds["source_id"] == ["1", "2"]
    assert list(ds.features) == ["claim", "evidence_text", "label", "source", "source_id"]
    recs = list(loaders.iter_dataset("fever/r2vc", split="paper_dev", data_dir=data_dir))
    assert recs[0] == StandardizedExample("Soul Food is a film.", "[Soul Food (film), line 0] [Fox 2000, line 3]", "SUPPORTS", "fever/paper_dev", "1")
    s = loaders.dataset_stats("fever/r2vc", split="paper_dev", data_dir=data_dir)
    assert s["n_examples"] == 2 and s["labels"] == {"NEI": 1, "SUPPORTS": 1} and s["empty_evidence"] == 0.5


def test_vitaminc_and_view(data_dir: Path) -> None:
    recs = list(loaders.iter_dataset("vitaminc/dev", data_dir=data_dir))
    assert all(isinstance(r, VitaminCClaim) for r in recs) and len(recs) == 4
    ds = loaders.load("vitaminc", split="dev", data_dir=data_dir)
    assert list(loaders.records_from_dataset(ds, name="vitaminc/dev")) == recs
    view = list(loaders.iter_dataset("vitaminc/r2vc", split="dev", data_dir=data_dir))
    assert [(v.label, v.evidence_text) for v in view] == [("SUPPORTS", "X grew by 5% in 2020."), ("REFUTES", "X grew by 5% in 2020."), ("NEI", "Z.")]
    s = loaders.dataset_stats("vitaminc/dev", data_dir=data_dir)
    assert s["labels"] == {"NOT ENOUGH INFO": 2, "REFUTES": 1, "SUPPORTS": 1} and s["distinct_cases"] == 3
    frame = loaders.to_polars("vitaminc/r2vc", split="dev", data_dir=data_dir)
    assert frame["label"].to_list() == ["SUPPORTS", "REFUTES", "NEI"]


def test_bad_fever_and_vitaminc_lines(tmp_path: Path) -> None:
    bad = _jsonl(tmp_path / "paper_dev.jsonl", [{"id": "x1", "label": "SUPPORTS", "claim": "c", "evidence": []}])
    with pytest.raises(UserError, match=r"paper_dev.jsonl:1: FEVER 'id' must be an integer"):
        loaders.load("fever/paper_dev", data_dir=bad)
    _jsonl(bad, [{"id": 1, "label": "SUPPORTS", "claim": "c", "evidence": [[["p", 1]]]}])
    with pytest.raises(UserError, match=r"evidence\[0\]\[0\] must be \[annotation_id, evidence_id, page, line\]"):
        loaders.load("fever/paper_dev", data_dir=bad)
    _jsonl(bad, [{"id": 1, "label": "MAYBE", "claim": "c", "evidence": []}])
    with pytest.raises(UserError, match="unknown fever label 'MAYBE'"):
        loaders.load("fever/paper_dev", data_dir=bad)
    vc = _jsonl(tmp_path / "dev.jsonl", [{"claim": "c", "label": "SUPPORTS"}])
    with pytest.raises(UserError, match=r"dev.jsonl:1: missing key 'evidence'"):
        loaders.load("vitaminc/dev", data_dir=vc)


def test_fever_without_files_offline_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """FEVER has download sources (fever.ai first, then fever/fever on the hub: issue 36); offline and
    with nothing local, one line says what to pass and where the files come from."""
    monkeypatch.delenv("AVERITEC_DATA_DIR", raising=False)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match=r"fever/train: no local files found and the hub is disabled") as err:
        loaders.load("fever/train")
    assert "https://fever.ai/download/fever" in str(err.value)


@pytest.mark.shared_data
def test_shared_paper_dev(shared_data: Path) -> None:
    recs = list(loaders.iter_dataset("fever/paper_dev", data_dir=shared_data))
    assert len(recs) == 9999
    raw = [json.loads(line) for line in (shared_data / "fever" / "paper_dev.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    assert [r.to_dict() for r in recs] == raw
    s = loaders.dataset_stats("fever/paper_dev", data_dir=shared_data)
    assert s["labels"] == {"NOT ENOUGH INFO": 3333, "REFUTES": 3333, "SUPPORTS": 3333}
    view = loaders.dataset_stats("fever/r2vc", split="paper_dev", data_dir=shared_data)
    assert view["n_examples"] == 9999 and view["labels"]["NEI"] == 3333
