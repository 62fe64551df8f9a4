"""``averitec baseline averitec``: the AVeriTeC reference baseline (store → BM25 → questions
→ reranker → verdict → justification).

``averitec baseline averitec --config offline-minilm|paper|C.yaml --claims F --store DIR
--out F [--variant full|no-reranker|claim-only|gold-evidence] [--format 2024|2023]
[--resume|--overwrite] [--limit N] [--write-gold-subset GOLD.json] [--json]`` runs it;
``averitec baseline averitec build-store --claims F --out DIR [--exclude-own-evidence]
[--temporal-filter]`` writes a knowledge store in the 2024 layout from gold annotation;
``averitec baseline averitec train reranker|verdict|justification --config C --out DIR``
trains one stage on the training split (``data.train``) into a checkpoint with a manifest;
``averitec baseline averitec reproduce --config paper --claims F --store DIR --out DIR``
trains all three, runs the variants, scores them and writes the table.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from averitec_tools.argtypes import NON_NEGATIVE, POSITIVE, SEED
from averitec_tools.cli._baseline_shared import quiet_models
from averitec_tools.cli._command import add_allow_cpu_flag, add_command, add_json_flag
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json
from averitec_tools.outputs import check_output_dir


def add_parser(subparsers: Any) -> None:
    """Register ``averitec`` under ``averitec baseline``."""
    p = add_command(subparsers, "averitec", doc=__doc__,
                    help="the AVeriTeC search → QA → rerank → verdict → justification baseline")
    p.add_argument("--config", metavar="CONFIG", help="YAML file or built-in (offline-minilm, paper)")
    p.add_argument("--claims", metavar="FILE",
                   help="AVeriTeC claims (dev.json schema; default: the downloaded / $AVERITEC_DATA_DIR dev set)")
    p.add_argument("--store", metavar="DIR", help="knowledge store (needed by full and no-reranker; default: the "
                   "downloaded store of the claims' split, averitec data download averitec-store --split S)")
    p.add_argument("--out", metavar="PREDICTIONS", help="prediction file to write")
    p.add_argument("--variant", default="full", choices=("full", "no-reranker", "claim-only", "gold-evidence"))
    p.add_argument("--format", default="2024", choices=("2024", "2023"), help="output format (default 2024)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from OUT.partial.jsonl")
    p.add_argument("--overwrite", action="store_true",
                   help="discard the partial progress of an interrupted run (OUT.partial.jsonl) and start over "
                   "(without --resume or --overwrite such a run is refused)")
    p.add_argument("--limit", type=POSITIVE, metavar="N", help="only the first N claims")
    p.add_argument("--write-gold-subset", metavar="GOLD.json",
                   help="also write the gold items of the claims run (the reference for a --limit run)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--no-stage-cache", action="store_true",
                   help="neither read nor write the per-claim stage cache (data.stage_cache: false)")
    add_json_flag(p)
    p.add_argument("--show-config", action="store_true",
                   help="print the resolved configuration of --config as JSON and exit")
    from averitec_tools.engines import add_engine_arguments

    add_engine_arguments(p)
    p.set_defaults(func=run_baseline)
    sub = p.add_subparsers(dest="averitec_command", metavar="COMMAND")
    sub.required = False
    _add_build_store(sub)
    _add_train(sub)
    _add_reproduce(sub)
    from averitec_tools.cli.baseline_averitec_upstream import add_upstream_subcommands

    add_upstream_subcommands(sub)


def _add_build_store(sub: Any) -> None:
    bs = sub.add_parser("build-store", help="write a knowledge store (2024 layout) from gold annotation")
    bs.add_argument("--claims", required=True, metavar="FILE", help="AVeriTeC claims with gold QA")
    bs.add_argument("--out", required=True, metavar="DIR", help="store directory to write")
    bs.add_argument("--distractors", type=NON_NEGATIVE, default=200, metavar="N",
                    help="distractor documents per claim, from other claims' answers (default 200)")
    bs.add_argument("--seed", type=SEED, default=0)
    bs.add_argument("--exclude-own-evidence", action="store_true",
                    help="leave each claim's own gold answers out, and its article's and sibling claims'")
    bs.add_argument("--distractors-from", metavar="FILE",
                    help="draw the distractors from this claims file's answers (e.g. train.json: the honest store, "
                         "no annotation of a claim in --claims in it; the pseudo-test of AVeriTeC's train.json is "
                         "held out) instead of the other --claims' answers")
    bs.add_argument("--temporal-filter", action="store_true",
                    help="drop documents published after the claim date (URL dates)")
    add_json_flag(bs)
    bs.set_defaults(func=run_build_store)


def _add_train(sub: Any) -> None:
    tr = sub.add_parser("train", help="train the reranker, verdict or justification model on the training split")
    tr.add_argument("stage", choices=("reranker", "verdict", "justification"))
    tr.add_argument("--config", required=True, metavar="CONFIG")
    tr.add_argument("--out", required=True, metavar="DIR", help="checkpoint directory to write")
    tr.add_argument("--exclude-claims", metavar="FILE", action="append", default=[],
                    help="claims never to train on (e.g. the dev file you will score); repeatable")
    tr.add_argument("--no-progress", action="store_true")
    add_allow_cpu_flag(tr)
    add_json_flag(tr)
    tr.set_defaults(func=run_train)


def _add_reproduce(sub: Any) -> None:
    rp = sub.add_parser("reproduce", help="train reranker, verdict and justification, run, score, and write the table")
    rp.add_argument("--config", metavar="CONFIG", help="YAML file or built-in (default paper-bounded, on a GPU)")
    rp.add_argument("--claims", metavar="FILE", help="claims to run and score (default: averitec/dev.json in a data root)")
    rp.add_argument("--store", metavar="DIR", help="knowledge store (needed by full and no-reranker; default: the "
                    "downloaded store of the claims' split)")
    rp.add_argument("--out", metavar="DIR", help="directory for checkpoints, predictions, scores, table (required "
                    "unless --plan)")
    rp.add_argument("--plan", action="store_true", help="print every stage's inputs, work, GPU-hours, memory and "
                    "disk; run nothing")
    rp.add_argument("--gpu", metavar="NAME", help="the GPU to plan for (default: the one detected)")
    rp.add_argument("--variants", default="full", metavar="V[,V...]",
                    help="comma-separated variants to run (default full)")
    rp.add_argument("--limit", type=POSITIVE, metavar="N", help="only the first N claims")
    rp.add_argument("--no-progress", action="store_true")
    add_allow_cpu_flag(rp)
    add_json_flag(rp)
    rp.set_defaults(func=run_reproduce)


def run_baseline(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.reporting import timing_table
    from averitec_tools.baselines.averitec.run import AVeriTeCSpec, run

    if args.show_config:
        from averitec_tools.baselines.averitec.config import resolve_config

        if not args.config:
            raise UserError("--config is required")
        config = resolve_config(args.config)
        print_json({"config": config.name, "fingerprint": config.fingerprint(), "settings": config.to_dict()})
        return 0
    from averitec_tools.engines import engine_from_args

    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    summary = run(AVeriTeCSpec(config=args.config, claims=args.claims, store=args.store, out=args.out,
                               variant=args.variant, output_format=args.format, resume=args.resume,
                               overwrite=args.overwrite, limit=args.limit, write_gold_subset=args.write_gold_subset,
                               stage_cache=not args.no_stage_cache, engine=engine_from_args(args), progress=progress))
    result = summary.to_dict()
    if args.json:
        print_json(result)
        return 0
    print(f"wrote {result['n_claims']} predictions to {result['out']} (format {result['output_format']}; "
          f"config {result['config']}; variant {result['variant']})")
    print(f"labels: {result['labels']}")
    print("components: " + "; ".join(f"{k}: {v}" for k, v in result["components"].items()))
    if result.get("leak_guard"):
        print(f"leak_guard: {result['leak_guard']}")
    print("fallbacks: " + (", ".join(f"{k} ×{v}" for k, v in result["fallbacks"].items()) or "none"))
    print("departures from the upstream code: " + ("; ".join(result["departures"]) or "none"))
    if result["cached_stages"]:
        print("cached: " + ", ".join(result["cached_stages"]) + " (every claim read from the stage cache)")
    if result["retrieval_recall_at_k"] is not None:
        from averitec_tools.baselines.averitec.config import resolve_config

        top_k = resolve_config(args.config).retrieval.top_k
        print(f"gold answer sentences in the top {top_k}: {result['retrieval_recall_at_k']:.4f}")
    if result["missing_store_files"]:
        print(f"claims without a store file (NEE, no evidence): {result['missing_store_files']}")
    print(timing_table(summary))
    for note in summary.notes:
        print(f"note: {note}")
    return 0


def run_build_store(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.corpus.store import build_store, distractor_claims
    from averitec_tools.baselines.averitec.io.data import read_claims

    if args.distractors < 0:
        raise UserError(f"--distractors must be at least 0, got {args.distractors}")
    check_output_dir(args.out, option="--out", inputs=[args.claims, *([args.distractors_from] if args.distractors_from else [])])
    claims = read_claims(args.claims)
    pool, pool_info = distractor_claims(args.distractors_from) if args.distractors_from else (None, {})
    stats = build_store(claims=[c.record for c in claims], claim_ids=[c.claim_id for c in claims], out=args.out,
                        distractors=args.distractors, seed=args.seed, exclude_own_evidence=args.exclude_own_evidence,
                        temporal_filter=args.temporal_filter, pool_claims=pool)
    result = {"out": args.out, **stats.to_dict(), **pool_info, "exclude_own_evidence": args.exclude_own_evidence,
              "distractors_from": args.distractors_from,
              "temporal_filter": args.temporal_filter, "distractors_per_claim": args.distractors, "seed": args.seed}
    if args.json:
        print_json(result)
    else:
        print(f"wrote a store for {stats.claims} claims to {args.out}: {stats.documents} documents "
              f"({stats.own_documents} own gold answers, {stats.distractor_documents} distractors), "
              f"{stats.sentences} sentences")
        if args.temporal_filter:
            print(f"dropped as published after the claim date: {stats.dropped_after_claim_date} "
                  f"{stats.dropped_by_type}")
    return 0


def _refuse_cpu(args: argparse.Namespace, config: Any, *, stages: list[str], what: str) -> None:
    """Paper-scale models of ``stages`` on a machine without CUDA: one line, exit 2 (unless --allow-cpu)."""
    from averitec_tools.doctor import TARGETS, refuse_cpu

    models = [getattr(getattr(config, s), "checkpoint", None) or getattr(getattr(config, s), "base", None)
              or getattr(getattr(config, s), "model", None) for s in stages]
    refuse_cpu(what=what, models=models, allow_cpu=args.allow_cpu, target="averitec-paper",
               gpu=TARGETS.get("averitec-paper").gpu_text)


def run_train(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.training.checkpoints import train_stage, training_claims

    config_file = args.config if os.path.exists(args.config) else None
    check_output_dir(args.out, option="--out", inputs=[config_file, *args.exclude_claims])
    config = resolve_config(args.config)
    _refuse_cpu(args, config, stages=[args.stage], what=f"averitec train {args.stage}")
    exclude = [c.claim for f in args.exclude_claims for c in read_claims(f)]
    claims, info = training_claims(config, exclude=exclude)
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    manifest = train_stage(kind=args.stage, cfg=config, claims=claims, data_info=info, out_dir=args.out,
                           progress=progress)
    result = {"out": args.out, **manifest}
    if args.json:
        print_json(result)
    else:
        print(f"wrote the {args.stage} checkpoint to {args.out} (base {manifest['base']}; "
              f"{manifest['data'].get('train_examples')} examples; {manifest['seconds']} s)")
        if any(v is not None for v in manifest.get("heldout_per_epoch") or []):
            print(f"held-out {manifest['heldout_metric']} per epoch: {manifest['heldout_per_epoch']}; "
                  f"kept epoch {manifest['best_epoch']}")
    return 0


def _check_gpu_memory(config: Any, *, claims: str | None, store: str | None) -> None:
    """Refuse, before any work, a reproduction whose planned peak (``--plan``) exceeds the GPU here."""
    from averitec_tools.baselines._run.gpus import check_fits
    from averitec_tools.baselines.averitec.experiments.plan import reproduce_plan

    plan = reproduce_plan(config=config, claims=claims, store=store, gpu="h100-80gb")  # peaks: any GPU's
    check_fits({s["stage"]: s["peak_gpu_memory_gib"] for s in plan["stages"]}, what="averitec reproduce",
               plan_command="averitec baseline averitec reproduce --plan")


def run_reproduce(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.experiments.reproduce import reproduce
    from averitec_tools.baselines.averitec.variants import get_variant
    from averitec_tools.cli.baseline_averitec_plan import (
        DEFAULT_CONFIG,
        check_reproduce_inputs,
        plan_defaults,
        run_reproduce_plan,
    )

    if args.plan:
        return run_reproduce_plan(args)
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    if not args.out:
        raise UserError("--out DIR is required (or --plan to see the stages first)")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if not variants:
        raise UserError("--variants: no variant named")
    config = resolve_config(args.config or DEFAULT_CONFIG)
    _refuse_cpu(args, config, stages=["questions", "reranker", "verdict", "justification"],
                what="averitec reproduce")
    check_reproduce_inputs(args, needs_store=any(get_variant(v).needs_store for v in variants))
    args.config, args.claims, args.store = plan_defaults(config=args.config, claims=args.claims, store=args.store)
    config_file = args.config if os.path.exists(args.config) else None
    files = ["config.yaml", "gold.json", "table.md", "results.json",
             *(f"{v}.{kind}.json" for v in variants for kind in ("pred", "run", "score"))]
    check_output_dir(args.out, option="--out", inputs=[args.claims, config_file, args.store], files=files)
    _check_gpu_memory(config, claims=args.claims, store=args.store)
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    report = reproduce(config=config, claims_path=args.claims, store=args.store, out=args.out, variants=variants,
                       limit=args.limit, progress=progress)
    if args.json:
        print_json(report)
        return 0
    for kind, info in report["trained"].items():
        state = "trained now" if info["trained"] else "reused"
        print(f"{kind}: {info['checkpoint'] or 'not trained (fallback)'} ({state})")
    print(report["table"])
    print(f"wrote {args.out}/table.md and {args.out}/results.json")
    return 0
