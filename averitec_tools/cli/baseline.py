"""``averitec baseline``: run reference baselines.

``averitec baseline r2vc --config CONFIG.yaml|offline-minilm --claims FILE --corpus DIR
--out PREDICTIONS`` runs the R2VC pipeline (retrieve → generate → verify → calibrate →
decide) and writes predictions that ``averitec score`` and ``averitec calibration`` read:
the AVeriTeC 2024 submission format for AVeriTeC claims, JSON lines in the FEVER format
for FEVER/VitaminC claims. ``--config offline-minilm`` is the built-in offline CPU
configuration (trained on train.json; corpus built from the train and dev gold answers,
each claim's own answers left out — ``--config offline-minilm-oracle`` keeps them, an
oracle corpus — no ``--corpus``; ``--claims`` defaults to
``$AVERITEC_DATA_DIR/averitec/dev.json``). ``--show-config`` prints the resolved
configuration as JSON and exits.
Interrupted runs continue with ``--resume``; the output file only appears, whole, at the end.

``averitec baseline r2vc-calibrate --config ... --claims LABELLED --corpus DIR --out CAL.json``
fits the SLC calibrator (§3.5) on a held-out labelled slice by simulating inference
(the configuration's own ``calibration.path`` — usually the file being written — is
ignored while fitting).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from averitec_tools.cli._baseline_shared import _claims_path, _quiet_models
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "baseline",
        help="run a reference baseline (R2VC)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="baseline", metavar="BASELINE")
    sub.required = True

    r2vc = sub.add_parser(
        "r2vc", help="the R2VC retrieve → reason → verify → calibrate pipeline "
        "(`r2vc train sft|dpo` trains its generator)",
        description="Run the R2VC pipeline (hybrid BM25 + dense retrieval → k generator candidates → "
        "NLI verifier → SLC calibrator → abstention) on --claims and write predictions to --out that "
        "`averitec score` reads. The first run builds its indexes and models (minutes, whatever "
        "--limit is); later runs reuse them. An interrupted run continues with --resume. "
        "`averitec baseline r2vc train sft|dpo` trains the generator.",
    )
    _common(r2vc, required=False)  # not required by `r2vc train`; run_r2vc checks them
    r2vc.add_argument("--out", metavar="PREDICTIONS", help="prediction file to write (required)")
    r2vc.add_argument("--write-gold-subset", metavar="GOLD",
                      help="also write the claims actually run (the first --limit N of --claims, as in "
                      "that file) here, to score the run with: "
                      "averitec score PREDICTIONS GOLD")
    r2vc.add_argument("--format", choices=("auto", "averitec2024", "ternary"), default="auto",
                      help="output format (default: averitec2024 for AVeriTeC claims, ternary for FEVER/VitaminC)")
    r2vc.add_argument("--resume", action="store_true",
                      help="continue an interrupted run from OUT.partial.jsonl")
    r2vc.add_argument("--overwrite", action="store_true",
                      help="discard the partial progress of an interrupted run (OUT.partial.jsonl) and start over")
    r2vc.add_argument("--show-config", action="store_true",
                      help="print the resolved configuration of --config as JSON and exit")
    from averitec_tools.engines import add_engine_arguments

    add_engine_arguments(r2vc)
    r2vc.set_defaults(func=run_r2vc, r2vc_parser=r2vc)
    from averitec_tools.cli.baseline_r2vc_ablations import add_ablations_subcommand
    from averitec_tools.cli.baseline_r2vc_paper import add_paper_subcommands
    from averitec_tools.cli.baseline_r2vc_train import add_train_subcommand

    r2vc_sub = add_train_subcommand(r2vc)
    add_paper_subcommands(r2vc_sub)
    add_ablations_subcommand(r2vc_sub, common=_common)

    cal = sub.add_parser("r2vc-calibrate", help="fit the R2VC SLC calibrator on labelled claims")
    _common(cal)
    cal.add_argument("--out", required=True, metavar="CALIBRATOR.json", help="calibrator file to write")
    cal.set_defaults(func=run_calibrate)

    from averitec_tools.cli.baseline_averitec import add_parser as add_averitec

    add_averitec(sub)


def _common(p: argparse.ArgumentParser, *, required: bool = True) -> None:
    p.add_argument("--config", required=required, metavar="CONFIG",
                   help="YAML configuration file or a built-in name (offline-minilm)")
    p.add_argument("--claims", metavar="FILE",
                   help="claims (AVeriTeC dev.json-style or FEVER/VitaminC JSONL); "
                   "offline-minilm defaults to $AVERITEC_DATA_DIR/averitec/dev.json")
    p.add_argument("--corpus", metavar="DIR", help="paragraph store directory (not needed for offline-minilm; "
                   "with --evidence given, the FEVER wiki-pages store FEVER sentences are looked up in)")
    p.add_argument("--evidence", choices=("retrieved", "given"), default="retrieved",
                   help="retrieved (default): retrieve E(c) from the corpus; given: claims carry their own "
                   "evidence (VitaminC 'evidence', 'evidence_text', FEVER evidence sets, AVeriTeC gold QA) and "
                   "retrieval is skipped — the paper's oracle-document setting")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N claims")
    p.add_argument("--rebuild-index", action="store_true", help="rebuild the retrieval indexes")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--candidates", metavar="DIR",
                   help="store every claim's candidates and NLI probabilities here (resumable; claims already "
                   "stored are replayed, not decoded again), for `averitec baseline r2vc ablations`")


def _check_outputs(args: argparse.Namespace, claims_path: str) -> None:
    """Output safety (issue 12): refuse bad --out / --write-gold-subset before any model is built."""
    from averitec_tools.outputs import check_output_file

    inputs = [claims_path, args.config if args.config and "." in str(args.config) else None]
    check_output_file(args.out, option="--out", inputs=inputs)
    if hasattr(args, "resume"):  # `r2vc` runs write PREDICTIONS.manifest.json beside the predictions
        from averitec_tools.baselines.r2vc.manifest import manifest_path

        check_output_file(manifest_path(args.out), option="--out (its .manifest.json)", inputs=inputs)
    if getattr(args, "write_gold_subset", None):
        check_output_file(args.write_gold_subset, option="--write-gold-subset", inputs=inputs)
        if os.path.abspath(args.write_gold_subset) == os.path.abspath(args.out):
            raise UserError(f"--write-gold-subset {args.write_gold_subset}: is also --out")
    if not hasattr(args, "resume"):
        return
    from averitec_tools.baselines.r2vc.sidecar import sidecar_path

    side = sidecar_path(args.out)
    if args.resume and args.overwrite:
        raise UserError("--resume and --overwrite contradict each other; choose one")
    if side.exists() and not args.resume:
        if not args.overwrite:
            raise UserError(
                f"{side}: an interrupted run left partial progress here",
                hint="pass --resume to continue it or --overwrite to start over",
            )
        side.unlink()


def _load(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    """--config, --claims (checked before any model is built) as the config and the run's claims."""
    from averitec_tools.baselines.r2vc.config import resolve_config
    from averitec_tools.baselines.r2vc.io.load import load_claims

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    config = resolve_config(args.config)
    claims_path = _claims_path(args, config)
    _check_outputs(args, claims_path)
    args.claims_path = claims_path
    if config.offline.enabled and args.corpus:
        raise UserError(f"config {config.name!r} builds its own corpus: drop --corpus")
    return config, load_claims(path=claims_path, limit=args.limit, evidence=args.evidence, corpus=args.corpus)


def _attach_store(pipe: Any, args: argparse.Namespace) -> None:
    """``--candidates DIR``: store (or replay) every claim's candidates there."""
    if not getattr(args, "candidates", None):
        return
    from averitec_tools.baselines.r2vc.io.candidates import open_store

    pipe.candidate_store = open_store(args.candidates, config=pipe.config, components=pipe.components,
                                      corpus=args.corpus)


def _given_evidence_components(pipe: Any, evidence: str) -> None:
    """Name the oracle-document setting in the summary's components."""
    if evidence == "given":
        from averitec_tools.baselines.r2vc.io.given_evidence import GIVEN_COMPONENT

        pipe.components["retrieval"] = {"retriever": GIVEN_COMPONENT, "evidence": "given"}


def run_r2vc(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.io.formats import default_format

    if args.show_config:
        from averitec_tools.baselines.r2vc.config import resolve_config

        if args.config is None:
            args.r2vc_parser.error("the following arguments are required: --config")
        config = resolve_config(args.config)
        print_json({"config": config.name, "fingerprint": config.fingerprint(), "settings": config.to_dict()})
        return 0
    missing = [flag for flag, value in (("--config", args.config), ("--out", args.out)) if value is None]
    if missing:
        args.r2vc_parser.error(f"the following arguments are required: {', '.join(missing)}")
    config, claims = _load(args)
    fmt = default_format(claims) if args.format == "auto" else args.format
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    _quiet_models(progress)
    from averitec_tools.engines import engine_from_args

    if args.candidates and getattr(args, "engine", "local") != "local":
        raise UserError("--candidates needs --engine local (claims predicted on engine workers are not stored)")
    engine = engine_from_args(args)
    pipe = build_pipeline(config, corpus=args.corpus, claims=claims, rebuild_index=args.rebuild_index,
                          progress=progress, engine=engine, evidence=args.evidence)
    _given_evidence_components(pipe, args.evidence)
    _attach_store(pipe, args)
    predict_many = None
    if engine.name != "local":
        from averitec_tools.baselines.r2vc.claim_worker import R2VCClaimWorker
        from averitec_tools.engines import engine_predictor

        predict_many = engine_predictor(engine, worker=R2VCClaimWorker(config=config, corpus=args.corpus,
                                                                       claims=tuple(claims), evidence=args.evidence))
    try:
        summary = pipe.run(claims, out=args.out, output_format=fmt, resume=args.resume, progress=progress,
                           predict_many=predict_many)
    except KeyboardInterrupt:
        from averitec_tools.baselines.r2vc.sidecar import sidecar_path

        print(f"averitec baseline: interrupted; progress is saved in {sidecar_path(args.out)}: rerun "
              "the same command with --resume to continue", file=sys.stderr)
        return 130
    summary.extra["engine"] = engine.describe()
    if pipe.candidate_store is not None:
        summary.extra["candidate_store"] = pipe.candidate_store.describe()
    summary.extra["evidence"] = args.evidence
    from averitec_tools.baselines.r2vc.manifest import write_run_manifest

    summary.extra["manifest"] = str(write_run_manifest(
        out=args.out, config=pipe.config, claims=args.claims_path, corpus=args.corpus, config_file=args.config,
        evidence=args.evidence, limit=args.limit))
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.write_gold_subset:
        from averitec_tools.jsonio import write_head

        write_head(args.claims_path, n=len(claims), out=args.write_gold_subset)
    if pipe.config.offline.enabled:
        from averitec_tools.baselines.r2vc.offline.preset import describe

        summary.extra["offline"] = describe(pipe.config)
    result = summary.to_dict()
    if args.write_gold_subset:
        result["gold_subset"] = str(args.write_gold_subset)
    if args.json:
        print_json(result)
    else:
        print(f"wrote {result['n_claims']} predictions to {args.out} ({fmt}; config {config.name})")
        if args.write_gold_subset:
            print(f"wrote the gold items of these {result['n_claims']} claims to {args.write_gold_subset}")
        print(f"labels: {result['labels']}  abstained: {result['n_abstained']}  "
              f"unparseable generator outputs: {result['n_malformed']}")
        for stage, what in result["components"].items():
            print(f"component {stage}: {what}")
        used = {k: v for k, v in result["fallbacks"].items() if v}
        print(f"fallbacks: {used or 'none'}")
        print(f"engine: {result['engine']['engine']}")
        per = result["seconds_per_claim"]
        print("seconds per claim: " + ", ".join(f"{k} {v:.4f}" for k, v in per.items())
              + f"; {result['claims_per_second']:.3f} claims/s")
        for key in ("gated_paper", "ungated"):
            if key in result:
                print(f"{key}: accuracy {result[key]['accuracy']:.4f}  macro-F1 {result[key]['macro_f1']:.4f}")
        if "leak_guard" in result:
            print(f"leak_guard: {result['leak_guard']}")
        print(f"signature: {result['signature']}")
        if "offline" in result:
            print(f"note: {result['offline']['note']}", file=sys.stderr)
    return 0


def run_calibrate(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.pipeline import fit_calibrator

    config, claims = _load(args)
    if config.offline.enabled:
        raise UserError("offline-minilm fits its own calibrator on the training split; use a YAML config here")
    # The calibrator being fitted does not exist yet: simulate inference without one.
    config = replace(config, calibration=replace(config.calibration, path=None),
                     ablation=replace(config.ablation, no_calibration=True))
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    _quiet_models(progress)
    pipe = build_pipeline(config, corpus=args.corpus, claims=claims, rebuild_index=args.rebuild_index,
                          progress=progress, evidence=args.evidence)
    _attach_store(pipe, args)
    cal = fit_calibrator(pipe, claims=claims, where=args.claims, progress=progress)
    cal.save(args.out)
    result = {"out": args.out, "config": config.name, **cal.fit_info, "coef": list(cal.coef),
              "intercept": cal.intercept}
    if pipe.candidate_store is not None:
        result["candidate_store"] = pipe.candidate_store.describe()
    if args.json:
        print_json(result)
    else:
        info = cal.fit_info
        held = (f"held-out brier={info['heldout_brier']:.4f} ece={info['heldout_ece']:.4f} "
                f"(n={info['heldout_n']} claims)" if "heldout_brier" in info else "no held-out claims")
        print(f"wrote calibrator to {args.out}: {info.get('claims')} claims, fit on {info.get('fit_on')} "
              f"candidates; {held}")
    return 0
