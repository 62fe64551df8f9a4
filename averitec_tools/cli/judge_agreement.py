"""``averitec judge-agreement PREDICTIONS REFERENCES``: error bars for the Ev2R judge.

Judges the Q+A evidence of every claim with one judge (``--judge-*``) and optionally a
second (``--second-judge-*``), ``--repeats K`` times each (repeat r with seed S+r at
``--judge-temperature``), through the judgement cache of ``averitec score --profile
fever8``, and reports: each run's new AVeriTeC score, the spread over repeats (headline
and per-claim recall), a bootstrap interval of the new AVeriTeC score, and for two
judges Cohen's kappa and the confusion table of evidence pass/fail at the threshold,
Pearson/Spearman correlation of per-claim recall and the claims whose verdict flips.
``--cache-only`` reports from cached judgements and sends nothing.

Examples::

    averitec judge-agreement preds.json dev.json --judge-url http://127.0.0.1:8000/v1 \\
        --judge-model llama-70b --second-judge-url http://127.0.0.1:8001/v1 --second-judge-model qwen-72b
    averitec judge-agreement preds.json dev.json --judge-url URL --repeats 5 --judge-temperature 0.7 --judge-seed 0
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from averitec_tools.argtypes import LEVEL, POSITIVE, SEED, number
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.cli._judge_options import JUDGE_FLAGS
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json

#: The score options that apply here too (same flags, same meaning).
_SHARED = ("judge_backend", "judge_url", "judge_model", "judge_api_key_env", "judge_prompt", "judge_cache",
           "judge_concurrency", "judge_retries", "judge_backoff", "judge_timeout", "judge_max_tokens",
           "ev2r_preset", "ev2r_threshold", "ev2r_comparison")


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "judge-agreement", doc=__doc__, func=run,
                         help="how far the fever8 (Ev2R) judge can be trusted: repeats, a second judge, bootstrap CIs")
    parser.add_argument("predictions", metavar="PREDICTIONS", help="submission (2024 JSON or FEVER-8 CSV)")
    parser.add_argument("references", metavar="REFERENCES", help="dev.json or a FEVER-8 solution CSV")
    group = parser.add_argument_group("judge (as in averitec score --profile fever8)")
    for name in _SHARED:
        flag, kwargs = JUDGE_FLAGS[name]
        group.add_argument(flag, dest=name, **{"default": None, **kwargs})
    second = parser.add_argument_group("second judge")
    second.add_argument("--second-judge-backend", choices=("openai", "transformers"), help="default: --judge-backend")
    second.add_argument("--second-judge-url", metavar="URL", help="OpenAI-compatible base URL of the second judge")
    second.add_argument("--second-judge-model", metavar="NAME", help="the second judge's model (must differ from the first's)")
    second.add_argument("--second-judge-api-key-env", metavar="VAR", help="default: --judge-api-key-env")
    runs = parser.add_argument_group("repeats and intervals")
    runs.add_argument("--repeats", type=POSITIVE, default=1, metavar="K", help="runs per judge (default 1)")
    runs.add_argument("--judge-temperature", type=number(0, 2), default=0.0, metavar="T", help="sampling temperature of every run (default 0)")
    runs.add_argument("--judge-seed", type=SEED, default=None, metavar="S", help="seed of run 0 (run r: S + r; default: none sent)")
    runs.add_argument("--bootstrap-resamples", type=POSITIVE, default=2000, metavar="N", help="bootstrap resamples (default 2000)")
    runs.add_argument("--confidence-level", type=LEVEL, default=0.95, metavar="L", help="interval level (default 0.95)")
    runs.add_argument("--bootstrap-seed", type=SEED, default=0, metavar="S", help="bootstrap seed (default 0)")
    parser.add_argument("--cache-only", action="store_true", help="report from cached judgements only; send nothing")
    parser.add_argument("--no-download", action="store_true", help="never download (the official prompt); fail instead")
    parser.add_argument("--per-claim", metavar="FILE.jsonl", help="write one JSON line per claim, judge and run")
    add_json_flag(parser)


def _specs(args: argparse.Namespace) -> list[Any]:
    from averitec_tools.scoring.judge_agreement import JudgeSpec

    common: dict[str, Any] = {}
    if args.judge_timeout is not None:
        common["timeout"] = float(args.judge_timeout)
    if args.judge_max_tokens is not None:
        common["max_tokens"] = int(args.judge_max_tokens)
    first: dict[str, Any] = {k: v for k, v in (("backend", args.judge_backend), ("model", args.judge_model),
                                                ("url", args.judge_url), ("api_key_env", args.judge_api_key_env))
                             if v is not None}
    specs = [JudgeSpec(**first, **common)]
    if args.second_judge_url or args.second_judge_model or args.second_judge_backend:
        if not args.second_judge_model:
            raise UserError("--second-judge-model is required for a second judge (the cache tells judges apart by model)")
        second = {**first, "model": args.second_judge_model}
        for key, value in (("backend", args.second_judge_backend), ("url", args.second_judge_url),
                           ("api_key_env", args.second_judge_api_key_env)):
            if value is not None:
                second[key] = value
        specs.append(JudgeSpec(**second, **common))
    return specs


def _check(args: argparse.Namespace) -> None:
    if args.bootstrap_resamples < 1:
        raise UserError(f"--bootstrap-resamples must be at least 1, got {args.bootstrap_resamples}")
    if not 0 < args.confidence_level < 1:
        raise UserError(f"--confidence-level must be between 0 and 1, got {args.confidence_level}")
    for flag, value in (("--judge-concurrency", args.judge_concurrency), ("--judge-max-tokens", args.judge_max_tokens)):
        if value is not None and value < 1:
            raise UserError(f"{flag} must be at least 1, got {value}")
    if args.judge_retries is not None and args.judge_retries < 0:
        raise UserError(f"--judge-retries must be at least 0, got {args.judge_retries}")


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _print_text(report: dict[str, Any]) -> None:
    thr = report["threshold"]
    lines = [f"{report['n_claims']} claims; new AVeriTeC score = label right and Q+A recall {thr['comparison']} "
             f"{thr['threshold']} (preset {thr['preset']}); prompt {report['prompt']['name']}"]
    for j in report["judges"]:
        ci = j["new_averitec_score_ci"]
        lines.append(f"judge {j['judge']}: new AVeriTeC score {ci['estimate']:.4f} "
                     f"[{ci['low']:.4f}, {ci['high']:.4f}] ({ci['confidence_level']:.0%} bootstrap, {ci['n_resamples']} resamples)")
        for r in j["runs"]:
            lines.append(f"  run {r['repeat']} (seed {r['seed']}): score {r['new_averitec_score']:.4f}, "
                         f"Q+A recall {r['qa_recall']:.4f}, unparseable {r['unparseable']}, "
                         f"sent {r['sent']}, cached {r['from_cache']}")
        rep = j["repeats"]
        if rep:
            s, q = rep["new_averitec_score"], rep["qa_recall"]
            lines.append(f"  {rep['k']} repeats at temperature {rep['temperature']:g}: score std {s['std']:.4f} "
                         f"(min {s['min']:.4f}, max {s['max']:.4f}); per-claim recall std mean {q['claim_std_mean']:.4f}, "
                         f"max {q['claim_std_max']:.4f}; verdict flips {rep['n_verdict_flips']}"
                         + (f": {', '.join(map(str, rep['verdict_flips'][:10]))}" if rep["verdict_flips"] else ""))
    a = report["agreement"]
    if a:
        c, corr = a["confusion"], a["qa_recall_correlation"]
        lines += [
            f"agreement {a['judges'][0]} vs {a['judges'][1]} on {a['on']}:",
            f"  Cohen's kappa {_fmt(a['cohen_kappa'])}, observed agreement {a['observed_agreement']:.4f}",
            f"  confusion: both pass {c['both_pass']}, only first {c['only_a']}, only second {c['only_b']}, both fail {c['both_fail']}",
            f"  Q+A recall: Pearson {_fmt(corr['pearson'])}, Spearman {_fmt(corr['spearman'])}",
            f"  score difference {a['new_averitec_score_difference']:+.4f}; verdict flips {a['n_verdict_flips']}"
            + (f": {', '.join(map(str, a['verdict_flips'][:10]))}" if a["verdict_flips"] else ""),
        ]
    lines.append(f"signature: {report['signature']}")
    print("\n".join(lines))


def _write_per_claim(report: Any, path: str) -> None:
    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(path) as fh:
        for runs in report.runs.values():
            for run in runs:
                for i, cid in enumerate(report.claim_ids):
                    row = {"claim_id": cid, "judge": run.judge, "repeat": run.repeat, "seed": run.seed,
                           "qa_recall": run.recall[i], "evidence_pass": run.evidence_pass[i],
                           "new_averitec_score": run.score[i]}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def run(args: argparse.Namespace) -> int:
    import sys

    from averitec_tools.scoring.judge_agreement import judge_agreement

    _check(args)
    if args.per_claim:
        from averitec_tools.metrics.ev2r_runner import CACHE_FILE, default_cache_path
        from averitec_tools.outputs import check_output_file

        cache = f"{args.judge_cache}/{CACHE_FILE}" if args.judge_cache else default_cache_path()
        check_output_file(args.per_claim, option="--per-claim", inputs=[args.predictions, args.references, cache])
    optional = {k: v for k, v in (
        ("judge_prompt", args.judge_prompt), ("cache_dir", args.judge_cache), ("preset", args.ev2r_preset),
        ("concurrency", args.judge_concurrency), ("retries", args.judge_retries), ("backoff", args.judge_backoff),
    ) if v is not None}
    report = judge_agreement(
        predictions=args.predictions, references=args.references, judges=_specs(args), repeats=args.repeats,
        temperature=args.judge_temperature, seed=args.judge_seed, threshold=args.ev2r_threshold,
        comparison=args.ev2r_comparison, cache_only=args.cache_only, n_resamples=args.bootstrap_resamples,
        confidence_level=args.confidence_level, bootstrap_seed=args.bootstrap_seed,
        allow_download=not args.no_download, progress=not args.json and sys.stderr.isatty(), **optional,
    )
    if args.per_claim:
        _write_per_claim(report, args.per_claim)
    if args.json:
        print_json(report.as_dict())
    else:
        _print_text(report.as_dict())
    return 0


__all__ = ["add_parser", "run"]
