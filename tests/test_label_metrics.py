"""Label metrics and the AVeriTeC score, checked against scikit-learn and by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from averitec_tools.metrics import METRICS
from averitec_tools.metrics.averitec_score import (
    averitec_score,
    by_claim_type,
    claim_averitec_score,
    threshold_key,
)
from averitec_tools.metrics.base import parse_metric
from averitec_tools.metrics.label_metrics import accuracy, f1_per_label, macro_f1
from averitec_tools.records.averitec import AVERITEC_LABELS

labels_st = st.lists(st.sampled_from(AVERITEC_LABELS), min_size=1, max_size=30)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_f1_matches_sklearn(data: st.DataObject) -> None:
    gold = data.draw(labels_st)
    pred = data.draw(st.lists(st.sampled_from(AVERITEC_LABELS), min_size=len(gold), max_size=len(gold)))
    per = f1_per_label(gold=gold, predicted=pred, labels=AVERITEC_LABELS)
    expected = f1_score(gold, pred, labels=list(AVERITEC_LABELS), average=None, zero_division=0.0)
    assert list(per.values()) == pytest.approx(list(expected), abs=1e-12)
    assert macro_f1(gold=gold, predicted=pred, labels=AVERITEC_LABELS) == pytest.approx(
        f1_score(gold, pred, labels=list(AVERITEC_LABELS), average="macro", zero_division=0.0), abs=1e-12
    )
    assert accuracy(gold=gold, predicted=pred) == pytest.approx(float(np.mean([g == p for g, p in zip(gold, pred, strict=True)])))


def test_hand_derived_f1() -> None:
    gold = ["Supported", "Supported", "Refuted", "Refuted"]
    pred = ["Supported", "Refuted", "Refuted", "Refuted"]
    per = f1_per_label(gold=gold, predicted=pred, labels=AVERITEC_LABELS)
    assert per["Supported"] == pytest.approx(2 / 3)  # tp=1 fp=0 fn=1
    assert per["Refuted"] == pytest.approx(0.8)  # tp=2 fp=1 fn=0
    assert per["Not Enough Evidence"] == 0.0  # never gold nor predicted
    assert macro_f1(gold=gold, predicted=pred, labels=AVERITEC_LABELS) == pytest.approx((2 / 3 + 0.8) / 4)


def test_empty_and_length_mismatch() -> None:
    assert accuracy(gold=[], predicted=[]) == 0.0
    with pytest.raises(ValueError):
        accuracy(gold=["a"], predicted=[])


def test_all_wrong() -> None:
    assert macro_f1(gold=["Supported"], predicted=["Refuted"], labels=AVERITEC_LABELS) == 0.0


def test_averitec_score_strict_and_inclusive() -> None:
    assert claim_averitec_score(evidence_score=0.25, correct=True, threshold=0.25) == 0.0
    assert claim_averitec_score(evidence_score=0.25, correct=True, threshold=0.25, strict=False) == 1.0
    assert claim_averitec_score(evidence_score=0.9, correct=False, threshold=0.25) == 0.0
    assert averitec_score(evidence_scores=[0.3, 0.3, 0.1], correct=[True, False, True], threshold=0.25) == pytest.approx(1 / 3)
    assert averitec_score(evidence_scores=[], correct=[], threshold=0.25) == 0.0


def test_by_claim_type_averages_thresholded_evidence() -> None:
    out = by_claim_type(evidence_scores=[0.5, 0.2, 0.3], claim_types=[["A"], ["A", "B"], ["B"]], threshold=0.25)
    assert out == {"A": pytest.approx(0.25), "B": pytest.approx(0.15)}
    assert list(out) == ["A", "B"]


def test_threshold_keys() -> None:
    assert [threshold_key(t) for t in (0.1, 0.2, 0.25, 0.3, 0.4, 0.5)] == ["0.1", "0.2", "0.25", "0.3", "0.4", "0.5"]


def test_registered_metrics() -> None:
    import averitec_tools.metrics.hungarian_meteor  # noqa: F401  (registers meteor, hu-meteor)

    for name in ("label-accuracy", "label-macro-f1", "averitec-score", "hu-meteor", "meteor"):
        assert name in METRICS
    # the threshold is a parameter of the metric (its parse form), not a call argument
    assert METRICS.get("averitec-score")(evidence_scores=[0.3], correct=[True]) == 1.0  # default λ = 0.25
    assert parse_metric("averitec-score(threshold=0.3)")(evidence_scores=[0.3], correct=[True]) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_weighted_macro_f1_matches_sklearn_sample_weight(data: st.DataObject) -> None:
    from averitec_tools.metrics.label_metrics import weighted_macro_f1

    gold = data.draw(labels_st)
    pred = data.draw(st.lists(st.sampled_from(AVERITEC_LABELS), min_size=len(gold), max_size=len(gold)))
    weights = data.draw(st.lists(st.sampled_from([0.25, 0.5, 1.0]), min_size=len(gold), max_size=len(gold)))
    got = weighted_macro_f1(gold=np.array(gold), predicted=np.array(pred), weights=np.array(weights),
                            labels=AVERITEC_LABELS)
    ref = f1_score(gold, pred, labels=list(AVERITEC_LABELS), average="macro", sample_weight=weights, zero_division=0)
    assert got == pytest.approx(ref, abs=1e-12)
    assert weighted_macro_f1(gold=np.array(gold), predicted=np.array(pred), weights=np.ones(len(gold)),
                             labels=AVERITEC_LABELS) == pytest.approx(macro_f1(gold=gold, predicted=pred,
                                                                               labels=AVERITEC_LABELS), abs=1e-12)
