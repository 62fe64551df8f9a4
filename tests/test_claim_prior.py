"""The claim-only probe and the claim-level head (issue 37): tiny inline fixtures, hand-derived values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines._run import claim_prior
from averitec_tools.baselines._run.claim_head import (
    ClaimHead,
    fit_head,
    fit_offsets,
    macro_f1_index,
)
from averitec_tools.baselines._run.claim_prior import (
    ClaimPrior,
    choose_c,
    claim_groups,
    fit_prior,
    fitted_prior,
    group_folds,
    out_of_fold_proba,
    prior_training_set,
)
from averitec_tools.records.averitec import AVeriTeCClaim

S, R, NEE, C = "Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"


def _blobs(n_per: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Two separable classes (0 around (1, 0), 1 around (0, 1))."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal([1, 0], 0.1, (n_per, 2)), rng.normal([0, 1], 0.1, (n_per, 2))])
    return X, np.array([0] * n_per + [1] * n_per)


def test_groups_join_twins_and_one_articles_claims() -> None:
    g = claim_groups(["It’s red.", "it's red", "Blue", "Green", "Pink"],
                     ["https://fc.org/a", None, "http://www.fc.org/a/", "https://fc.org/b", None])
    assert g.tolist() == [0, 0, 0, 1, 2]  # the twin by text, "Blue" by its article


def test_group_folds_keep_groups_whole_and_balance_sizes() -> None:
    groups = np.array([0, 0, 0, 1, 2, 3, 4, 4])
    fold = group_folds(groups, folds=2, seed=3)
    for g in np.unique(groups):
        assert len(set(fold[groups == g])) == 1
    assert sorted(np.bincount(fold).tolist()) == [4, 4]


def test_prior_fits_chooses_c_by_held_out_likelihood_and_round_trips(tmp_path: Path) -> None:
    X, y = _blobs()
    c, table = choose_c(vectors=X, labels=y, groups=np.arange(len(y)), c_grid=(0.01, 100.0), folds=3)
    # separable classes: the weak fit is near 50/50, the strong one confident and right
    assert c == 100.0 and table[1]["log_likelihood"] > table[0]["log_likelihood"]
    prior = fit_prior(vectors=X, labels=y, groups=np.arange(len(y)), c_grid=(100.0,), folds=3)
    p = prior.proba(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert p[:, :2].argmax(1).tolist() == [0, 1] and p[:, 2:].max() == 0.0  # NEE and C never seen: 0
    prior.save(tmp_path / "p.json")
    again = ClaimPrior.load(tmp_path / "p.json")
    assert np.allclose(again.proba(X), prior.proba(X)) and again.c == 100.0


def test_out_of_fold_probabilities_come_from_probes_not_fitted_on_the_claim() -> None:
    X, y = _blobs()
    y = y.copy()
    y[0] = 2  # the only NEE claim: a probe fitted without it cannot predict NEE
    groups = np.arange(len(y))
    oof = out_of_fold_proba(vectors=X, labels=y, groups=groups, c=1.0, folds=3)
    assert oof[0, 2] == 0.0 and np.allclose(oof.sum(1), 1.0)


def test_training_set_drops_twins_of_scored_claims_the_pseudo_test_and_unlabelled() -> None:
    recs = [AVeriTeCClaim(claim="A!", label=R), AVeriTeCClaim(claim="b", label=S), AVeriTeCClaim(claim="c", label=C),
            AVeriTeCClaim(claim="d", label=None), AVeriTeCClaim(claim="e", label=NEE)]
    t = prior_training_set(recs, scored=["a"], pseudo_test=np.array([False, False, True, False, False]))
    assert t.texts == ["b", "e"] and t.labels.tolist() == [0, 2] and t.index == [1, 4]
    assert t.info == {"claims": 2, "train_duplicates_dropped": 1, "pseudo_test_held_out": 1}


def test_fitted_prior_is_cached_and_gives_out_of_fold_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"claim": f"claim {i} {'red' if i % 2 else 'blue'}", "label": R if i % 2 else S} for i in range(12)]
    rows.append({"claim": "the dev twin", "label": S})
    (tmp_path / "train.json").write_text(json.dumps(rows))
    calls: list[int] = []

    def fake_embed(texts: list[str]) -> np.ndarray:  # a word-presence embedding: no model needed
        calls.append(len(texts))
        return np.array([[float("red" in t), float("blue" in t), 1.0] for t in texts])

    monkeypatch.setattr(claim_prior, "embed_claims", fake_embed)
    fit = fitted_prior(train_path=tmp_path / "train.json", scored=["The dev twin."], cache_dir=tmp_path / "c")
    assert fit.prior.info["train_duplicates_dropped"] == 1 and sorted(fit.oof) == list(range(12))
    assert fit.training_proba([1, 2])[:, :2].argmax(1).tolist() == [1, 0]
    again = fitted_prior(train_path=tmp_path / "train.json", scored=["The dev twin."], cache_dir=tmp_path / "c")
    assert calls == [12] and np.allclose(again.training_proba([3]), fit.training_proba([3]))
    with pytest.raises(KeyError):
        fit.training_proba([12])  # the twin never trained the probe


def test_offsets_objectives() -> None:
    # 3 claims: gold S, R, R; every probability favours R, the S claim least
    p = np.array([[0.4, 0.6, 0, 0], [0.2, 0.8, 0, 0], [0.3, 0.7, 0, 0]])
    gold = np.array([0, 1, 1])
    assert fit_offsets(p, gold, objective="none").tolist() == [0, 0, 0, 0]
    # log(0.6/0.4) = 0.405 lifts only the first claim to S; 1.0 would turn the third too
    b = fit_offsets(p, gold, objective="macro-f1", grid=(0.0, 0.5, 1.0))
    assert b.tolist() == [0.5, 0, 0, 0] and macro_f1_index(gold, (np.log(p + 1e-12) + b).argmax(1)) == 0.5
    assert fit_offsets(p, gold, objective="macro-f1-keep-accuracy", grid=(0.0, 0.5, 1.0)).tolist() == [0.5, 0, 0, 0]
    # the keep-accuracy objective refuses offsets that trade a right claim for a wrong one
    # (an S offset of 0.5 turns the three alike claims S: accuracy 3/4 -> 2/4, macro-F1 0.214 -> 0.25)
    p2 = np.array([[0.45, 0.55, 0, 0]] * 3 + [[0.2, 0.8, 0, 0]])
    gold2 = np.array([0, 1, 1, 1])
    assert fit_offsets(p2, gold2, objective="macro-f1-keep-accuracy", grid=(0.0, 0.5)).tolist() == [0, 0, 0, 0]
    assert fit_offsets(p2, gold2, objective="macro-f1", grid=(0.0, 0.5)).tolist() == [0.5, 0, 0, 0]


def test_head_learns_from_features_and_round_trips() -> None:
    X, y = _blobs(8)
    head = fit_head(X, y, names=("a", "b"), groups=np.arange(len(y)), c=10.0, objective="macro-f1", folds=4)
    labels, conf = head.decide(X)
    assert labels.tolist() == y.tolist() and (conf > 0.5).all()
    again = ClaimHead.from_dict(json.loads(json.dumps(head.to_dict())))
    assert np.allclose(again.proba(X), head.proba(X)) and again.info["objective"] == "macro-f1"
    assert head.info["label_counts"] == {S: 8, R: 8, NEE: 0, C: 0}
