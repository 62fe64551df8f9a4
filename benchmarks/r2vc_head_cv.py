"""Choose offline-minilm's claim-level verdict head on training claims: cross-validation on the calibration slice.

The head (``averitec_tools.baselines._run.claim_head``) reads the claim-only probe's
log-probabilities (out of fold for the slice's training claims,
``baselines._run.claim_prior``) and, optionally, the NLI statistics of the claim's
retrieved pool (``stages/calibration/pool_features.py``). Each variant is fitted on 4/5 of
the calibration slice (whole claim groups: normalised twins and one fact-checking
article's claims together) and scored on the rest, for ``--seeds`` seeded 5-fold
splits; the figures are the means over seeds of the pooled held-out folds. Dev and the
pseudo-test are not read. Replays the slice's stored pools (no NLI inference: any
offline-minilm run builds them).

Rows: the probe alone (its out-of-fold arg-max), the head on the prior alone, on the
pool alone and on both, each with the offsets objectives; ``gap`` is the covered
accuracy at ``--coverage`` (the claims with the highest head confidence) minus the
label-prior selector's at the same coverage (majority label first, by confidence), in
points.

``offline-minilm`` now decides with this head (``offline.verdict_head: prior+pool``): its
build runs the same grouped cross-validation over ``offline.head_c_grid`` and
``offline.head_objectives`` (``offline/head.py``) and records the grid in the run summary's
``fitted.verdict_head``; this script adds the probe-only, prior-only and pool-only rows and
the paper-style rules fitted on the same folds (``--rules``).

Usage (AVERITEC_DATA_DIR set)::

    python benchmarks/r2vc_head_cv.py --seeds 3 --c 0.1 1.0
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import OBJECTIVES, fit_head, macro_f1_index
from averitec_tools.baselines._run.claim_prior import claim_groups, fitted_prior, group_folds
from averitec_tools.baselines.r2vc.config import resolve_config
from averitec_tools.baselines.r2vc.offline.data import data_dir, load_dev
from averitec_tools.baselines.r2vc.stages.calibration.pool_features import (
    POOL_FEATURES,
    pool_features,
)
from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import PRIOR_FEATURES
from averitec_tools.labels import AVERITEC_LABELS

REFUTED = AVERITEC_LABELS.index("Refuted")


def slice_table() -> dict[str, Any]:
    """The slice's prior and pool features, gold labels and claim groups (builds/loads offline-minilm)."""
    from r2vc_slice_cv import Slice  # the built pipeline and the slice's candidate store

    base = resolve_config("offline-minilm").effective()
    sl = Slice(base)
    store = sl.pipeline(base).candidate_store
    train_path = data_dir() / "averitec" / "train.json"
    dev = load_dev(data_dir() / "averitec" / "dev.json")
    prior = fitted_prior(train_path=train_path, scored=[c.claim for c in dev],
                         pseudo_test_claims=base.offline.pseudo_test_claims)
    train = load_dev(train_path)
    index = [int(str(c.claim_id).split(":")[1]) for c in sl.claims]
    pools = [store.get(c) for c in sl.claims]
    return {
        "prior": np.log(np.clip(prior.training_proba(index), 1e-12, None)),
        "pool": np.stack([pool_features(p.probs, pool=base.retrieval.top_m) for p in pools]),
        "gold": np.array([AVERITEC_LABELS.index(str(train[i].label)) for i in index]),
        "groups": claim_groups([train[i].claim for i in index], [train[i].fact_checking_article for i in index]),
    }


def label_prior_covered(pred: np.ndarray, conf: np.ndarray, right: np.ndarray, n_accept: int) -> float:
    """Covered accuracy of the label-prior selector: majority-label claims first, by confidence."""
    majority = np.bincount(pred, minlength=len(AVERITEC_LABELS)).argmax()
    order = np.lexsort((-conf, pred != majority))
    return float(right[order[:n_accept]].mean())


def _rules_fold(sl: Any, fit: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """offline-minilm's paper-style decision (y_NLI thresholds, SLC, gates, Conflicting rule) fitted on
    the ``fit`` claims: the ``test`` claims' ungated labels and π."""
    from r2vc_slice_cv import _fit_half, _score_half

    claims = np.array(sl.claims, dtype=object)
    rows = _score_half(sl, _fit_half(sl, sl.base, list(claims[fit])), list(claims[test]))  # (gold, label, covered, π)
    if len(rows) != int(test.sum()):
        raise RuntimeError("a slice claim without candidates: the rows no longer line up with the claims")
    return np.array([AVERITEC_LABELS.index(r[1]) for r in rows]), np.array([r[3] for r in rows])


def evaluate(t: dict[str, Any], variant: dict[str, Any], *, seed: int, coverage: float,
             sl: Any = None) -> dict[str, float]:
    """One seeded 5-fold split: the pooled held-out folds' figures."""
    gold = t["gold"]
    fold = group_folds(t["groups"], folds=5, seed=seed)
    pred, conf = np.zeros(len(gold), dtype=int), np.zeros(len(gold))
    for f in np.unique(fold):
        fit, test = fold != f, fold == f
        if variant["features"] == "rules":
            pred[test], conf[test] = _rules_fold(sl, fit, test)
            continue
        if variant["features"] == "probe":
            p = np.exp(t["prior"][test])
            pred[test], conf[test] = p.argmax(1), p.max(1)
            continue
        parts = {"prior": ["prior"], "pool": ["pool"], "prior+pool": ["prior", "pool"]}[variant["features"]]
        X = np.hstack([t[k] for k in parts])
        names = tuple(itertools.chain(*[PRIOR_FEATURES if k == "prior" else POOL_FEATURES for k in parts]))
        head = fit_head(X[fit], gold[fit], names=names, groups=t["groups"][fit], c=variant["c"],
                        objective=variant["objective"], seed=seed)
        pred[test], conf[test] = head.decide(X[test])
    right = pred == gold
    n_accept = int(round(coverage * len(gold)))
    covered = float(right[np.argsort(-conf, kind="stable")[:n_accept]].mean())
    return {"acc": float(right.mean()), "macro_f1": macro_f1_index(gold, pred),
            "covered_acc": covered, "gap_points": 100 * (covered - label_prior_covered(pred, conf, right, n_accept)),
            "predicted": np.bincount(pred, minlength=4).tolist()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--c", type=float, nargs="+", default=[1.0])
    ap.add_argument("--coverage", type=float, default=0.7)
    ap.add_argument("--table", type=Path, help="read the slice's features from this .npz, or write them there")
    ap.add_argument("--features", nargs="+", default=["prior", "pool", "prior+pool"],
                    choices=["prior", "pool", "prior+pool"])
    ap.add_argument("--rules", action="store_true",
                    help="also the paper-style decision rules offline-minilm fits now, fitted on the same folds")
    ap.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), choices=OBJECTIVES)
    args = ap.parse_args()
    if args.table is not None and args.table.is_file():
        with np.load(args.table) as z:
            t = {k: z[k] for k in z.files}
    else:
        t = slice_table()
        if args.table is not None:
            np.savez(args.table, **t)
    print(json.dumps({"slice_claims": len(t["gold"]), "labels": np.bincount(t["gold"], minlength=4).tolist()}))
    sl = None
    if args.rules:
        from r2vc_slice_cv import Slice

        sl = Slice(resolve_config("offline-minilm").effective())
    variants = [{"features": "probe"}] + ([{"features": "rules"}] if args.rules else []) + [
        {"features": f, "c": c, "objective": o}
        for f, c, o in itertools.product(args.features, args.c, args.objectives)]
    for v in variants:
        res = [evaluate(t, v, seed=s, coverage=args.coverage, sl=sl) for s in range(args.seeds)]
        mean = {k: round(float(np.mean([r[k] for r in res])), 4) for k in ("acc", "macro_f1", "covered_acc",
                                                                           "gap_points")}
        print(json.dumps({"variant": v, **mean, "predicted_seed0": res[0]["predicted"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
