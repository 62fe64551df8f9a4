"""Benchmark: ``averitec score`` vs the straightforward reference scorer, side by side.

Both run as whole processes (interpreter start-up, imports, NLTK resource loading
included) on the same files, in one run; the script checks that every figure agrees to
1e-9 and prints wall-clock times and the speed-up ratio.

Cases (``--cases``, default all):

* ``dev2024``   -- ``baseline_dev_predictions.json`` vs ``dev.json``, profile averitec2024
* ``dev2023``   -- ``baseline_dev_predictions_2023format.json`` vs ``dev.json``, averitec2023
* ``evalai-dev`` -- ``evalai/baseline_2024_dev_as_evalai.jsonl`` vs the EvalAI dev gold
* ``evalai-sub`` -- ``evalai/baseline_submission_dev.jsonl`` vs the EvalAI dev gold
* ``test-self`` -- ``evalai/averitec_test_gold.jsonl`` (1000 claims) scored against itself

Usage::

    python benchmarks/bench_scorer.py                       # data from $AVERITEC_DATA_DIR
    python benchmarks/bench_scorer.py --cases dev2024 test-self --nltk-path /tmp/nltk391

``--nltk-path`` points the reference at a real NLTK 3.9.1 (``pip install --target DIR
nltk==3.9.1``); without it, and with NLTK 3.10 installed, the reference uses NLTK's METEOR
and WordNet with this package's 3.9.1 tokenizer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES: dict[str, tuple[str, str, str]] = {
    "dev2024": ("averitec2024", "averitec/baseline_dev_predictions.json", "averitec/dev.json"),
    "dev2023": ("averitec2023", "averitec/baseline_dev_predictions_2023format.json", "averitec/dev.json"),
    "evalai-dev": ("evalai", "averitec/evalai/baseline_2024_dev_as_evalai.jsonl", "averitec/evalai/averitec_dev_gold.jsonl"),
    "evalai-sub": ("evalai", "averitec/evalai/baseline_submission_dev.jsonl", "averitec/evalai/averitec_dev_gold.jsonl"),
    "test-self": ("evalai", "averitec/evalai/averitec_test_gold.jsonl", "averitec/evalai/averitec_test_gold.jsonl"),
}


def _leaves(obj: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in obj.items():
        if isinstance(value, Mapping):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def compare(ours: Mapping[str, Any], ref: Mapping[str, Any], tol: float = 1e-9) -> list[str]:
    """Differences between two summaries (empty list: identical figures)."""
    a = {k: v for k, v in _leaves(ours) if k not in {"profile", "signature"}}
    b = {k: v for k, v in _leaves(ref) if k not in {"profile", "tokenizer"}}
    problems = [f"key only in ours: {k}" for k in sorted(set(a) - set(b))]
    problems += [f"key only in reference: {k}" for k in sorted(set(b) - set(a))]
    for key in sorted(set(a) & set(b)):
        if abs(float(a[key]) - float(b[key])) > tol:
            problems.append(f"{key}: ours {a[key]!r} vs reference {b[key]!r}")
    return problems


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    return elapsed, json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="averitec score vs the reference scorer")
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(HERE.parent.parent / "shared" / "data")))
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--nltk-path", default=None, help="folder with NLTK 3.9.1 for the reference")
    parser.add_argument("--jobs", type=int, default=None, help="--jobs for averitec score (default automatic)")
    parser.add_argument("--json-out", default=None, help="also write the timings as JSON to this file")
    args = parser.parse_args(argv)

    data = Path(args.data_dir)
    env = dict(os.environ)
    env.setdefault("NLTK_DATA", str(data.parent / "nltk_data"))
    env["AVERITEC_NO_DOWNLOAD"] = "1"
    rows = []
    failed = False
    for name in args.cases:
        profile, pred, ref = CASES[name]
        ours_cmd = [sys.executable, "-m", "averitec_tools.cli.main", "score", str(data / pred), str(data / ref),
                    "--profile", profile, "--json"]
        if args.jobs is not None:
            ours_cmd += ["--jobs", str(args.jobs)]
        ref_cmd = [sys.executable, str(HERE / "reference_scorer.py"), "--profile", profile, str(data / pred), str(data / ref)]
        if args.nltk_path:
            ref_cmd += ["--nltk-path", args.nltk_path]
        t_ours, ours = timed(ours_cmd, env)
        t_ref, reference = timed(ref_cmd, env)
        problems = compare(ours, reference)
        failed |= bool(problems)
        rows.append({"case": name, "profile": profile, "n_claims": ours["n_claims"], "ours_s": t_ours, "reference_s": t_ref,
                     "ratio": t_ref / t_ours, "identical": not problems, "reference_tokenizer": reference.get("tokenizer")})
        print(f"{name:<11} {profile:<13} {ours['n_claims']:>5} claims  averitec score {t_ours:7.2f} s   "
              f"reference {t_ref:7.2f} s   speed-up {t_ref / t_ours:5.1f}x   "
              f"{'identical' if not problems else 'DIFFERENT'}", flush=True)
        for p in problems[:10]:
            print(f"    {p}")
    total_ours = sum(r["ours_s"] for r in rows)
    total_ref = sum(r["reference_s"] for r in rows)
    print(f"{'total':<11} {'':<13} {'':>5}         averitec score {total_ours:7.2f} s   reference {total_ref:7.2f} s   "
          f"speed-up {total_ref / total_ours:5.1f}x")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"reference tokenizer: {rows[0]['reference_tokenizer']}; cores: {os.cpu_count()}; "
          f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.json_out:
        payload = {"rows": rows, "cpu_count": os.cpu_count(), "loadavg": list(load)}
        Path(args.json_out).write_text(json.dumps(payload, indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
