"""Time the AVeriTeC baseline's upstream BM25 (``bm25.OkapiIndex``) against ``rank_bm25``
(the upstream scripts' library) on the same tokens, and check they agree.

For each of the first ``--n`` dev claims: a store as ``build-store`` writes it (own answers
plus ``--distractors`` other claims' answers), every sentence tokenised once with NLTK 3.9.1
``word_tokenize``; then both libraries build the index and score the claim. Prints seconds
for each, the ratio, and the largest score difference. Needs ``rank-bm25`` (the dev extra).

    python benchmarks/bench_averitec_bm25.py --n 100
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100, help="dev claims (default 100)")
    ap.add_argument("--distractors", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5, help="queries per claim index (default 5)")
    args = ap.parse_args()
    from rank_bm25 import BM25Okapi

    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore, build_store
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.stages.bm25 import OkapiIndex, word_tokenize

    dev = read_claims(Path(os.environ["AVERITEC_DATA_DIR"]) / "averitec" / "dev.json")[: args.n]
    with tempfile.TemporaryDirectory() as tmp:
        build_store(claims=[c.record for c in dev], out=Path(tmp) / "s", distractors=args.distractors)
        store = KnowledgeStore(Path(tmp) / "s")
        corpora = [[word_tokenize(s) for d in store.documents(i) for s in d.url2text] for i in range(len(dev))]
    queries = [word_tokenize(c.claim) for c in dev]
    timings = {"ours": 0.0, "rank_bm25": 0.0}
    worst = 0.0
    for docs, q in zip(corpora, queries, strict=True):
        t = time.perf_counter()
        ours = OkapiIndex(tokens=docs)
        a = [ours.scores_tokens(q) for _ in range(args.repeat)]
        timings["ours"] += time.perf_counter() - t
        t = time.perf_counter()
        ref = BM25Okapi(docs)
        b = [ref.get_scores(q) for _ in range(args.repeat)]
        timings["rank_bm25"] += time.perf_counter() - t
        worst = max(worst, float(np.max(np.abs(a[0] - b[0]))) if len(docs) else 0.0)
    sentences = sum(len(c) for c in corpora)
    print(f"{len(dev)} claims, {sentences} sentences, {args.repeat} queries per index")
    print(f"ours (bm25.OkapiIndex): {timings['ours']:.2f} s; rank_bm25.BM25Okapi: {timings['rank_bm25']:.2f} s; "
          f"ratio {timings['rank_bm25'] / max(timings['ours'], 1e-9):.1f}x; largest score difference {worst:.3g}")


if __name__ == "__main__":
    main()
