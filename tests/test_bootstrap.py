"""Bootstrap intervals and paired tests: reproducibility, scipy agreement, exact checks."""

from __future__ import annotations

import itertools
import math
from functools import partial

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score

from averitec_tools.metrics import bootstrap
from averitec_tools.metrics.bootstrap import bootstrap_ci, mean_ci, mean_cis
from averitec_tools.metrics.label_codes import (
    accuracy_of_codes,
    encode_label_pairs,
    macro_f1_of_codes,
)
from averitec_tools.metrics.paired import (
    approximate_randomization_test,
    paired_bootstrap_test,
    paired_test,
)

RNG = np.random.default_rng(42)
VALUES = RNG.random(80)


@pytest.mark.parametrize("method", ["percentile", "basic"])
def test_ci_of_a_proportion_matches_the_binomial_by_hand(method: str) -> None:
    # 10 ones and 10 zeros: a resample's mean is Binomial(20, 1/2) / 20. Its CDF (math.comb)
    # is 0.0207 at 5 and 0.0577 at 6, so the 2.5 % quantile is 6/20; by symmetry the
    # 97.5 % quantile is 14/20 (and "basic" reflects them about 0.5 onto the same pair).
    cdf = np.cumsum([math.comb(20, k) / 2**20 for k in range(21)])
    low = int(np.searchsorted(cdf, 0.025)) / 20
    assert low == 0.30
    ci = mean_ci(values=[1.0] * 10 + [0.0] * 10, n_resamples=9999, method=method, seed=0)  # type: ignore[arg-type]
    assert (ci.low, ci.high) == pytest.approx((low, 1 - low), abs=1e-12)
    # bootstrap standard error of a mean: sqrt(p (1 - p) / n)
    assert ci.standard_error == pytest.approx(math.sqrt(0.25 / 20), rel=0.03)


def test_mean_ci_is_seeded_and_wires_scipy_bootstrap() -> None:
    # Wiring, not a reference: the same scipy.stats.bootstrap call with the same seed.
    a = mean_ci(values=VALUES, n_resamples=999, seed=3)
    b = mean_ci(values=VALUES, n_resamples=999, seed=3)
    assert a == b
    assert a.estimate == pytest.approx(VALUES.mean())
    assert a.low < a.estimate < a.high
    ref = stats.bootstrap((VALUES,), np.mean, n_resamples=999, method="percentile",
                          paired=True, rng=np.random.default_rng(3))
    assert a.low == pytest.approx(ref.confidence_interval.low)
    assert a.high == pytest.approx(ref.confidence_interval.high)
    assert mean_ci(values=VALUES, n_resamples=999, seed=4) != a


def test_mean_cis_pinned_values() -> None:
    # Values of mean_ci (scipy.stats.bootstrap, percentile, seed 0) when mean_cis was written.
    values = [0.0, 0.25, 0.5, 1.0, 1.0, 0.75, 0.125, 0.0, 1.0, 0.5]
    ci = mean_cis(columns={"a": values}, n_resamples=200, seed=0)["a"]
    assert (ci.low, ci.high, ci.standard_error) == (0.2621875000000001, 0.7628125, 0.12631065387134624)


@pytest.mark.parametrize("batch_elements", [bootstrap.BATCH_ELEMENTS, 3000, 1])
@pytest.mark.parametrize("seed", [0, 11])
def test_mean_cis_equal_separate_mean_ci_calls(batch_elements: int, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # One resampling per column length must give, bit for bit, what each column's own
    # mean_ci gives (the leaderboard stores these intervals): columns of one length, of
    # other lengths, a single claim, a constant column; batches of every size.
    monkeypatch.setattr(bootstrap, "BATCH_ELEMENTS", batch_elements)
    rng = np.random.default_rng(1)
    columns = {f"m{i}": rng.random(60) for i in range(4)}
    columns.update(quarters=np.round(rng.random(60) * 4) / 4, short=rng.random(7), one=[0.3], constant=[1.0] * 9)
    together = mean_cis(columns=columns, n_resamples=300, seed=seed)
    assert list(together) == list(columns)
    for name, values in columns.items():
        assert together[name] == mean_ci(values=values, n_resamples=300, seed=seed), name


def test_mean_cis_refuses_what_mean_ci_refuses() -> None:
    with pytest.raises(ValueError, match="empty"):
        mean_cis(columns={"a": []})
    with pytest.raises(ValueError, match="n_resamples"):
        mean_cis(columns={"a": [1.0, 2.0]}, n_resamples=0)
    assert mean_cis(columns={}) == {}


@pytest.mark.parametrize("method", ["percentile", "basic", "BCa"])
def test_methods(method: str) -> None:
    ci = mean_ci(values=VALUES, n_resamples=500, method=method, seed=0)  # type: ignore[arg-type]
    assert ci.method == method
    assert ci.low < VALUES.mean() < ci.high
    assert ci.standard_error == pytest.approx(VALUES.std(ddof=1) / np.sqrt(VALUES.size), rel=0.2)


def test_paired_data_and_non_vectorised_statistic() -> None:
    conf = RNG.random(50)
    ok = (RNG.random(50) < conf).astype(float)
    ci = bootstrap_ci(
        data=[conf, ok], statistic=lambda c, o: float(np.mean((c - o) ** 2)), n_resamples=300, seed=1
    )
    assert ci.estimate == pytest.approx(np.mean((conf - ok) ** 2))
    assert ci.low <= ci.estimate <= ci.high


def test_degenerate_data_falls_back_explicitly() -> None:
    ci = mean_ci(values=[1.0] * 10, method="BCa", n_resamples=200)
    assert (ci.low, ci.high) == (1.0, 1.0)
    assert ci.method.startswith("percentile (fallback")
    one = mean_ci(values=[0.3], method="BCa", n_resamples=50)
    assert (one.low, one.high) == pytest.approx((0.3, 0.3))
    assert "fallback" in one.method


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"data": [[]]}, "empty"),
        ({"data": []}, "at least one"),
        ({"data": [[1, 2], [1]]}, "paired"),
        ({"data": [[1, 2]], "n_resamples": 0}, "n_resamples"),
        ({"data": [[1, 2]], "confidence_level": 1.0}, "confidence_level"),
        ({"data": [[1, 2]], "method": "bca"}, "unknown CI method"),
    ],
)
def test_bad_bootstrap_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_ci(statistic=np.mean, vectorized=True, **kwargs)


def test_identical_systems_are_not_different() -> None:
    x = (RNG.random(60) < 0.7).astype(float)
    for test in ("bootstrap", "randomization"):
        r = paired_test(a=x, b=x, test=test, n_resamples=300)  # type: ignore[arg-type]
        assert r.difference == 0.0 and r.p_value == 1.0 and not r.significant
        assert r.effect_size == 0.0 and (r.ci.low, r.ci.high) == (0.0, 0.0)


def test_clear_difference_is_significant_with_dz() -> None:
    a = np.array([1.0] * 45 + [0.0] * 15)
    b = np.array([1.0] * 25 + [0.0] * 35)
    r = paired_bootstrap_test(a=a, b=b, n_resamples=2000, seed=0)
    assert r.difference == pytest.approx(20 / 60)
    assert r.significant and r.p_value == pytest.approx(1 / 2001)
    d = a - b
    assert r.effect_size == pytest.approx(d.mean() / d.std(ddof=1))
    assert r.effect_size_kind == "cohens_dz"
    assert r.ci.low > 0
    rr = approximate_randomization_test(a=a, b=b, n_resamples=2000, seed=0)
    assert rr.significant and rr.test == "randomization"


def test_randomization_p_value_matches_exact_enumeration() -> None:
    # With 10 claims all 2^10 swap patterns can be enumerated: the exact p-value.
    a = np.array([0.9, 0.8, 0.75, 0.6, 0.9, 0.4, 0.7, 0.85, 0.5, 0.65])
    b = np.array([0.7, 0.8, 0.5, 0.65, 0.6, 0.45, 0.5, 0.6, 0.55, 0.6])
    observed = abs(a.mean() - b.mean())
    hits = 0
    for swaps in itertools.product([False, True], repeat=10):
        s = np.array(swaps)
        delta = np.where(s, b, a).mean() - np.where(s, a, b).mean()
        hits += abs(delta) >= observed - 1e-12
    exact = hits / 2**10
    r = approximate_randomization_test(a=a, b=b, n_resamples=20000, seed=5)
    assert r.p_value == pytest.approx(exact, abs=0.01)


def test_bootstrap_p_value_formula_on_scipys_resamples() -> None:
    # p = (1 + #{|δ* − δ| ≥ |δ|}) / (B + 1), recomputed by hand from scipy's resamples; the
    # CI comparison is wiring (scipy on both sides). test_clear_difference_is_significant_with_dz
    # and the exact enumeration above check the values independently.
    a = RNG.random(30)
    b = a + RNG.normal(0.02, 0.1, 30)
    r = paired_bootstrap_test(a=a, b=b, n_resamples=999, seed=11)
    res = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
                          paired=True, vectorized=True, n_resamples=999, method="percentile",
                          rng=np.random.default_rng(11))
    dist = res.bootstrap_distribution
    delta = a.mean() - b.mean()
    expected = (1 + np.sum(np.abs(dist - delta) >= abs(delta) - 1e-12)) / 1000
    assert r.p_value == pytest.approx(expected)
    assert (r.ci.low, r.ci.high) == pytest.approx((res.confidence_interval.low, res.confidence_interval.high))


def test_non_mean_statistic_effect_size() -> None:
    labels = ["A", "B", "C"]
    gold = [labels[i] for i in RNG.integers(0, 3, 120)]
    pa = [g if RNG.random() < 0.8 else "A" for g in gold]
    pb = [g if RNG.random() < 0.5 else "A" for g in gold]
    stat = partial(macro_f1_of_codes, n_labels=3)
    r = paired_test(
        a=encode_label_pairs(gold=gold, predictions=pa, labels=labels),
        b=encode_label_pairs(gold=gold, predictions=pb, labels=labels),
        statistic=stat, n_resamples=500, seed=2,
    )
    assert r.value_a == pytest.approx(f1_score(gold, pa, average="macro"))
    assert r.value_b == pytest.approx(f1_score(gold, pb, average="macro"))
    assert r.effect_size_kind == "bootstrap_standardized"
    assert r.effect_size == pytest.approx(r.difference / (np.sqrt(120) * r.ci.standard_error))
    assert r.significant


def test_label_codes_agree_with_sklearn_vectorised() -> None:
    labels = ["SUPPORTS", "REFUTES", "NEI"]
    gold = [labels[i] for i in RNG.integers(0, 3, 50)]
    pred: list[str | None] = [labels[i] for i in RNG.integers(0, 3, 50)]
    pred[0] = None
    pred[1] = "garbage"
    codes = encode_label_pairs(gold=gold, predictions=pred, labels=labels)
    safe = ["<none>" if p is None else p for p in pred]
    assert macro_f1_of_codes(codes, n_labels=3) == pytest.approx(
        f1_score(gold, safe, labels=labels, average="macro", zero_division=0)
    )
    assert float(accuracy_of_codes(codes, n_labels=3)) == pytest.approx(np.mean([g == p for g, p in zip(gold, pred, strict=True)]))
    idx = RNG.integers(0, 50, size=(4, 50))
    batch = macro_f1_of_codes(codes[idx], n_labels=3)
    for r in range(4):
        assert batch[r] == pytest.approx(
            f1_score([gold[i] for i in idx[r]], [safe[i] for i in idx[r]], labels=labels,
                     average="macro", zero_division=0)
        )
    with pytest.raises(ValueError, match="not one of labels"):
        encode_label_pairs(gold=["X"], predictions=["A"], labels=["A"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": [1, 0], "b": [1]}, "paired"),
        ({"a": [], "b": []}, "empty"),
        ({"a": [1], "b": [1], "test": "t-test"}, "unknown paired test"),
        ({"a": [1], "b": [1], "alpha": 0.0}, "alpha"),
    ],
)
def test_bad_paired_input(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_test(**kwargs)
