"""Paragraph store: build/open, random access, batches, adapters, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from averitec_tools.baselines.r2vc.corpus.store import (
    DATA_FILE,
    META_FILE,
    ParagraphStore,
    build_corpus,
    build_corpus_from_jsonl,
    build_corpus_from_wikipedia,
    index_text,
    iter_wikipedia_paragraphs,
    split_paragraphs,
)
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError

ROWS = [
    {"doc_id": "p0", "title": "Alpha", "url": "https://a", "text": "First paragraph."},
    {"doc_id": "p1", "title": "Alpha", "url": "https://a", "text": "Second paragraph."},
    {"id": 42, "title": "Beta", "text": "Integer id, no url."},
    {"doc_id": "p3", "title": None, "url": None, "text": "No title."},
]


def _write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_build_open_and_random_access(tmp_path: Path) -> None:
    built = build_corpus(passages=ROWS, out_dir=tmp_path / "c")
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == sorted([DATA_FILE, META_FILE])
    store = ParagraphStore.open(tmp_path / "c")
    assert store.fingerprint == built.fingerprint
    assert len(store) == 4
    assert store.passage(0) == Passage("p0", "Alpha", "https://a", "First paragraph.")
    assert store.passage(-1) == Passage("p3", "", "", "No title.")
    assert store.get("42") == Passage("42", "Beta", "", "Integer id, no url.")
    assert store.row_of("p3") == 3
    assert "p1" in store and "nope" not in store and 3 not in store
    assert [p.doc_id for p in store.passages([3, 0, 3])] == ["p3", "p0", "p3"]
    assert store.passages([]) == []
    with pytest.raises(KeyError):
        store.get("nope")
    with pytest.raises(IndexError):
        store.passage(4)


def test_batches_and_texts() -> None:
    store = build_corpus(passages=ROWS)
    batches = list(store.iter_batches(batch_size=3))
    assert [len(b) for b in batches] == [3, 1]
    assert [p.doc_id for p in store] == ["p0", "p1", "42", "p3"]
    assert list(store.iter_texts(batch_size=10, include_title=True))[0][:1] == ["Alpha\nFirst paragraph."]
    assert index_text(store.passage(3), include_title=True) == "No title."
    with pytest.raises(ValueError):
        next(store.iter_batches(batch_size=0))


def test_open_is_memory_mapped(tmp_path: Path) -> None:
    rows = [{"doc_id": f"d{i}", "text": "x" * 1000} for i in range(2000)]
    build_corpus(passages=rows, out_dir=tmp_path / "c")
    before = pa.total_allocated_bytes()
    store = ParagraphStore.open(tmp_path / "c")
    # ~2 MB of text, none of it copied into Arrow's memory pool.
    assert pa.total_allocated_bytes() - before < 100_000
    assert store.passage(1999).doc_id == "d1999"


def test_fingerprint_changes_between_builds(tmp_path: Path) -> None:
    a = build_corpus(passages=ROWS, out_dir=tmp_path / "a")
    b = build_corpus(passages=ROWS[:3], out_dir=tmp_path / "b")
    c = build_corpus(passages=ROWS, out_dir=tmp_path / "a")  # rebuilt in place
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert len(ParagraphStore.open(tmp_path / "a")) == 4


def test_jsonl_adapter_and_errors_name_line(tmp_path: Path) -> None:
    store = build_corpus_from_jsonl(path=_write_jsonl(tmp_path / "ok.jsonl", ROWS), out_dir=tmp_path / "c")
    assert len(store) == 4
    dup = _write_jsonl(tmp_path / "dup.jsonl", [ROWS[0], ROWS[1], ROWS[0]])
    with pytest.raises(UserError, match=r"dup\.jsonl:3: duplicate doc_id 'p0'"):
        build_corpus_from_jsonl(path=dup, out_dir=tmp_path / "d")
    assert not (tmp_path / "d" / DATA_FILE).exists()  # nothing half-written
    assert not list((tmp_path / "d").glob(".*tmp"))
    empty_text = _write_jsonl(tmp_path / "e.jsonl", [ROWS[0], {"doc_id": "x", "text": "  "}])
    with pytest.raises(UserError, match=r"e\.jsonl:2: paragraph 'x' has empty 'text'"):
        build_corpus_from_jsonl(path=empty_text)
    no_id = _write_jsonl(tmp_path / "n.jsonl", [{"text": "t"}])
    with pytest.raises(UserError, match=r"n\.jsonl:1: paragraph has no 'doc_id'"):
        build_corpus_from_jsonl(path=no_id)
    bad_type = _write_jsonl(tmp_path / "t.jsonl", [{"doc_id": "a", "text": 5}])
    with pytest.raises(UserError, match=r"t\.jsonl:1: 'text' must be a string"):
        build_corpus_from_jsonl(path=bad_type)
    not_obj = _write_jsonl(tmp_path / "o.jsonl", [ROWS[0], [1, 2]])
    with pytest.raises(UserError, match=r"o\.jsonl:2: expected a JSON object"):
        build_corpus_from_jsonl(path=not_obj)
    truncated = tmp_path / "tr.jsonl"
    truncated.write_text(json.dumps(ROWS[0]) + '\n{"doc_id": "x", "te\n', encoding="utf-8")
    with pytest.raises(UserError, match=r"tr\.jsonl:2:"):
        build_corpus_from_jsonl(path=truncated)
    with pytest.raises(UserError, match="no paragraphs"):
        build_corpus(passages=[])


def test_open_missing_and_corrupt(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="corpus directory not found.*rebuild"):
        ParagraphStore.open(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="not a paragraph store"):
        ParagraphStore.open(tmp_path / "empty")
    build_corpus(passages=ROWS, out_dir=tmp_path / "c")
    data = tmp_path / "c" / DATA_FILE
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(UserError, match="corrupt paragraph file.*rebuild"):
        ParagraphStore.open(tmp_path / "c")
    build_corpus(passages=ROWS, out_dir=tmp_path / "m")
    (tmp_path / "m" / META_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match="corrupt corpus metadata"):
        ParagraphStore.open(tmp_path / "m")
    build_corpus(passages=ROWS, out_dir=tmp_path / "r")
    meta = json.loads((tmp_path / "r" / META_FILE).read_text())
    meta["num_paragraphs"] = 99
    (tmp_path / "r" / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(UserError, match="holds 4 rows.*says 99"):
        ParagraphStore.open(tmp_path / "r")


def test_split_paragraphs() -> None:
    assert split_paragraphs("A.\n\nB.\n \n\nC.\nD.") == ["A.", "B.", "C.", "D."]
    assert split_paragraphs("short\n\nlong enough", min_chars=6) == ["long enough"]
    assert split_paragraphs("") == []


def test_wikipedia_adapter(tmp_path: Path) -> None:
    dump = _write_jsonl(tmp_path / "wiki.jsonl", [
        {"id": "12", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism",
         "text": "Anarchism\n\nAnarchism is a political philosophy.\n\nIt is sceptical of authority."},
        {"id": "25", "url": "https://en.wikipedia.org/wiki?curid=25", "title": "Autism", "text": "Autism\n\n"},
        {"id": "39", "url": "", "title": "Albedo", "text": "Albedo is the fraction of light reflected."},
    ])
    paras = list(iter_wikipedia_paragraphs(path=dump))
    assert [p.doc_id for p in paras] == ["12_0", "12_1", "39_0"]
    assert paras[1] == Passage("12_1", "Anarchism", "https://en.wikipedia.org/wiki?curid=12",
                               "It is sceptical of authority.")
    store = build_corpus_from_wikipedia(path=dump, out_dir=tmp_path / "w")
    assert len(store) == 3 and store.get("39_0").title == "Albedo"
    # WikiExtractor --json output: a directory tree of extension-less files.
    (tmp_path / "extracted" / "AA").mkdir(parents=True)
    (tmp_path / "extracted" / "AB").mkdir()
    _write_jsonl(tmp_path / "extracted" / "AB" / "wiki_00", [{"id": "7", "title": "Z", "text": "Zed para."}])
    _write_jsonl(tmp_path / "extracted" / "AA" / "wiki_00", [{"id": "3", "title": "Y", "text": "Y\nWhy para."}])
    (tmp_path / "extracted" / ".hidden").write_text("not json")
    assert [p.doc_id for p in iter_wikipedia_paragraphs(path=tmp_path / "extracted")] == ["3_0", "7_0"]
    (tmp_path / "none").mkdir()
    with pytest.raises(UserError, match="holds no dump files"):
        list(iter_wikipedia_paragraphs(path=tmp_path / "none"))
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"id": "1", "title": "x", "text": "ok"}, {"foo": 1}])
    with pytest.raises(UserError, match=r"bad\.jsonl:2: expected a Wikipedia article"):
        list(iter_wikipedia_paragraphs(path=bad))
