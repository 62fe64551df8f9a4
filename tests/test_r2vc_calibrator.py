"""SLC calibrator (§3.5): features, the logistic fit against Newton's method by hand, save/load, Brier/ECE."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from averitec_tools.baselines.r2vc.stages.calibration.calibrator import (
    FEATURE_NAMES,
    Calibrator,
    calibration_metrics,
    candidate_features,
    chosen_correctness,
    fit_from_examples,
    monotone_confidence,
    simulate_examples,
)
from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate
from averitec_tools.baselines.r2vc.types import Candidate, Passage, VerifierScores
from averitec_tools.errors import UserError

P = Passage("d", "t", "u", "x")


def vc(label: str, s_ver: float, *, logprob: float | None = -0.5, n_pass: int = 2,
       rationale: str = "one two three", s_cons: float = 1.0, s_align: float = 0.5,
       cites: tuple[int, ...] = (0, 1)) -> VerifiedCandidate:
    scores = VerifierScores(0.5, 0.1, 0.4, 0.8, label, s_cons, s_align, s_ver)
    return VerifiedCandidate(Candidate(label, rationale, cites, (P,) * n_pass, logprob, 0), scores,
                             np.zeros((n_pass, 3)))


def test_feature_vector_by_hand() -> None:
    cands = [vc("True", 0.7), vc("True", 0.6, logprob=None, n_pass=5, rationale="", cites=(4, 1, 9)),
             vc("False", 0.2, s_cons=0.0, s_align=0.0, cites=(0, 0)), vc("Uncertain", 0.1, cites=())]
    X = candidate_features(cands)
    assert X.shape == (4, len(FEATURE_NAMES)) == (4, 7)
    assert X[0].tolist() == [-0.5, 0.7, 0.5, 2.0, 3.0, 1.0, 0.5]
    # missing logprob → 0; n_passages counts the distinct valid citations (2 of the 5 shown)
    assert X[1].tolist() == [0.0, 0.6, 0.5, 2.0, 0.0, 1.0, 0.5]
    assert X[2].tolist() == [-0.5, 0.2, 0.25, 1.0, 3.0, 0.0, 0.0]
    assert X[3, 3] == 0.0  # cites nothing
    assert candidate_features([]).shape == (0, 7)
    # label indicators (calibration.label_features): True, False; Uncertain is the baseline
    assert candidate_features(cands, label_features=True)[:, 7:].tolist() == [[1, 0], [1, 0], [0, 1], [0, 0]]


def _data(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(-1, 0.3, n), rng.uniform(0, 1, n), rng.uniform(0, 1, n),
                         rng.integers(1, 17, n), rng.integers(3, 40, n), rng.choice([0, 0.5, 1], n),
                         rng.uniform(0, 1, n)])
    y = (rng.uniform(0, 1, n) < X[:, 1]).astype(int)
    return X, y


def _newton_logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """Independent reference: standardise (population std), then minimise
    ½‖w‖² + Σ log-loss (scikit-learn's C = 1; intercept unpenalised) by Newton's method."""
    mean, std = X.mean(axis=0), X.std(axis=0)
    A = np.column_stack([(X - mean) / std, np.ones(len(X))])
    penalty = np.r_[np.ones(X.shape[1]), 0.0]
    w = np.zeros(A.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-A @ w))
        gradient = A.T @ (p - y) + penalty * w
        hessian = A.T @ (A * (p * (1 - p))[:, None]) + np.diag(penalty)
        w -= np.linalg.solve(hessian, gradient)
    return w[:-1], float(w[-1]), mean, std


def _probabilities(X: np.ndarray, coef: np.ndarray, intercept: float, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(((X - mean) / std) @ coef + intercept)))


# scikit-learn's lbfgs stops at a gradient tolerance of 1e-4; Newton converges to machine precision.
LBFGS_ATOL = 1e-3


def test_fit_matches_a_newton_solution_by_hand() -> None:
    X, y = _data()
    cal = Calibrator.fit(features=X, targets=y)
    coef, intercept, mean, std = _newton_logistic(X, y)
    np.testing.assert_allclose(cal.mean, mean, rtol=1e-12)
    np.testing.assert_allclose(cal.scale, std, rtol=1e-12)
    np.testing.assert_allclose(cal.coef, coef, atol=LBFGS_ATOL)
    assert cal.intercept == pytest.approx(intercept, abs=LBFGS_ATOL)
    p = _probabilities(X, coef, intercept, mean, std)
    np.testing.assert_allclose(cal.predict(X), p, atol=LBFGS_ATOL)
    assert cal.fit_info["n"] == 200 and not cal.fit_info["degenerate"]
    assert cal.fit_info["brier"] == pytest.approx(np.mean((p - y) ** 2), abs=LBFGS_ATOL)
    assert cal.coef[1] > 0  # s_ver drives correctness in this synthetic set
    assert cal.fit_info["dropped_features"] == []


def test_constant_features_dropped_and_scale_invariant() -> None:
    X, y = _data()
    X[:, 0] = 0.0  # no LM: mean_logprob constant
    cal = Calibrator.fit(features=X, targets=y)
    assert cal.fit_info["dropped_features"] == ["mean_logprob"] and cal.coef[0] == 0.0
    coef, intercept, mean, std = _newton_logistic(X[:, 1:], y)
    np.testing.assert_allclose(cal.predict(X), _probabilities(X[:, 1:], coef, intercept, mean, std), atol=LBFGS_ATOL)
    X2 = X.copy()
    X2[:, 4] *= 1000.0  # standardised: rescaling a feature does not change π
    np.testing.assert_allclose(Calibrator.fit(features=X2, targets=y).predict(X2), cal.predict(X), rtol=1e-6)


def test_single_class_gives_constant_model() -> None:
    X, _ = _data(20)
    cal = Calibrator.fit(features=X, targets=np.zeros(20, dtype=int))
    assert cal.fit_info["degenerate"]
    np.testing.assert_allclose(cal.predict(X), 1e-3)
    with pytest.raises(UserError, match="no examples"):
        Calibrator.fit(features=np.zeros((0, 7)), targets=[])


def test_save_load_roundtrip_and_feature_check(tmp_path) -> None:
    X, y = _data()
    cal = Calibrator.fit(features=X, targets=y)
    path = tmp_path / "cal.json"
    cal.save(path)
    back = Calibrator.load(path)
    np.testing.assert_allclose(back.predict(X), cal.predict(X), rtol=0, atol=0)
    obj = json.loads(path.read_text())
    obj["feature_names"][1] = "s_verifier"
    path.write_text(json.dumps(obj))
    with pytest.raises(UserError, match="do not match"):
        Calibrator.load(path)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(UserError, match="not an R2VC calibrator"):
        Calibrator.load(path)
    obj["feature_names"] = list(FEATURE_NAMES)
    obj["coef"] = [1, 2]
    path.write_text(json.dumps(obj))
    with pytest.raises(UserError, match="malformed"):
        Calibrator.load(path)


def test_metrics_against_sklearn_and_by_hand() -> None:
    y, p = [1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6]
    m = calibration_metrics(y_true=y, prob=p)
    assert m["brier"] == pytest.approx(brier_score_loss(y, p))
    assert m["brier"] == pytest.approx((0.1**2 + 0.1**2 + 0.2**2 + 0.4**2) / 4)
    # 15 equal-width bins, one prediction each: mean |y − p| = (0.1+0.1+0.2+0.4)/4
    assert m["ece"] == pytest.approx(0.2)


def test_monotone_map() -> None:
    assert monotone_confidence(np.array([-0.4, 0.0, 0.55, 1.2])).tolist() == [0.0, 0.0, 0.55, 1.0]


def test_simulate_examples_chooses_max_sver_and_skips_empty() -> None:
    pools = {
        "a": [vc("True", 0.3), vc("False", 0.9), vc("False", 0.5)],
        "b": [],
        "c": [vc("Uncertain", 0.4)],
    }
    ex = simulate_examples(claims=["a", "b", "c"], gold_labels=["False", "True", "True"],
                           candidates_for=lambda c: pools[c])
    assert [(e.claim, e.predicted, e.target) for e in ex] == [("a", "False", 1), ("c", "Uncertain", 0)]
    assert ex[0].features.tolist() == [-0.5, 0.9, 2 / 3, 2.0, 3.0, 1.0, 0.5]
    assert ex[0].targets.tolist() == [0, 1, 1] and ex[0].all_features.shape == (3, 9)  # + label indicators
    cal = fit_from_examples(ex, fit_on="max_s_ver")
    assert cal.fit_info["n"] == 2 and cal.fit_info["fit_on"] == "max_s_ver"
    cal = fit_from_examples(ex)  # all candidates, weighted 1/k per claim
    assert cal.fit_info["n"] == 4 and cal.fit_info["claims"] == 2
    assert cal.fit_info["positive_rate"] == pytest.approx((2 / 3 + 0) / 2)
    assert "heldout_brier" not in cal.fit_info  # too few claims to hold any out
    with pytest.raises(UserError):
        fit_from_examples([])


def test_heldout_metrics_and_gate_frontier() -> None:
    rng = np.random.default_rng(0)
    pools, golds = {}, []
    for i in range(40):
        gold = "True" if i % 2 else "False"
        pools[str(i)] = [vc(lab, float(s)) for lab, s in zip(rng.choice(["True", "False"], 4),
                                                              rng.uniform(0, 1, 4), strict=True)]
        golds.append(gold)
    ex = simulate_examples(claims=list(pools), gold_labels=golds, candidates_for=lambda c: pools[c])
    cal = fit_from_examples(ex, heldout_fraction=0.25, seed=1)
    info = cal.fit_info
    assert info["heldout_n"] == 10 and 0 <= info["heldout_brier"] <= 1 and 0 <= info["heldout_ece"] <= 1
    # held-out metrics come from a calibrator that never saw those claims: refit by hand
    perm = np.random.default_rng(1).permutation(40)
    test, train = [ex[i] for i in perm[:10]], [ex[i] for i in perm[10:]]
    X = np.concatenate([e.all_features[:, :7] for e in train])
    y = np.concatenate([e.targets for e in train])
    w = np.concatenate([np.full(4, 0.25) for _ in train])
    part = Calibrator.fit(features=X, targets=y, sample_weight=w)
    prob, correct = chosen_correctness(part, test)
    assert info["heldout_brier"] == pytest.approx(calibration_metrics(y_true=correct, prob=prob)["brier"])
    # the frontier dominates every slice candidate
    frontier = np.array(info["gate_frontier"])
    for e in ex:
        for p, s in zip(cal.predict(e.all_features[:, :7]), e.s_ver, strict=True):
            assert ((frontier[:, 0] >= p - 1e-6) & (frontier[:, 1] >= s - 1e-6)).any()
