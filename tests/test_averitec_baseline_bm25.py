"""The AVeriTeC baseline's upstream BM25 (``retrieval.bm25: upstream``) against independent
references: a hand computation of BM25Okapi, the ``rank_bm25`` package itself on tiny corpora,
and — on the shared dev sentences — ``rank_bm25`` over the real NLTK 3.9.1 ``word_tokenize``
in a subprocess (tests/_rank_bm25_reference.py)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _score_fixtures import ROOT, nltk391_path
from rank_bm25 import BM25Okapi

from averitec_tools.baselines.averitec.stages.bm25 import OkapiIndex
from averitec_tools.baselines.averitec.stages.retrieval import retrieve_sentences

CORPORA = [
    # "a" is in 3 of 4 documents: negative idf, floored at 0.25 x mean idf
    [["a", "b", "a"], ["a", "c"], ["a"], ["d", "e", "f", "g"]],
    # an empty document, repeated and unknown query tokens, ties
    [["x", "y"], [], ["y", "x"], ["z", ".", "."]],
    # every word in more than half the documents: the mean idf and the floor are negative
    [["p", "q"], ["p", "q"], ["p"]],
]
QUERIES = [["a", "b"], ["a", "a", "zzz"], ["x", "y", "y"], ["."], ["p", "q"], []]


def test_okapi_by_hand() -> None:
    idx = OkapiIndex(tokens=CORPORA[0])
    n, avgdl = 4, 10 / 4
    idf = {w: math.log(n - df + 0.5) - math.log(df + 0.5) for w, df in
           {"a": 3, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1}.items()}
    eps = 0.25 * sum(idf.values()) / len(idf)
    assert idf["a"] < 0 and idx.idf["a"] == eps
    tf_part = lambda tf, dl: tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * dl / avgdl))  # noqa: E731
    got = idx.scores_tokens(["a", "b"])
    assert got[0] == pytest.approx(eps * tf_part(2, 3) + idf["b"] * tf_part(1, 3), abs=1e-12)
    assert got[1] == pytest.approx(eps * tf_part(1, 2), abs=1e-12) and got[3] == 0.0


@pytest.mark.parametrize("corpus", range(len(CORPORA)))
def test_okapi_equals_rank_bm25_bit_for_bit(corpus: int) -> None:
    docs = CORPORA[corpus]
    ours, ref = OkapiIndex(tokens=docs), BM25Okapi(docs)
    for q in QUERIES:
        expected = ref.get_scores(q)
        got = ours.scores_tokens(q)
        assert got.tolist() == expected.tolist(), (corpus, q)
        assert list(np.argsort(got)[::-1]) == list(np.argsort(expected)[::-1])


def test_okapi_edge_cases() -> None:
    assert OkapiIndex(tokens=[[], []]).scores_tokens(["a"]).tolist() == [0.0, 0.0]  # rank_bm25 divides by zero
    assert OkapiIndex(tokens=[]).scores_tokens(["a"]).tolist() == []


@pytest.mark.shared_data
def test_upstream_retrieval_equals_rank_bm25_on_dev_sentences(shared_data: Path, tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore, build_store
    from averitec_tools.baselines.averitec.io.data import read_claims

    dev = read_claims(shared_data / "averitec" / "dev.json")[:60]
    build_store(claims=[c.record for c in dev], out=tmp_path / "store", distractors=200, seed=0)
    store = KnowledgeStore(tmp_path / "store")
    cases, ours = [], []
    for i, c in enumerate(dev):
        docs = list(store.documents(i))
        sentences = [s for d in docs for s in d.url2text]
        cases.append({"query": c.claim, "sentences": sentences, "k": 100})
        ours.append(retrieve_sentences(claim=c.claim, documents=docs, k=100, bm25="upstream"))
    (tmp_path / "in.json").write_text(json.dumps(cases))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(nltk391_path()), str(ROOT)])}
    run = subprocess.run([sys.executable, str(Path(__file__).parent / "_rank_bm25_reference.py"),
                          str(tmp_path / "in.json"), str(tmp_path / "out.json")], capture_output=True, text=True,
                         env=env)
    assert run.returncode == 0, run.stderr
    refs = json.loads((tmp_path / "out.json").read_text())
    assert {r["nltk"] for r in refs} == {"3.9.1"}
    n_sentences = 0
    for case, ref, got in zip(cases, refs, ours, strict=True):
        n_sentences += len(case["sentences"])
        assert len(got) == min(100, len(case["sentences"]))
        assert [s.text for s in got] == [case["sentences"][i] for i in ref["top"]]
        assert max(abs(s.score - ref["scores"][i]) for s, i in zip(got, ref["top"], strict=True)) <= 1e-9
    assert n_sentences > 10_000  # the comparison covers real store sizes, zero-score ties included
