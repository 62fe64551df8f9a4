"""``averitec compare A.json B.json REFERENCES``: paired significance tests of two systems.

Both submissions are scored with the same profile on the same references; claims are
aligned by id. For every metric that is a mean of per-claim values (the profile's per-claim
``values``) the per-claim values are resampled; accuracy and macro-F1 are recomputed from
the resampled (gold, predicted) label pairs. For each metric it prints A, B, the difference
A − B with its paired-bootstrap confidence interval, the p-value of the chosen test
(paired bootstrap or approximate randomisation), the effect size, and whether the
difference is significant at ``--alpha``. No correction for multiple comparisons is
applied: with many metrics, expect some false positives at α = 0.05.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from averitec_tools.cli._json import print_json
from averitec_tools.cli._profile_scores import add_profile_argument, score_with_profile
from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore, ProfileResult

LABEL_METRICS: tuple[str, ...] = ("accuracy", "macro_f1")

def check_metric_names(profile: str, names: Sequence[str] | None) -> None:
    """Reject an unknown --metric of a profile that declares its per-claim metrics, before
    anything is scored."""
    from averitec_tools.registry import Registry
    from averitec_tools.scoring.profiles import get_profile

    declared = get_profile(profile).per_claim_metrics
    if not names or not declared:
        return
    known = Registry.of_names(f"metric of profile {profile!r}", (*declared, *LABEL_METRICS))
    for name in names:
        known.get(name)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="paired significance tests between two submissions on the same claims",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("a", metavar="A", help="submission of system A")
    parser.add_argument("b", metavar="B", help="submission of system B")
    parser.add_argument("references", help="gold file")
    add_profile_argument(parser)
    parser.add_argument(
        "--metric", action="append", metavar="NAME",
        help="compare only this metric (repeatable; default: every per-claim metric of the "
        "profile plus accuracy and macro_f1)",
    )
    parser.add_argument("--n-resamples", type=int, default=2000,
                        help="bootstrap resamples / randomisation rounds (default 2000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--test", choices=("bootstrap", "randomization"), default="bootstrap",
                        help="paired bootstrap (default) or approximate randomisation")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--confidence-level", type=float, default=0.95,
                        help="level of the CI of the difference (default 0.95)")
    parser.add_argument("--ci-method", choices=("percentile", "BCa", "basic"), default="percentile",
                        help="bootstrap interval method (default percentile)")
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.set_defaults(func=run)


def _align(res_a: ProfileResult, res_b: ProfileResult, path_a: str, path_b: str) -> list[tuple[ClaimScore, ClaimScore]]:
    by_id_b = {repr(c.claim_id): c for c in res_b.per_claim}
    ids_a = {repr(c.claim_id) for c in res_a.per_claim}
    for c in res_a.per_claim:
        if repr(c.claim_id) not in by_id_b:
            raise UserError(f"{path_b}: claim {c.claim_id!r} (present in {path_a}) is missing")
    for c in res_b.per_claim:
        if repr(c.claim_id) not in ids_a:
            raise UserError(f"{path_a}: claim {c.claim_id!r} (present in {path_b}) is missing")
    pairs = []
    for c in res_a.per_claim:
        other = by_id_b[repr(c.claim_id)]
        if c.gold_label != other.gold_label:
            raise UserError(
                f"claim {c.claim_id!r}: the profile gives different gold labels for {path_a} and "
                f"{path_b} ({c.gold_label!r} vs {other.gold_label!r})"
            )
        pairs.append((c, other))
    return pairs


def _value_keys(pairs: Sequence[tuple[ClaimScore, ClaimScore]]) -> tuple[list[str], dict[str, str]]:
    """Per-claim value keys usable for resampling, and those skipped with the reason.

    A key qualifies when every claim of both systems has a finite number under it.
    """
    import math
    from numbers import Real

    usable: list[str] = []
    skipped: dict[str, str] = {}
    for key in pairs[0][0].values:
        for pair in pairs:
            for claim in pair:
                value = claim.values.get(key)
                if value is None or isinstance(value, bool) or not isinstance(value, Real):
                    skipped[key] = f"claim {claim.claim_id!r} has no numeric per-claim value"
                elif not math.isfinite(float(value)):
                    skipped[key] = f"claim {claim.claim_id!r} has a non-finite per-claim value"
                if key in skipped:
                    break
            if key in skipped:
                break
        else:
            usable.append(key)
    return usable, skipped


def _labels(res_a: ProfileResult, res_b: ProfileResult, gold: Sequence[str]) -> list[str]:
    labels: list[str] = []
    for lab in (*res_a.labels, *res_b.labels, *sorted(set(gold))):
        if lab not in labels:
            labels.append(lab)
    return labels


def compute_comparison(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``averitec compare`` prints, as one JSON-ready dict."""
    from functools import partial

    import numpy as np

    from averitec_tools._version import __version__
    from averitec_tools.metrics.bootstrap import encode_label_pairs, macro_f1_of_codes, paired_test
    from averitec_tools.registry import Registry

    if args.n_resamples < 1:
        raise UserError(f"--n-resamples must be ≥ 1, got {args.n_resamples}")
    if not 0.0 < args.alpha < 1.0:
        raise UserError(f"--alpha must be in (0, 1), got {args.alpha}")
    if not 0.0 < args.confidence_level < 1.0:
        raise UserError(f"--confidence-level must be in (0, 1), got {args.confidence_level}")

    check_metric_names(args.profile, args.metric)
    res_a = score_with_profile(profile=args.profile, predictions=args.a, references=args.references)
    res_b = score_with_profile(profile=args.profile, predictions=args.b, references=args.references)
    pairs = _align(res_a, res_b, args.a, args.b)

    # name → (per-claim data of A, of B, vectorised statistic or None for the mean)
    available: dict[str, tuple[Any, Any, Any]] = {}
    value_keys, skipped = _value_keys(pairs)
    for key in value_keys:
        available[key] = (
            np.array([float(x.values[key]) for x, _ in pairs]),
            np.array([float(y.values[key]) for _, y in pairs]),
            None,
        )
    if all(x.gold_label is not None for x, _ in pairs):
        gold = [str(x.gold_label) for x, _ in pairs]
        if "accuracy" not in available:
            available["accuracy"] = (
                np.array([x.pred_label == x.gold_label for x, _ in pairs], dtype=np.float64),
                np.array([y.pred_label == y.gold_label for _, y in pairs], dtype=np.float64),
                None,
            )
        if "macro_f1" not in available:
            labels = _labels(res_a, res_b, gold)
            available["macro_f1"] = (
                encode_label_pairs(gold=gold, predictions=[x.pred_label for x, _ in pairs], labels=labels),
                encode_label_pairs(gold=gold, predictions=[y.pred_label for _, y in pairs], labels=labels),
                partial(macro_f1_of_codes, n_labels=len(labels)),
            )
    else:
        missing = next(x.claim_id for x, _ in pairs if x.gold_label is None)
        for name in LABEL_METRICS:
            skipped[name] = f"claim {missing!r} has no gold label"

    names = Registry[str](f"metric of profile {args.profile!r}")
    for name in (*available, *skipped):
        names.add(name, name)
    wanted = args.metric or list(available)
    for name in wanted:
        names.get(name)  # UserError with close-name suggestions
        if name in skipped:
            raise UserError(f"metric {name!r} cannot be compared: {skipped[name]}")

    results: dict[str, Any] = {}
    for name in dict.fromkeys(wanted):
        data_a, data_b, stat = available[name]
        res = paired_test(
            a=data_a, b=data_b, statistic=stat, test=args.test, n_resamples=args.n_resamples,
            confidence_level=args.confidence_level, method=args.ci_method, alpha=args.alpha,
            seed=args.seed,
        )
        results[name] = res.to_dict()

    signature = (
        f"compare|profile:{args.profile}|test:{args.test}|resamples:{args.n_resamples}"
        f"|seed:{args.seed}|alpha:{args.alpha:g}|ci:{args.ci_method}-{args.confidence_level:g}"
        f"|label_metrics:recomputed-from-resampled-labels|version:{__version__}"
    )
    return {
        "profile": args.profile,
        "signature": signature,
        "a": str(args.a),
        "b": str(args.b),
        "references": str(args.references),
        "n": len(pairs),
        "test": args.test,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "alpha": args.alpha,
        "metrics": results,
        "skipped": skipped,
    }


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _print_text(report: dict[str, Any]) -> None:
    rows = [("metric", "A", "B", "A−B", "CI of A−B", "p", "effect", "significant")]
    for name, r in report["metrics"].items():
        rows.append((
            name, _fmt(r["a"]), _fmt(r["b"]), f"{r['difference']:+.4f}",
            f"[{r['ci_low']:+.4f}, {r['ci_high']:+.4f}]", f"{r['p_value']:.4f}",
            "n/a" if r["effect_size"] is None else f"{r['effect_size']:+.3f}",
            "yes" if r["significant"] else "no",
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        f"A = {report['a']}",
        f"B = {report['b']}",
        f"{report['n']} claims, profile {report['profile']}, {report['test']} test, "
        f"{report['n_resamples']} resamples, α = {report['alpha']:g}",
    ]
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) if j == 0 else cell.rjust(w) for j, (cell, w) in enumerate(zip(row, widths, strict=True))))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    for name, why in report["skipped"].items():
        lines.append(f"skipped {name}: {why}")
    lines.append("effect: Cohen's d_z for per-claim means, δ/(√N·SE*) for macro-F1")
    lines.append(f"signature: {report['signature']}")
    print("\n".join(lines))


def run(args: argparse.Namespace) -> int:
    report = compute_comparison(args)
    if args.json:
        print_json(report)
    else:
        _print_text(report)
    return 0


__all__ = ["add_parser", "compute_comparison", "run"]
