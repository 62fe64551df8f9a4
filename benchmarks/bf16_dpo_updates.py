"""Does bf16 DPO move the model? 125 DPO steps at lr 4e-6 on the tiny random Llama, three ways.

``fp32`` (fp32 master weights), ``stochastic`` (Table G.1's bf16 weights, updates written back by
stochastic rounding: ``training/bf16_updates.py``) and ``nearest`` (bf16 weights, the optimizer's
own round-to-nearest write-back), each in its own process: Figure F.3's 125 steps, batch 2, on 64
VitaminC-style rows (one passage per prompt), the weight check off so every run finishes. Prints,
per run: the share of sampled weights changed, the share of the fp32 update the bf16 weights kept
(stochastic only), the reward margin (chosen − rejected, β-scaled log-ratio; 0 at step 1, where the
policy is the reference) averaged over the last ten steps, and the CPU seconds.

Usage: ``python benchmarks/bf16_dpo_updates.py [--steps 125] [--rows 64]`` (CPU: a few minutes per
run on a quiet core). docs/gpu.md reports its output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def one(mode: str, steps: int, n_rows: int) -> dict[str, object]:
    """One run (in this process)."""
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    import torch
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    from averitec_tools.baselines.r2vc.training.config import DPOSettings
    from averitec_tools.baselines.r2vc.training.rows import TrainingRow
    from averitec_tools.baselines.r2vc.training.stages import train

    rows = [TrainingRow(claim=f"Claim number {i} about the city.", evidence_text=f"The city had {1000 + i} residents "
                        f"in {1990 + i}.", label=("True", "False", "Uncertain")[i % 3], title=f"City {i}", row_id=f"r{i}")
            for i in range(n_rows)]
    tok = tiny_tokenizer()
    model = tiny_lm(tok)
    settings: dict[str, Any] = dict(max_steps=steps, per_device_train_batch_size=2, gradient_accumulation_steps=1, max_length=512,
                    logging_steps=1, n_passages=1, save_steps=0, min_changed_fraction=0.0)
    if mode == "fp32":
        settings["master_weights"] = "fp32"
    else:
        model = model.to(torch.bfloat16)
        settings.update(master_weights="bf16", bf16_rounding=mode)
    t0 = time.process_time()
    report, _ = train(stage="dpo", settings=DPOSettings(**settings), rows=rows, output_dir=None, model=model,
                      tokenizer=tok)
    margins = [r["rewards/margins"] for r in report.log_history if "rewards/margins" in r]
    final = report.run["weights"]["final"]
    return {"mode": mode, "steps": report.global_steps, "changed_fraction": round(final["changed_fraction"], 4),
            "update_kept": round(final["rounding"]["update_kept"], 4) if "rounding" in final else None,
            "margin_last10": round(sum(margins[-10:]) / len(margins[-10:]), 5),
            "cpu_seconds": round(time.process_time() - t0, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=125)
    parser.add_argument("--rows", type=int, default=64)
    parser.add_argument("--one", choices=("fp32", "stochastic", "nearest"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.steps, args.rows)))
        return 0
    print("| weights | steps | weights changed | update kept | reward margin, last 10 steps | CPU s |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode in ("fp32", "stochastic", "nearest"):
        done = subprocess.run([sys.executable, __file__, "--one", mode, "--steps", str(args.steps), "--rows",
                               str(args.rows)], capture_output=True, text=True, check=True)
        r = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"| {mode} | {r['steps']} | {r['changed_fraction']} | {r['update_kept'] or '–'} | {r['margin_last10']} | "
              f"{r['cpu_seconds']} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
