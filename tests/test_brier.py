"""Brier score: hand-computed values, scikit-learn agreement, edge cases and errors."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import METRICS
from averitec_tools.metrics.brier import brier_score, multiclass_brier_score


def test_hand_computed() -> None:
    # (0.9-1)² + (0.6-0)² + (0.2-0)² = 0.01 + 0.36 + 0.04 = 0.41 → /3
    assert brier_score(confidences=[0.9, 0.6, 0.2], correct=[1, 0, 0]) == pytest.approx(0.41 / 3, abs=1e-15)
    assert brier_score(confidences=[0.5], correct=[True]) == 0.25


def test_all_correct_and_all_wrong() -> None:
    assert brier_score(confidences=[1.0, 1.0], correct=[True, True]) == 0.0
    assert brier_score(confidences=[1.0, 1.0], correct=[False, False]) == 1.0
    assert brier_score(confidences=[0.0, 0.0], correct=[False, False]) == 0.0


def test_agrees_with_sklearn_binary() -> None:
    rng = np.random.default_rng(0)
    conf = rng.random(300)
    ok = rng.random(300) < conf
    expected = brier_score_loss(ok.astype(int), conf)
    assert brier_score(confidences=conf, correct=ok) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("scale_by_half", [False, True])
def test_agrees_with_sklearn_multiclass(scale_by_half: bool) -> None:
    rng = np.random.default_rng(1)
    classes = ["NEI", "REFUTES", "SUPPORTS"]  # sklearn orders columns alphabetically
    probs = rng.dirichlet([1.0, 1.0, 1.0], size=200)
    gold = [classes[i] for i in rng.integers(0, 3, size=200)]
    ours = multiclass_brier_score(
        probabilities=probs, labels_true=gold, classes=classes, scale_by_half=scale_by_half
    )
    theirs = brier_score_loss(gold, probs, labels=classes, scale_by_half=scale_by_half)
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_multiclass_hand_computed_and_binary_relation() -> None:
    # row 1: 0.09+0.04+0.01 = 0.14; row 2: 0.01+0.81+0.64 = 1.46 → mean 0.8
    assert multiclass_brier_score(
        probabilities=[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], labels_true=[0, 1]
    ) == pytest.approx(0.8, abs=1e-15)
    # K = 2: the halved multiclass score is the binary Brier of the positive column.
    p = np.array([0.2, 0.7, 0.9])
    y = np.array([0, 1, 0])
    two_col = np.column_stack([1 - p, p])
    assert multiclass_brier_score(probabilities=two_col, labels_true=y, scale_by_half=True) == pytest.approx(
        brier_score(confidences=p, correct=y), abs=1e-15
    )


@pytest.mark.parametrize(
    ("confidences", "correct", "message"),
    [
        ([], [], "empty"),
        ([0.5, 0.4], [1], "differ in length"),
        ([1.2], [1], "not a probability"),
        ([-0.1], [1], "not a probability"),
        ([float("nan")], [1], "not a probability"),
        ([0.5], [2], "not a boolean"),
        ([[0.5]], [[1]], "one-dimensional"),
    ],
)
def test_bad_input(confidences: list, correct: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        brier_score(confidences=confidences, correct=correct)
    with pytest.raises(UserError):
        brier_score(confidences=confidences, correct=correct)


@pytest.mark.parametrize(
    ("probabilities", "labels_true", "classes", "message"),
    [
        ([[0.5, 0.6]], [0], None, "sums to"),
        ([[0.5, 0.5]], ["x"], ["a", "b"], "not one of classes"),
        ([[0.5, 0.5]], [2], None, "not a class index"),
        ([[0.5, 0.5]], [0, 1], None, "differ in length"),
        ([[1.0]], [0], None, "at least 2 classes"),
        (np.zeros((0, 3)), [], None, "empty"),
        ([[0.5, 0.5]], [0], ["a", "b", "c"], "columns"),
    ],
)
def test_bad_multiclass_input(probabilities, labels_true, classes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        multiclass_brier_score(probabilities=probabilities, labels_true=labels_true, classes=classes)


def test_registry_objects() -> None:
    brier = METRICS.get("brier")
    assert brier.info.higher_is_better is False
    assert "Brier" in brier.info.citation
    assert brier(confidences=[0.9, 0.6, 0.2], correct=[1, 0, 0]) == pytest.approx(0.41 / 3)
    multi = METRICS.get("brier-multiclass")
    assert multi.info.bounds == (0.0, 2.0)
    assert multi(probabilities=[[0.0, 1.0]], labels_true=[0]) == 2.0
