"""Ev2R judge throughput: ``averitec score --profile fever8`` against a judge with fixed latency.

The organisers' scorer sends its judge calls one at a time, so its wall time is at least
calls x latency ("about 4 hours on the dev set"). This script starts the local
OpenAI-compatible judge of the test suite (``tests/_judge_server.py``, a separate process)
answering every request after a fixed delay, scores the dev set through it at several
``--judge-concurrency`` values -- cold (empty judgement cache) and warm (the same cache) --
and prints our wall time against the sequential design's calls x latency as a ratio. Wall
times are of the whole scoring call (judging, Hungarian METEOR alongside, writing the
cache), in-process, after one untimed warm-up run that builds METEOR's prepared-gold cache.

    python benchmarks/bench_ev2r_judge.py                      # dev, 0.5 s per call
    python benchmarks/bench_ev2r_judge.py --n 100 --latency 0.2 --concurrency 4,16 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _subset(data: Path, n: int | None, work: Path) -> tuple[Path, Path]:
    preds, gold = data / "baseline_dev_predictions.json", data / "dev.json"
    if n is None:
        return preds, gold
    p, g = json.loads(preds.read_text(encoding="utf-8")), json.loads(gold.read_text(encoding="utf-8"))
    (work / "p.json").write_text(json.dumps([x for x in p if x["claim_id"] < n]), encoding="utf-8")
    (work / "g.json").write_text(json.dumps(g[:n]), encoding="utf-8")
    return work / "p.json", work / "g.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=os.path.join(os.environ.get("AVERITEC_DATA_DIR", str(ROOT.parent / "shared" / "data")), "averitec"))
    parser.add_argument("--n", type=int, default=None, help="first N dev claims (default: all 500)")
    parser.add_argument("--latency", type=float, default=0.5, help="seconds the judge takes per call (default 0.5)")
    parser.add_argument("--concurrency", default="4,8,16,32,64", help="comma-separated --judge-concurrency values")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from _judge_server import running

    from averitec_tools.leaderboard.profiles import get_profile

    reply = json.dumps({f"{k} {s} {kind}": v for kind in ("evidence", "questions")
                        for k, s, v in (("facts count", "predicted", 3), ("support", "predicted", 2),
                                        ("facts count", "reference", 4), ("support", "reference", 3))})
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        preds, gold = _subset(Path(args.data), args.n, work)
        profile = get_profile("fever8")
        prepared = str(work / "prepared")
        with running({"default": {"delay": args.latency, "content": reply}}, work) as (url, _log):
            levels = [int(c) for c in args.concurrency.split(",")]
            # Warm-up, not timed: builds METEOR's prepared-gold cache so every timed run finds it.
            profile.score(predictions=preds, references=gold, jobs=1, judge_url=url, judge_model="bench-judge",
                          judge_cache=str(work / "warm-up"), judge_concurrency=max(levels), cache_dir=prepared)
            for concurrency in levels:
                cache = work / f"cache-{concurrency}"
                opts = {"judge_url": url, "judge_model": "bench-judge", "judge_cache": str(cache),
                        "judge_concurrency": concurrency, "cache_dir": prepared}
                times = {}
                for state in ("cold", "warm"):
                    start = time.perf_counter()
                    result = profile.score(predictions=preds, references=gold, jobs=1, **opts)
                    times[state] = time.perf_counter() - start
                    sent = result.summary["judge"]["sent"]
                    if state == "cold":
                        calls = result.summary["judge"]["calls"]
                        assert sent == calls, (sent, calls)
                    else:
                        assert sent == 0, sent
                sequential = calls * args.latency
                rows.append({"concurrency": concurrency, "calls": calls, "latency_s": args.latency,
                             "sequential_s": sequential, "cold_s": times["cold"], "warm_s": times["warm"],
                             "cold_speedup": sequential / times["cold"], "warm_speedup": sequential / times["warm"]})
    if args.json:
        print(json.dumps({"n_claims": result.n_claims, "rows": rows}))
        return
    print(f"{result.n_claims} claims, {rows[0]['calls']} judge calls, {args.latency:g} s per call; "
          f"sequential design (the organisers' loop): {rows[0]['sequential_s']:.0f} s")
    print(f"{'concurrency':>11}  {'cold s':>8}  {'x faster':>8}  {'warm s':>7}  {'x faster':>8}")
    for r in rows:
        print(f"{r['concurrency']:>11}  {r['cold_s']:>8.1f}  {r['cold_speedup']:>8.1f}  {r['warm_s']:>7.1f}  {r['warm_speedup']:>8.1f}")


if __name__ == "__main__":
    main()
