"""R2VC retrieval benchmark: HNSW vs exact flat recall, and bm25s vs pyserini side by side.

Corpus: the AVeriTeC dev gold answers, questions and justifications plus FEVER dev claims
(``$AVERITEC_DATA_DIR``, default ``../shared/data``), up to ``--passages`` paragraphs.
Queries: the 500 AVeriTeC dev claims (not in the corpus).

Reports:
- recall@k of FAISS HNSW (M=64, efConstruction=512, efSearch=512) against the exact
  ``IndexFlatIP`` top-k on MiniLM embeddings, with build and query times;
- build (index) and query times of bm25s and pyserini/Lucene on the same corpus and
  queries, with the ratio, and how often their top-10 agree.

Usage::

    .venv/bin/python benchmarks/bench_retrieval.py [--passages 8000] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from averitec_tools.baselines.r2vc.corpus.store import build_corpus  # noqa: E402


def _data_dir() -> Path:
    env = os.environ.get("AVERITEC_DATA_DIR")
    return Path(env) if env else REPO.parent / "shared" / "data"


def load_corpus_and_queries(*, n_passages: int) -> tuple[list[dict[str, str]], list[str]]:
    data = _data_dir()
    dev = json.loads((data / "averitec" / "dev.json").read_text(encoding="utf-8"))
    texts: list[tuple[str, str]] = []
    for c, claim in enumerate(dev):
        for q, question in enumerate(claim.get("questions") or []):
            texts.append((f"avq{c}_{q}", question["question"]))
            for a, answer in enumerate(question.get("answers") or []):
                texts.append((f"ava{c}_{q}_{a}", answer.get("answer") or ""))
        texts.append((f"avj{c}", claim.get("justification") or ""))
    fever = data / "fever" / "paper_dev.jsonl"
    if fever.exists():
        with fever.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                texts.append((f"fever{row['id']}", row["claim"]))
    seen: set[str] = set()
    rows = []
    for doc_id, text in texts:
        if text.strip() and doc_id not in seen:
            seen.add(doc_id)
            rows.append({"doc_id": doc_id, "title": "", "url": "", "text": text})
    return rows[:n_passages], [c["claim"] for c in dev]


def bench_dense(store: Any, queries: list[str], *, ks: tuple[int, ...]) -> dict[str, Any]:
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever, new_faiss_index
    from averitec_tools.models import load_sentence_encoder

    encoder, _ = load_sentence_encoder(model="minilm", device="cpu")
    t0 = time.perf_counter()
    flat = DenseRetriever.build(store=store, model="minilm", encoder=encoder, index_type="flat", show_progress=True)
    encode_s = time.perf_counter() - t0
    vectors = flat.index.reconstruct_n(0, flat.index.ntotal)
    hnsw = new_faiss_index(dim=vectors.shape[1], index_type="hnsw")
    t0 = time.perf_counter()
    hnsw.add(vectors)
    hnsw_build_s = time.perf_counter() - t0
    qv = flat.encode_queries(queries)
    kmax = max(ks)
    t0 = time.perf_counter()
    _, exact = flat.index.search(qv, kmax)
    flat_query_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    _, approx = hnsw.search(qv, kmax)
    hnsw_query_s = time.perf_counter() - t0
    recall = {
        f"recall@{k}": float(np.mean([len(set(a[:k]) & set(e[:k])) / k for a, e in zip(approx, exact, strict=True)]))
        for k in ks
    }
    return {
        "encoder": "sentence-transformers/all-MiniLM-L6-v2",
        "dim": int(vectors.shape[1]),
        "encode_s": encode_s,
        "encode_passages_per_s": len(store) / encode_s,
        "hnsw_build_s": hnsw_build_s,
        "flat_query_s": flat_query_s,
        "hnsw_query_s": hnsw_query_s,
        **recall,
    }


def bench_sparse(store: Any, queries: list[str], *, k: int, with_pyserini: bool) -> dict[str, Any]:
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever

    out: dict[str, Any] = {}
    t0 = time.perf_counter()
    bm = Bm25sRetriever.build(store=store, show_progress=False)
    out["bm25s_build_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    bm_hits = bm.search(queries, k=k)
    out["bm25s_query_s"] = time.perf_counter() - t0
    if not with_pyserini:
        return out
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import (
        PyseriniRetriever,
        prepare_pyserini,
    )

    t0 = time.perf_counter()
    prepare_pyserini()
    from pyserini.search.lucene import LuceneSearcher  # noqa: F401  (starts the JVM)

    out["pyserini_jvm_start_s"] = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        PyseriniRetriever.build_index(store=store, index_dir=Path(tmp) / "idx")
        out["pyserini_build_s"] = time.perf_counter() - t0
        lucene = PyseriniRetriever.load(store=store, index_dir=Path(tmp) / "idx")
        t0 = time.perf_counter()
        lu_hits = lucene.search(queries, k=k)
        out["pyserini_query_s"] = time.perf_counter() - t0
    out["build_ratio_pyserini_over_bm25s"] = out["pyserini_build_s"] / out["bm25s_build_s"]
    out["query_ratio_pyserini_over_bm25s"] = out["pyserini_query_s"] / out["bm25s_query_s"]
    agree, max_diff = [], 0.0
    for a, b in zip(bm_hits, lu_hits, strict=True):
        ta = [h.passage.doc_id for h in a[:10]]
        tb = [h.passage.doc_id for h in b[:10]]
        agree.append(len(set(ta) & set(tb)) / max(1, len(ta)))
        sb = {h.passage.doc_id: h.score for h in b}
        for h in a[:10]:
            if h.passage.doc_id in sb:
                max_diff = max(max_diff, abs(h.score - sb[h.passage.doc_id]))
    out["top10_overlap_bm25s_vs_pyserini"] = float(np.mean(agree))
    out["max_abs_score_diff_top10"] = max_diff
    return out


def bench_answer_recall(*, alpha: float) -> dict[str, Any]:
    """Question → own gold answer recall on the corpus of all dev gold answers.

    This is the offline configuration's oracle-style corpus: every AVeriTeC dev answer
    is a passage; a hit is any answer of the query question.
    """
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.dense import DenseRetriever
    from averitec_tools.baselines.r2vc.stages.retrieval.fusion import HybridRetriever
    from averitec_tools.models import load_sentence_encoder

    dev = json.loads((_data_dir() / "averitec" / "dev.json").read_text(encoding="utf-8"))
    rows, questions = [], []
    for c, claim in enumerate(dev):
        for q, question in enumerate(claim.get("questions") or []):
            gold = set()
            for a, answer in enumerate(question.get("answers") or []):
                if (answer.get("answer") or "").strip():
                    rows.append({"doc_id": f"{c}_{q}_{a}", "title": "", "url": "", "text": answer["answer"]})
                    gold.add(f"{c}_{q}_{a}")
            if gold:
                questions.append((question["question"], gold))
    store = build_corpus(passages=rows)
    encoder, _ = load_sentence_encoder(model="minilm", device="cpu")
    sparse = Bm25sRetriever.build(store=store, show_progress=False)
    dense = DenseRetriever.build(store=store, model="minilm", encoder=encoder, index_type="flat", show_progress=True)
    hybrid = HybridRetriever(sparse=sparse, dense=dense, alpha=alpha)
    texts = [q for q, _ in questions]
    out: dict[str, Any] = {"passages": len(store), "questions": len(questions), "alpha": alpha}
    for name, retriever in (("bm25s", sparse), ("dense_minilm", dense), ("hybrid", hybrid)):
        hits = retriever.search(texts, k=24)
        for k in (1, 10, 24):
            out[f"{name}_recall@{k}"] = float(np.mean([
                bool({h.passage.doc_id for h in hs[:k]} & gold) for hs, (_, gold) in zip(hits, questions, strict=True)
            ]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--passages", type=int, default=8000, help="corpus size (default 8000)")
    parser.add_argument("--queries", type=int, default=500, help="number of dev claims used as queries")
    parser.add_argument("--k", type=int, default=200, help="retrieval depth (Table G.1: 200)")
    parser.add_argument("--no-pyserini", action="store_true", help="skip the Lucene side")
    parser.add_argument("--no-dense", action="store_true", help="skip the FAISS side")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--answer-recall", action="store_true",
                        help="only measure dev question → gold answer recall (bm25s, MiniLM, hybrid)")
    parser.add_argument("--alpha", type=float, default=0.5, help="fusion α for --answer-recall")
    args = parser.parse_args(argv)
    if args.answer_recall:
        res = bench_answer_recall(alpha=args.alpha)
        if args.json:
            print(json.dumps(res))
        else:
            print(f"dev answers corpus: {res['passages']} passages, {res['questions']} questions")
            for name in ("bm25s", "dense_minilm", "hybrid"):
                print(f"{name:13s} " + "  ".join(f"R@{k} {res[f'{name}_recall@{k}']:.3f}" for k in (1, 10, 24)))
        return 0

    rows, queries = load_corpus_and_queries(n_passages=args.passages)
    queries = queries[: args.queries]
    store = build_corpus(passages=rows)
    result: dict[str, Any] = {"passages": len(store), "queries": len(queries), "k": args.k,
                              "cpu_count": os.cpu_count()}
    result["sparse"] = bench_sparse(store, queries, k=args.k, with_pyserini=not args.no_pyserini)
    if not args.no_dense:
        ks = tuple(k for k in (1, 10, 24, 100, 200) if k <= min(args.k, len(store)))
        result["dense"] = bench_dense(store, queries, ks=ks)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"corpus: {result['passages']} passages, {result['queries']} queries, k={args.k}")
    s = result["sparse"]
    print(f"bm25s     build {s['bm25s_build_s']:7.2f}s  query {s['bm25s_query_s']:7.2f}s")
    if "pyserini_build_s" in s:
        print(f"pyserini  build {s['pyserini_build_s']:7.2f}s  query {s['pyserini_query_s']:7.2f}s"
              f"  (JVM start {s['pyserini_jvm_start_s']:.2f}s, not included)")
        print(f"ratio pyserini/bm25s: build {s['build_ratio_pyserini_over_bm25s']:.2f}x, "
              f"query {s['query_ratio_pyserini_over_bm25s']:.2f}x; top-10 overlap "
              f"{s['top10_overlap_bm25s_vs_pyserini']:.3f}, max |Δscore| {s['max_abs_score_diff_top10']:.2e}")
    if "dense" in result:
        d = result["dense"]
        print(f"MiniLM encode {d['encode_s']:.1f}s ({d['encode_passages_per_s']:.0f} passages/s); "
              f"HNSW build {d['hnsw_build_s']:.1f}s; query flat {d['flat_query_s']:.3f}s, hnsw {d['hnsw_query_s']:.3f}s")
        print("HNSW vs exact flat: " + ", ".join(f"{k} {v:.4f}" for k, v in d.items() if k.startswith("recall@")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
