"""Risk–coverage, AURC and E-AURC: hand-computed ties, edge cases, an independent AURC."""

from __future__ import annotations

import numpy as np
import pytest

from averitec_tools.metrics.base import METRICS
from averitec_tools.metrics.selective import (
    aurc,
    aurc_batched,
    coverage_at_risk,
    excess_aurc,
    oracle_aurc,
    oracle_aurc_of,
    risk_at_coverage,
    risk_coverage_curve,
    selective_accuracy,
)


def geifman_aurc(confidences: np.ndarray, correct: np.ndarray) -> float:
    """Geifman et al. (2019), Sec. 3: rank by confidence, average the selective risk of
    the top-k for k = 1..N. Written independently of the package (plain Python loops)."""
    ranked = sorted(zip(confidences.tolist(), correct.tolist(), strict=True), key=lambda t: -t[0])
    errors = 0
    total = 0.0
    for k, (_, ok) in enumerate(ranked, start=1):
        errors += 0 if ok else 1
        total += errors / k
    return total / len(ranked)


def geifman_oracle(correct: np.ndarray) -> float:
    ranked = sorted(correct.tolist(), reverse=True)  # all correct first
    errors = 0
    total = 0.0
    for k, ok in enumerate(ranked, start=1):
        errors += 0 if ok else 1
        total += errors / k
    return total / len(ranked)


def test_hand_computed_with_ties() -> None:
    # Sorted: 0.9 ✓ | 0.8 ✓, 0.8 ✗ (tied, enter together) | 0.3 ✗
    c = risk_coverage_curve(confidences=[0.8, 0.3, 0.9, 0.8], correct=[1, 0, 1, 0])
    assert c.thresholds == (0.9, 0.8, 0.3)
    assert c.n_covered == (1, 3, 4)
    assert c.coverages == (0.25, 0.75, 1.0)
    assert c.risks == pytest.approx((0.0, 1 / 3, 0.5))
    # AURC = 0.25·0 + 0.5·(1/3) + 0.25·0.5
    assert c.aurc == pytest.approx(0.5 / 3 + 0.125)
    # AURC* (n = 4, 2 correct) = (1/4)(0 + 0 + 1/3 + 2/4)
    assert c.oracle_aurc == pytest.approx((1 / 3 + 0.5) / 4)
    assert c.e_aurc == pytest.approx(c.aurc - c.oracle_aurc)
    assert aurc(confidences=[0.8, 0.3, 0.9, 0.8], correct=[1, 0, 1, 0]) == c.aurc


def test_tie_order_does_not_matter() -> None:
    a = aurc(confidences=[0.5, 0.5, 0.5, 0.2], correct=[1, 0, 0, 1])
    b = aurc(confidences=[0.5, 0.5, 0.5, 0.2], correct=[0, 0, 1, 1])
    assert a == b
    # An order-dependent implementation would give different numbers here.
    assert geifman_aurc(np.array([0.5, 0.5, 0.5, 0.2]), np.array([1, 0, 0, 1])) != geifman_aurc(
        np.array([0.5, 0.5, 0.5, 0.2]), np.array([0, 0, 1, 1])
    )


def test_all_tied_is_full_coverage_risk() -> None:
    c = risk_coverage_curve(confidences=[0.6] * 5, correct=[1, 1, 0, 1, 0])
    assert c.coverages == (1.0,) and c.risks == pytest.approx((0.4,))
    assert c.aurc == pytest.approx(0.4)


def test_all_correct_and_all_wrong() -> None:
    conf = [0.9, 0.4, 0.7]
    assert aurc(confidences=conf, correct=[1, 1, 1]) == 0.0
    assert excess_aurc(confidences=conf, correct=[1, 1, 1]) == 0.0
    assert aurc(confidences=conf, correct=[0, 0, 0]) == 1.0
    assert oracle_aurc_of(correct=[0, 0, 0]) == 1.0
    assert excess_aurc(confidences=conf, correct=[0, 0, 0]) == 0.0


def test_perfect_ranking_has_zero_e_aurc() -> None:
    assert excess_aurc(confidences=[0.9, 0.8, 0.3, 0.2], correct=[1, 1, 0, 0]) == pytest.approx(0.0, abs=1e-15)
    # The worst ranking is strictly worse.
    assert excess_aurc(confidences=[0.2, 0.3, 0.8, 0.9], correct=[1, 1, 0, 0]) > 0.1


@pytest.mark.parametrize("seed", range(5))
def test_matches_independent_geifman_implementation_without_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    conf = rng.permutation(n) / n  # distinct values
    ok = rng.random(n) < 0.65
    assert aurc(confidences=conf, correct=ok) == pytest.approx(geifman_aurc(conf, ok), abs=1e-12)
    assert oracle_aurc_of(correct=ok) == pytest.approx(geifman_oracle(ok), abs=1e-12)
    assert excess_aurc(confidences=conf, correct=ok) == pytest.approx(
        geifman_aurc(conf, ok) - geifman_oracle(ok), abs=1e-12
    )


def test_oracle_formula() -> None:
    assert oracle_aurc(n=4, n_correct=2) == pytest.approx((1 / 3 + 2 / 4) / 4)
    assert oracle_aurc(n=3, n_correct=3) == 0.0
    assert oracle_aurc(n=3, n_correct=0) == 1.0
    with pytest.raises(ValueError):
        oracle_aurc(n=2, n_correct=3)
    with pytest.raises(ValueError):
        oracle_aurc(n=0, n_correct=0)


def test_operating_points() -> None:
    conf = [0.9, 0.8, 0.8, 0.3]
    ok = [1, 1, 0, 0]
    assert coverage_at_risk(confidences=conf, correct=ok, max_risk=0.0) == 0.25
    assert coverage_at_risk(confidences=conf, correct=ok, max_risk=0.4) == 0.75
    assert coverage_at_risk(confidences=conf, correct=ok, max_risk=0.5) == 1.0
    assert coverage_at_risk(confidences=[0.5], correct=[0], max_risk=0.1) == 0.0
    # Coverage 0.5 is not attainable (ties): the next point, coverage 0.75, is used.
    assert risk_at_coverage(confidences=conf, correct=ok, coverage=0.5) == pytest.approx(1 / 3)
    assert risk_at_coverage(confidences=conf, correct=ok, coverage=0.25) == 0.0
    assert risk_at_coverage(confidences=conf, correct=ok, coverage=1.0) == 0.5
    point = risk_coverage_curve(confidences=conf, correct=ok).point_for_coverage(0.5)
    assert (point.threshold, point.n_covered) == (0.8, 3)
    with pytest.raises(ValueError, match="coverage"):
        risk_at_coverage(confidences=conf, correct=ok, coverage=0.0)
    with pytest.raises(ValueError, match="max_risk"):
        coverage_at_risk(confidences=conf, correct=ok, max_risk=1.5)


def test_selective_accuracy_uses_greater_or_equal() -> None:
    r = selective_accuracy(confidences=[0.9, 0.6, 0.59], correct=[1, 0, 1], threshold=0.6)
    assert (r.n_covered, r.coverage, r.accuracy, r.risk) == (2, 2 / 3, 0.5, 0.5)
    default = selective_accuracy(confidences=[0.9, 0.6, 0.59], correct=[1, 0, 1])
    assert default.threshold == 0.6  # R2VC's τ_cal
    none = selective_accuracy(confidences=[0.1, 0.2], correct=[1, 1], threshold=0.5)
    assert (none.n_covered, none.coverage, none.accuracy, none.risk) == (0, 0.0, None, None)


def test_batched_matches_scalar() -> None:
    rng = np.random.default_rng(7)
    conf = np.round(rng.random((5, 40)), 1)  # many ties
    ok = rng.random((5, 40)) < 0.6
    area, excess = aurc_batched(conf, ok)
    for r in range(5):
        assert area[r] == pytest.approx(aurc(confidences=conf[r], correct=ok[r]), abs=1e-12)
        assert excess[r] == pytest.approx(excess_aurc(confidences=conf[r], correct=ok[r]), abs=1e-12)


def test_empty_and_bad_input() -> None:
    with pytest.raises(ValueError, match="empty"):
        aurc(confidences=[], correct=[])
    with pytest.raises(ValueError, match="empty"):
        risk_coverage_curve(confidences=[], correct=[])
    with pytest.raises(ValueError, match="empty"):
        oracle_aurc_of(correct=[])
    with pytest.raises(ValueError, match="differ in length"):
        aurc(confidences=[0.1, 0.2], correct=[1])


def test_registry_objects_and_json() -> None:
    assert METRICS.get("aurc")(confidences=[0.9, 0.1], correct=[1, 0]) == 0.25
    assert METRICS.get("e-aurc")(confidences=[0.9, 0.1], correct=[1, 0]) == 0.0
    assert METRICS.get("coverage-at-risk").info.params == {"max_risk": 0.1}
    assert METRICS.get("risk-at-coverage").info.params == {"coverage": 0.8}
    assert METRICS.get("selective-accuracy")(confidences=[0.1], correct=[1]) is None
    assert "Geifman" in METRICS.get("e-aurc").info.citation
    d = risk_coverage_curve(confidences=[0.9, 0.1], correct=[1, 0]).to_dict()
    assert d["coverages"] == [0.5, 1.0] and d["risks"] == [0.0, 0.5]
