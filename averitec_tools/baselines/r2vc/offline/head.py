"""The offline preset's verdict head, fitted on the calibration slice (training claims only).

``offline.verdict_head: prior+pool`` (:mod:`~averitec_tools.baselines.r2vc.stages.calibration.verdict_head`)
reads, for each slice claim, the claim-only probe's **out-of-fold** log-probabilities
(:meth:`~averitec_tools.baselines._run.claim_prior.PriorFit.training_proba`: no slice claim
is scored by a probe fitted on it) and the statistics of its pool, retrieved exactly as a
scored claim's is (own, article and sibling answers removed; the slice's candidate store).
:func:`choose_head` picks ``C`` (``offline.head_c_grid``) and the offsets objective
(``offline.head_objectives``) by grouped 5-fold cross-validation on the slice
(``offline.head_cv_seeds`` seeded splits; whole claim groups per fold): the highest mean
macro-F1 among the settings whose mean accuracy is at least the probe's own out-of-fold
accuracy on the same claims (none: the most accurate setting). The head is then fitted on
the whole slice and its gate ``tau`` is the out-of-fold confidence that accepts
``offline.target_coverage`` of the slice. Dev and the pseudo-test are never read;
:func:`check_unscored` refuses a slice that holds a scored claim's normalised twin.

Example:
    >>> rng = np.random.default_rng(0)
    >>> y = np.array([0, 1, 1, 1] * 10)
    >>> X = np.column_stack([np.log(np.where(y == 0, 0.6, 0.3)) + rng.normal(0, 0.1, 40), rng.normal(0, 1, 40)])
    >>> fit = choose_head(X, y, names=("p", "z"), groups=np.arange(40), probe=np.log(np.full((40, 4), 0.25)),
    ...                   c_grid=(1.0,), objectives=("none",), seeds=1, target_coverage=0.5)
    >>> fit.head.c, fit.info["chosen"]["objective"], fit.info["slice"]["coverage"] >= 0.5
    (1.0, 'none', True)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import ChoiceRule, ClaimHead, fit_head, macro_f1_index
from averitec_tools.baselines._run.claim_prior import group_folds
from averitec_tools.errors import UserError
from averitec_tools.labels import AVERITEC_LABELS

HEAD_VERSION = "r2vc-verdict-head-v1"
#: The grid choice compares unrounded means (a setting's accuracy may equal the probe's to float noise).
CHOICE = ChoiceRule(tolerance=1e-12)


@dataclass(frozen=True)
class HeadFit:
    """A head fitted on the slice, its gate and the record of the choice (``fitted.verdict_head``)."""

    head: ClaimHead
    tau: float
    info: dict[str, Any]


def out_of_fold(X: np.ndarray, y: np.ndarray, *, names: Sequence[str], groups: np.ndarray, c: float,
                objective: str, seed: int, offset_rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Each slice claim's (label, confidence) from a head fitted without its fold (5 grouped folds).

    ``offset_rows``: the rows whose out-of-fold probabilities fit the offsets (default: all).
    """
    fold = group_folds(groups, folds=5, seed=seed)
    pred, conf = np.zeros(len(y), dtype=int), np.zeros(len(y))
    rows = np.ones(len(y), dtype=bool) if offset_rows is None else offset_rows
    for f in np.unique(fold):
        fit, test = fold != f, fold == f
        head = fit_head(X[fit], y[fit], names=names, groups=groups[fit], c=c, objective=objective, seed=seed,
                        offset_rows=rows[fit])
        pred[test], conf[test] = head.decide(X[test])
    return pred, conf


def gate_for(conf: np.ndarray, *, target_coverage: float) -> float:
    """The largest confidence threshold accepting at least ``target_coverage`` of the claims.

    Example:
        >>> gate_for(np.array([0.9, 0.8, 0.7, 0.6]), target_coverage=0.5)
        0.8
    """
    if target_coverage >= 1.0 or not len(conf):
        return 0.0
    n = max(1, math.ceil(target_coverage * len(conf)))
    return float(np.sort(conf)[::-1][n - 1])


def _selective(pred: np.ndarray, conf: np.ndarray, gold: np.ndarray, tau: float) -> dict[str, float]:
    """Coverage and covered accuracy of the gate, and the label-prior selector's at that coverage."""
    from averitec_tools.baselines.r2vc.paper_scores import label_prior_selector

    right = pred == gold
    accepted = conf >= tau
    prior = label_prior_selector(ungated=pred.tolist(), confidences=conf.tolist(), correct=right.tolist(),
                                 n_accept=int(accepted.sum()))
    return {"coverage": float(accepted.mean()), "covered_accuracy": float(right[accepted].mean()),
            "label_prior_covered_accuracy": float(prior["covered_accuracy"] or 0.0)}


def choose_head(X: np.ndarray, y: np.ndarray, *, names: Sequence[str], groups: np.ndarray, probe: np.ndarray,
                c_grid: Sequence[float], objectives: Sequence[str], seeds: int, target_coverage: float,
                n_slice: int | None = None) -> HeadFit:
    """Choose ``C`` and the objective by grouped cross-validation, fit on every row, gate on out-of-fold confidence.

    ``probe``: the rows' prior log-probabilities (its arg-max is the accuracy to keep).
    ``n_slice``: only the first ``n_slice`` rows (the slice) are scored in the cross-validation
    and set the gate; the rows after them (``offline.head_extra_claims``) are only fitted on,
    in every fold (their groups' folds left out with the slice rows they share a group with).
    """
    test = np.arange(len(y)) < (len(y) if n_slice is None else n_slice)
    gold, probe_pred = y[test], np.asarray(probe)[test].argmax(1)
    probe_acc = float(np.mean(probe_pred == gold))
    table: list[dict[str, Any]] = []
    for c, objective in itertools.product(c_grid, objectives):
        runs = [tuple(a[test] for a in out_of_fold(X, y, names=names, groups=groups, c=c, objective=objective,
                                                   seed=s, offset_rows=test)) for s in range(seeds)]
        table.append({"c": float(c), "objective": objective,
                      "accuracy": float(np.mean([np.mean(p == gold) for p, _ in runs])),
                      "macro_f1": float(np.mean([macro_f1_index(gold, p) for p, _ in runs])), "runs": runs})
    chosen, keep = CHOICE.choose(table, probe_accuracy=probe_acc)
    best = table[chosen]
    pred, conf = best["runs"][0]
    tau = gate_for(conf, target_coverage=target_coverage)
    head = fit_head(X, y, names=names, groups=groups, c=best["c"], objective=best["objective"], offset_rows=test)
    rule = ("the highest mean macro-F1 among the settings whose mean accuracy is at least the probe's "
            "out-of-fold accuracy on the slice" if keep else "no setting kept the probe's accuracy: the most accurate")
    info = {"features": list(names), "c": best["c"], "objective": best["objective"], "tau": tau,
            "offsets": head.offsets.tolist(), "chosen": {k: best[k] for k in ("c", "objective")}, "rule": rule,
            "cross_validation": {"folds": 5, "seeds": seeds, "grouped": "normalised text and fact-checking article",
                                 "scored_on": "the slice claims", "fitted_on_extra_claims": int((~test).sum()),
                                 "probe": {"accuracy": probe_acc, "macro_f1": macro_f1_index(gold, probe_pred)},
                                 "grid": [{k: round(r[k], 4) if isinstance(r[k], float) else r[k]
                                           for k in ("c", "objective", "accuracy", "macro_f1")} for r in table]},
            "slice": {"claims": int(test.sum()), "target_coverage": target_coverage,
                      **_selective(pred, conf, gold, tau)},
            "fit_claims": int(len(y))}
    return HeadFit(head=head, tau=tau, info=info)


def check_unscored(slice_texts: Sequence[str], scored: Sequence[str]) -> None:
    """Refuse a fitting set holding a scored claim's normalised twin (the leak guard's rule, checked again).

    Example:
        >>> check_unscored(["A cat."], ["a dog"])
        >>> check_unscored(["A cat."], ["a  CAT"])
        Traceback (most recent call last):
        averitec_tools.errors.UserError: verdict head: slice claim 0 ('A cat.') is a scored claim's normalised twin
    """
    from averitec_tools.leakage.duplicates import train_duplicates

    twins = train_duplicates(train=list(slice_texts), scored=list(scored))
    if twins:
        i = sorted(twins)[0]
        raise UserError(f"verdict head: slice claim {i} ({slice_texts[i]!r}) is a scored claim's normalised twin")


def fit_slice_head(*, claims: Sequence[Any], pools: Sequence[np.ndarray | None], train: Sequence[Any], scored: Sequence[str],
                   prior: Any, pool: int, off: Any, cache_file: Path, n_slice: int | None = None) -> HeadFit:
    """The head of the slice ``claims`` (ids ``train:<i>``) with their stored ``pools``, kept at ``cache_file``.

    ``prior``: the :class:`~averitec_tools.baselines._run.claim_prior.PriorFit` (out-of-fold rows);
    ``off``: the offline settings (grid, objectives, seeds, target coverage); ``n_slice``: the
    first ``n_slice`` claims are the slice, the rest ``offline.head_extra_claims`` (see :func:`choose_head`).
    """
    from averitec_tools.baselines._run.claim_prior import claim_groups
    from averitec_tools.baselines._run.decision_fit import cached_fit
    from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import (
        HEAD_FEATURES,
        head_rows,
        log_proba,
    )

    check_unscored([c.claim for c in claims], scored)
    missing = [c.claim_id for c, p in zip(claims, pools, strict=True) if p is None]
    if missing:
        raise UserError(f"verdict head: fitting claim {missing[0]} is not in the slice's candidate store")
    index = [int(str(c.claim_id).split(":", 1)[1]) for c in claims]

    def make() -> HeadFit:
        probe = log_proba(prior.training_proba(index))
        X = head_rows(probe, [np.asarray(p).reshape(-1, 3) for p in pools if p is not None], pool=pool)
        y = np.array([AVERITEC_LABELS.index(str(train[i].label)) for i in index])
        groups = claim_groups([train[i].claim for i in index], [train[i].fact_checking_article for i in index])
        return choose_head(X, y, names=HEAD_FEATURES[off.verdict_head], groups=groups, probe=probe,
                           c_grid=off.head_c_grid, objectives=off.head_objectives, seeds=off.head_cv_seeds,
                           target_coverage=off.target_coverage, n_slice=n_slice)

    def write(fit: HeadFit, path: Path) -> None:
        import json

        from averitec_tools.jsonio import atomic_writer

        with atomic_writer(path) as fh:
            json.dump({"format": HEAD_VERSION, "head": fit.head.to_dict(), "tau": fit.tau, "info": fit.info}, fh)

    def read(path: Path) -> HeadFit:
        import json

        raw = json.loads(path.read_text(encoding="utf-8"))
        return HeadFit(head=ClaimHead.from_dict(raw["head"]), tau=float(raw["tau"]), info=raw["info"])

    return cached_fit(cache_file, make, read=read, write=write, read_back=True)


__all__ = ["HEAD_VERSION", "HeadFit", "check_unscored", "choose_head", "fit_slice_head", "gate_for", "out_of_fold"]
