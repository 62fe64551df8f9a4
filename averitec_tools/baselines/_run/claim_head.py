"""A claim-level verdict head: the four AVeriTeC labels from a claim's prior and its evidence.

Both offline baselines end in one (issue 37): a multinomial logistic regression over the
claim-only probe's log-probabilities (:mod:`.claim_prior`, out of fold for training
claims) and the baseline's own features of the evidence it retrieved for the claim,
fitted on training claims whose evidence was retrieved the way a scored claim's is — so
the head learns how much the evidence says beside the prior, and falls back to the prior
where it says nothing. Features are standardised with the fit data's mean and scale.

Per-label log offsets (``b``, Refuted fixed at 0) are added before the arg-max; they are
fitted on out-of-fold head probabilities (:func:`fit_offsets`), by ``objective``:

* ``none`` — no offsets (the arg-max of the probabilities: the most accurate label);
* ``macro-f1`` — the offsets maximising macro-F1;
* ``macro-f1-keep-accuracy`` — the offsets maximising macro-F1 among those whose accuracy
  is at least the arg-max's (minority labels only where they cost no accuracy).

Example:
    >>> X = np.array([[2.0, 0.0], [1.5, 0.1], [0.0, 2.0], [0.1, 1.5]] * 5)
    >>> y = np.array([0, 0, 1, 1] * 5)
    >>> head = fit_head(X, y, names=("a", "b"), groups=np.arange(20), c=1.0, objective="none")
    >>> head.decide(np.array([[2.0, 0.0], [0.0, 2.0]]))[0].tolist()
    [0, 1]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.verdict_head import softmax_rows

#: ``objective`` values of :func:`fit_offsets` (see the module docs).
OBJECTIVES: tuple[str, ...] = ("none", "macro-f1", "macro-f1-keep-accuracy")
#: Offsets tried for each label but Refuted (its offset stays 0: only differences matter).
OFFSET_GRID: tuple[float, ...] = tuple(round(float(x), 2) for x in np.arange(-1.0, 3.01, 0.25))
REFUTED = AVERITEC_LABELS.index("Refuted")


def macro_f1_index(gold: np.ndarray, pred: np.ndarray, n_labels: int = len(AVERITEC_LABELS)) -> float:
    """Macro-F1 over ``n_labels`` label indices (a label neither gold nor predicted counts 0).

    Example:
        >>> round(macro_f1_index(np.array([0, 1, 2, 3]), np.array([0, 1, 1, 3])), 4)
        0.6667
    """
    conf = np.bincount(gold * n_labels + pred, minlength=n_labels * n_labels).reshape(n_labels, n_labels)
    tp, denom = np.diag(conf), conf.sum(0) + conf.sum(1)
    return float(np.mean(np.where(tp > 0, 2 * tp / np.maximum(denom, 1), 0.0)))


def fit_offsets(proba: np.ndarray, gold: np.ndarray, *, objective: str,
                grid: Sequence[float] = OFFSET_GRID) -> np.ndarray:
    """Per-label log offsets for ``objective`` on (out-of-fold) probabilities; ties: the smallest total.

    Example:
        >>> p = np.array([[0.3, 0.7, 0.0, 0.0], [0.2, 0.8, 0.0, 0.0], [0.1, 0.9, 0.0, 0.0]])
        >>> fit_offsets(p, np.array([0, 1, 1]), objective="macro-f1", grid=(0.0, 0.5, 1.0)).tolist()
        [1.0, 0.0, 0.0, 0.0]
    """
    n = proba.shape[1]
    zero = np.zeros(n)
    if objective == "none":
        return zero
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    logp = np.log(np.clip(proba, 1e-12, None))
    floor = float(np.mean(logp.argmax(1) == gold)) if objective == "macro-f1-keep-accuracy" else -1.0
    others = [k for k in range(n) if k != REFUTED]
    best: tuple[float, float] = (macro_f1_index(gold, logp.argmax(1), n), 0.0)
    offsets = zero
    for values in itertools.product(grid, repeat=len(others)):
        b = zero.copy()
        b[others] = values
        pred = (logp + b).argmax(1)
        if float(np.mean(pred == gold)) + 1e-12 < floor:
            continue
        cand = (round(macro_f1_index(gold, pred, n), 10), -float(np.abs(b).sum()))
        if cand > best:
            best, offsets = cand, b
    return offsets


@dataclass(frozen=True)
class ClaimHead:
    """A fitted head: ``p = softmax(W z + c)``, ``z = (x − mean) / scale``; label = argmax(log p + offsets)."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    offsets: np.ndarray
    c: float
    labels: tuple[str, ...] = AVERITEC_LABELS
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    def proba(self, X: np.ndarray) -> np.ndarray:
        """``(n, n_labels)`` probabilities of feature rows."""
        z = (np.asarray(X, dtype=np.float64).reshape(-1, len(self.features)) - self.mean) / self.scale
        return np.asarray(softmax_rows(z @ self.coef.T + self.intercept))

    def decide(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(label index, the head's probability of that label) of each row."""
        p = self.proba(X)
        pick = (np.log(np.clip(p, 1e-12, None)) + self.offsets).argmax(axis=1)
        return pick, p[np.arange(len(p)), pick]

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(self.features), "mean": self.mean.tolist(), "scale": self.scale.tolist(),
                "coef": self.coef.tolist(), "intercept": self.intercept.tolist(), "offsets": self.offsets.tolist(),
                "c": self.c, "labels": list(self.labels), "info": self.info}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ClaimHead:
        arr = {k: np.asarray(raw[k], dtype=np.float64) for k in ("mean", "scale", "coef", "intercept", "offsets")}
        return cls(features=tuple(raw["features"]), c=float(raw["c"]), labels=tuple(raw["labels"]),
                   info=dict(raw.get("info", {})), **arr)


@dataclass(frozen=True)
class ChoiceRule:
    """How a baseline picks its head's (``C``, objective) from the cross-validation grid: the
    highest mean macro-F1 among the settings whose mean accuracy is at least the claim-only
    probe's; where none is, the most accurate setting. Ties go to the first row in grid order.

    Attributes:
        decimals: Compare the figures rounded to this many decimals (the AVeriTeC baseline
            compares its table as it prints it, 4 decimals: settings that differ past them tie);
            ``None``: unrounded (R2VC).
        tolerance: Accuracy slack against the probe's (R2VC: ``1e-12``, float noise of equal means).

    Example:
        >>> rows = [{"accuracy": 0.7, "macro_f1": 0.41231}, {"accuracy": 0.7, "macro_f1": 0.41234}]
        >>> ChoiceRule().choose(rows, probe_accuracy=0.6), ChoiceRule(decimals=4).choose(rows, probe_accuracy=0.6)
        ((1, True), (0, True))
        >>> ChoiceRule().choose(rows, probe_accuracy=0.8)  # none as accurate as the probe: the most accurate
        (0, False)
    """

    decimals: int | None = None
    tolerance: float = 0.0

    def _figure(self, row: dict[str, Any], key: str) -> float:
        value = float(row[key])
        return value if self.decimals is None else round(value, self.decimals)

    def choose(self, rows: Sequence[dict[str, Any]], *, probe_accuracy: float) -> tuple[int, bool]:
        """(index of the chosen row, whether any row was as accurate as the probe)."""
        keep = [i for i, r in enumerate(rows) if self._figure(r, "accuracy") + self.tolerance >= probe_accuracy]
        if keep:
            return max(keep, key=lambda i: self._figure(rows[i], "macro_f1")), True
        return max(range(len(rows)), key=lambda i: self._figure(rows[i], "accuracy")), False


def _fit_raw(X: np.ndarray, y: np.ndarray, *, names: Sequence[str], c: float, n_labels: int) -> ClaimHead:
    from sklearn.linear_model import LogisticRegression

    from averitec_tools.baselines._run.claim_prior import ABSENT

    mean = X.mean(axis=0)
    std = X.std(axis=0)
    scale = np.where(std > 1e-12, std, 1.0)
    model = LogisticRegression(C=c, max_iter=3000).fit((X - mean) / scale, y)
    coef, intercept = np.zeros((n_labels, X.shape[1])), np.full(n_labels, ABSENT)
    binary = len(model.classes_) == 2
    coef[model.classes_] = np.vstack([np.zeros_like(model.coef_), model.coef_]) if binary else model.coef_
    intercept[model.classes_] = [0.0, model.intercept_[0]] if binary else model.intercept_
    return ClaimHead(features=tuple(names), mean=mean, scale=scale, coef=coef, intercept=intercept,
                     offsets=np.zeros(n_labels), c=c)


def out_of_fold_head_proba(X: np.ndarray, y: np.ndarray, *, names: Sequence[str], groups: np.ndarray, c: float,
                           folds: int = 5, seed: int = 0, n_labels: int = len(AVERITEC_LABELS)) -> np.ndarray:
    """Each row's head probabilities from a head fitted without its fold (whole groups per fold)."""
    from averitec_tools.baselines._run.claim_prior import group_folds

    fold = group_folds(groups, folds=folds, seed=seed)
    out = np.zeros((len(y), n_labels))
    for f in np.unique(fold):
        fit = fold != f
        out[~fit] = _fit_raw(X[fit], y[fit], names=names, c=c, n_labels=n_labels).proba(X[~fit])
    return out


def fit_head(X: np.ndarray, y: np.ndarray, *, names: Sequence[str], groups: np.ndarray, c: float = 1.0,
             objective: str = "none", folds: int = 5, seed: int = 0,
             labels: Sequence[str] = AVERITEC_LABELS, offset_rows: np.ndarray | None = None) -> ClaimHead:
    """Fit the head on every row, its offsets for ``objective`` on out-of-fold probabilities.

    ``offset_rows``: a mask of the rows the offsets are fitted on (default: every row).
    """
    X = np.asarray(X, dtype=np.float64)
    head = _fit_raw(X, y, names=names, c=c, n_labels=len(labels))
    offsets = head.offsets
    if objective != "none":
        oof = out_of_fold_head_proba(X, y, names=names, groups=groups, c=c, folds=folds, seed=seed,
                                     n_labels=len(labels))
        rows = np.ones(len(y), dtype=bool) if offset_rows is None else np.asarray(offset_rows, dtype=bool)
        offsets = fit_offsets(oof[rows], y[rows], objective=objective)
    return ClaimHead(features=head.features, mean=head.mean, scale=head.scale, coef=head.coef,
                     intercept=head.intercept, offsets=offsets, c=c, labels=tuple(labels),
                     info={"n": int(len(y)), "objective": objective, "folds": folds, "seed": seed,
                           "label_counts": {lab: int((y == i).sum()) for i, lab in enumerate(labels)}})


__all__ = ["OBJECTIVES", "OFFSET_GRID", "ChoiceRule", "ClaimHead", "fit_head", "fit_offsets", "macro_f1_index",
           "out_of_fold_head_proba"]
