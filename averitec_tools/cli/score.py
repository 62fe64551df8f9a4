"""``averitec score PREDICTIONS REFERENCES``: score a submission exactly as a leaderboard does.

Examples::

    averitec score preds.json dev.json                       # averitec2024, rich table
    averitec score preds.json dev.json --json                # one JSON object on stdout
    averitec score sub.jsonl gold.jsonl --profile evalai --per-claim claims.jsonl
    averitec score preds.jsonl paper_dev.jsonl --profile fever --max-evidence 5
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from averitec_tools.argtypes import POSITIVE
from averitec_tools.cli._command import add_json_flag
from averitec_tools.environment import env_flag
from averitec_tools.errors import PredictionCountError, UserError
from averitec_tools.jsonio import print_json


def add_parser(subparsers: Any) -> None:
    from averitec_tools.scoring.profiles import DEFAULT_PROFILE, PROFILES

    parser = subparsers.add_parser(
        "score",
        help="score predictions against references with an official scoring profile",
        description="Score a submission exactly as the official AVeriTeC/FEVER scorers do, "
        "but fast and reproducibly; every result carries a signature.",
    )
    parser.add_argument("predictions", metavar="PREDICTIONS", help="submission file (.json or .jsonl)")
    parser.add_argument("references", metavar="REFERENCES", help="gold file (.json or .jsonl)")
    parser.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        help=f"scoring profile (one of: {', '.join(PROFILES.names())}; default {DEFAULT_PROFILE})",
    )
    parser.add_argument(
        "--metric",
        default="all",
        help="'all' (every figure of the profile, default) or 'hu-meteor' (evidence scores only)",
    )
    add_json_flag(parser)
    parser.add_argument("--per-claim", metavar="FILE.jsonl", help="write one JSON line of scores per claim")
    parser.add_argument("--subset", action="store_true",
                        help="score only the reference claims present in the predictions (a --limit run); "
                        "the signature, JSON and table say 'subset: N/M'")
    parser.add_argument("--jobs", type=POSITIVE, default=None, metavar="N", help="worker processes (default: one; the idle cores, at most 4, for 10,000+ scoring tasks, about 2,500 claims; output is identical for any N)")
    parser.add_argument(
        "--no-download",
        action="store_true",
        help="never download missing NLTK data (also AVERITEC_NO_DOWNLOAD=1); fail instead",
    )
    parser.add_argument(
        "--lenient",
        action="store_true",
        help="accept what the profile's official scorer accepts (inexact labels, empty evidence, ...) and score "
        "it as that scorer does; one warning per tolerated class on stderr; recorded in the signature",
    )
    parser.add_argument(
        "--max-evidence",
        type=POSITIVE,
        default=None,
        metavar="N",
        help="fever profile: predicted evidence sentences considered (default 5)",
    )
    parser.add_argument(
        "--evidence-scorer", metavar="SPEC", default=None,
        help="averitec2024: add a non-official evidence score per claim (e.g. minilm-qa-f1, docs/meta_eval.md); "
        "named in the signature, never replaces the official figures",
    )
    from averitec_tools.cli._judge_options import add_judge_arguments

    add_judge_arguments(parser)
    parser.set_defaults(func=run)


#: option name -> the flag that sets it (the judge's flags are in ``_judge_options.JUDGE_FLAGS``)
FLAGS = {"metric": "--metric", "max_evidence": "--max-evidence", "lenient": "--lenient",
         "evidence_scorer": "--evidence-scorer", "allow_download": "--no-download"}


def _flag(option: str) -> str | None:
    from averitec_tools.cli._judge_options import AVERIMATEC_FLAGS, JUDGE_FLAGS

    flags = {**JUDGE_FLAGS, **AVERIMATEC_FLAGS}
    return FLAGS.get(option) or (flags[option][0] if option in flags else None)


def _options(args: argparse.Namespace, profile: Any) -> dict[str, Any]:
    """The profile options the flags set, checked by the profile (named by their flags) before any work."""
    from averitec_tools.cli._judge_options import judge_options

    given = {"metric": None if args.metric == "all" else args.metric, "max_evidence": args.max_evidence,
             "lenient": True if getattr(args, "lenient", False) else None,
             "evidence_scorer": getattr(args, "evidence_scorer", None) or None, **judge_options(args)}
    options = {name: value for name, value in given.items() if value is not None}
    accepted = profile.OPTIONS
    if args.no_download and "allow_download" in accepted:
        options["allow_download"] = False
    if "gold_images" in accepted and "gold_images" not in options:  # beside the user's gold file, also under --subset
        from averitec_tools.scoring.averimatec_images import default_gold_images

        options["gold_images"] = str(default_gold_images(args.references))
    if "cache_dir" in accepted and not env_flag("AVERITEC_NO_CACHE"):
        from averitec_tools.cache import cache_root

        options["cache_dir"] = str(cache_root())  # prepared gold strings, keyed by the gold file's hash
    profile.check_options(options, spell=_flag)
    return options


def run(args: argparse.Namespace) -> int:
    """The command; NumPy (loaded by the profile) starts no BLAS threads unless a model scores evidence."""
    from averitec_tools.metrics._gc import paused_gc

    # importing, loading and scoring make few reference cycles (see metrics/_gc.py)
    with paused_gc():
        import_numpy_with_one_blas_thread(wanted=not getattr(args, "evidence_scorer", None))
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from averitec_tools.scoring.profiles import get_profile

    if args.jobs is not None and args.jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {args.jobs}")
    profile = get_profile(args.profile)
    options = _options(args, profile)
    from averitec_tools.cli._judge_options import judge_files
    from averitec_tools.outputs import check_output_file

    inputs = [args.predictions, args.references, *[options[k] for k in ("replay",) if options.get(k)]]
    if args.per_claim:  # output safety (issue 12): refuse before any scoring
        check_output_file(args.per_claim, option="--per-claim", inputs=inputs, protected=judge_files(options))
    if options.get("judge_snapshot"):  # read, then written
        per_claim = [(args.per_claim, "the --per-claim output")] if args.per_claim else []
        check_output_file(options["judge_snapshot"], option="--judge-snapshot", inputs=inputs,
                          protected=[*judge_files(options), *per_claim])
    score = profile.score
    if args.subset:  # partial runs (issue 12)
        from functools import partial

        from averitec_tools.scoring.subset import score_subset

        score = partial(score_subset, profile)
    _skip_final_collection()
    try:
        result = score(
            predictions=args.predictions,
            references=args.references,
            jobs=args.jobs,
            progress=not args.json and sys.stderr.isatty(),
            **options,
        )
    except PredictionCountError as exc:
        if args.subset or exc.n_predictions >= exc.n_references:
            raise
        raise UserError(exc.message, detail=exc.detail, hint="for a partial run (--limit N) pass --subset to score only the "
                        "claims predicted") from None
    from averitec_tools.scoring.data_source import mark_data

    result = mark_data(result, references=args.references)  # data:REPO@COMMIT when the gold file was downloaded
    for warning in result.warnings:
        print(f"averitec score: warning: {warning}", file=sys.stderr)
    if args.per_claim:
        write_per_claim(result.per_claim, args.per_claim)
    if args.json:
        print_json(result.summary)
    else:
        print_table(result.summary)
    return 0


#: The variables that set how many threads OpenBLAS starts (NumPy's wheels bundle it): a user's
#: own value of any of them is left alone.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def import_numpy_with_one_blas_thread(*, wanted: bool = True) -> None:
    """Import NumPy with its OpenBLAS starting no worker threads (issue 42's cold start): the scorer
    does no linear algebra, and the threads OpenBLAS starts as NumPy loads spin for about
    0.05-0.08 CPU s of a 0.6 CPU s first run. OpenBLAS reads its thread count once, as its library
    loads, so ``OPENBLAS_NUM_THREADS=1`` is set for the import alone and removed at once: later
    child processes, and other threads of an in-process caller, see the environment they had.
    Nothing is done unless ``wanted``, NumPy is not loaded yet (the variable would not take effect)
    and the user set none of :data:`BLAS_THREAD_VARIABLES`.

    Example:
        >>> before = dict(os.environ)
        >>> import_numpy_with_one_blas_thread()
        >>> "numpy" in sys.modules, dict(os.environ) == before
        (True, True)
    """
    if not wanted or "numpy" in sys.modules or any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)


def _skip_final_collection() -> None:
    """At interpreter exit, move every object out of the collector's reach (``gc.freeze``) so that
    the shutdown's collections do not walk the scorer's tables and caches (about 15 ms CPU of a first
    run); the objects are still freed as the process ends. Nothing is lost: every output file is
    written and closed before the command returns. Registered once however often ``run`` is called."""
    import atexit
    import gc

    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def write_per_claim(per_claim: Any, path: str) -> None:
    """Write one JSON object per claim, atomically."""
    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(path) as fh:
        for c in per_claim:
            row: dict[str, Any] = {
                "claim_id": c.claim_id,
                "gold_label": c.gold_label,
                "pred_label": c.pred_label,
            }
            if c.claim_types:
                row["claim_types"] = list(c.claim_types)
            if c.confidence is not None:
                row["confidence"] = c.confidence
            if c.probabilities is not None:
                row["probabilities"] = dict(c.probabilities)
            row.update(c.values)
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _flatten(obj: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _flatten(value, f"{name} / ")
        else:
            yield name, value


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


#: Rows the official scripts do not print, explained under the table.
ROW_NOTES = {
    "answers_only": "answers only: not in the official 2024 script; the public evaluate_answers_only "
    "(raw gold 'answer' fields, no Boolean explanations)",
    "answers_only_averitec_tools": "answers only averitec tools: this package's answer-only score, gold answers "
    "as in the Q+A strings (Boolean answers with their explanation, an unanswered question as "
    "\"No answer could be found.\"); see docs/scorer.md",
}


def print_table(summary: Mapping[str, Any]) -> None:
    """Readable table of a summary (explaining rows the official scripts lack), then its signature."""
    from rich.console import Console

    from averitec_tools.cli._tables import print_rows

    subset = f", subset: {summary['subset']}" if "subset" in summary else ""
    shown = {k: v for k, v in summary.items() if k not in {"profile", "signature", "n_claims", "subset"}}
    rows = [[name.replace("_", " "), _fmt(value)] for name, value in _flatten(shown)]
    notes = [note for key, note in ROW_NOTES.items() if key in shown]
    print_rows(title=f"averitec score — {summary.get('profile')} ({summary.get('n_claims')} claims{subset})",
               header=["metric", "value"], rows=rows, caption="\n".join(notes) or None)
    Console().print(f"signature: {summary.get('signature')}", soft_wrap=True, markup=False)


__all__ = ["BLAS_THREAD_VARIABLES", "add_parser", "import_numpy_with_one_blas_thread", "run"]
