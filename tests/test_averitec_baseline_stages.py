"""Stages 2-7 of the AVeriTeC baseline on tiny fixtures with hand-checked values."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _averitec_baseline_fixtures import claims, write_json

from averitec_tools.baselines.averitec.config import (
    OFFLINE_TRAIN,
    builtin_config,
    config_from_mapping,
    resolve_config,
)
from averitec_tools.baselines.averitec.io.data import (
    ClaimItem,
    QAPair,
    read_claims,
    without_scored_claims,
)
from averitec_tools.baselines.averitec.io.output import (
    ClaimResult,
    to_2023,
    to_2024,
)
from averitec_tools.baselines.averitec.stages.justification import (
    ExtractiveJustifier,
    justification_input,
)
from averitec_tools.baselines.averitec.stages.questions import (
    RetrievalQuestionWriter,
    Shot,
    build_prompt,
    cut_output,
    training_examples,
    upstream_shots,
)
from averitec_tools.baselines.averitec.stages.reranker import (
    rerank,
    reranker_examples,
    reranker_groups,
    reranker_input,
)
from averitec_tools.baselines.averitec.stages.retrieval import (
    BM25Index,
    gold_recall,
    retrieve_sentences,
)
from averitec_tools.baselines.averitec.stages.verdict import (
    LABELS,
    aggregate_labels,
    aggregate_probabilities,
    claim_macro_f1,
    decide,
    verdict_examples,
    verdict_input,
)
from averitec_tools.baselines.averitec.training.classifier import (
    batch_weights,
    cap_examples,
    split_heldout,
)
from averitec_tools.baselines.averitec.variants import VARIANTS, get_variant
from averitec_tools.errors import UserError
from averitec_tools.jsonio import write_head
from averitec_tools.records.averitec import AVeriTeCClaim
from averitec_tools.records.knowledge_store import StoreDocument


def test_bm25_ranks_by_hand() -> None:
    # Two-doc corpus; "cat" occurs in both -> idf ln(1 + 0.5/2.5); only doc 0 has "purrs".
    idx = BM25Index(["cat purrs", "cat sleeps all day"])
    s = idx.scores("cat purrs")
    idf_cat, idf_purr = np.log(1 + 0.5 / 2.5), np.log(1 + 1.5 / 1.5)
    avgdl = (2 + 4) / 2
    tf = lambda dl: 1 / (1 + 1.5 * (0.25 + 0.75 * dl / avgdl))  # noqa: E731  (Lucene: no (k1 + 1) factor)
    assert s[0] == pytest.approx(idf_cat * tf(2) + idf_purr * tf(2), rel=1e-5)
    assert s[1] == pytest.approx(idf_cat * tf(4), rel=1e-5)
    assert idx.top("cat purrs", k=1) == [0] and idx.top("zebra", k=5) == []


def test_retrieve_sentences_top_k_and_recall() -> None:
    docs = [StoreDocument(0, "gold_answer", "q", "u1", ("The bridge collapsed in May.", "Nobody was hurt.")),
            StoreDocument(0, "distractor", "q", "u2", ("Taxes rose.", "The bridge was repainted.", ""))]
    got = retrieve_sentences(claim="The bridge collapsed", documents=docs, k=2, bm25="bm25s")
    assert [s.text for s in got] == ["The bridge collapsed in May.", "The bridge was repainted."]
    assert gold_recall(retrieved=got, gold=["The bridge collapsed in May.", "Nobody was hurt."]) == 0.5
    assert retrieve_sentences(claim="x", documents=[], k=5) == []
    # upstream: every sentence ranked (the empty one too), zero scores included, case kept
    up = retrieve_sentences(claim="The bridge collapsed", documents=docs, k=100)
    assert len(up) == 5 and up[0].text == "The bridge collapsed in May." and up[-1].score == 0.0
    assert retrieve_sentences(claim="BRIDGE", documents=docs, k=5)[0].score == 0.0


def test_upstream_question_prompt_and_cut() -> None:
    recs = claims("train", 3)
    recs[0]["questions"][1]["question"] = "Who reported it"  # upstream adds the "?"
    recs[1]["questions"][0]["answers"][0] = {"answer": "Yes", "answer_type": "Boolean",
                                             "boolean_explanation": " The Paper Said So "}
    items = read_claims(write_json(Path(__import__("tempfile").mkdtemp()) / "t.json", recs))
    shots = upstream_shots(items)
    assert len(shots) == 6 and shots[1].question == "Who reported it?"
    assert shots[2].lookup == "Yes, because the paper said so."
    assert shots[2].block == "Evidence:  Yes, because the paper said so.\nQuestion answered: What happened to the vaccine?"
    prompt = build_prompt(sentence="A\nB.", shots=shots[:2])
    assert prompt == (shots[0].block + "\n\n" + shots[1].block + "\n\nEvidence: A B.\nQuestion answered: ")
    assert cut_output("x" * 300 + "?", style="upstream") == "x" * 250 + "?"
    assert cut_output(" Is it\ntrue? And more?", style="upstream") == "Is it true?"
    w = RetrievalQuestionWriter(train=items)
    assert w.write(["the election was seen", "zzz"]) == ["What happened to the election?",
                                                         "What does this source say about the claim?"]
    assert w.generic == 1
    old = RetrievalQuestionWriter(train=items, layout="header-nearest-last")
    assert old.write(["the election was seen"]) == ["What happened to the election?"]
    assert training_examples(items)[0] == ("The moon was seen on Monday. It was train 0.", "What happened to the moon?")
    p = build_prompt(sentence="S.", shots=[Shot("A1.", "Q1?", "Evidence: A1.\nQuestion answered: Q1?")],
                     layout="header-nearest-last")
    assert p.endswith("Evidence: A1.\nQuestion answered: Q1?\n\nEvidence: S.\nQuestion answered:")


def test_upstream_reranker_negatives_and_input() -> None:
    items = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [
        {"question": f"q{i}?", "answers": [{"answer": f"a{i}"}]}]}, where="x")) for i in range(3)]
    groups = reranker_groups(items, seed=0)
    assert [len(g) for g in groups] == [10, 10, 10]
    pos, *negs = groups[0]
    assert pos == ("c0 </s> q0? </s> a0", None, 1) and all(y == 0 for *_, y in negs)
    for draw in range(3):  # each draw: claim, question, answer swapped, in that order
        parts = [n[0].split(" </s> ") for n in negs[3 * draw : 3 * draw + 3]]
        assert [sum(a != b for a, b in zip(p, ["c0", "q0?", "a0"], strict=True)) for p in parts] == [1, 1, 1]
        assert [p[0] != "c0" for p in parts] == [True, False, False] and parts[2][2] != "a0"
    assert reranker_input(claim=" C ", pair=QAPair("Q?", "A."), style="upstream") == ("C </s> Q? </s> A.", None)
    assert batch_weights([1, 0, 0, 0, 1], loss="class-mean") == [0.5, 1 / 3, 1 / 3, 1 / 3, 0.5]


def test_reranker_examples_and_rerank() -> None:
    items = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": f"c{i}", "questions": [
        {"question": f"q{i}?", "answers": [{"answer": f"a{i}"}]}]}, where="x")) for i in range(3)]
    ex = reranker_examples(items, seed=0)
    assert [y for *_, y in ex] == [1, 0, 1, 0, 1, 0]
    for (c, t, _), (nc, nt, _) in zip(ex[::2], ex[1::2], strict=True):
        assert (c, t) != (nc, nt) and (c == nc or t == nt)  # exactly one part swapped

    class Fixed:
        def predict(self, pairs: list) -> np.ndarray:
            return np.array([[0.5, 0.5], [0.1, 0.9], [0.5, 0.5], [0.3, 0.7]])

    cands = [QAPair(f"q{i}", "a") for i in range(4)]
    kept, scores = rerank(claim="c", candidates=cands, scorer=Fixed(), keep=3)
    assert [k.question for k in kept] == ["q1", "q3", "q0"] and scores == [0.9, 0.7, 0.5]
    assert [k.question for k in rerank(claim="c", candidates=cands, scorer=None, keep=2)[0]] == ["q0", "q1"]


def test_verdict_training_labels() -> None:
    recs = claims("t", 4)  # S, R, NEE, C
    recs[0]["questions"][1]["answers"][0]["answer_type"] = "Unanswerable"
    items = read_claims(write_json(Path(__import__("tempfile").mkdtemp()) / "t.json", recs))
    assert [y for *_, y in verdict_examples(items)] == [0, 2, 1, 1, 2, 2]  # Conflicting claim left out


def test_aggregation_rule_and_probabilities() -> None:
    s, r, n, c = range(4)
    assert LABELS[aggregate_labels([s, s, s])] == "Supported"
    assert LABELS[aggregate_labels([r, r])] == "Refuted"
    assert LABELS[aggregate_labels([s, r, n])] == "Not Enough Evidence"
    assert LABELS[aggregate_labels([s, r])] == "Conflicting Evidence/Cherrypicking"
    # upstream: a pair predicted Conflicting counts as unanswerable; the earlier rule: Conflicting
    assert LABELS[aggregate_labels([r, c])] == "Not Enough Evidence"
    assert LABELS[aggregate_labels([r, c], rule="conflicting-pair")] == "Conflicting Evidence/Cherrypicking"
    pairs = np.array([[0.8, 0.1, 0.1, 0.0], [0.6, 0.2, 0.1, 0.1]])
    # upstream: P(S)=.8*.6, P(R)=.1*.2, P(NEE)=1-.9*.8, P(C)=.9*.8-.48-.02
    assert aggregate_probabilities(pairs).tolist() == pytest.approx([0.48, 0.02, 0.28, 0.22])
    # conflicting-pair: P(NEE)=1-.9*.9, P(C)=.9*.9-.48-.02
    assert aggregate_probabilities(pairs, rule="conflicting-pair").tolist() == pytest.approx([0.48, 0.02, 0.19, 0.31])
    label, conf, probs = decide(pairs)
    assert (label, conf) == ("Supported", 0.48) and sum(probs.values()) == pytest.approx(1.0)
    assert decide(np.zeros((0, 4)))[:2] == ("Not Enough Evidence", 1.0)


def test_verdict_inputs_and_claim_f1() -> None:
    p = QAPair("Q ", "Yes. It Was.", base_answer="Yes", explanation=" It Was. ")
    assert verdict_input(claim="C", pair=p, style="upstream") == ("[CLAIM] C [QUESTION] Q Yes, because it was.", None)
    assert verdict_input(claim="C", pair=QAPair("Q?", "A sentence."), style="upstream") == (
        "[CLAIM] C [QUESTION] Q? A sentence.", None)
    items = read_claims(write_json(Path(__import__("tempfile").mkdtemp()) / "t.json", claims("t", 4)))

    def always(label: int) -> Any:
        return lambda pairs: np.eye(4)[[label] * len(pairs)]

    # one claim per label (S, R, NEE, C): always Supported gives F1(S) = 2/(1 + 4) = 0.4, the
    # others 0 -> 0.1; a Conflicting pair prediction aggregates to NEE upstream -> 0.1 too
    assert claim_macro_f1(claims=items, predict=always(0), style="upstream", rule="upstream") == pytest.approx(0.1)
    assert claim_macro_f1(claims=items, predict=always(3), style="upstream", rule="upstream") == pytest.approx(0.1)
    assert claim_macro_f1(claims=items, predict=always(3), style="upstream", rule="conflicting-pair") == \
        pytest.approx(0.1)


def test_extractive_justification() -> None:
    ev = [QAPair("Q1?", "A1."), QAPair("Q2?", "A2."), QAPair("Q3?", "A3.")]
    assert ExtractiveJustifier().justify([("C.", ev, "Refuted")]) == ["Refuted. The evidence says: Q1? A1. Q2? A2."]
    assert ExtractiveJustifier().justify([("C.", [], "Not Enough Evidence")]) == [
        "Not Enough Evidence. No evidence was found."]
    assert justification_input(claim="C.", evidence=ev[:1], verdict="S", style="plain") == \
        "Claim: C. Evidence: Q1? A1. Verdict: S"
    # upstream: "?" and "." added, answers of one question together, two spaces before [VERDICT]
    two = [QAPair("Q1", "A1"), QAPair("Q1", "A2."), QAPair("Q2?", "No. B", base_answer="No", explanation="B")]
    assert justification_input(claim="C.", evidence=two, verdict="S") == \
        "[CLAIM] C. [EVIDENCE] Q1? A1. A2. Q2? No. B.  [VERDICT] S"
    assert justification_input(claim="C.", evidence=[], verdict="S") == "[CLAIM] C. [EVIDENCE]  [VERDICT] S"


def test_config_builtins_and_errors(tmp_path: Path) -> None:
    off = builtin_config("offline-minilm")
    # issue 37 item 4: the verdict caps lifted (3,000 pairs, nothing frozen), 15 % held out for the decision slice
    assert off.verdict.train == replace(OFFLINE_TRAIN, select="claim-macro-f1", max_length=256, heldout=0.15,
                                        max_pairs=3000, freeze_layers=0)
    assert off.verdict.train_evidence == "gold+retrieved" and off.verdict.retrieved_per_claim == 3
    assert off.data.pseudo_test_claims == 500 and builtin_config("paper").data.pseudo_test_claims == 0
    assert off.reranker.train == replace(OFFLINE_TRAIN, batch_size=2) and off.justification.model == "extractive-fallback"
    paper = builtin_config("paper")
    assert (paper.questions.model, paper.reranker.base, paper.justification.model) == (
        "bigscience/bloom-7b1", "bert-base-uncased", "facebook/bart-large")
    assert (paper.verdict.train.learning_rate, paper.verdict.train.batch_size,
            paper.verdict.train.grad_accumulation, paper.verdict.train.epochs) == (1e-5, 32, 4, 20)
    cfg = config_from_mapping({"base": "offline-minilm", "verdict": {"train": {"max_pairs": 10}}}, source="c.yaml")
    assert cfg.verdict.train.max_pairs == 10 and cfg.reranker.train.max_pairs == OFFLINE_TRAIN.max_pairs
    with pytest.raises(UserError, match=r"c.yaml: verdict.train: unknown key 'epoch' \(did you mean: epochs\?\)"):
        config_from_mapping({"verdict": {"train": {"epoch": 2}}}, source="c.yaml")
    with pytest.raises(UserError, match="expected int"):
        config_from_mapping({"reranker": {"keep": "3"}}, source="c.yaml")
    with pytest.raises(UserError, match="did you mean: offline-minilm"):
        resolve_config("offline-minlm")
    with pytest.raises(UserError, match=r"c.yaml: retrieval.bm25: unknown value 'bm25' \(did you mean: bm25s\?\)"):
        config_from_mapping({"retrieval": {"bm25": "bm25"}}, source="c.yaml")
    with pytest.raises(UserError, match=r"verdict.train.select: unknown value 'f1'"):
        config_from_mapping({"verdict": {"train": {"select": "f1"}}}, source="c.yaml")
    assert paper.departures() == [] and paper.retrieval.bm25 == "upstream" and paper.verdict.max_length == 400
    ours = builtin_config("offline-minilm-ours")
    assert "verdict.aggregation='conflicting-pair' (upstream: 'upstream')" in ours.departures()
    assert not [d for d in off.departures() if d.startswith("questions.max")]  # fallback: LM settings do not apply
    (tmp_path / "bad.yaml").write_text("reranker: [\n")

    with pytest.raises(UserError, match="bad.yaml:2:1: invalid YAML"):
        resolve_config(str(tmp_path / "bad.yaml"))


def test_variants() -> None:
    assert list(VARIANTS) == ["full", "no-reranker", "claim-only", "gold-evidence"]
    assert get_variant("no-reranker").needs_store and not get_variant("claim-only").needs_store
    with pytest.raises(UserError, match="unknown variant"):
        get_variant("nope")


def test_output_formats_and_gold_subset(tmp_path: Path) -> None:
    r = ClaimResult(3, "C.", "Refuted", 0.7, {"Refuted": 0.7}, [QAPair("Q?", "A.", "u")], "J.",
                    {"verdict": "v@1"}, ["extractive-fallback"])
    d = to_2024(r)
    assert (d["claim_id"], d["pred_label"], d["justification"], d["fallbacks"]) == (3, "Refuted", "J.",
                                                                                     ["extractive-fallback"])
    d = to_2023(r)
    assert (d["label"], d["questions"][0]["answers"][0]["source_url"]) == ("Refuted", "u")
    assert ClaimResult.from_dict(r.to_dict()) == r
    src = write_json(tmp_path / "g.json", claims("dev", 5))
    assert write_head(src, n=2, out=tmp_path / "s.json") == 2
    assert [c["claim"] for c in json.loads((tmp_path / "s.json").read_text())] == [
        c["claim"] for c in claims("dev", 2)]


def test_training_helpers() -> None:
    ex = [("a", "b", 0)] * 6 + [("a", "b", 1)] * 2 + [("a", "b", 2)]
    assert sorted(y for *_, y in cap_examples(ex, cap=5, seed=0)) == [0, 0, 1, 1, 2]
    assert cap_examples(ex, cap=None, seed=0) == ex
    m = split_heldout(20, share=0.1, seed=0)
    assert m.sum() == 2 and (split_heldout(20, share=0.1, seed=0) == m).all()
    assert split_heldout(5, share=0.0, seed=0).sum() == 0


def test_scored_claims_never_train() -> None:
    t = [ClaimItem(i, AVeriTeCClaim(claim=c)) for i, c in enumerate(["A  claim.", "Other."])]
    kept, dropped = without_scored_claims(t, ["a claim."])
    assert [k.claim for k in kept] == ["Other."] and dropped == 1
