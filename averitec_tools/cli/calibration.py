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
from typing import Any

from averitec_tools.argtypes import LEVEL, NON_NEGATIVE, POSITIVE, SEED, UNIT, number
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.cli._profile_scores import add_profile_argument, print_report


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "calibration", doc=__doc__, func=run,
                         help="calibration (Brier, ECE, reliability) and selective prediction (AURC) of a submission")
    parser.add_argument("predictions", help="submission file; items carry a 'confidence' field")
    parser.add_argument("references", help="gold file")
    add_profile_argument(parser)
    add_json_flag(parser)
    parser.add_argument("--plot", metavar="DIR", help="write reliability_diagram.png and risk_coverage.png here")
    parser.add_argument("--n-bins", type=POSITIVE, default=15, help="calibration bins (default 15)")
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
    parser.add_argument("--threshold", type=UNIT, default=0.60,
                        help="confidence threshold for selective accuracy (default 0.60, R2VC's τ_cal)")
    parser.add_argument("--target-risk", type=UNIT, default=0.10,
                        help="report the largest coverage with risk ≤ this (default 0.10)")
    parser.add_argument("--target-coverage", type=number(0, 1, low_open=True), default=0.80,
                        help="report the risk at this coverage (default 0.80)")
    parser.add_argument("--n-resamples", type=NON_NEGATIVE, default=1000,
                        help="bootstrap resamples for confidence intervals; 0 disables them (default 1000)")
    parser.add_argument("--ci-method", choices=("percentile", "BCa", "basic"), default="percentile",
                        help="bootstrap interval method (default percentile)")
    parser.add_argument("--confidence-level", type=LEVEL, default=0.95, help="CI level (default 0.95)")
    parser.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--metric", action="append", default=[], metavar="SPEC",
                        help="also compute this registry metric of confidence against correctness, by its "
                             "string form, e.g. 'ece(n_bins=10,strategy=quantile)' or "
                             "'risk-at-coverage(coverage=0.5)' (repeatable)")


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _headline_lines(report: dict[str, Any]) -> list[str]:
    """The files, the claims analysed and each calibration figure with its interval."""
    ci = report["ci"] or {}

    def line(name: str, key: str) -> str:
        text = f"  {name:<22}{_fmt(report[key])}"
        if key in ci:
            c = ci[key]
            text += f"   [{_fmt(c['low'])}, {_fmt(c['high'])}] {c['confidence_level']:.0%} CI"
        return text

    return [
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


def _selective_lines(report: dict[str, Any]) -> list[str]:
    """Selective prediction at τ, coverage at the target risk, risk at the target coverage, multiclass figures."""
    sel, car, rac = report["selective"], report["coverage_at_risk"], report["risk_at_coverage"]
    out = [
        f"  selective @ τ={sel['threshold']:g}: coverage {_fmt(sel['coverage'])}, "
        f"accuracy {_fmt(sel['accuracy'])} ({sel['n_covered']} claims)",
        f"  coverage @ risk ≤ {car['target_risk']:g}: {_fmt(car['coverage'])}",
        f"  risk @ coverage ≥ {rac['target_coverage']:g}: {_fmt(rac['risk'])} (coverage {_fmt(rac['coverage'])})",
    ]
    if report["multiclass"] and "skipped" in report["multiclass"]:
        out.append(f"  multiclass Brier/ECE skipped: {report['multiclass']['skipped']}")
    elif report["multiclass"]:
        mc = report["multiclass"]
        out.append(
            f"  multiclass Brier {_fmt(mc['brier'])} (½-scaled {_fmt(mc['brier_scaled_by_half'])}), "
            f"classwise ECE {_fmt(mc['ece_classwise'])}"
        )
    return out


def _print_text(report: dict[str, Any]) -> None:
    out = [*_headline_lines(report), *_selective_lines(report)]
    cls, abst = report["abstention"]["class"], report["abstention"]["abstain"]
    out.append(f"  abstain labels as a class:  accuracy {_fmt(cls['accuracy'])}, macro-F1 {_fmt(cls['macro_f1'])}")
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
    for spec, value in report["metrics"].items():
        out.append(f"  {spec:<22}{_fmt(value)}")
    for path in (report["plots"] or {}).values():
        out.append(f"  wrote {path}")
    out.append(f"  signature: {report['signature']}")
    print("\n".join(out))


def run(args: argparse.Namespace) -> int:
    from averitec_tools.scoring.calibration import calibration_report

    report = calibration_report(
        predictions=args.predictions, references=args.references, profile=args.profile, n_bins=args.n_bins,
        strategy=args.strategy, abstain_labels=args.abstain_label, abstention_mode=args.abstention_mode,
        drop_missing_confidence=args.drop_missing_confidence, threshold=args.threshold,
        target_risk=args.target_risk, target_coverage=args.target_coverage, n_resamples=args.n_resamples,
        ci_method=args.ci_method, confidence_level=args.confidence_level, seed=args.seed, plot_dir=args.plot,
        metrics=args.metric,
    )
    return print_report(report.to_dict(), as_json=args.json, text=_print_text)


__all__ = ["add_parser", "run"]
