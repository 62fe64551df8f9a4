"""``averitec calibration PREDICTIONS REFERENCES``: calibration and selective prediction.

Reads a submission in any scoring profile's format whose items carry a ``confidence``
(and optionally per-label ``probabilities``), scores it with the profile, and reports, for
top-label correctness (predicted label == gold label) against ``confidence``: accuracy,
Brier, ECE, MCE (reliability-diagram data), the risk–coverage curve, AURC, E-AURC,
selective accuracy at a threshold, coverage at a target risk, risk at a target coverage,
abstention-aware label metrics, and bootstrap confidence intervals. ``--plot DIR`` writes
``reliability_diagram.png`` and ``risk_coverage.png``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from averitec_tools.cli._calibration_inputs import (
    check_args,
    check_gold,
    confidence_claims,
    prescan,
)
from averitec_tools.cli._json import print_json
from averitec_tools.cli._profile_scores import add_profile_argument, score_with_profile
from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore


#: The files ``--plot DIR`` writes.
PLOT_FILES = ("reliability_diagram.png", "risk_coverage.png")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "calibration",
        help="calibration (Brier, ECE, reliability) and selective prediction (AURC) of a submission",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("predictions", help="submission file; items carry a 'confidence' field")
    parser.add_argument("references", help="gold file")
    add_profile_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--plot", metavar="DIR", help="write reliability_diagram.png and risk_coverage.png here")
    parser.add_argument("--n-bins", type=int, default=15, help="calibration bins (default 15)")
    parser.add_argument(
        "--strategy", choices=("uniform", "quantile"), default="uniform",
        help="equal-width (uniform, default) or equal-mass (quantile) bins",
    )
    parser.add_argument(
        "--abstain-label", action="append", metavar="LABEL",
        help="label meaning 'cannot decide' (repeatable; default: Uncertain, UNCERTAIN, NEI, "
        "NOT ENOUGH INFO, Not Enough Evidence)",
    )
    parser.add_argument(
        "--abstention-mode", choices=("class", "abstain"), default="class",
        help="class (default): abstain labels are an ordinary class everywhere; abstain: claims "
        "predicted with an abstain label are left out of the calibration/selective analysis",
    )
    parser.add_argument(
        "--drop-missing-confidence", action="store_true",
        help="leave out claims without a confidence instead of failing",
    )
    parser.add_argument("--threshold", type=float, default=0.60,
                        help="confidence threshold for selective accuracy (default 0.60, R2VC's τ_cal)")
    parser.add_argument("--target-risk", type=float, default=0.10,
                        help="report the largest coverage with risk ≤ this (default 0.10)")
    parser.add_argument("--target-coverage", type=float, default=0.80,
                        help="report the risk at this coverage (default 0.80)")
    parser.add_argument("--n-resamples", type=int, default=1000,
                        help="bootstrap resamples for confidence intervals; 0 disables them (default 1000)")
    parser.add_argument("--ci-method", choices=("percentile", "BCa", "basic"), default="percentile",
                        help="bootstrap interval method (default percentile)")
    parser.add_argument("--confidence-level", type=float, default=0.95, help="CI level (default 0.95)")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.set_defaults(func=run)


def _multiclass(
    claims: Sequence[ClaimScore], labels: Sequence[str], *, predictions: str, n_bins: int, strategy: str
) -> dict[str, Any] | None:
    """Multiclass Brier and classwise ECE when every claim has ``probabilities``.

    When only some claims have them, says so (``skipped``) instead of silently omitting it.
    """
    n_with = sum(c.probabilities is not None for c in claims)
    if not claims or n_with == 0:
        return None
    if n_with < len(claims):
        return {"skipped": f"only {n_with} of {len(claims)} claims have 'probabilities'"}
    from averitec_tools.metrics.brier import multiclass_brier_score
    from averitec_tools.metrics.ece import classwise_calibration_error

    classes = list(labels)
    for c in claims:
        for key in c.probabilities or {}:
            if key not in classes:
                classes.append(key)
    for c in claims:
        if c.gold_label not in classes:
            classes.append(str(c.gold_label))
    rows = []
    for c in claims:
        probs = c.probabilities or {}
        try:
            row = [float(probs.get(k, 0.0)) for k in classes]
        except (TypeError, ValueError):
            raise UserError(
                f"{predictions}: claim {c.claim_id!r}: probabilities must be numbers, got {dict(probs)!r}"
            ) from None
        total = sum(row)
        if any(not 0.0 <= p <= 1.0 for p in row) or not abs(total - 1.0) <= 1e-6:  # NaN fails
            raise UserError(
                f"{predictions}: claim {c.claim_id!r}: probabilities must be in [0, 1] and sum "
                f"to 1 (sum is {total:.6g})"
            )
        rows.append(row)
    gold = [str(c.gold_label) for c in claims]
    return {
        "classes": classes,
        "brier": multiclass_brier_score(probabilities=rows, labels_true=gold, classes=classes),
        "brier_scaled_by_half": multiclass_brier_score(
            probabilities=rows, labels_true=gold, classes=classes, scale_by_half=True
        ),
        "ece_classwise": classwise_calibration_error(
            probabilities=rows, labels_true=gold, classes=classes, n_bins=n_bins,
            strategy=strategy,  # type: ignore[arg-type]
        ),
    }


def _intervals(conf: Any, correct: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Bootstrap CIs of the headline numbers (all statistics vectorised over resamples)."""
    import numpy as np

    from averitec_tools.metrics.bootstrap import bootstrap_ci
    from averitec_tools.metrics.ece import calibration_errors_batched
    from averitec_tools.metrics.selective import aurc_batched

    def ece(c: Any, ok: Any, axis: int = -1) -> Any:
        return calibration_errors_batched(c, ok, n_bins=args.n_bins, strategy=args.strategy)[0]

    def mce(c: Any, ok: Any, axis: int = -1) -> Any:
        return calibration_errors_batched(c, ok, n_bins=args.n_bins, strategy=args.strategy)[1]

    statistics: dict[str, Any] = {
        "accuracy": lambda c, ok, axis=-1: np.mean(ok, axis=axis),
        "brier": lambda c, ok, axis=-1: np.mean((c - ok) ** 2, axis=axis),
        "ece": ece,
        "mce": mce,
        "aurc": lambda c, ok, axis=-1: aurc_batched(c, ok)[0],
        "e_aurc": lambda c, ok, axis=-1: aurc_batched(c, ok)[1],
    }
    data = [np.asarray(conf, dtype=np.float64), np.asarray(correct, dtype=np.float64)]
    return {
        name: bootstrap_ci(
            data=data, statistic=stat, vectorized=True, n_resamples=args.n_resamples,
            confidence_level=args.confidence_level, method=args.ci_method, seed=args.seed,
        ).to_dict()
        for name, stat in statistics.items()
    }


def compute_report(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``averitec calibration`` prints, as one JSON-ready dict."""
    import numpy as np

    from averitec_tools._version import __version__
    from averitec_tools.metrics.abstention import (
        DEFAULT_ABSTAIN_LABELS,
        abstention_mask,
        label_scores,
    )
    from averitec_tools.metrics.brier import brier_score
    from averitec_tools.metrics.ece import reliability_diagram
    from averitec_tools.metrics.selective import risk_coverage_curve, selective_accuracy

    check_args(args)
    prescan(args.predictions)
    if args.plot:
        from averitec_tools.outputs import check_output_dir

        check_output_dir(args.plot, option="--plot", inputs=[args.predictions, args.references], files=PLOT_FILES)
    result = score_with_profile(profile=args.profile, predictions=args.predictions, references=args.references)
    claims = list(result.per_claim)
    check_gold(claims, args.references)
    abstain_labels = tuple(args.abstain_label) if args.abstain_label else DEFAULT_ABSTAIN_LABELS

    gold_all = [str(c.gold_label) for c in claims]
    pred_all = [c.pred_label for c in claims]
    abstention = {
        mode: label_scores(
            gold=gold_all, predictions=pred_all, mode=mode, abstain_labels=abstain_labels,  # type: ignore[arg-type]
            labels=list(result.labels) or None,
        ).to_dict()
        for mode in ("class", "abstain")
    }

    n_excluded_abstain = 0
    if args.abstention_mode == "abstain":
        mask = abstention_mask(predictions=pred_all, abstain_labels=abstain_labels)
        n_excluded_abstain = int(mask.sum())
        claims = [c for c, abstained in zip(claims, mask, strict=True) if not abstained]
        if not claims:
            raise UserError(
                f"{args.predictions}: every prediction is an abstain label; nothing is left to "
                "calibrate in --abstention-mode abstain"
            )
    kept, n_missing = confidence_claims(
        claims, predictions=args.predictions, drop_missing=args.drop_missing_confidence
    )
    conf = np.array([float(c.confidence) for c in kept if c.confidence is not None], dtype=np.float64)
    correct = np.array([c.pred_label == c.gold_label for c in kept], dtype=bool)

    diagram = reliability_diagram(confidences=conf, correct=correct, n_bins=args.n_bins, strategy=args.strategy)
    curve = risk_coverage_curve(confidences=conf, correct=correct)
    sel = selective_accuracy(confidences=conf, correct=correct, threshold=args.threshold)
    at_risk = curve.point_for_risk(args.target_risk)
    at_cov = curve.point_for_coverage(args.target_coverage)

    signature = (
        f"calibration|profile:{args.profile}|correct:pred_label==gold_label"
        f"|bins:{args.n_bins}-{args.strategy}|abstention:{args.abstention_mode}"
        f"|coverage:confidence>=tau|aurc:distinct-thresholds"
        f"|ci:{args.ci_method}-{args.n_resamples}-seed{args.seed}-{args.confidence_level:g}"
        f"|version:{__version__}"
    )
    report: dict[str, Any] = {
        "profile": args.profile,
        "signature": signature,
        "profile_signature": result.signature,
        "predictions": str(args.predictions),
        "references": str(args.references),
        "n": int(conf.size),
        "n_claims": len(result.per_claim),
        "n_missing_confidence_dropped": n_missing,
        "n_abstentions_excluded": n_excluded_abstain,
        "accuracy": float(correct.mean()),
        "brier": brier_score(confidences=conf, correct=correct),
        "ece": diagram.ece,
        "mce": diagram.mce,
        "aurc": curve.aurc,
        "e_aurc": curve.e_aurc,
        "oracle_aurc": curve.oracle_aurc,
        "mean_confidence": float(conf.mean()),
        "selective": {
            "threshold": sel.threshold,
            "n_covered": sel.n_covered,
            "coverage": sel.coverage,
            "accuracy": sel.accuracy,
            "risk": sel.risk,
        },
        "coverage_at_risk": {
            "target_risk": args.target_risk,
            "coverage": 0.0 if at_risk is None else at_risk.coverage,
            "risk": None if at_risk is None else at_risk.risk,
            "threshold": None if at_risk is None else at_risk.threshold,
        },
        "risk_at_coverage": {
            "target_coverage": args.target_coverage,
            "risk": at_cov.risk,
            "coverage": at_cov.coverage,
            "threshold": at_cov.threshold,
        },
        "multiclass": _multiclass(
            kept, result.labels, predictions=args.predictions, n_bins=args.n_bins, strategy=args.strategy
        ),
        "abstention": {"abstain_labels": list(abstain_labels), **abstention},
        "reliability": diagram.to_dict(),
        "risk_coverage": curve.to_dict(),
        "ci": _intervals(conf, correct, args) if args.n_resamples > 0 else None,
        "plots": None,
    }
    if args.plot:
        from averitec_tools.metrics.plots import plot_reliability_diagram, plot_risk_coverage

        out = Path(args.plot)
        name = Path(args.predictions).name
        report["plots"] = {
            "reliability_diagram": str(plot_reliability_diagram(
                diagram=diagram, path=out / "reliability_diagram.png", title=f"Reliability diagram: {name}"
            )),
            "risk_coverage": str(plot_risk_coverage(
                curve=curve, path=out / "risk_coverage.png", title=f"Risk–coverage: {name}"
            )),
        }
    return report


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _print_text(report: dict[str, Any]) -> None:
    ci = report["ci"] or {}

    def line(name: str, key: str) -> str:
        text = f"  {name:<22}{_fmt(report[key])}"
        if key in ci:
            c = ci[key]
            text += f"   [{_fmt(c['low'])}, {_fmt(c['high'])}] {c['confidence_level']:.0%} CI"
        return text

    out = [
        f"{report['predictions']} vs {report['references']} (profile {report['profile']})",
        f"  claims analysed       {report['n']} of {report['n_claims']}"
        + (f" ({report['n_missing_confidence_dropped']} without confidence dropped)"
           if report["n_missing_confidence_dropped"] else "")
        + (f" ({report['n_abstentions_excluded']} abstentions excluded)"
           if report["n_abstentions_excluded"] else ""),
        line("accuracy", "accuracy"),
        line("Brier", "brier"),
        line(f"ECE ({report['reliability']['n_bins']} {report['reliability']['strategy']})", "ece"),
        line("MCE", "mce"),
        line("AURC", "aurc"),
        line("E-AURC", "e_aurc"),
        f"  {'AURC* (oracle)':<22}{_fmt(report['oracle_aurc'])}",
        f"  {'mean confidence':<22}{_fmt(report['mean_confidence'])}",
    ]
    sel = report["selective"]
    out.append(
        f"  selective @ τ={sel['threshold']:g}: coverage {_fmt(sel['coverage'])}, "
        f"accuracy {_fmt(sel['accuracy'])} ({sel['n_covered']} claims)"
    )
    car = report["coverage_at_risk"]
    out.append(f"  coverage @ risk ≤ {car['target_risk']:g}: {_fmt(car['coverage'])}")
    rac = report["risk_at_coverage"]
    out.append(
        f"  risk @ coverage ≥ {rac['target_coverage']:g}: {_fmt(rac['risk'])} "
        f"(coverage {_fmt(rac['coverage'])})"
    )
    if report["multiclass"] and "skipped" in report["multiclass"]:
        out.append(f"  multiclass Brier/ECE skipped: {report['multiclass']['skipped']}")
    elif report["multiclass"]:
        mc = report["multiclass"]
        out.append(
            f"  multiclass Brier {_fmt(mc['brier'])} (½-scaled {_fmt(mc['brier_scaled_by_half'])}), "
            f"classwise ECE {_fmt(mc['ece_classwise'])}"
        )
    ab = report["abstention"]
    cls, abst = ab["class"], ab["abstain"]
    out.append(
        f"  abstain labels as a class:  accuracy {_fmt(cls['accuracy'])}, macro-F1 {_fmt(cls['macro_f1'])}"
    )
    out.append(
        f"  abstain labels as abstention: coverage {_fmt(abst['coverage'])}, accuracy "
        f"{_fmt(abst['accuracy'])}, macro-F1 {_fmt(abst['macro_f1'])}"
    )
    out.append("  reliability bins (confidence → accuracy, count):")
    for b in report["reliability"]["bins"]:
        if b["count"]:
            out.append(
                f"    ({b['lower']:.3f}, {b['upper']:.3f}]  {b['confidence']:.3f} → "
                f"{b['accuracy']:.3f}  n={b['count']}"
            )
    if report["plots"]:
        for path in report["plots"].values():
            out.append(f"  wrote {path}")
    out.append(f"  signature: {report['signature']}")
    print("\n".join(out))


def run(args: argparse.Namespace) -> int:
    report = compute_report(args)
    if args.json:
        print_json(report)
    else:
        _print_text(report)
    return 0


__all__ = ["add_parser", "compute_report", "run"]
