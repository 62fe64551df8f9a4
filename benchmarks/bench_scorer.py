"""Benchmark: ``averitec score`` vs the reference scorers, side by side.

Both sides run as whole processes (interpreter start-up, imports, NLTK resource loading
included) on the same files, in one run; the script checks that every figure agrees to
1e-9 and prints wall-clock times and the speed-up ratios. ``averitec score`` runs twice
per case with a fresh cache folder: first with no cached gold strings (``cold``), then
with them (``warm``, the usual case once a gold file has been scored). The baselines run
under a real NLTK 3.9.1 (``--nltk-path``, default ``.venv/nltk391``):
``reference_scorer.py`` recomputes matrices as the official scripts do,
``plain_scorer.py`` computes each distinct matrix once per claim (the cold-start baseline).
With ``--baseline-repo DIR`` (a checkout of another version of this project, e.g. today's
``main``), that version's ``averitec score`` runs too, cold and warm, in the same run
(``PYTHONPATH`` and the working directory pointing there), and its ratios are printed:
the speed-up over the previous release, measured side by side. Both versions' packages are
compiled to bytecode first where a ``.pyc`` is missing or stale (as an install has them), so
that neither side's timed processes compile modules.

Cases (``--cases``, default all):

* ``dev2024``   -- ``baseline_dev_predictions.json`` vs ``dev.json``, profile averitec2024
* ``dev2023``   -- ``baseline_dev_predictions_2023format.json`` vs ``dev.json``, averitec2023
* ``evalai-dev`` -- ``evalai/baseline_2024_dev_as_evalai.jsonl`` vs the EvalAI dev gold
* ``evalai-sub`` -- ``evalai/baseline_submission_dev.jsonl`` vs the EvalAI dev gold
* ``test-self`` -- ``evalai/averitec_test_gold.jsonl`` (1000 claims) scored against itself
* ``dev2024-plain`` -- as ``dev2024``, against ``plain_scorer.py``: the cold-start ratio

Usage::

    python benchmarks/bench_scorer.py                       # data from $AVERITEC_DATA_DIR
    python benchmarks/bench_scorer.py --cases dev2024 test-self --nltk-path /tmp/nltk391
    python benchmarks/bench_scorer.py --cases dev2024-plain --baseline-repo ../main   # vs today's averitec score

``--nltk-path`` is a folder with a real NLTK 3.9.1 (``pip install --target DIR
nltk==3.9.1``; ``make bench`` installs it into ``.venv/nltk391``). The baselines refuse
any other NLTK.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES: dict[str, tuple[str, str, str, str]] = {
    "dev2024": ("averitec2024", "averitec/baseline_dev_predictions.json", "averitec/dev.json", "reference_scorer.py"),
    "dev2023": ("averitec2023", "averitec/baseline_dev_predictions_2023format.json", "averitec/dev.json", "reference_scorer.py"),
    "evalai-dev": ("evalai", "averitec/evalai/baseline_2024_dev_as_evalai.jsonl", "averitec/evalai/averitec_dev_gold.jsonl",
                   "reference_scorer.py"),
    "evalai-sub": ("evalai", "averitec/evalai/baseline_submission_dev.jsonl", "averitec/evalai/averitec_dev_gold.jsonl",
                   "reference_scorer.py"),
    "test-self": ("evalai", "averitec/evalai/averitec_test_gold.jsonl", "averitec/evalai/averitec_test_gold.jsonl",
                  "reference_scorer.py"),
    "dev2024-plain": ("averitec2024", "averitec/baseline_dev_predictions.json", "averitec/dev.json", "plain_scorer.py"),
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


CPU: dict[str, float] = {}


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str], cwd: str | Path | None = None) -> tuple[float, dict[str, Any]]:
    """Wall-clock seconds and parsed JSON output of ``cmd``; its CPU seconds go to ``CPU["last"]``."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - start
    CPU["last"] = _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.strip()}")
    return elapsed, json.loads(proc.stdout)


def averitec_score(repo: Path, args: list[str], env: dict[str, str]) -> tuple[float, float, float, float, dict[str, Any], dict[str, Any]]:
    """``averitec score`` of the code in ``repo`` as a whole process, with a fresh cache folder:
    cold (no cached gold strings), then warm (cached); wall and CPU seconds of each, and the outputs.

    The process runs in ``repo`` with ``PYTHONPATH`` there (``python -m`` puts the working
    directory first on the path, so the version measured is the one in ``repo``).
    """
    cmd = [sys.executable, "-m", "averitec_tools.cli.main", "score", *args, "--json"]
    with tempfile.TemporaryDirectory(prefix="averitec-bench-cache-") as cache:
        run_env = dict(env, AVERITEC_CACHE_DIR=cache, PYTHONPATH=str(repo))
        t_cold, cold = timed(cmd, run_env, cwd=repo)
        c_cold = CPU["last"]
        t_warm, warm = timed(cmd, run_env, cwd=repo)
        c_warm = CPU["last"]
    return t_cold, c_cold, t_warm, c_warm, cold, warm


def _report(name: str, profile: str, baseline: str, row: dict[str, Any], problems: list[str]) -> None:
    t_cold, t_warm, t_ref = row["ours_s"], row["ours_warm_s"], row["reference_s"]
    c_cold, c_warm, c_ref = row["cpu_ours_s"], row["cpu_ours_warm_s"], row["cpu_reference_s"]
    print(f"{name:<13} {profile:<13} {row['n_claims']:>5} claims  averitec score {t_cold:6.2f} s cold "
          f"{t_warm:6.2f} s warm   {baseline.split('_')[0]} {t_ref:7.2f} s   "
          f"speed-up {t_ref / t_cold:5.1f}x cold {t_ref / t_warm:5.1f}x warm   "
          f"{'identical' if not problems else 'DIFFERENT'}", flush=True)
    print(f"{'':<13} CPU seconds (user+sys): averitec score {c_cold:.2f} cold {c_warm:.2f} warm, "
          f"{baseline.split('_')[0]} {c_ref:.2f}: {c_ref / c_cold:.1f}x cold {c_ref / c_warm:.1f}x warm")
    if "today_s" in row:
        print(f"{'':<13} today's averitec score (--baseline-repo) {row['today_s']:.2f} s cold {row['today_warm_s']:.2f} s warm, "
              f"CPU {row['cpu_today_s']:.2f} / {row['cpu_today_warm_s']:.2f}: this version is "
              f"{row['today_s'] / t_cold:.1f}x / {row['today_warm_s'] / t_warm:.1f}x faster "
              f"(CPU {row['cpu_today_s'] / c_cold:.1f}x / {row['cpu_today_warm_s'] / c_warm:.1f}x)", flush=True)
    for p in problems[:10]:
        print(f"    {p}")


def run_case(name: str, data: Path, env: dict[str, str], base_env: dict[str, str], args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """One case: this version (cold, warm), today's (with ``--baseline-repo``) and the baseline scorer."""
    profile, pred, ref, baseline = CASES[name]
    score_args = [str(data / pred), str(data / ref), "--profile", profile]
    if args.jobs is not None:
        score_args += ["--jobs", str(args.jobs)]
    t_cold, c_cold, t_warm, c_warm, ours, ours_again = averitec_score(HERE.parent, score_args, env)
    row: dict[str, Any] = {"case": name, "profile": profile, "baseline": baseline, "n_claims": ours["n_claims"],
                           "ours_s": t_cold, "ours_warm_s": t_warm, "cpu_ours_s": c_cold, "cpu_ours_warm_s": c_warm}
    problems: list[str] = []
    if args.baseline_repo:
        t_today, c_today, t_today_warm, c_today_warm, today, _ = averitec_score(Path(args.baseline_repo).resolve(), score_args, env)
        row.update(today_s=t_today, today_warm_s=t_today_warm, cpu_today_s=c_today, cpu_today_warm_s=c_today_warm)
        problems += [f"today's: {p}" for p in compare(ours, {k: v for k, v in today.items() if k != "signature"})]
    ref_cmd = [sys.executable, str(HERE / baseline), str(data / pred), str(data / ref)]
    if baseline == "reference_scorer.py":
        ref_cmd[2:2] = ["--profile", profile]
    t_ref, reference = timed(ref_cmd, base_env)
    problems = compare(ours, reference) + compare(ours_again, reference) + problems
    row.update(reference_s=t_ref, ratio=t_ref / t_cold, ratio_warm=t_ref / t_warm, identical=not problems,
               cpu_reference_s=CPU["last"], reference_tokenizer=reference.get("tokenizer"))
    return row, problems


def compiled(repo: Path) -> None:
    """Compile ``repo``'s package to bytecode where its ``.pyc`` files are missing or stale, as an
    install does: under ``PYTHONDONTWRITEBYTECODE`` (or in a fresh checkout) every timed process
    would otherwise compile the modules edited since their last compilation again, a cost that
    falls on one side only. Files already compiled are left as they are."""
    import compileall

    compileall.compile_dir(str(repo / "averitec_tools"), quiet=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="averitec score vs the reference scorer")
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(HERE.parent.parent / "shared" / "data")))
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--nltk-path", default=str(HERE.parent / ".venv" / "nltk391"),
                        help="folder with NLTK 3.9.1 for the baselines (default .venv/nltk391)")
    parser.add_argument("--baseline-repo", default=None, help="another checkout of this project whose averitec score "
                        "runs side by side (e.g. today's main)")
    parser.add_argument("--jobs", type=int, default=None, help="--jobs for averitec score (default automatic)")
    parser.add_argument("--json-out", default=None, help="also write the timings as JSON to this file")
    args = parser.parse_args(argv)

    data = Path(args.data_dir)
    if not (Path(args.nltk_path) / "nltk").is_dir():
        raise SystemExit(f"no NLTK 3.9.1 at {args.nltk_path}: run `make .venv/nltk391` or pass --nltk-path")
    if args.baseline_repo and not (Path(args.baseline_repo) / "averitec_tools").is_dir():
        raise SystemExit(f"--baseline-repo {args.baseline_repo}: no averitec_tools package there")
    for repo in [HERE.parent, *([Path(args.baseline_repo)] if args.baseline_repo else [])]:
        compiled(repo)
    env = dict(os.environ)
    env.setdefault("NLTK_DATA", str(data.parent / "nltk_data"))
    env["AVERITEC_NO_DOWNLOAD"] = "1"
    env.pop("AVERITEC_NO_CACHE", None)
    base_env = dict(env, PYTHONPATH=os.pathsep.join([args.nltk_path, str(HERE.parent)]))
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    rows = []
    failed = False
    for name in args.cases:
        row, problems = run_case(name, data, env, base_env, args)
        failed |= bool(problems)
        rows.append(row)
        _report(name, row["profile"], row["baseline"], row, problems)
    _totals(rows)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"baseline tokenizer: {rows[0]['reference_tokenizer']}; cores: {os.cpu_count()}; "
          f"load average at the start: {load_start[0]:.1f} {load_start[1]:.1f} {load_start[2]:.1f}, "
          f"at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.json_out:
        payload = {"rows": rows, "cpu_count": os.cpu_count(), "loadavg_start": list(load_start), "loadavg": list(load)}
        Path(args.json_out).write_text(json.dumps(payload, indent=1) + "\n")
    return 1 if failed else 0


def _totals(rows: list[dict[str, Any]]) -> None:
    ref_rows = [r for r in rows if r["baseline"] == "reference_scorer.py"]
    if ref_rows:
        total_ours = sum(r["ours_s"] for r in ref_rows)
        total_ref = sum(r["reference_s"] for r in ref_rows)
        print(f"{'total vs reference':<27} {'':>5}         averitec score {total_ours:6.2f} s cold"
              f"{'':>18}reference {total_ref:7.2f} s   speed-up {total_ref / total_ours:5.1f}x cold")
    for r in rows:
        if r["baseline"] == "plain_scorer.py":
            print(f"cold-start ratio (dev, {r['profile']}, whole process vs the plain once-per-matrix NLTK 3.9.1 "
                  f"implementation): {r['ratio']:.1f}x on the first run, {r['ratio_warm']:.1f}x with the gold cache warm "
                  f"(CPU time: {r['cpu_reference_s'] / r['cpu_ours_s']:.1f}x, {r['cpu_reference_s'] / r['cpu_ours_warm_s']:.1f}x)")


if __name__ == "__main__":
    sys.exit(main())
