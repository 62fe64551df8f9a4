"""Stage 1 of the AVeriTeC baseline: the knowledge store (2024 layout) and build-store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _averitec_baseline_fixtures import claims, write_json

from averitec_tools.baselines.averitec.corpus.store import (
    KnowledgeStore,
    build_store,
    split_sentences,
)
from averitec_tools.baselines.averitec.io.data import read_claims
from averitec_tools.cli.main import main
from averitec_tools.errors import UserError


def _records(n: int = 4) -> list:
    return [c.record for c in _items(n)]


def _items(n: int = 4) -> list:
    import tempfile

    p = write_json(Path(tempfile.mkdtemp()) / "c.json", claims("dev", n))
    return read_claims(p)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_store_layout_own_and_distractors(tmp_path: Path) -> None:
    stats = build_store(claims=_records(4), out=tmp_path / "s", distractors=3, seed=1)
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["0.json", "1.json", "2.json", "3.json"]
    docs = _lines(tmp_path / "s" / "0.json")
    assert [sorted(d) for d in docs] == [["claim_id", "query", "type", "url", "url2text"]] * 5
    own = [d for d in docs if d["type"] == "gold_answer"]
    # Two answers, the first split into its two sentences; url is the answer's source_url.
    assert own[0]["url2text"] == ["The moon was seen on Monday.", "It was dev 0."]
    assert own[0]["url"] == "https://news.example.org/2020/05/01/moon"
    assert own[0]["query"] == "What happened to the moon?"
    distractors = [d for d in docs if d["type"] == "distractor"]
    assert len(distractors) == 3 and all("moon" not in " ".join(d["url2text"]) for d in distractors)
    assert all(d["claim_id"] == 0 for d in docs)
    assert (stats.own_documents, stats.distractor_documents) == (8, 12)


def test_store_is_seeded(tmp_path: Path) -> None:
    """The same seed draws the same distractors; another seed draws others (a store that
    ignored its seed would pass the first check, not the second)."""
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        build_store(claims=_records(8), out=tmp_path / name, distractors=2, seed=seed)
    files = [f"{i}.json" for i in range(8)]

    def distractors(name: str) -> list[list[str]]:
        return [[d["url"] for d in _lines(tmp_path / name / f) if d["type"] == "distractor"] for f in files]

    assert [(tmp_path / "a" / f).read_text() for f in files] == [(tmp_path / "b" / f).read_text() for f in files]
    assert distractors("a") != distractors("c")


def test_exclude_own_evidence(tmp_path: Path) -> None:
    stats = build_store(claims=_records(3), out=tmp_path / "s", distractors=2, exclude_own_evidence=True)
    assert stats.own_documents == 0
    assert all(d["type"] == "distractor" for d in _lines(tmp_path / "s" / "1.json"))


def test_temporal_filter_counts_drops(tmp_path: Path) -> None:
    recs = claims("dev", 2)
    recs[0]["questions"][1]["answers"][0]["source_url"] = "https://x.org/2021/01/02/later"  # after 01-06-2020
    items = read_claims(write_json(tmp_path / "c.json", recs))
    stats = build_store(claims=[c.record for c in items], out=tmp_path / "s", distractors=0, temporal_filter=True)
    assert stats.dropped_after_claim_date == 1 and stats.dropped_by_type == {"gold_answer": 1}
    assert [d["url"] for d in _lines(tmp_path / "s" / "0.json")] == ["https://news.example.org/2020/05/01/moon"]


def test_unanswerable_answers_are_not_documents(tmp_path: Path) -> None:
    recs = claims("dev", 1)
    recs[0]["questions"][0]["answers"][0]["answer_type"] = "Unanswerable"
    items = read_claims(write_json(tmp_path / "c.json", recs))
    stats = build_store(claims=[items[0].record], out=tmp_path / "s", distractors=0)
    assert stats.own_documents == 1


def test_reader_streams_and_reports_bad_lines(tmp_path: Path) -> None:
    d = tmp_path / "store"
    d.mkdir()
    good = {"claim_id": 5, "type": "t", "query": "q", "url": "u", "url2text": ["A."]}
    (d / "5.json").write_text(json.dumps(good) + "\n" + "{not json\n")
    store = KnowledgeStore(d)
    it = store.documents(5)
    assert next(it).url2text == ("A.",)
    with pytest.raises(UserError, match=r"5\.json:2:"):
        next(it)
    (d / "6.json").write_text(json.dumps({**good, "url2text": "A."}) + "\n")
    with pytest.raises(UserError, match=r"6\.json:1: field 'url2text'"):
        list(store.documents(6))
    assert list(store.documents(99)) == [] and not store.has(99)


def test_missing_or_empty_store(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        KnowledgeStore(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="is empty"):
        KnowledgeStore(tmp_path / "empty")


def test_split_sentences() -> None:
    assert split_sentences("Dr. who? Yes. 3 left.") == ["Dr. who?", "Yes.", "3 left."]
    assert split_sentences("  ") == []


def test_cli_build_store_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write_json(tmp_path / "c.json", claims("dev", 3))
    code = main(["baseline", "averitec", "build-store", "--claims", str(src), "--out", str(tmp_path / "s"),
                 "--distractors", "1", "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["claims"], out["own_documents"], out["distractor_documents"]) == (3, 6, 3)


def test_cli_build_store_bad_claims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "c.json"
    bad.write_text('[{"claim": "x", "questions": 3}]')
    assert main(["baseline", "averitec", "build-store", "--claims", str(bad), "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "c.json" in err and not (tmp_path / "s").exists()
