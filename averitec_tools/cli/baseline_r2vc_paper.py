"""``averitec baseline r2vc slice|table|paper``: the paper's calibration slice, tables and runs.

* ``slice --data ROWS --n 10000 --out SLICE.jsonl [--rest TRAIN.jsonl] [--exclude-claims
  FILE ...]`` draws the SLC calibration slice in whole VitaminC ``case_id`` groups,
  disjoint from the generator's training data (``--rest`` writes that data).
* ``table --gold GOLD --predictions P [--predictions P2 ...] [--name N ...]`` prints
  accuracy, macro-F1, Brier and ECE as the paper's Tables 1 and 2 do.
* ``paper --recipe paper-fever --recipe paper-vitaminc --work DIR`` runs paper configurations
  end to end on one shared generator (see :mod:`averitec_tools.baselines.r2vc.experiments.paper_set`);
  ``--plan [--gpu h200]`` prints what that would cost and runs nothing
  (:mod:`averitec_tools.baselines.r2vc.experiments.plan`).

Registered under ``averitec baseline r2vc`` by :mod:`averitec_tools.cli.baseline`.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="r2vc")
    >>> add_paper_subcommands(parser.add_subparsers(dest="r2vc_command"))
    >>> args = parser.parse_args(["slice", "--data", "d.jsonl", "--n", "5", "--out", "s.jsonl"])
    >>> (args.n, args.func.__name__)
    (5, 'run_slice')
    >>> parser.parse_args(["paper", "--recipe", "paper-fever", "--work", "w"]).func.__name__
    'run_paper'
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.argtypes import POSITIVE, SEED
from averitec_tools.cli._command import add_allow_cpu_flag, add_json_flag
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json


def add_paper_subcommands(sub: Any) -> None:
    """Add ``slice``, ``table`` and ``paper`` to the ``r2vc`` sub-command group ``sub``."""
    sl = sub.add_parser("slice", help="draw the SLC calibration slice, disjoint from the generator's training data",
                        description="Draw the calibration slice (paper §3.5: 10,000 VitaminC examples) in whole "
                        "case_id groups, none of whose claims is in --exclude-claims; --rest writes every other "
                        "row (the SFT/DPO data disjoint from the slice).")
    sl.add_argument("--data", required=True, metavar="ROWS", help="VitaminC-style rows (JSONL or JSON array)")
    sl.add_argument("--n", type=POSITIVE, default=10000, help="rows in the slice (default 10000, the paper's)")
    sl.add_argument("--out", required=True, metavar="SLICE.jsonl", help="slice rows to write (JSONL)")
    sl.add_argument("--rest", metavar="TRAIN.jsonl", help="also write the rows not in the slice here")
    sl.add_argument("--exclude-claims", action="append", default=[], metavar="FILE",
                    help="never put a group with a claim of FILE in the slice (e.g. the SFT data); repeatable")
    sl.add_argument("--seed", type=SEED, default=0, help="shuffle seed (default 0)")
    add_json_flag(sl)
    sl.set_defaults(func=run_slice)

    tb = sub.add_parser("table", help="accuracy, macro-F1, Brier and ECE as the paper's tables print them",
                        description="Score FEVER/VitaminC ternary predictions against their gold rows and print "
                        "the paper's four columns (Accuracy %, Macro-F1 ×100, Brier, ECE).")
    tb.add_argument("--gold", required=True, help="gold rows (FEVER 'id' or VitaminC 'unique_id', with 'label')")
    tb.add_argument("--predictions", required=True, action="append", metavar="PRED",
                    help="ternary prediction file (JSONL, from averitec baseline r2vc); repeatable")
    tb.add_argument("--name", action="append", default=[], help="row name of each --predictions (default: file)")
    tb.add_argument("--dataset", default="FEVER", help="column group name (default FEVER)")
    add_json_flag(tb)
    tb.set_defaults(func=run_table)

    pp = sub.add_parser("paper", help="one paper configuration end to end: data → SFT → DPO → calibrate → "
                        "predict → score → table",
                        description="Run the R2VC paper's FEVER or VitaminC configuration (built-in recipes "
                        "paper-fever, paper-vitaminc with the paper's hub ids; or a YAML recipe, 'base: "
                        "paper-fever' to override keys) into --work; finished stages are reused on a rerun.")
    pp.add_argument("--recipe", required=True, action="append",
                    help="paper-fever, paper-vitaminc or RECIPE.yaml; repeat it: the recipes share one generator "
                    "(trained once, every recipe's evaluation claims excluded) and one calibration-slice decoding")
    pp.add_argument("--work", metavar="DIR", help="work directory (every stage's output; required unless --plan)")
    pp.add_argument("--plan", action="store_true", help="print every stage's inputs, outputs, work units and "
                    "estimated GPU-hours, GPU memory, host RAM and disk; run nothing")
    pp.add_argument("--gpu", metavar="NAME", help="the GPU to plan for (h200, h100-80gb, a100-80gb, ...; "
                    "default: the GPU detected here); a run sets its measured hours beside this plan's")
    pp.add_argument("--cpu-threads", type=POSITIVE, metavar="N", help="host CPU threads the plan assumes for CPU work "
                    "(the batched retrieval pass; default 16)")
    pp.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_allow_cpu_flag(pp)
    add_json_flag(pp)
    pp.set_defaults(func=run_paper)


def run_slice(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.r2vc.experiments.calibration_slice import (
        claims_in,
        draw_calibration_slice,
        read_rows,
        write_rows,
    )
    from averitec_tools.outputs import check_output_file

    inputs = [args.data, *args.exclude_claims]
    check_output_file(args.out, option="--out", inputs=inputs)
    if args.rest:
        check_output_file(args.rest, option="--rest", inputs=[*inputs, args.out])
    drawn = draw_calibration_slice(rows=read_rows(args.data), n=args.n, seed=args.seed,
                                   exclude=claims_in(args.exclude_claims))
    write_rows(args.out, drawn.slice)
    if args.rest:
        write_rows(args.rest, drawn.rest)
    result = {"out": args.out, "rest": args.rest, **drawn.info}
    if args.json:
        print_json(result)
    else:
        print(f"wrote {len(drawn.slice)} slice rows ({drawn.info['slice_groups']} {drawn.info['group_key']} groups) "
              f"to {args.out}" + (f" and the other {len(drawn.rest)} rows to {args.rest}" if args.rest else "")
              + f"; {drawn.info['excluded_groups']} groups barred by --exclude-claims")
    return 0


def run_table(args: argparse.Namespace) -> int:
    from pathlib import Path

    from averitec_tools.baselines.r2vc.experiments.tables import (
        markdown_table,
        paper_row,
        signature,
    )

    if args.name and len(args.name) != len(args.predictions):
        raise UserError(f"--name given {len(args.name)} times for {len(args.predictions)} --predictions")
    names = args.name or [Path(p).stem for p in args.predictions]
    rows = [paper_row(predictions=p, gold=args.gold, name=n, dataset=args.dataset)
            for p, n in zip(args.predictions, names, strict=True)]
    if args.json:
        print_json({"signature": signature(), "rows": [r.to_dict() for r in rows]})
    else:
        print(markdown_table(rows))
        print(f"signature: {signature()}")
    return 0


def run_paper(args: argparse.Namespace) -> int:
    import contextlib
    import sys
    from pathlib import Path

    from averitec_tools.baselines.r2vc.experiments.paper import load_recipe
    from averitec_tools.baselines.r2vc.experiments.paper_set import PaperSet
    from averitec_tools.outputs import check_output_dir

    recipes = [load_recipe(spec) for spec in args.recipe]
    if args.plan:
        return _print_plan(args, recipes)
    if args.work is None:
        raise UserError("--work DIR is required (or --plan)")
    from averitec_tools.doctor import TARGETS, refuse_cpu

    refuse_cpu(what=f"r2vc paper {', '.join(r.name for r in recipes)}", models=[r.generator for r in recipes],
               allow_cpu=args.allow_cpu, gpu=TARGETS.get("r2vc-paper").gpu_text, target="r2vc-paper")
    check_output_dir(args.work, option="--work", inputs=[
        *(p for r in recipes for p in (r.train_rows, r.eval_claims)),
        *(spec for spec in args.recipe if Path(spec).is_file())])
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    if not progress:
        from averitec_tools.cli._baseline_shared import quiet_models

        quiet_models(False)

    def on_step(name: str, what: str) -> None:
        print(f"r2vc paper: {name} ({what})", file=sys.stderr)

    with contextlib.redirect_stdout(sys.stderr):  # trainers log on stdout; keep it for the result
        # --json: the result lists every step (reused or run); stderr keeps only a failure's one line
        state = PaperSet(recipes, work=args.work, progress=progress, gpu=args.gpu).run(
            on_step=None if args.json else on_step)
    if args.json:
        print_json({"recipes": [r.name for r in recipes], "work": args.work, **state})
    else:
        for recipe_state in state["recipes"].values():
            print(Path(recipe_state["table"]["table"]).read_text(encoding="utf-8"), end="")
        m = state["manifest"]
        print(f"generator trainings {m['generator_trainings']}, decodings per claim {m['decodings_per_claim']}, "
              f"slice decodings {m['slice_decodings']}, generator loads {m['generator_loads']} (paper_manifest.json)")
        print(f"stage: planned GPU-hours on {m['planned_on']} / measured hours on {m['measured_on']}")
        for row in m["stages"]:
            peak = "" if row["measured_peak_gpu_gib"] is None else f", peak {row['measured_peak_gpu_gib']} GiB"
            print(f"  {row['stage']}: {row['planned_gpu_hours']:.3g} / {row['measured_hours']:.3g}"
                  f" (planned peak {row['planned_peak_gpu_gib']} GiB{peak})")
    return 0


def _print_plan(args: argparse.Namespace, recipes: list[Any]) -> int:
    from averitec_tools.baselines._run.gpus import resolve_gpu
    from averitec_tools.baselines.r2vc.experiments.plan import format_plan, plan_paper

    if args.cpu_threads is not None and args.cpu_threads < 1:
        raise UserError(f"--cpu-threads must be at least 1, got {args.cpu_threads}")
    plan = plan_paper(recipes, gpu=resolve_gpu(args.gpu), host_threads=args.cpu_threads)
    if args.json:
        print_json(plan)
    else:
        from averitec_tools.cli._wrap import wrap_text

        print(wrap_text(format_plan(plan)), end="")
    return 0


__all__ = ["add_paper_subcommands"]
