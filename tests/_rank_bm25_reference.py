"""Reference for tests/test_averitec_baseline_bm25.py, run in a subprocess under the real
NLTK 3.9.1: the upstream retrieval step (``rank_bm25.BM25Okapi`` over ``nltk.word_tokenize``
tokens, top k by ``np.argsort(scores)[::-1]``) on a JSON file of queries and sentence lists.

Usage: python tests/_rank_bm25_reference.py IN.json OUT.json
IN: [{"query": str, "sentences": [str, ...], "k": int}, ...]; OUT: [{"scores": [...],
"top": [...], "nltk": version}, ...].
"""

from __future__ import annotations

import json
import sys

import nltk
import numpy as np
from rank_bm25 import BM25Okapi


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        cases = json.load(fh)
    out = []
    for case in cases:
        bm25 = BM25Okapi([nltk.word_tokenize(s) for s in case["sentences"]])
        scores = bm25.get_scores(nltk.word_tokenize(case["query"]))
        top = np.argsort(scores)[::-1][: case["k"]]
        out.append({"scores": [float(x) for x in scores], "top": [int(i) for i in top], "nltk": nltk.__version__})
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    main()
