"""Property-based invariants of the calibration and selective-prediction metrics."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics.brier import brier_score
from averitec_tools.metrics.ece import expected_calibration_error, maximum_calibration_error
from averitec_tools.metrics.selective import (
    aurc,
    excess_aurc,
    oracle_aurc_of,
    risk_coverage_curve,
)

# Confidences on a coarse grid so that ties are common.
confidence = st.one_of(
    st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)
samples = st.lists(st.tuples(confidence, st.booleans()), min_size=1, max_size=60)
SETTINGS = settings(max_examples=60, deadline=None)


def split(pairs: list[tuple[float, bool]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([c for c, _ in pairs], dtype=float), np.array([o for _, o in pairs], dtype=bool)


@SETTINGS
@given(samples, st.integers(min_value=1, max_value=20), st.sampled_from(["uniform", "quantile"]))
def test_ece_and_mce_in_unit_interval(pairs, n_bins, strategy) -> None:
    conf, ok = split(pairs)
    ece = expected_calibration_error(confidences=conf, correct=ok, n_bins=n_bins, strategy=strategy)
    mce = maximum_calibration_error(confidences=conf, correct=ok, n_bins=n_bins, strategy=strategy)
    assert 0.0 <= ece <= mce + 1e-12 <= 1.0 + 1e-12


@SETTINGS
@given(samples)
def test_aurc_bounds(pairs) -> None:
    conf, ok = split(pairs)
    area = aurc(confidences=conf, correct=ok)
    oracle = oracle_aurc_of(correct=ok)
    assert 0.0 <= oracle <= area + 1e-12 <= 1.0 + 1e-12
    assert excess_aurc(confidences=conf, correct=ok) >= -1e-12
    # A weighted average of the curve's risks lies between their extremes.
    curve = risk_coverage_curve(confidences=conf, correct=ok)
    assert min(curve.risks) - 1e-12 <= area <= max(curve.risks) + 1e-12


@SETTINGS
@given(samples)
def test_curve_is_monotone_where_it_must_be(pairs) -> None:
    conf, ok = split(pairs)
    c = risk_coverage_curve(confidences=conf, correct=ok)
    assert all(a > b for a, b in pairwise(c.thresholds))  # strictly decreasing τ
    assert all(a < b for a, b in pairwise(c.n_covered))  # strictly growing cover
    assert c.n_covered[-1] == len(pairs) and c.coverages[-1] == 1.0
    errors = [round(r * k) for r, k in zip(c.risks, c.n_covered, strict=True)]
    assert all(a <= b for a, b in pairwise(errors))  # error count never decreases
    assert c.risks[-1] == pytest.approx(1.0 - ok.mean())


@SETTINGS
@given(st.integers(min_value=0, max_value=30), st.integers(min_value=0, max_value=30))
def test_perfect_separation_gives_monotone_risk_and_zero_e_aurc(n_ok, n_bad) -> None:
    if n_ok + n_bad == 0:
        return
    conf = np.concatenate([np.linspace(0.9, 0.6, n_ok), np.linspace(0.5, 0.1, n_bad)])
    ok = np.array([True] * n_ok + [False] * n_bad)
    c = risk_coverage_curve(confidences=conf, correct=ok)
    assert all(a <= b + 1e-15 for a, b in pairwise(c.risks))
    assert c.e_aurc == pytest.approx(0.0, abs=1e-12)


@SETTINGS
@given(samples, st.randoms(use_true_random=False))
def test_permutation_invariance(pairs, rnd) -> None:
    conf, ok = split(pairs)
    perm = list(range(len(pairs)))
    rnd.shuffle(perm)
    for metric in (brier_score, expected_calibration_error, maximum_calibration_error, aurc, excess_aurc):
        assert metric(confidences=conf[perm], correct=ok[perm]) == pytest.approx(
            metric(confidences=conf, correct=ok), abs=1e-12
        )
    assert risk_coverage_curve(confidences=conf[perm], correct=ok[perm]) == risk_coverage_curve(
        confidences=conf, correct=ok
    )


@SETTINGS
@given(samples)
def test_brier_bounds_and_decomposition_order(pairs) -> None:
    conf, ok = split(pairs)
    b = brier_score(confidences=conf, correct=ok)
    assert 0.0 <= b <= 1.0
    # Brier ≥ ECE² with one bin (Jensen: mean squared gap ≥ squared mean gap).
    ece1 = expected_calibration_error(confidences=conf, correct=ok, n_bins=1)
    assert b + 1e-12 >= ece1**2
