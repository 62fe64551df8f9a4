"""``averitec meta-eval``: how well evidence scorers track people (the Ev2R study's ratings).

Reads the study's human ratings of AVeriTeC 2024 submissions and its per-item files from
``--data DIR`` (default: ``meta_eval/fc-evidence-evaluation`` under ``$AVERITEC_DATA_DIR``
or the download root, where ``averitec data download meta-eval`` puts them), recomputes
the study's 48 published correlations, and correlates every ``--scorer SPEC`` with each
human dimension (Spearman, Pearson, Kendall, claim-clustered bootstrap CIs).

Examples::

    averitec meta-eval --json
    averitec meta-eval --scorer hu-meteor --scorer minilm-qa-f1 --plot meta.png
    averitec meta-eval --scorer 'ev2r(url=http://127.0.0.1:8000/v1,model=llama-70b)' --lite 100
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from averitec_tools.argtypes import LEVEL, POSITIVE, SEED, count
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json

DATA_SUBDIR = "meta_eval/fc-evidence-evaluation"


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "meta-eval", doc=__doc__, func=run,
                         help="how well evidence scorers track human ratings (Ev2R study data), with CIs")
    parser.add_argument("--data", metavar="DIR", help=f"the study's files (default: <data root>/{DATA_SUBDIR})")
    parser.add_argument("--ratings", metavar="FILE.xlsx", help="the ratings workbook (default: DIR's)")
    parser.add_argument("--items", metavar="FILE.jsonl",
                        help="the per-item texts, one line per kept rating row (default: DIR's predictions_hmeteor.jsonl)")
    parser.add_argument("--scorer", action="append", metavar="SPEC",
                        help="evidence scorer spec (repeatable; default: hu-meteor, hu-meteor-study, meteor, "
                             "bleu, rouge, minilm-qa-f1); see docs/meta_eval.md")
    parser.add_argument("--resamples", type=POSITIVE, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    parser.add_argument("--confidence-level", type=LEVEL, default=0.95, metavar="L", help="default 0.95")
    parser.add_argument("--seed", type=SEED, default=0, help="bootstrap seed (default 0)")
    parser.add_argument("--lite", type=count(0, 500), default=0, metavar="N",
                        help="also report the lite-subset rule for N of 500 dev claims (team-ranking Kendall tau)")
    parser.add_argument("--no-reproduce", action="store_true", help="skip the 48 published figures")
    parser.add_argument("--plot", metavar="FILE.png", help="write the scorers x dimensions picture")
    add_json_flag(parser)


def _data_dir(arg: str | None, *, needed: bool = True) -> Path:
    if arg:
        return Path(arg)
    if not needed:
        return Path(".")
    from averitec_tools.loaders.locate import data_roots

    roots = data_roots()
    for root in roots:
        if (root / DATA_SUBDIR).is_dir():
            return root / DATA_SUBDIR
    raise UserError(f"no {DATA_SUBDIR} under {', '.join(map(str, roots))}",
                    hint="run `averitec data download meta-eval`, or pass --data DIR")


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return None if math.isnan(obj) or math.isinf(obj) else obj
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def _f(v: Any) -> str:
    return "  n/a " if v is None else f"{v:+.3f}"


def _print_text(report: dict[str, Any]) -> None:
    from averitec_tools.cli._tables import print_rows

    it = report["items"]
    print(f"{it['rated_rows_kept']} rated items, {it['claims']} claims, {it['teams']} teams; "
          f"CIs: {report['bootstrap']['level']:.0%} claim-clustered bootstrap, {report['bootstrap']['resamples']} resamples")
    if report["reproduction"]:
        worst = max(abs(r["reproduced"] - r["published"]) for r in report["reproduction"] if r["published"] is not None)
        print(f"study reproduction: {len(report['reproduction'])} published figures, largest difference {worst:.2e}")
    header = ("scorer", "dimension", "spearman", "95% CI", "pearson", "kendall", "n")
    rows = []
    for r in report["scorers"]:
        ci = r["ci"]["spearman"]
        rows.append((r["spec"], r["dimension"], _f(r["spearman"]), f"[{_f(ci['low'])}, {_f(ci['high'])}]",
                     _f(r["pearson"]), _f(r["kendall"]), str(r["n"])))
    print_rows(title="correlation with people (row-true join; blanks and judge failures left out)",
               header=header, rows=rows)
    for info in report["scorer_info"]:
        if info["details"]:
            print(f"{info['spec']}: {info['details']}")
    if "lite" in report:
        lite = report["lite"]
        for dim, d in lite["dimensions"].items():
            print(f"lite {lite['size']}/{lite['of']} ({lite['rule']}): team ranking by {dim}: Kendall tau "
                  f"{_f(d['kendall_tau'])} [{_f(d['ci']['low'])}, {_f(d['ci']['high'])}]")
        for r in lite.get("leaderboard", []):
            print(f"{r['spec']} over the rated items (~{r['items_per_team']:.0f} per team) vs the full 2024 leaderboard's "
                  f"{r['column']}: Kendall tau {_f(r['kendall_tau'])} [{_f(r['ci']['low'])}, {_f(r['ci']['high'])}], "
                  f"{r['teams']} teams")


def run(args: argparse.Namespace) -> int:
    from averitec_tools.outputs import check_output_file
    from averitec_tools.scoring.meta_eval.report import DEFAULT_SCORERS, meta_eval

    if args.json or not sys.stderr.isatty():  # stderr read by a program: no "Loading weights" bar
        from averitec_tools.cli._command import silence_progress_bars

        silence_progress_bars()
    own_files = bool(args.ratings and args.items and args.no_reproduce)
    data = _data_dir(args.data, needed=not own_files)
    inputs = [p for p in data.rglob("*") if p.is_file()] if data.is_dir() and not own_files else []
    inputs += [Path(p) for p in (args.ratings, args.items) if p]
    plot = check_output_file(args.plot, option="--plot", inputs=inputs) if args.plot else None
    report = _clean(meta_eval(data_dir=data, specs=args.scorer or DEFAULT_SCORERS, resamples=args.resamples,
                              level=args.confidence_level, seed=args.seed, reproduce=not args.no_reproduce,
                              lite_size=args.lite, ratings=Path(args.ratings) if args.ratings else None,
                              items_file=Path(args.items) if args.items else None))
    if plot is not None:
        from averitec_tools.scoring.meta_eval.plot import plot_correlations

        plot_correlations(rows=report["scorers"], path=plot)
        report["plot"] = str(plot)
    if args.json:
        print_json(report)
    else:
        _print_text(report)
    return 0
