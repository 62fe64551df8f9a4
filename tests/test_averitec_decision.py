"""The AVeriTeC baseline's decision settings (issue 27 item 4): the reranker only where it
beats the BM25 order on the decision slice, and a per-label bias of the verdict pair
probabilities fitted there — every value hand-derived on tiny inputs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines.averitec.config import builtin_config, config_from_mapping
from averitec_tools.baselines.averitec.stages.decision import (
    apply_bias,
    choose_reranker,
    claim_labels,
    fit_label_bias,
)
from averitec_tools.baselines.averitec.stages.verdict import LABELS, NEE, C, R, S

# ------------------------------------------------------------------ the bias fit


def test_apply_bias_multiplies_by_exp_offset_and_renormalises() -> None:
    p = apply_bias(np.array([[0.25, 0.25, 0.25, 0.25]]), [0.0, 0.0, np.log(2.0), 0.0])
    assert p[0].tolist() == pytest.approx([0.2, 0.2, 0.4, 0.2])
    assert apply_bias(np.zeros((0, 4)), [1.0, 0, 0, 0]).shape == (0, 4)


def test_macro_f1_counts_every_label_even_when_never_gold_or_predicted() -> None:
    from averitec_tools.baselines.averitec.stages.decision import _macro_f1_of_labels

    # S: tp 1, pred 1, gold 1 -> 1; R: tp 1, pred 2, gold 1 -> 2/3; NEE: 0; C: 0 -> (1 + 2/3) / 4
    assert _macro_f1_of_labels(np.array([S, R, NEE]), np.array([S, R, R])) == pytest.approx((1 + 2 / 3) / 4)


def test_nee_offset_turns_the_uncertain_pair_into_nee_and_raises_macro_f1() -> None:
    # claim 0: R 0.6 / NEE 0.3 (gold NEE); claim 1: R 0.9 / NEE 0.05 (gold R); claim 2: S 0.8 (gold S)
    probs = [np.array([[0.1, 0.6, 0.3, 0.0]]), np.array([[0.05, 0.9, 0.05, 0.0]]), np.array([[0.8, 0.2, 0.0, 0.0]])]
    gold = [NEE, R, S]
    assert claim_labels(probs, bias=[0, 0, 0, 0], rule="upstream") == [R, R, S]
    fit = fit_label_bias(claim_probs=probs, gold=gold, rule="upstream", grid=[0.0, 1.0, 3.0], fine_step=None)
    # NEE +1: log 0.3 + 1 = -0.20 > log 0.6 = -0.51 -> NEE; claim 1: log 0.05 + 1 = -2.0 < log 0.9 -> R
    # (NEE +3 also turns claim 1 into NEE: worse), so the fit is NEE +1 and nothing else
    assert fit["bias"] == {LABELS[S]: 0.0, LABELS[R]: 0.0, LABELS[NEE]: 1.0, LABELS[C]: 0.0}
    assert fit["macro_f1_unbiased"] == pytest.approx(round((1 + 2 / 3) / 4, 4))  # S 1, R 2/3, NEE 0, C 0
    assert fit["macro_f1"] == pytest.approx(0.75)  # S, R, NEE all right; C never gold nor predicted
    assert fit["predicted"] == {LABELS[S]: 1, LABELS[R]: 1, LABELS[NEE]: 1, LABELS[C]: 0}


def test_ties_keep_the_smallest_offsets() -> None:
    probs = [np.array([[0.1, 0.9, 0.0, 0.0]])]  # every offset up to 1 leaves the claim Refuted
    fit = fit_label_bias(claim_probs=probs, gold=[R], rule="upstream", grid=[-1.0, 0.0, 1.0])
    assert fit["bias"] == dict.fromkeys(LABELS, 0.0) and fit["macro_f1"] == fit["macro_f1_unbiased"]


def test_the_fine_step_finds_a_boundary_between_coarse_offsets() -> None:
    # one pair: R 0.50, NEE 0.45 (gold NEE) and one pair R 0.50, NEE 0.30 (gold R):
    # log(0.50 / 0.45) = 0.105 < b_NEE < log(0.50 / 0.30) = 0.511 makes only the first NEE
    probs = [np.array([[0.05, 0.50, 0.45, 0.0]]), np.array([[0.2, 0.50, 0.30, 0.0]])]
    coarse = fit_label_bias(claim_probs=probs, gold=[NEE, R], rule="upstream", grid=[0.0, 1.0], fine_step=None)
    assert coarse["bias"][LABELS[NEE]] == 0.0 and coarse["macro_f1"] == pytest.approx(round(2 / 3 / 4, 4))
    fine = fit_label_bias(claim_probs=probs, gold=[NEE, R], rule="upstream", grid=[0.0, 1.0], fine_step=0.1)
    # the smallest offset on the 0.1 grid inside (0.105, 0.511): 0.2; both claims right -> (1 + 1) / 4
    assert fine["bias"][LABELS[NEE]] == pytest.approx(0.2) and fine["macro_f1"] == pytest.approx(0.5)


def test_the_fast_aggregation_matches_the_rule() -> None:
    from averitec_tools.baselines.averitec.stages.decision import _claim_labels_fast
    from averitec_tools.baselines.averitec.stages.verdict import aggregate_labels

    rng = np.random.default_rng(0)
    claim_probs = [rng.dirichlet(np.ones(4), size=int(rng.integers(0, 4))) for _ in range(200)]
    rows = [p.reshape(-1, 4) for p in claim_probs]
    seg = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    for rule in ("upstream", "conflicting-pair"):
        fast = _claim_labels_fast(np.concatenate(rows), seg, len(rows), rule).tolist()
        slow = [aggregate_labels([int(i) for i in r.argmax(1)], rule=rule) for r in rows]
        assert fast == slow, rule


def test_no_pairs_is_nee_whatever_the_bias() -> None:
    assert claim_labels([np.zeros((0, 4))], bias=[4.0, 0.0, -2.0, 0.0], rule="conflicting-pair") == [NEE]


def test_fit_refuses_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        fit_label_bias(claim_probs=[np.zeros((0, 4))], gold=[], rule="upstream")


# ------------------------------------------------------------------ the reranker choice


def test_reranker_only_where_it_beats_bm25_order() -> None:
    assert choose_reranker(qa_reranker=0.130, qa_bm25=0.129) is True
    assert choose_reranker(qa_reranker=0.129, qa_bm25=0.129) is False  # a tie keeps the cheaper BM25 order
    assert choose_reranker(qa_reranker=0.100, qa_bm25=0.129) is False


def test_decided_drops_the_reranker_and_sets_the_bias() -> None:
    from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline, NoReranker
    from averitec_tools.baselines.averitec.training.decision_slice import decided
    from averitec_tools.baselines.averitec.variants import VARIANTS

    pipe = AVeriTeCPipeline(config=builtin_config("offline-minilm"), variant=VARIANTS["full"], store=None,
                            question_writer=None, reranker=object(), verdict=None, justifier=None,
                            components={"reranker": "r"}, stage_settings={"reranker": {"component": "r"}})
    bias = {LABELS[S]: 0.5, LABELS[R]: 0.0, LABELS[NEE]: 2.0, LABELS[C]: -1.0}
    built = pipe
    pipe = decided(built, {"reranker_used": False, "label_bias": {"bias": bias}}, seconds=1.5)
    assert built.reranker is not None and built.label_bias is None and not built.decision  # built whole, not changed
    assert pipe.build_seconds == {"decision": 1.5}
    assert pipe.reranker is None and pipe.stage_settings["reranker"]["component"] == NoReranker.component
    assert pipe.label_bias == [0.5, 0.0, 2.0, -1.0] and pipe.decision["reranker_used"] is False
    # the justification (it names the label) is cached under a key that sees the offsets
    assert pipe.stage_settings["justification"] == {"label_bias": [0.5, 0.0, 2.0, -1.0]}


# ------------------------------------------------------------------ configuration


def test_offline_minilm_chooses_on_the_slice_and_lists_the_departures() -> None:
    # issue 37: the claim head replaced the issue-27 offsets; the BM25 order replaced the slice's reranker choice
    cfg = builtin_config("offline-minilm")
    assert (cfg.decision.reranker, cfg.decision.label_bias, cfg.decision.head) == ("bm25-order", "none", "claim-head")
    deps = cfg.departures()
    assert "decision.reranker='bm25-order' (upstream: 'always')" in deps
    assert "decision.head='claim-head' (upstream: 'none')" in deps
    assert "verdict.train_evidence='gold+retrieved' (upstream: 'gold')" in deps
    issue27 = config_from_mapping({"base": "offline-minilm", "decision": {
        "reranker": "slice-choice", "label_bias": "slice-fit", "head": "none"}}, source="c.yaml")
    assert "decision.label_bias='slice-fit' (upstream: 'none')" in issue27.departures()
    for name in ("paper", "paper-bounded", "offline-minilm-ours"):
        assert not [d for d in builtin_config(name).departures() if d.startswith("decision.")], name


def test_decision_values_are_checked() -> None:
    from averitec_tools.errors import UserError

    with pytest.raises(UserError, match="label_bias"):
        config_from_mapping({"base": "offline-minilm", "decision": {"label_bias": "fit"}}, source="c.yaml")


# ------------------------------------------------------------------ the slice run, with stand-in models


class _Scorer:
    """A stand-in classifier: a fixed distribution for every input."""

    def __init__(self, row: list[float]) -> None:
        self.row = row

    def predict(self, pairs):  # noqa: ANN001, ANN201
        return np.array([self.row] * len(pairs))


def _train_file(tmp_path: Path) -> Path:
    rows = [{"claim": f"The city {i} built {i} bridges in 2020.", "label": ["Refuted", "Supported"][i % 2],
             "questions": [{"question": f"How many bridges did city {i} build?",
                            "answers": [{"answer": f"City {i} built {i} bridges in 2020.",
                                         "answer_type": "Extractive", "source_url": f"https://s.org/{i}"}]}]}
             for i in range(60)]
    path = tmp_path / "train.json"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_fit_decision_runs_the_slice_both_ways_and_caches_the_result(tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.io.stage_cache import StageCache
    from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline
    from averitec_tools.baselines.averitec.training.checkpoints import training_claims
    from averitec_tools.baselines.averitec.training.decision_slice import (
        decision_slice,
        fit_decision,
    )
    from averitec_tools.baselines.averitec.variants import VARIANTS

    base = builtin_config("offline-minilm")  # with the issue-27 decisions (the offsets, the slice's reranker choice)
    cfg = replace(base, data=replace(base.data, train=str(_train_file(tmp_path)), cache_dir=str(tmp_path / "cache"),
                                     pseudo_test_claims=0),
                  verdict=replace(base.verdict, train=replace(base.verdict.train, heldout=0.05)),
                  decision=replace(base.decision, reranker="slice-choice", label_bias="slice-fit", head="none",
                                   distractors=5))
    train, info = training_claims(cfg)
    sl = decision_slice(cfg, claims=train)
    assert len(sl) == 3  # 5 % of 60 claims, the same claims for both models
    # reranker: every candidate equally relevant (a stable sort keeps the BM25 order: equal Q+A)
    pipe = AVeriTeCPipeline(config=cfg, variant=VARIANTS["full"], store=None, question_writer=None,
                            reranker=_Scorer([0.5, 0.5]), verdict=_Scorer([0.1, 0.6, 0.3, 0.0]), justifier=None,
                            components={}, cache=StageCache(None),
                            stage_settings={"retrieval": {}, "questions": {}, "reranker": {"r": 1}, "verdict": {}})
    fitted = fit_decision(pipe, train=train, train_info=info, reranker_variant=True)
    assert fitted["slice_claims"] == 3 and set(fitted["slice_qa"]) == {"reranker", "bm25_order"}
    assert fitted["slice_qa"]["reranker"] == fitted["slice_qa"]["bm25_order"]  # same order, same evidence
    assert fitted["reranker_used"] is False  # a tie: the BM25 order
    # every pair is Refuted 0.6 / NEE 0.3: no offset can tell the Supported claims from the Refuted ones
    assert fitted["slice_labels"] == {LABELS[S]: 1, LABELS[R]: 2, LABELS[NEE]: 0, LABELS[C]: 0}
    assert fitted["label_bias"]["macro_f1_unbiased"] == pytest.approx(round(0.8 / 4, 4))  # R: 2*2/(3+2)
    again = fit_decision(pipe, train=train, train_info=info, reranker_variant=True)
    assert again.pop("cached") is True and again == fitted
