"""``averitec baseline``: run reference baselines.

Three baselines: the claim-only probe (``averitec baseline claim-only``, the trivial
reference: no evidence), R2VC (``averitec baseline r2vc``, with ``r2vc paper``, ``r2vc train``,
``r2vc ablations``, ``r2vc slice`` and ``r2vc-calibrate``) and the AVeriTeC 2024
BLOOM/BERT/BART pipeline (``averitec baseline averitec``, with ``averitec build-store`` and
``averitec reproduce --plan``); ``averitec baseline averitec --help`` describes the second.

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
Interrupted runs continue with ``--resume`` or start over with ``--overwrite`` (a rerun with
neither is refused); the output file only appears, whole, at the end.

``averitec baseline r2vc-calibrate --config ... --claims LABELLED --corpus DIR --out CAL.json``
fits the SLC calibrator (§3.5) on a held-out labelled slice by simulating inference
(the configuration's own ``calibration.path`` — usually the file being written — is
ignored while fitting).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from averitec_tools.argtypes import POSITIVE
from averitec_tools.cli._baseline_shared import quiet_models
from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.jsonio import print_json


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "baseline", help="run a reference baseline: R2VC or the AVeriTeC BLOOM/BERT/BART pipeline", doc=__doc__)
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
    from averitec_tools.cli.baseline_claim_only import add_parser as add_claim_only

    add_averitec(sub)
    add_claim_only(sub)


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
    p.add_argument("--limit", type=POSITIVE, metavar="N", help="only the first N claims")
    p.add_argument("--rebuild-index", action="store_true", help="rebuild the retrieval indexes")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_json_flag(p)
    p.add_argument("--candidates", metavar="DIR",
                   help="store every claim's candidates and NLI probabilities here (resumable; claims already "
                   "stored are replayed, not decoded again), for `averitec baseline r2vc ablations`")




def run_r2vc(args: argparse.Namespace) -> int:
    from averitec_tools.baselines._run.sidecar import sidecar_path
    from averitec_tools.baselines.r2vc.run import R2VCSpec, run
    from averitec_tools.engines import engine_from_args

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
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    spec = R2VCSpec(config=args.config, claims=args.claims, out=args.out, output_format=args.format,
                    resume=args.resume, overwrite=args.overwrite, limit=args.limit, engine=engine_from_args(args),
                    progress=progress, write_gold_subset=args.write_gold_subset, corpus=args.corpus,
                    evidence=args.evidence, candidates=args.candidates, rebuild_index=args.rebuild_index)
    try:
        summary = run(spec)
    except KeyboardInterrupt:
        print(f"averitec baseline: interrupted; progress is saved in {sidecar_path(args.out)}: rerun "
              "the same command with --resume to continue", file=sys.stderr)
        return 130
    for warning in summary.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    result = summary.to_dict()
    if args.json:
        print_json(result)
    else:
        _print_run(result, out=args.out)
    return 0


def _print_run(result: dict[str, Any], *, out: str) -> None:
    print(f"wrote {result['n_claims']} predictions to {out} ({result['format']}; config {result['config']})")
    if "gold_subset" in result:
        print(f"wrote the gold items of these {result['n_claims']} claims to {result['gold_subset']}")
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
    if "signature" in result:
        print(f"signature: {result['signature']}")
    if "offline" in result:
        print(f"note: {result['offline']['note']}", file=sys.stderr)


def run_calibrate(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.r2vc.run import R2VCSpec, calibrate

    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    quiet_models(progress)
    result = calibrate(R2VCSpec(config=args.config, claims=args.claims, out=args.out, limit=args.limit,
                                progress=progress, corpus=args.corpus, evidence=args.evidence,
                                candidates=args.candidates, rebuild_index=args.rebuild_index))
    if args.json:
        print_json(result)
    else:
        held = (f"held-out brier={result['heldout_brier']:.4f} ece={result['heldout_ece']:.4f} "
                f"(n={result['heldout_n']} claims)" if "heldout_brier" in result else "no held-out claims")
        print(f"wrote calibrator to {args.out}: {result.get('claims')} claims, fit on {result.get('fit_on')} "
              f"candidates; {held}")
    return 0
