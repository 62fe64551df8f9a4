"""ECE / MCE / reliability diagram: hand-computed bins, scikit-learn agreement, edges."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.calibration import calibration_curve

from averitec_tools.metrics.base import METRICS
from averitec_tools.metrics.binning import bin_edges, calibration_errors_batched
from averitec_tools.metrics.ece import (
    classwise_calibration_error,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_diagram,
    top_label_from_probabilities,
)


def test_hand_computed_two_bins() -> None:
    d = reliability_diagram(confidences=[0.1, 0.2, 0.8, 0.9], correct=[0, 1, 1, 1], n_bins=2)
    # bin 0: conf mean 0.15, acc 0.5 → gap 0.35; bin 1: conf 0.85, acc 1.0 → gap 0.15
    assert [b.count for b in d.bins] == [2, 2]
    assert d.bins[0].gap == pytest.approx(0.35)
    assert d.bins[1].gap == pytest.approx(0.15)
    assert d.ece == pytest.approx(0.5 * 0.35 + 0.5 * 0.15)
    assert d.mce == pytest.approx(0.35)
    assert expected_calibration_error(confidences=[0.1, 0.2, 0.8, 0.9], correct=[0, 1, 1, 1], n_bins=2) == d.ece
    assert maximum_calibration_error(confidences=[0.1, 0.2, 0.8, 0.9], correct=[0, 1, 1, 1], n_bins=2) == d.mce


def test_bin_boundaries_are_right_closed_and_zero_goes_first() -> None:
    # Default: 15 bins (b/15, (b+1)/15]. 1/15 is the upper edge of bin 0; 0 is in bin 0;
    # 1.0 is in bin 14; 2/15 + tiny goes to bin 2.
    confs = [0.0, 1 / 15, 2 / 15 + 1e-9, 1.0]
    d = reliability_diagram(confidences=confs, correct=[0, 0, 0, 0])
    counts = {b.index: b.count for b in d.bins if b.count}
    assert counts == {0: 2, 2: 1, 14: 1}
    assert d.n_bins == 15 and len(d.edges) == 16
    assert d.edges[1] == 1 / 15


def test_empty_bins_are_skipped_and_reported() -> None:
    d = reliability_diagram(confidences=[0.95, 0.97], correct=[1, 1], n_bins=10)
    empty = [b for b in d.bins if b.count == 0]
    assert len(empty) == 9
    assert all(b.accuracy is None and b.confidence is None and b.gap is None for b in empty)
    assert d.ece == pytest.approx(0.04)


def test_single_bin_is_gap_of_means() -> None:
    conf = np.array([0.3, 0.9, 0.6, 0.8])
    ok = np.array([1, 0, 1, 1])
    expected = abs(ok.mean() - conf.mean())
    assert expected_calibration_error(confidences=conf, correct=ok, n_bins=1) == pytest.approx(expected)
    assert maximum_calibration_error(confidences=conf, correct=ok, n_bins=1) == pytest.approx(expected)


def test_all_correct_and_all_wrong_at_full_confidence() -> None:
    assert expected_calibration_error(confidences=[1.0] * 5, correct=[1] * 5) == 0.0
    assert expected_calibration_error(confidences=[1.0] * 5, correct=[0] * 5) == 1.0
    assert maximum_calibration_error(confidences=[0.0] * 3, correct=[1] * 3) == 1.0


def test_ties_land_in_one_bin() -> None:
    d = reliability_diagram(confidences=[0.7, 0.7, 0.7], correct=[1, 0, 1], n_bins=15)
    (full,) = [b for b in d.bins if b.count]
    assert full.count == 3 and full.accuracy == pytest.approx(2 / 3)
    assert d.ece == pytest.approx(abs(2 / 3 - 0.7))


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 5, 15])
def test_bins_agree_with_sklearn_calibration_curve(strategy: str, n_bins: int) -> None:
    rng = np.random.default_rng(n_bins)
    conf = rng.random(400)
    ok = rng.random(400) < conf**1.3
    prob_true, prob_pred = calibration_curve(ok.astype(int), conf, n_bins=n_bins, strategy=strategy)
    d = reliability_diagram(confidences=conf, correct=ok, n_bins=n_bins, strategy=strategy)  # type: ignore[arg-type]
    nonempty = [b for b in d.bins if b.count]
    np.testing.assert_allclose([b.accuracy for b in nonempty], prob_true, atol=1e-12)
    np.testing.assert_allclose([b.confidence for b in nonempty], prob_pred, atol=1e-12)
    counts = np.array([b.count for b in nonempty])
    ece_from_sklearn = float(np.sum(counts / counts.sum() * np.abs(prob_true - prob_pred)))
    assert d.ece == pytest.approx(ece_from_sklearn, abs=1e-12)


def test_quantile_bins_have_equal_mass() -> None:
    conf = np.linspace(0.01, 0.99, 100)
    d = reliability_diagram(confidences=conf, correct=conf > 0.5, n_bins=4, strategy="quantile")
    assert [b.count for b in d.bins] == [25, 25, 25, 25]
    assert d.edges[0] == pytest.approx(0.01) and d.edges[-1] == pytest.approx(0.99)


def test_top_label_and_classwise() -> None:
    probs = [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1], [0.5, 0.5, 0.0]]
    conf, ok = top_label_from_probabilities(probabilities=probs, labels_true=[0, 2, 1])
    assert conf.tolist() == [0.6, 0.7, 0.5]
    assert ok.tolist() == [True, False, False]  # arg-max ties go to the first column
    # Classwise with one bin: mean over k of |freq_k − mean p_k|.
    p = np.array(probs)
    y = np.array([0, 2, 1])
    expected = np.mean([abs((y == k).mean() - p[:, k].mean()) for k in range(3)])
    assert classwise_calibration_error(probabilities=probs, labels_true=y, n_bins=1) == pytest.approx(expected)
    by_name = classwise_calibration_error(
        probabilities=probs, labels_true=["a", "c", "b"], classes=["a", "b", "c"], n_bins=1
    )
    assert by_name == pytest.approx(expected)


def test_batched_matches_scalar() -> None:
    rng = np.random.default_rng(3)
    conf = np.round(rng.random((4, 50)), 2)
    ok = rng.random((4, 50)) < 0.7
    for strategy in ("uniform", "quantile"):
        ece, mce = calibration_errors_batched(conf, ok, n_bins=6, strategy=strategy)  # type: ignore[arg-type]
        for r in range(4):
            assert ece[r] == pytest.approx(
                expected_calibration_error(confidences=conf[r], correct=ok[r], n_bins=6, strategy=strategy),  # type: ignore[arg-type]
                abs=1e-12,
            )
            assert mce[r] == pytest.approx(
                maximum_calibration_error(confidences=conf[r], correct=ok[r], n_bins=6, strategy=strategy),  # type: ignore[arg-type]
                abs=1e-12,
            )


def test_uniform_edges_are_exact_fractions() -> None:
    edges = bin_edges(confidences=np.array([0.5]), n_bins=15, strategy="uniform")
    assert edges.tolist() == [b / 15 for b in range(16)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"confidences": [], "correct": []}, "empty"),
        ({"confidences": [0.5], "correct": [1], "n_bins": 0}, "positive integer"),
        ({"confidences": [0.5], "correct": [1], "n_bins": 2.5}, "positive integer"),
        ({"confidences": [0.5], "correct": [1], "strategy": "equal"}, "unknown binning strategy"),
        ({"confidences": [1.5], "correct": [1]}, r"confidences\[0\]"),
    ],
)
def test_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        expected_calibration_error(**kwargs)


def test_registry_and_json_form() -> None:
    ece = METRICS.get("ece")
    assert ece.info.params == {"n_bins": 15, "strategy": "uniform"}
    assert ece.info.higher_is_better is False
    assert METRICS.get("mce")(confidences=[0.1, 0.9], correct=[0, 1]) == pytest.approx(0.1)
    assert METRICS.get("ece-classwise")(probabilities=[[1.0, 0.0]], labels_true=[0]) == 0.0
    d = reliability_diagram(confidences=[0.2, 0.9], correct=[0, 1], n_bins=3).to_dict()
    assert d["n"] == 2 and len(d["bins"]) == 3 and d["bins"][1]["accuracy"] is None
