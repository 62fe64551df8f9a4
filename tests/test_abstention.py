"""Abstention-aware label metrics: the explicit class/abstain switch."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score

from averitec_tools.metrics.abstention import abstention_mask, label_scores
from averitec_tools.metrics.base import METRICS

GOLD = ["SUPPORTS", "REFUTES", "NEI", "SUPPORTS", "REFUTES", "NEI"]
PRED = ["SUPPORTS", "NEI", "NEI", "REFUTES", "REFUTES", "SUPPORTS"]


def test_class_mode_scores_the_abstain_label_as_a_class() -> None:
    s = label_scores(gold=GOLD, predictions=PRED, mode="class")
    assert s.n == 6 and s.n_answered == 6 and s.n_abstained == 2 and s.coverage == 1.0
    assert s.accuracy == pytest.approx(3 / 6)
    assert s.effective_accuracy == pytest.approx(3 / 6)
    assert s.labels == ("NEI", "REFUTES", "SUPPORTS")
    assert s.macro_f1 == pytest.approx(f1_score(GOLD, PRED, average="macro"))
    # NEI: tp 1, fp 1, fn 1 → 0.5
    assert s.per_class_f1["NEI"] == pytest.approx(0.5)


def test_abstain_mode_withholds_abstentions() -> None:
    s = label_scores(gold=GOLD, predictions=PRED, mode="abstain")
    # answered: S/S ✓, S/R ✗, R/R ✓, NEI/S ✗
    assert s.n_answered == 4 and s.n_abstained == 2
    assert s.coverage == pytest.approx(4 / 6)
    assert s.accuracy == pytest.approx(2 / 4)
    assert s.effective_accuracy == pytest.approx(2 / 6)
    assert s.labels == ("REFUTES", "SUPPORTS")
    answered = [i for i, p in enumerate(PRED) if p != "NEI"]
    expected = f1_score(
        [GOLD[i] for i in answered], [PRED[i] for i in answered],
        labels=["REFUTES", "SUPPORTS"], average="macro", zero_division=0,
    )
    assert s.macro_f1 == pytest.approx(expected)


def test_all_abstain() -> None:
    s = label_scores(gold=["SUPPORTS", "REFUTES"], predictions=["NEI", "NEI"], mode="abstain")
    assert (s.n_answered, s.coverage, s.accuracy, s.macro_f1, s.effective_accuracy) == (0, 0.0, None, None, 0.0)
    as_class = label_scores(gold=["SUPPORTS", "REFUTES"], predictions=["NEI", "NEI"], mode="class")
    assert as_class.accuracy == 0.0 and as_class.macro_f1 == 0.0


def test_custom_abstain_labels_and_missing_predictions() -> None:
    s = label_scores(
        gold=["Supported", "Refuted", "Refuted"],
        predictions=["Supported", "Not Enough Evidence", None],
        mode="abstain",
        abstain_labels=("Not Enough Evidence",),
    )
    assert s.n_answered == 2 and s.accuracy == 0.5  # None is answered and wrong
    mask = abstention_mask(predictions=["a", "IDK", None], abstain_labels=["IDK"])
    assert mask.tolist() == [False, True, False]


@pytest.mark.parametrize("seed", range(4))
def test_macro_f1_agrees_with_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    names = ["A", "B", "C", "NEI"]
    gold = [names[i] for i in rng.integers(0, 4, 60)]
    pred = [names[i] for i in rng.integers(0, 4, 60)]
    labels = ["A", "B", "C", "NEI", "D"]  # D never occurs: F1 0, still averaged (sklearn too)
    s = label_scores(gold=gold, predictions=pred, mode="class", labels=labels)
    assert s.macro_f1 == pytest.approx(f1_score(gold, pred, labels=labels, average="macro", zero_division=0))
    a = label_scores(gold=gold, predictions=pred, mode="abstain", abstain_labels=["NEI"], labels=labels)
    kept = [i for i, p in enumerate(pred) if p != "NEI"]
    assert a.macro_f1 == pytest.approx(
        f1_score([gold[i] for i in kept], [pred[i] for i in kept], labels=["A", "B", "C", "D"],
                 average="macro", zero_division=0)
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gold": [], "predictions": []}, "empty"),
        ({"gold": ["A"], "predictions": ["A", "B"]}, "differ in length"),
        ({"gold": ["A"], "predictions": ["A"], "mode": "ignore"}, "unknown abstention mode"),
        ({"gold": [None], "predictions": ["A"]}, "no label"),
    ],
)
def test_bad_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        label_scores(**kwargs)


def test_registry_objects() -> None:
    assert METRICS.get("abstain-coverage")(gold=GOLD, predictions=PRED) == pytest.approx(4 / 6)
    assert METRICS.get("abstain-accuracy")(gold=GOLD, predictions=PRED) == pytest.approx(0.5)
    assert METRICS.get("abstain-accuracy")(gold=["A"], predictions=["NEI"]) is None
