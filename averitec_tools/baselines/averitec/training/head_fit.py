"""The claim-level verdict head of ``decision.head: claim-head`` (issue 37 item 3), fitted on the decision slice.

Each claim's features: the claim-only probe's log-probabilities
(:mod:`averitec_tools.baselines._run.claim_prior`; out of fold for a slice claim, so no
slice claim is scored by a probe fitted on it) and the log of the verdict model's claim
distribution (the aggregation rule's outcome distribution over its evidence pairs,
:func:`~averitec_tools.baselines.averitec.stages.verdict.aggregate_probabilities`). The
head (:mod:`averitec_tools.baselines._run.claim_head`, its features
:func:`~averitec_tools.baselines.averitec.stages.head.head_features`: a multinomial logistic regression,
per-label offsets) is fitted on the slice claims, whose evidence came from a store built
as a scored claim's is; its ``C`` and offsets objective are chosen by grouped 5-fold
cross-validation on the slice (:func:`choose_head`): the highest mean macro-F1 among the
settings whose mean accuracy is at least the probe's on the same claims, else the highest
accuracy. Training claims only: no scored label reaches it.

Example:
    >>> HEAD_C_GRID, HEAD_FOLDS, HEAD_SEEDS
    ((0.03, 0.1, 0.3, 1.0, 3.0), 5, 3)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import (
    OBJECTIVES,
    ChoiceRule,
    fit_head,
    macro_f1_index,
)
from averitec_tools.baselines.averitec.stages.head import HEAD_FEATURES, head_features
from averitec_tools.errors import UserError

#: ``C`` values the cross-validation chooses from.
HEAD_C_GRID: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0, 3.0)
#: Folds and seeds of the grouped cross-validation on the slice.
HEAD_FOLDS, HEAD_SEEDS = 5, 3
#: Bumped when the features or the choice rule change in a way the settings do not show.
HEAD_VERSION = "claim-head-v1"
#: The grid choice compares the table's figures as it records them, rounded to 4 decimals.
CHOICE = ChoiceRule(decimals=4)


def _cv(X: np.ndarray, y: np.ndarray, groups: np.ndarray, *, c: float, objective: str, seed: int) -> tuple[float, float]:
    from averitec_tools.baselines._run.claim_prior import group_folds

    fold = group_folds(groups, folds=HEAD_FOLDS, seed=seed)
    pred = np.zeros(len(y), dtype=int)
    for f in np.unique(fold):
        fit = fold != f
        _two_labels(y[fit])
        head = fit_head(X[fit], y[fit], names=HEAD_FEATURES, groups=groups[fit], c=c, objective=objective, seed=seed)
        pred[~fit] = head.decide(X[~fit])[0]
    return float(np.mean(pred == y)), macro_f1_index(y, pred)


def _two_labels(y: np.ndarray) -> None:
    """Refuse, in one line, a slice (or a cross-validation fold of it) that holds one label only:
    no head can be fitted on it (a training set too small for the claim head)."""
    if len(np.unique(y)) < 2:
        raise UserError(f"the decision slice is too small for the claim head: {len(y)} claims of one label "
                        "in a cross-validation fold", hint="use more training claims, or decision.head: none")


def choose_head(X: np.ndarray, y: np.ndarray, groups: np.ndarray, *, probe_accuracy: float) -> dict[str, Any]:
    """The (C, objective) the grouped cross-validation picks (see the module docs) and its table."""
    rows: list[dict[str, Any]] = []
    for c, objective in itertools.product(HEAD_C_GRID, OBJECTIVES):
        runs = [_cv(X, y, groups, c=c, objective=objective, seed=s) for s in range(HEAD_SEEDS)]
        rows.append({"c": c, "objective": objective, "accuracy": round(float(np.mean([a for a, _ in runs])), 4),
                     "macro_f1": round(float(np.mean([m for _, m in runs])), 4)})
    chosen, ok = CHOICE.choose(rows, probe_accuracy=probe_accuracy)
    best = rows[chosen]
    rule = "max macro-F1 with accuracy >= the probe's" if ok else "max accuracy (none reached the probe's)"
    return {"c": best["c"], "objective": best["objective"], "rule": rule, "probe_accuracy": round(probe_accuracy, 4),
            "folds": HEAD_FOLDS, "seeds": HEAD_SEEDS, "grid": rows}


def fit_slice_head(*, prior: np.ndarray, claim_probs: Sequence[np.ndarray], gold: Sequence[int],
                   texts: Sequence[str], articles: Sequence[str | None], rule: str) -> dict[str, Any]:
    """Choose and fit the head on the slice; the result (JSON-ready) for the decision cache and summary."""
    from averitec_tools.baselines._run.claim_prior import claim_groups

    X, y = head_features(prior, claim_probs, rule=rule), np.asarray(gold, dtype=int)
    groups = claim_groups(list(texts), list(articles))
    probe_pred = np.asarray(prior).argmax(axis=1)
    chosen = choose_head(X, y, groups, probe_accuracy=float(np.mean(probe_pred == y)))
    head = fit_head(X, y, names=HEAD_FEATURES, groups=groups, c=chosen["c"], objective=chosen["objective"],
                    folds=HEAD_FOLDS)
    return {"version": HEAD_VERSION, "model": head.to_dict(), "choice": chosen,
            "slice_probe": {"accuracy": round(float(np.mean(probe_pred == y)), 4),
                            "macro_f1": round(macro_f1_index(y, probe_pred), 4)}}


__all__ = ["HEAD_C_GRID", "HEAD_VERSION", "choose_head", "fit_slice_head"]
