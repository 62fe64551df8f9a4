"""Sparse (bm25s, pyserini) and dense (MiniLM + FAISS) retrieval, index save/load, bad input."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, build_corpus
from averitec_tools.baselines.r2vc.stages.retrieval import HybridRetriever, build_retriever
from averitec_tools.baselines.r2vc.stages.retrieval.analysis import LuceneLikeAnalyzer
from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever
from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever, new_faiss_index
from averitec_tools.baselines.r2vc.types import Retriever
from averitec_tools.errors import ResourceError, UserError
from averitec_tools.models import MINILM_ID, resolve_model

# Short plain-prose paragraphs: every token is a plain word, so the Lucene-like analyser
# and Anserini's analyser agree, and lengths stay below Lucene's exact-norm range.
DOCS = [
    ("eiffel", "Eiffel Tower", "The Eiffel Tower is a wrought iron tower in Paris, France."),
    ("louvre", "Louvre", "The Louvre museum in Paris holds the Mona Lisa painting."),
    ("colosseum", "Colosseum", "The Colosseum is an ancient amphitheatre in Rome, Italy."),
    ("tokyo", "Tokyo", "Tokyo is the capital city of Japan and its largest city."),
    ("nile", "Nile", "The Nile river flows north through Egypt into the Mediterranean Sea."),
    ("everest", "Everest", "Mount Everest is the highest mountain above sea level."),
    ("amazon", "Amazon", "The Amazon rainforest covers much of Brazil and Peru."),
    ("python", "Python", "Python is a programming language created by Guido van Rossum."),
]
QUERIES = [
    "iron tower in Paris",
    "Which river flows through Egypt?",
    "capital city of Japan",
    "highest mountain",
    "painting museum Paris Mona Lisa",
    "rainforest in Brazil",
]


def _store(out_dir: Path | None = None) -> ParagraphStore:
    return build_corpus(
        passages=[{"doc_id": d, "title": t, "url": f"https://en.wikipedia.org/wiki/{d}", "text": x}
                  for d, t, x in DOCS],
        out_dir=out_dir,
    )


@pytest.fixture(scope="module")
def minilm() -> Any:
    from averitec_tools.models import load_sentence_encoder

    encoder, _ = load_sentence_encoder(model="minilm", device="cpu")
    return encoder


# --------------------------------------------------------------------------- bm25s


def test_bm25s_ranks_relevant_first_and_skips_nonmatching() -> None:
    r = Bm25sRetriever.build(store=_store(), show_progress=False)
    assert isinstance(r, Retriever)
    hits = r.search(QUERIES, k=3)
    assert [h[0].passage.doc_id for h in hits] == ["eiffel", "nile", "tokyo", "everest", "louvre", "amazon"]
    assert all(h.source == "bm25s" and h.score > 0 for q in hits for h in q)
    assert r.search(["zebra quantum"], k=5) == [[]]  # no shared term: empty, not a crash
    assert r.search(["the of and"], k=5) == [[]]  # only stop words
    assert r.search([], k=5) == []
    assert len(r.search(["Paris"], k=100)[0]) == 2  # k larger than the matches
    with pytest.raises(UserError, match="k must be"):
        r.search(["x"], k=0)


def test_bm25s_score_matches_lucene_formula_by_hand() -> None:
    # One-term query "everest": idf = ln(1 + (N − df + 0.5)/(df + 0.5)), N = 8, df = 1;
    # tf = 2 (title + text); dl = |analysed "Everest\nMount Everest is the highest mountain
    # above sea level."| = 8 tokens (is, the dropped); score = idf·tf/(tf + k1(1 − b + b·dl/avgdl)).
    store = _store()
    r = Bm25sRetriever.build(store=store, show_progress=False)
    analyzer = LuceneLikeAnalyzer()
    lengths = [len(analyzer(f"{t}\n{x}")) for _, t, x in DOCS]
    dl, avgdl = lengths[5], sum(lengths) / len(lengths)
    assert dl == 8
    idf = math.log(1 + (8 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 2 / (2 + 0.9 * (1 - 0.4 + 0.4 * dl / avgdl))
    hit = r.search(["Everest"], k=1)[0][0]
    assert hit.passage.doc_id == "everest"
    assert hit.score == pytest.approx(expected, rel=1e-6)


def test_bm25s_save_load_and_bad_index(tmp_path: Path) -> None:
    store = _store(tmp_path / "corpus")
    built = Bm25sRetriever.load_or_build(store=store, index_dir=tmp_path / "idx", show_progress=False)
    loaded = Bm25sRetriever.load(store=ParagraphStore.open(tmp_path / "corpus"), index_dir=tmp_path / "idx")
    for a, b in zip(built.search(QUERIES, k=5), loaded.search(QUERIES, k=5), strict=True):
        assert [(h.passage, h.score) for h in a] == [(h.passage, h.score) for h in b]
    with pytest.raises(UserError, match="no bm25s index here.*rebuild"):
        Bm25sRetriever.load(store=store, index_dir=tmp_path / "missing")
    other = build_corpus(passages=[{"doc_id": "x", "text": "Other corpus."}])
    with pytest.raises(UserError, match="built from another corpus.*rebuild"):
        Bm25sRetriever.load(store=other, index_dir=tmp_path / "idx")
    (tmp_path / "idx" / "data.csc.index.npy").write_bytes(b"garbage")
    with pytest.raises(UserError, match="corrupt bm25s index.*rebuild"):
        Bm25sRetriever.load(store=store, index_dir=tmp_path / "idx")


# --------------------------------------------------------------------------- pyserini


@pytest.mark.java
def test_analyzer_agrees_with_lucene() -> None:
    from averitec_tools.baselines.r2vc.stages.retrieval import pyserini_backend
    analyzer = LuceneLikeAnalyzer()
    for _, title, text in DOCS:
        assert analyzer(f"{title}\n{text}") == pyserini_backend.lucene_analyze(f"{title}\n{text}")
    tricky = ["The cat's owners were running", "I wouldn’t pay 225,000 in the U.S. at 0.02%",
              "Raj Thackeray‘s covid-19 tweet, e.g. at 10:30; it's Bob’s"]
    for q in QUERIES + tricky:
        assert analyzer(q) == pyserini_backend.lucene_analyze(q)


@pytest.mark.java
def test_pyserini_matches_bm25s(tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import PyseriniRetriever

    store = _store(tmp_path / "corpus")
    lucene = PyseriniRetriever.load_or_build(store=store, index_dir=tmp_path / "lucene")
    assert isinstance(lucene, Retriever)
    embedded = Bm25sRetriever.build(store=store, show_progress=False)
    for lq, bq in zip(lucene.search(QUERIES, k=8), embedded.search(QUERIES, k=8), strict=True):
        assert [h.passage.doc_id for h in lq] == [h.passage.doc_id for h in bq]
        # Anserini rounds scores to 4 decimals; bm25s keeps float32.
        for lh, bh in zip(lq, bq, strict=True):
            assert lh.score == pytest.approx(bh.score, abs=1e-4)
            assert lh.passage == bh.passage and lh.source == "pyserini"
    assert lucene.search(["zebra quantum"], k=5) == [[]]
    # Reload from disk; another corpus is refused.
    reloaded = PyseriniRetriever.load(store=store, index_dir=tmp_path / "lucene")
    assert reloaded.search(QUERIES[:1], k=1)[0][0].passage.doc_id == "eiffel"
    other = build_corpus(passages=[{"doc_id": "x", "text": "Other corpus."}])
    with pytest.raises(UserError, match="another corpus"):
        PyseriniRetriever.load(store=other, index_dir=tmp_path / "lucene")
    with pytest.raises(UserError, match="no pyserini index here.*rebuild"):
        PyseriniRetriever.load(store=store, index_dir=tmp_path / "nope")


# --------------------------------------------------------------------------- dense


def test_dense_minilm_relevant_first(minilm: Any, tmp_path: Path) -> None:
    store = _store(tmp_path / "corpus")
    r = DenseRetriever.build(store=store, model="minilm", encoder=minilm, index_type="hnsw", show_progress=False)
    assert isinstance(r, Retriever)
    assert r.index.hnsw.efSearch == 512 and r.index.hnsw.efConstruction == 512
    paraphrases = ["steel landmark in the French capital", "longest river in Africa",
                   "coding language made by Guido", "tallest peak on Earth"]
    top = [hits[0].passage.doc_id for hits in r.search(paraphrases, k=3)]
    assert top == ["eiffel", "nile", "python", "everest"]
    scores = [h.score for h in r.search(paraphrases[:1], k=8)[0]]
    assert scores == sorted(scores, reverse=True) and -1.0 <= scores[-1] <= scores[0] <= 1.0 + 1e-6
    assert len(r.search(["x"], k=100)[0]) == len(DOCS)

    r.save(tmp_path / "dense")
    meta = json.loads((tmp_path / "dense" / "averitec_dense.json").read_text())
    assert meta["model_id"] == MINILM_ID and meta["index_type"] == "hnsw"
    loaded = DenseRetriever.load(store=store, index_dir=tmp_path / "dense", model="all-MiniLM-L6-v2")
    assert [h[0].passage.doc_id for h in loaded.search(paraphrases, k=1)] == top

    meta["model_id"] = "BAAI/bge-large-en-v1.5"
    bad = tmp_path / "dense_other"
    shutil.copytree(tmp_path / "dense", bad)
    (bad / "averitec_dense.json").write_text(json.dumps(meta))
    with pytest.raises(UserError, match="built with 'BAAI/bge-large-en-v1.5', not 'sentence-transformers"):
        DenseRetriever.load(store=store, index_dir=bad, model="minilm")
    (tmp_path / "dense" / "faiss.index").write_bytes(b"not a faiss index")
    with pytest.raises(UserError, match="corrupt FAISS index.*rebuild"):
        DenseRetriever.load(store=store, index_dir=tmp_path / "dense", model="minilm")
    with pytest.raises(UserError, match="no dense index here.*rebuild"):
        DenseRetriever.load(store=store, index_dir=tmp_path / "none")


def test_hnsw_matches_flat_on_random_vectors() -> None:
    rng = np.random.default_rng(0)
    base = rng.standard_normal((3000, 32)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    queries = base[:50] + 0.3 * rng.standard_normal((50, 32)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    flat, hnsw = new_faiss_index(dim=32, index_type="flat"), new_faiss_index(dim=32, index_type="hnsw")
    flat.add(base)
    hnsw.add(base)
    _, exact = flat.search(queries, 10)
    _, approx = hnsw.search(queries, 10)
    recall = np.mean([len(set(a) & set(e)) / 10 for a, e in zip(approx, exact, strict=True)])
    assert recall >= 0.98
    with pytest.raises(UserError, match="unknown dense index type"):
        new_faiss_index(dim=4, index_type="ivf")


def test_resolve_model_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ResourceError, match="not in the local Hugging Face cache and the hub is offline"):
        resolve_model(model="BAAI/bge-large-en-v1.5")
    with pytest.raises(ResourceError, match="no such local directory"):
        resolve_model(model=str(tmp_path / "nope" / "model"))
    (tmp_path / "notamodel").mkdir()
    with pytest.raises(ResourceError, match="not a model directory"):
        resolve_model(model=str(tmp_path / "notamodel"))
    bundled = resolve_model(model="minilm")
    assert bundled.model_id == MINILM_ID and (Path(bundled.location) / "config.json").exists()
    assert resolve_model(model=bundled.location).model_id == MINILM_ID  # same model, same id


# --------------------------------------------------------------------------- factory


def test_build_retriever_hybrid_saves_and_reloads(tmp_path: Path) -> None:
    corpus_dir = tmp_path / "corpus"
    _store(corpus_dir)
    kwargs: dict[str, Any] = {"corpus": corpus_dir, "sparse": "bm25s", "dense_model": "minilm",
                              "index_dir": tmp_path / "idx", "show_progress": False, "device": "cpu"}
    r = build_retriever(**kwargs)
    assert isinstance(r, HybridRetriever) and r.top_m == 24 and r.top_sparse == 200
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["bm25s", "dense"]
    first = r.search(["Which river flows through Egypt?"], k=24)[0]
    assert first[0].passage.doc_id == "nile" and first[0].source == "hybrid"
    assert len(first) == len(DOCS)  # dense returns every passage of this tiny corpus
    assert r.search(["Which river flows through Egypt?"], k=2)[0][:1] == first[:1]
    again = build_retriever(**kwargs)  # loads the saved indexes
    reloaded = again.search(["Which river flows through Egypt?"], k=24)[0]
    assert [h.passage.doc_id for h in reloaded] == [h.passage.doc_id for h in first]
    assert [h.score for h in reloaded] == pytest.approx([h.score for h in first], abs=1e-6)
    sparse_only = build_retriever(**{**kwargs, "dense_model": None})
    assert isinstance(sparse_only, Bm25sRetriever)
    with pytest.raises(UserError, match="dense index is 'hnsw', 'flat' was asked for"):
        build_retriever(**{**kwargs, "dense_index": "flat"})


def test_build_retriever_bad_arguments(tmp_path: Path) -> None:
    store = _store()
    with pytest.raises(UserError, match="unknown sparse retriever 'bm26'.*bm25s, pyserini"):
        build_retriever(corpus=store, sparse="bm26", dense_model=None)
    with pytest.raises(UserError, match="no retriever configured"):
        build_retriever(corpus=store, sparse=None, dense_model=None)
    with pytest.raises(UserError, match="corpus directory not found"):
        build_retriever(corpus=tmp_path / "nope", sparse="bm25s", dense_model=None)


# --------------------------------------------------------------------------- shared data


def _dev_answer_corpus(shared_data: Path) -> tuple[list[dict[str, str]], list[tuple[str, set[str]]]]:
    dev = json.loads((shared_data / "averitec" / "dev.json").read_text(encoding="utf-8"))
    rows, questions = [], []
    for c, claim in enumerate(dev):
        for q, question in enumerate(claim.get("questions") or []):
            gold = set()
            for a, answer in enumerate(question.get("answers") or []):
                if (answer.get("answer") or "").strip():
                    doc_id = f"{c}_{q}_{a}"
                    rows.append({"doc_id": doc_id, "title": "", "url": answer.get("source_url") or "",
                                 "text": answer["answer"]})
                    gold.add(doc_id)
            if gold:
                questions.append((question["question"], gold))
    return rows, questions


@pytest.fixture(scope="module")
def dev_answer_bm25s(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any, Any]:
    rows, questions = _dev_answer_corpus(shared_data)
    store = build_corpus(passages=rows, out_dir=tmp_path_factory.mktemp("dev") / "corpus")
    bm = Bm25sRetriever.build(store=store, show_progress=False)
    return store, questions, bm.search([q for q, _ in questions], k=10)


@pytest.mark.shared_data
def test_dev_answers_bm25s_recall(dev_answer_bm25s: tuple[Any, Any, Any]) -> None:
    # Each AVeriTeC dev question against a corpus of all 1,399 dev gold answers: the
    # question's own answer is in the bm25s top 10 for 49.3 % of the 1,287 questions.
    # Snapshot of bm25s 0.3.16 (measured, not derived; the corpus sizes are counted from the
    # raw file): after a deliberate change, `pytest tests/test_r2vc_retrieval.py -k recall`
    # prints the new value in its failure message. Lucene agreement is checked below.
    store, questions, hits = dev_answer_bm25s
    assert len(store) == 1399 and len(questions) == 1287
    recall10 = np.mean([bool({h.passage.doc_id for h in hs} & gold)
                        for hs, (_, gold) in zip(hits, questions, strict=True)])
    assert recall10 == pytest.approx(0.4926, abs=0.003)


@pytest.mark.shared_data
@pytest.mark.java
def test_dev_answers_pyserini_agrees_with_bm25s(dev_answer_bm25s: tuple[Any, Any, Any], tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import PyseriniRetriever

    store, questions, hits = dev_answer_bm25s
    lucene = PyseriniRetriever.load_or_build(store=store, index_dir=tmp_path / "lucene")
    lu_hits = lucene.search([q for q, _ in questions], k=10)
    overlap = np.mean([len({h.passage.doc_id for h in a} & {h.passage.doc_id for h in b}) / max(1, len(a))
                       for a, b in zip(hits, lu_hits, strict=True)])
    # Measured 0.966: the rest is Lucene's one-byte length norms and rare tokenisation cases.
    assert overlap >= 0.95


def test_retriever_from_config_hands_over_every_setting_the_builder_shares() -> None:
    import dataclasses
    import inspect

    from averitec_tools.baselines.r2vc.config import RetrievalConfig
    from averitec_tools.baselines.r2vc.stages.retrieval.configured import BUILDER_SETTINGS

    shared = set(inspect.signature(build_retriever).parameters) & {f.name for f in dataclasses.fields(RetrievalConfig)}
    # corpus and index_dir are resolved by the caller (--corpus, <corpus>/indexes)
    assert set(BUILDER_SETTINGS) == shared - {"corpus", "index_dir"}
