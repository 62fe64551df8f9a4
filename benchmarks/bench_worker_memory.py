"""Peak memory of a scoring worker for the worst legal submission, and the warm speed.

Builds, against ``examples/demo_gold.json`` (50 claims), a legal submission near the
default validation limits (4,850,000 string tokens unless ``--tokens``, which with the claims and urls is just under ``max_tokens_total`` 5,000,000; 200 evidence items per claim; under the 50 MB upload limit): every
claim's evidence made of long strings of distinct words, so no cache has seen any of
them. A warm :class:`~averitec_tools.leaderboard.processing.Scorer` scores it the way
the worker does (:class:`~averitec_tools.leaderboard.isolation.Isolation`: an upload
past 1 MiB in a forked child capped at ``--memory-mb`` of private memory) and the run
prints, as one JSON object:

* the worker's resident memory warm, holding the upload's bytes, and after; its peak
  (``VmHWM``);
* the scoring child's peak private memory (sampled every 20 ms) and the outcome
  (finished, or refused as too large to score);
* the worst submission scored in the worker itself (an upload of just under 1 MiB of
  one-character tokens, ``.`` each, at the per-string bound: the most tokens an
  in-process upload holds): the worker's resident memory and peak after it;
* the seconds to score a new 50-claim submission (a fresh token on every string) in
  the warm worker and in a child, median of ``--repeats``.

Usage::

    python benchmarks/bench_worker_memory.py                 # the default limits (minutes)
    python benchmarks/bench_worker_memory.py --tokens 500000 # a quicker run
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

DEMO_GOLD, DEMO_PREDS = REPO / "examples/demo_gold.json", REPO / "examples/demo_predictions.json"


def status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in MiB."""
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) >> 10
    return out


def fresh(tag: str) -> bytes:
    preds = json.loads(DEMO_PREDS.read_text())
    for p in preds:
        for e in p["evidence"]:
            e["question"] += f" {tag}"
            e["answer"] += f" {tag}"
    return json.dumps(preds).encode()


def main(argv: list[str] | None = None) -> int:
    from soak_leaderboard import worst_legal

    from averitec_tools.leaderboard import isolation
    from averitec_tools.leaderboard.competition import load_competition_text
    from averitec_tools.leaderboard.failures import Failure
    from averitec_tools.leaderboard.processing import Scorer

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4_850_000, help="string tokens (97 %% of the default limit: urls and claims take the rest)")
    parser.add_argument("--memory-mb", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-mem-"))
    (tmp / "gold.json").write_text(DEMO_GOLD.read_text())
    comp = load_competition_text(json.dumps({
        "name": "bench", "n_resamples": 100, "scoring": {"memory_mb": args.memory_mb, "timeout_seconds": 3600},
        "phases": [{"name": "dev", "gold": str(tmp / "gold.json"), "profiles": ["averitec2024"],
                    "primary_metric": "averitec_score@0.25"}]}), where="bench.yaml")
    phase = comp.phase("dev")
    scorer = Scorer(cache_dir=False, n_resamples=100)
    scorer.prepare_gold(phase)
    scorer.score(phase=phase, content=fresh("warmup"), file_name="p.json", limits=comp.validation)
    iso = isolation.Isolation()
    report: dict[str, object] = {"tokens": args.tokens, "memory_mb": args.memory_mb, "worker_warm": status()}

    def score(content: bytes) -> str:
        try:
            iso.run(lambda: scorer.score(phase=phase, content=content, file_name="p.json", limits=comp.validation),
                    content=content, memory_bytes=comp.scoring.memory_bytes, file_name="p.json")
            return "finished"
        except Failure as failure:
            return failure.team

    worst = worst_legal("b", tokens=args.tokens, compact=True)
    from averitec_tools.leaderboard.limits import check_submission

    # legal (raises otherwise); counted in a child so that parsing it does not grow this process
    stats = isolation.run_isolated(lambda: check_submission(worst, limits=comp.validation, file_name="worst.json"),
                                   memory_bytes=8 << 30, file_name="worst.json")
    report["worker_holding_the_upload"] = status()
    assert len(worst) <= comp.max_upload_bytes, len(worst)
    started = time.monotonic()
    outcome = score(worst)
    report["worst_legal"] = {"bytes": len(worst), "tokens_counted": stats.tokens, "strings": stats.strings, "outcome": outcome, "seconds": round(time.monotonic() - started, 1),
                             "child_peak_private_mib": isolation.LAST.peak_private_bytes >> 20, "worker_after": status()}
    # the most tokens an in-process upload (at most 1 MiB) can hold: one-character tokens
    preds = json.loads(DEMO_PREDS.read_text())
    per_string = min(comp.validation.max_tokens_per_string or 5000, (iso.in_process_bytes - 200_000) // (4 * len(preds)))
    for p in preds:  # one evidence item per claim, both strings at the per-string bound
        p["evidence"] = [{"question": "." * per_string, "answer": "." * per_string, "url": "https://example.org"}]
    small = json.dumps(preds).encode()
    assert iso.in_process(small), len(small)
    started = time.monotonic()
    outcome = score(small)
    report["worst_in_process"] = {"bytes": len(small), "outcome": outcome, "seconds": round(time.monotonic() - started, 1),
                                  "worker_after": status()}
    warm, child = [], []
    for k in range(args.repeats):
        content = fresh(f"w{k}")
        t = time.monotonic()
        scorer.score(phase=phase, content=content, file_name="p.json", limits=comp.validation)
        warm.append(time.monotonic() - t)
        content = fresh(f"c{k}")
        t = time.monotonic()
        isolation.run_isolated(lambda c=content: scorer.score(phase=phase, content=c, file_name="p.json", limits=comp.validation),
                               memory_bytes=comp.scoring.memory_bytes, file_name="p.json")
        child.append(time.monotonic() - t)
    report["new_50_claim_submission_s"] = {"warm_worker": round(statistics.median(warm), 3), "child": round(statistics.median(child), 3)}
    import os

    report["load_average"] = os.getloadavg()[0]
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
