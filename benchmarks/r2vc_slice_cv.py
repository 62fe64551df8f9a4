"""Choose the offline R2VC decision rules on training claims: 2-fold cross-validation on the calibration slice.

Each variant (candidate selection, label indicators in the calibrator, evidence regimes,
the Conflicting rule, the gates' target coverage) is fitted on one half of the
calibration slice's 400 training claims — y_NLI thresholds (per regime), calibrator,
out-of-fold gates, Conflicting rule — and scored on the other half, for ``--seeds``
random halvings; the figures are the means over seeds of the pooled held-out halves.
Dev and the pseudo-test are not read: this is how ``offline-minilm``'s decision settings
were chosen (docs/r2vc.md, "Decision rules"). Replays the slice's stored candidates
(no NLI inference; the slice store is built by any offline-minilm run).

Usage (AVERITEC_DATA_DIR set; the offline cache built)::

    python benchmarks/r2vc_slice_cv.py --select-by pi s_ver --label-features 1 0 --regimes 1 2 \\
        --conflict 1 0 --coverage 0.5 0.7 --seeds 3

Prints one JSON line per variant: ungated and paper-style gated macro-F1, accuracy, the
gates' coverage and covered accuracy, and the covered accuracy's gap to the label-prior
selector at the same coverage (points).
"""

from __future__ import annotations

import argparse
import itertools
import json
from dataclasses import replace
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.calibration_fit import calibration_examples
from averitec_tools.baselines.r2vc.config import R2VCConfig, resolve_config
from averitec_tools.baselines.r2vc.io.claims import read_claims
from averitec_tools.baselines.r2vc.offline import fit as slice_fit
from averitec_tools.baselines.r2vc.offline.corpus import offline_data
from averitec_tools.baselines.r2vc.offline.data import cache_root, default_claims_path
from averitec_tools.baselines.r2vc.offline.preset import build_offline
from averitec_tools.baselines.r2vc.offline.rules import apply_conflict_rule
from averitec_tools.baselines.r2vc.paper_scores import label_prior_selector
from averitec_tools.baselines.r2vc.request import BuildRequest
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import ClaimRules, pool_extremes
from averitec_tools.baselines.r2vc.stages.calibration.decision import choose_index
from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.label_metrics import f1_per_label, macro_f1

NEE = "Not Enough Evidence"


class Slice:
    """The built offline pipeline's NLI and retriever, and the calibration slice's claims and store."""

    def __init__(self, base: R2VCConfig) -> None:
        dev = read_claims(str(default_claims_path()))
        self.base = base
        self.pipe = build_offline(base, BuildRequest(claims=dev, progress=False))
        data = offline_data(base, progress=False, scored=[c.claim for c in dev])
        self.claims = data.plan.slice_claims(data.train)

    def pipeline(self, cfg: R2VCConfig, regimes: Any = None) -> Any:
        nli, retriever = self.pipe.verifier.nli, self.pipe.retriever
        store = slice_fit.open_slice_store(cfg, nli=nli, retriever=retriever,
                                           directory=cache_root(cfg) / "slice-candidates", replay_only=True)
        return slice_fit.nli_pipeline(cfg, nli=nli, retriever=retriever, store=store,
                                      rules=ClaimRules(regime_thresholds=regimes))


def _variant_config(base: R2VCConfig, v: dict[str, Any]) -> R2VCConfig:
    return replace(base, calibration=replace(base.calibration, select_by=v["select_by"],
                                             label_features=v["label_features"]),
                   offline=replace(base.offline, threshold_regimes=v["regimes"], conflict_rule=v["conflict"],
                                   target_coverage=v["coverage"]))


def _fit_half(sl: Slice, cfg0: R2VCConfig, train: list[Any]) -> dict[str, Any]:
    """Everything offline-minilm fits on the slice (the library's ``fit_decision``), fitted on ``train`` only."""
    store = sl.pipeline(cfg0).candidate_store
    fit = slice_fit.fit_decision(cfg0, nli=sl.pipe.verifier.nli, retriever=sl.pipe.retriever, claims=train,
                                 store=store)
    rule = fit.parts.get("conflict_rule")
    return {"cfg": fit.config, "regimes": fit.regimes, "cal": fit.calibrator, "gates": fit.parts["gates"],
            "rule": None if rule is None else rule.rule, "store": store}


def _score_half(sl: Slice, fit: dict[str, Any], test: list[Any]) -> list[tuple[str, str, bool, float]]:
    """(gold, ungated label, covered, π) of each held-out claim with candidates."""
    examples = calibration_examples(sl.pipeline(fit["cfg"], fit["regimes"]), claims=test)
    probs = {c.claim: np.asarray(fit["store"].get(c).probs).reshape(-1, 3) for c in test}
    cal, gates, out = fit["cal"], fit["gates"], []
    for e in examples:
        pi = cal.predict(e.features_for(cal))
        i = choose_index(pi, e.s_ver, select_by=fit["cfg"].calibration.select_by)
        label = apply_conflict_rule([e.labels[i]], [pool_extremes(probs[e.claim])], fit["rule"])[0]
        out.append((e.gold, label, bool(pi[i] >= gates.tau_cal and e.s_ver[i] >= gates.tau_ver), float(pi[i])))
    return out


def evaluate(sl: Slice, variant: dict[str, Any], *, seed: int) -> dict[str, Any]:
    """One seeded 2-fold split: the pooled held-out halves' figures."""
    cfg0 = _variant_config(sl.base, variant)
    fold = np.random.default_rng(seed).permutation(len(sl.claims)) % 2
    rows = []
    for f in (0, 1):
        train = [c for c, g in zip(sl.claims, fold, strict=True) if g != f]
        test = [c for c, g in zip(sl.claims, fold, strict=True) if g == f]
        rows += _score_half(sl, _fit_half(sl, cfg0, train), test)
    gold, ung, cov, pi = (list(x) for x in zip(*rows, strict=True))
    right = [g == u for g, u in zip(gold, ung, strict=True)]
    covered = [r for r, c in zip(right, cov, strict=True) if c]
    prior = label_prior_selector(ungated=ung, confidences=pi, correct=right, n_accept=len(covered))["covered_accuracy"]
    per = f1_per_label(gold=gold, predicted=ung, labels=AVERITEC_LABELS)
    gated = [u if c else NEE for u, c in zip(ung, cov, strict=True)]
    return {"ungated": macro_f1(gold=gold, predicted=ung, labels=AVERITEC_LABELS),
            "gated": macro_f1(gold=gold, predicted=gated, labels=AVERITEC_LABELS),
            "acc": float(np.mean(right)), "coverage": float(np.mean(cov)),
            "covered_acc": float(np.mean(covered)) if covered else 0.0,
            "gap_vs_prior_points": 100 * (float(np.mean(covered)) - prior) if covered and prior is not None else None,
            "per_label_f1": [round(x, 3) for x in per.values()]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--select-by", nargs="+", default=["pi"], choices=["pi", "s_ver"])
    parser.add_argument("--label-features", nargs="+", type=int, default=[1], choices=[0, 1])
    parser.add_argument("--regimes", nargs="+", type=int, default=[1])
    parser.add_argument("--conflict", nargs="+", type=int, default=[1], choices=[0, 1])
    parser.add_argument("--coverage", nargs="+", type=float, default=[0.7])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    sl = Slice(resolve_config("offline-minilm").effective())
    for s, lf, r, cf, cv in itertools.product(args.select_by, args.label_features, args.regimes, args.conflict,
                                              args.coverage):
        variant = {"select_by": s, "label_features": bool(lf), "regimes": r, "conflict": bool(cf), "coverage": cv}
        res = [evaluate(sl, variant, seed=seed) for seed in range(args.seeds)]
        mean = {k: round(float(np.mean([x[k] for x in res if x[k] is not None])), 4)
                for k in ("ungated", "gated", "acc", "coverage", "covered_acc", "gap_vs_prior_points")}
        print(json.dumps({"variant": variant, **mean, "per_label_f1_seed0": res[0]["per_label_f1"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
