"""Benchmark: rebuild a phase's board (CIs, tiers, rank intervals, P(first)).

A phase of ``--systems`` submissions (one per team) × ``--claims`` claims with the
2024 profile's five board columns per claim (``averitec_score@0.25`` etc.: 0/1 per claim,
accuracies spread from 0.10 to 0.40 so that neighbours overlap, as on a real board), and
the competition's ``n_resamples = --resamples``. Times :func:`rank_phase` (what the web app
runs when a board has changed: per-system 95 % CIs, the Holm-corrected tiers and the
rank intervals from one paired bootstrap), and the rank-interval step alone, warm (one
untimed run first), the median of ``--repeat`` runs. The database read is not included.

Usage::

    python benchmarks/bench_rank_intervals.py                 # 50 × 500, B = 1000
    python benchmarks/bench_rank_intervals.py --json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import time
from typing import Any

import numpy as np

COLUMNS = ("averitec_score@0.25", "averitec_score@0.2", "questions_only", "questions_answers", "label_accuracy")


def synthetic_phase(*, systems: int, claims: int, seed: int = 1) -> tuple[list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    """Submission rows and results as :meth:`Store.submissions` / :meth:`Store.results` give them."""
    rng = np.random.default_rng(seed)
    subs, results = [], {}
    t0 = dt.datetime(2026, 1, 1)
    for i in range(systems):
        acc = 0.10 + 0.30 * i / max(systems - 1, 1)
        score = (rng.random(claims) < acc).astype(float)
        qa = rng.random(claims)
        label = (rng.random(claims) < 0.6).astype(float)
        per_claim = [{"claim_id": c, "values": {"averitec_score@0.25": score[c], "averitec_score@0.2": score[c],
                                                "questions_only": qa[c], "questions_answers": qa[c] * 0.9,
                                                "label_accuracy": label[c]}} for c in range(claims)]
        subs.append({"id": i + 1, "state": "finished", "team": f"team{i}", "system": "s", "meta": {},
                     "created_at": t0 + dt.timedelta(minutes=i)})
        results[i + 1] = [{"profile": "averitec2024", "per_claim": per_claim, "cis": {}, "signature": "sig",
                           "scorer_version": "bench"}]
    return subs, results


def _median_seconds(fn: Any, repeat: int) -> tuple[float, float]:
    """Median wall-clock and median process CPU seconds of ``repeat`` warm runs."""
    fn()  # warm
    wall, cpu = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return statistics.median(wall), statistics.median(cpu)


def main(argv: list[str] | None = None) -> int:
    from averitec_tools.leaderboard.competition import parse_competition
    from averitec_tools.leaderboard.rank_intervals import rank_intervals
    from averitec_tools.leaderboard.ranking import rank_phase

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=50)
    ap.add_argument("--claims", type=int, default=500)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    comp = parse_competition({"name": "bench", "n_resamples": args.resamples, "phases": [
        {"name": "dev", "gold": "g.json", "primary_metric": "averitec_score@0.25", "columns": list(COLUMNS)}]}, where="bench")
    phase = comp.phases[0]
    subs, results = synthetic_phase(systems=args.systems, claims=args.claims)
    values = np.array([[c["values"][phase.primary_metric] for c in results[s["id"]][0]["per_claim"]] for s in subs])
    board, board_cpu = _median_seconds(lambda: rank_phase(competition=comp, phase=phase, submissions=subs, results=results, revealed=False),
                            args.repeat)
    intervals, _ = _median_seconds(lambda: rank_intervals(values=values, n_resamples=args.resamples, seed=0), args.repeat)
    out = {"systems": args.systems, "claims": args.claims, "resamples": args.resamples, "repeat": args.repeat,
           "board_rebuild_seconds": round(board, 3), "board_rebuild_cpu_seconds": round(board_cpu, 3), "rank_intervals_seconds": round(intervals, 4),
           "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count()}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"board rebuild ({args.systems} systems × {args.claims} claims, B={args.resamples}): {board:.3f} s wall, {board_cpu:.3f} s CPU "
              f"(median of {args.repeat}, warm); rank intervals alone: {intervals * 1000:.1f} ms; load {out['load_average_1min']} "
              f"on {out['cpus']} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
