"""``averitec baseline averitec reproduce --plan [--gpu NAME] [--json]`` and the inputs check every
``reproduce`` runs first (:mod:`averitec_tools.baselines.averitec.experiments.plan`). This module only
parses, calls the library and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.jsonio import print_json

DEFAULT_CONFIG = "paper-bounded"


def build_plan(*, config: str | None, claims: str | None, store: str | None, gpu: str | None) -> dict[str, Any]:
    """The plan for the named GPU (``None``: the one detected here, else a one-line error)."""
    from averitec_tools.baselines._run.gpus import resolve_gpu
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.experiments.plan import reproduce_plan

    return reproduce_plan(config=resolve_config(config or DEFAULT_CONFIG), claims=claims, store=store,
                          gpu=resolve_gpu(gpu))


def check_reproduce_inputs(args: argparse.Namespace, *, needs_store: bool) -> None:
    """Before anything starts: a missing claims file, store, training file or checkpoint is one line."""
    from averitec_tools.baselines.averitec.experiments.plan import check_inputs
    from averitec_tools.errors import UserError

    plan = build_plan(config=args.config, claims=args.claims, store=args.store, gpu="h200")  # only the inputs matter
    store = next((m for m in plan["missing"] if m["name"] == "knowledge store"), None)
    plan["missing"] = [m for m in plan["missing"] if m is not store]
    check_inputs(plan)
    if store is not None and needs_store:
        if args.store:
            raise UserError(f"{store['path']}: knowledge store not found", hint=store["fix"])
        raise UserError(f"--store DIR is required: no knowledge store at {store['path']}", hint=store["fix"])


def plan_defaults(*, config: str | None, claims: str | None, store: str | None) -> tuple[str, str, str | None]:
    """``(config, claims, store)`` with the defaults filled in as the plan found them."""
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.experiments.plan import plan_inputs

    config = config or DEFAULT_CONFIG
    found = plan_inputs(config=resolve_config(config), claims=claims, store=store)
    kept = found["store"]["path"] if (store or found["store"]["present"]) else None
    return config, str(found["claims"]["path"]), kept


def _hours(stage: dict[str, Any]) -> str:
    if stage["runs_on"] == "cpu":
        return f"{stage['cpu_hours']:.2f} CPU-h"
    return f"{stage['gpu_hours']:.3f} GPU-h"


def run_reproduce_plan(args: argparse.Namespace) -> int:
    plan = build_plan(config=args.config, claims=args.claims, store=args.store, gpu=args.gpu)
    if args.json:
        print_json(plan)
        return 0
    from averitec_tools.cli._wrap import wrapped_output

    with wrapped_output():
        _print_reproduce_plan(plan)
    return 0


def _print_reproduce_plan(plan: dict[str, Any]) -> None:
    g, t = plan["gpu"], plan["totals"]
    print(f"plan: reproduce --config {plan['config']} on {g['label']} ({g['memory_gib']:.0f} GiB, "
          f"{g['bandwidth_tbs']} TB/s, {g['bf16_tflops']:.0f} bf16 TFLOP/s); {plan['claims']['n']} claims "
          f"({plan['claims']['how']}); estimates, not measured on a GPU")
    for s in plan["stages"]:
        units = ", ".join(f"{k} {v:,}" for k, v in s["work_units"].items())
        print(f"  {s['stage']:<20} {_hours(s):>14}  GPU {s['peak_gpu_memory_gib']:6.1f} GiB  RAM "
              f"{s['host_ram_gib']:5.1f} GiB  disk {s['disk_gib']:5.1f} GiB  [{units}]")
        print(f"      = {s['formula']}; " + ", ".join(f"{k} {v}" for k, v in s["formula_inputs"].items()))
        if "alternative" in s:
            a = s["alternative"]
            print(f"      setting: {s['setting']}; the {a['setting']} setting: {a['gpu_hours']:.1f} GPU-h, "
                  f"GPU {a['peak_gpu_memory_gib']:.1f} GiB; new tokens per question: estimate uses "
                  f"{s['new_tokens_per_question']['estimate_uses']}, measured on a tiny random BLOOM "
                  f"{s['new_tokens_per_question']['measured_tiny_model']}")
    print(f"total: {t['gpu_hours']:.2f} GPU-h + {t['cpu_hours']:.2f} CPU-h, peak GPU {t['peak_gpu_memory_gib']:.1f} "
          f"GiB ({'fits' if t['fits_gpu'] else 'does NOT fit'}), host RAM {t['host_ram_gib']:.1f} GiB, "
          f"disk {t['disk_gib']:.1f} GiB")
    for m in plan["missing"]:
        print(f"missing: {m['name']} {m['path']} -> {m['fix']}")
