"""``averitec baseline averitec from-stage`` and ``convert-checkpoint``: the upstream route
(:mod:`averitec_tools.baselines.averitec.experiments.upstream`). This module only parses and prints.

``from-stage --stage-file data_store/dev_top_3_rerank_qa.json --claims dev.json --config C
--out PRED.json`` runs the stages after the shipped file's (sentences → questions → reranker
→ verdict → justification; QA pairs → reranker → ...; reranked evidence → verdict →
justification). ``convert-checkpoint pretrained_models/bert_veracity.ckpt --kind verdict
--out DIR`` writes a shipped Lightning checkpoint as a checkpoint directory
(``verdict.checkpoint`` may also name the ``.ckpt`` itself).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from averitec_tools.argtypes import POSITIVE
from averitec_tools.cli._command import add_allow_cpu_flag, add_json_flag
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json
from averitec_tools.outputs import check_output_dir, check_output_file


def add_upstream_subcommands(sub: Any) -> None:
    fs = sub.add_parser("from-stage", help="start at an upstream stage file (dev_top_k_sentences / dev_top_k_qa / "
                        "dev_top_3_rerank_qa.json) and run the remaining stages")
    fs.add_argument("--stage-file", required=True, metavar="FILE", help="upstream data_store/ stage file")
    fs.add_argument("--claims", required=True, metavar="FILE", help="the claims file it belongs to (dev.json)")
    fs.add_argument("--config", required=True, metavar="CONFIG", help="YAML file or built-in")
    fs.add_argument("--out", required=True, metavar="PRED.json", help="predictions to write (2024 format)")
    fs.add_argument("--limit", type=POSITIVE, metavar="N", help="only the first N claims")
    fs.add_argument("--no-progress", action="store_true")
    add_allow_cpu_flag(fs)
    add_json_flag(fs)
    fs.set_defaults(func=run_stage_file)
    cc = sub.add_parser("convert-checkpoint", help="write an upstream Lightning .ckpt as a checkpoint directory")
    cc.add_argument("ckpt", metavar="CKPT", help="bert_dual_encoder.ckpt (reranker) or bert_veracity.ckpt (verdict)")
    cc.add_argument("--kind", required=True, choices=("reranker", "verdict"))
    cc.add_argument("--base", default="bert-base-uncased", help="the model it was fine-tuned from "
                    "(default bert-base-uncased, as upstream)")
    cc.add_argument("--out", required=True, metavar="DIR")
    cc.add_argument("--trust-pickle", action="store_true", help="unpickle objects beyond tensors (trusted files only)")
    add_json_flag(cc)
    cc.set_defaults(func=run_convert)


def run_stage_file(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.experiments.upstream import (
        STAGE_FILES,
        read_stage_file,
        run_from_stage,
    )
    from averitec_tools.doctor import TARGETS, refuse_cpu

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    config_file = args.config if os.path.exists(args.config) else None
    check_output_file(args.out, option="--out", inputs=[args.stage_file, args.claims, config_file])
    config = resolve_config(args.config)
    stage, _ = read_stage_file(args.stage_file)
    models = [getattr(getattr(config, s), "checkpoint", None) or getattr(getattr(config, s), "base", None)
              or getattr(getattr(config, s), "model", None) for s in STAGE_FILES[stage]]
    refuse_cpu(what=f"averitec from-stage ({stage})", models=models, allow_cpu=args.allow_cpu,
               gpu=TARGETS.get("averitec-paper").gpu_text, target="averitec-paper")
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    summary = run_from_stage(config=config, claims_path=args.claims, stage_file=args.stage_file, out=args.out,
                             limit=args.limit, progress=progress)
    if args.json:
        print_json(summary)
    else:
        print(f"{summary['n_claims']} claims from the upstream {stage} file; ran {', '.join(summary['ran'])}; "
              f"labels {summary['labels']}; wrote {args.out}")
    return 0


def run_convert(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.averitec.training.upstream_checkpoints import convert_checkpoint

    check_output_dir(args.out, option="--out", inputs=[args.ckpt])
    manifest = convert_checkpoint(ckpt=args.ckpt, kind=args.kind, base=args.base, out_dir=args.out,
                                  trust_pickle=args.trust_pickle)
    if args.json:
        print_json({"out": args.out, **manifest})
    else:
        print(f"wrote the {args.kind} checkpoint {args.out} from {args.ckpt} (sha256 {manifest['source']['sha256'][:12]}, "
              f"base {manifest['base']}); set {args.kind}.checkpoint: {args.out}")
    return 0


__all__ = ["add_upstream_subcommands"]
