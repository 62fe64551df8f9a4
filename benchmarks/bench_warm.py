"""Benchmark: in-process warm scoring of new 500-claim submissions, next to the derived floor.

A :class:`~averitec_tools.scoring.batch.BatchScorer` for ``averitec2024`` prepares the dev
gold once; then each of ``--n`` new submissions -- the official baseline with a
submission-specific token appended to every predicted question and answer, so that no
predicted string was seen before -- is scored as a file (what a training loop or a board
does), timed in wall-clock and CPU seconds on one core. Every result is checked against a
cold ``averitec2024`` run of the same file (identical summary).

Then one more new submission is scored phase by phase, each phase timed alone, beside the
issue's derived floor for a 500-claim submission on one core (a compiled tokenizer 10-15 ms,
loading exact lexical tables 10-30 ms, alignment with interned ids 5-40 ms, the assignment
5-10 ms: 30-100 ms of compute):

* reading and checking the submission (the profile's parser and checks);
* tokenising its new strings; stemming, interning and indexing them;
* METEOR of every (prediction, gold) pair; the Hungarian assignment of every claim;
* the lexical tables' load (cold, in a fresh process).

Usage::

    python benchmarks/bench_warm.py --n 5        # make bench runs it after bench_scorer.py
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
        python benchmarks/bench_warm.py --score-only 2   # and --score-only 0: instructions, not time
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
FLOOR_MS = {"tokenise": "10-15", "lexical tables": "10-30", "alignment": "5-40", "assignment": "5-10", "total": "30-100"}


def fresh_variant(baseline: list[dict[str, Any]], tag: str) -> list[dict[str, Any]]:
    """The baseline with ``tag`` appended to every predicted question and answer."""
    preds = json.loads(json.dumps(baseline))
    for p in preds:
        for e in p.get("evidence", []):
            e["question"] = f"{e['question']} {tag}"
            e["answer"] = f"{e['answer']} {tag}"
    return preds


def clock(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``fn()`` and its value."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def lexicon_load_ms() -> float:
    """Opening the tables and a first batch lookup, in a fresh process (what a cold start pays)."""
    code = ("import time; t = time.process_time(); from averitec_tools.metrics.lexicon import Lexicon; lex = Lexicon(); "
            "lex.load(); lex.stems(['running', 'claims']); lex.synonym_ids(['run']); lex.name_ids(['run']); "
            "print((time.process_time() - t) * 1000)")
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    # numpy's import is paid by every scorer anyway: import it before the clock starts
    out = subprocess.run([sys.executable, "-c", "import numpy; " + code], capture_output=True, text=True, env=env,
                         check=True, cwd=HERE.parent)
    return float(out.stdout)


def phases(scorer: Any, path: Path) -> dict[str, float]:
    """CPU milliseconds of each phase of scoring the (new) submission at ``path``."""
    from averitec_tools.metrics.hungarian_meteor import assignment_utility, pairwise_matrix
    from averitec_tools.scoring.lenient import Lenience
    from averitec_tools.scoring.profiles.averitec2024 import _tasks
    from averitec_tools.scoring.submission import load_gold_claims, load_predictions_2024

    engine, out = scorer.engine, {}
    gold = load_gold_claims(scorer.references, profile="averitec2024", cache=scorer.warm.gold_cache)
    _, cpu, preds = clock(lambda: load_predictions_2024(path, n_references=len(gold), references=str(scorer.references),
                                                        lenience=Lenience(enabled=False)))
    out["read + check the submission"] = cpu
    tasks = _tasks(preds, gold)
    every = [*tasks.q, *tasks.qa, *tasks.a, *tasks.raw]
    new = [s for s in dict.fromkeys(s for t in every for s in t.candidates) if not engine.is_prepared(s)]
    _, out["tokenise (lower-cased)"], words = clock(lambda: engine.tokenizer.tokenize_many(new, lower=True))
    _, out["stem, intern, index"], _ = clock(lambda: engine.add_analysed_many(new, words))
    prepared = engine._prepared
    pairs = list({(id(prepared[c]), id(prepared[r])): (prepared[c], prepared[r])
                  for t in every for c in t.candidates for r in t.references}.values())
    with engine.remembering():
        _, out["alignment (METEOR of every pair)"], _ = clock(lambda: engine.score_many(pairs))
        matrices = [(pairwise_matrix(candidates=t.candidates, references=t.references, engine=engine), len(t.references))
                    for t in every]
    _, out["assignment"], _ = clock(lambda: [assignment_utility(m, normaliser=n) for m, n in matrices if m.size])
    engine.trim()
    return {k: v * 1000 for k, v in out.items()}


def score_only(base: Path, k: int) -> int:
    """Prepare the gold, score the baseline, then ``k`` of three new submissions (all three written either way)."""
    from averitec_tools.scoring.batch import BatchScorer

    baseline = json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        paths = [Path(tmp) / f"new{i}.json" for i in range(3)]
        for i, path in enumerate(paths):
            path.write_text(json.dumps(fresh_variant(baseline, f"t{i}x")), encoding="utf-8")
        scorer = BatchScorer(profile="averitec2024", references=base / "dev.json", allow_download=False)
        scorer.score(base / "baseline_dev_predictions.json")
        for path in paths[:k]:
            scorer.score(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(HERE.parent.parent / "shared" / "data")))
    parser.add_argument("--n", type=int, default=5, help="new submissions scored one after another")
    parser.add_argument("--json-out", default=None)
    parser.add_argument("--score-only", type=int, choices=range(4), default=None, metavar="K",
                        help="only prepare the gold, score the baseline and then K (0-3) new submissions, untimed: "
                             "run under valgrind --tool=cachegrind with K=0 and K=2, half the difference is the "
                             "instructions of one new submission, whatever the machine's load")
    args = parser.parse_args(argv)
    os.environ.setdefault("NLTK_DATA", str(Path(args.data_dir).parent / "nltk_data"))
    if args.score_only is not None:
        return score_only(Path(args.data_dir) / "averitec", args.score_only)
    load_start = os.getloadavg()

    from averitec_tools.metrics._gc import paused_gc
    from averitec_tools.scoring.batch import BatchScorer
    from averitec_tools.scoring.profiles import get_profile

    base = Path(args.data_dir) / "averitec"
    baseline = json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8"))
    wall, cpu, scorer = clock(lambda: BatchScorer(profile="averitec2024", references=base / "dev.json", allow_download=False))
    print(f"BatchScorer(averitec2024, dev.json): gold prepared in {wall:.2f} s ({cpu:.2f} CPU s), in this process")
    scorer.score(base / "baseline_dev_predictions.json")  # warm-up: the baseline itself
    walls, cpus, same = [], [], True
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as tmp:
        for i in range(args.n):
            path = Path(tmp) / f"new{i}.json"
            path.write_text(json.dumps(fresh_variant(baseline, f"t{i}x")), encoding="utf-8")
            wall, cpu, result = clock(lambda p=path: scorer.score(p))  # type: ignore[misc]
            walls.append(wall)
            cpus.append(cpu)
            cold = get_profile("averitec2024").score(predictions=path, references=base / "dev.json", jobs=1,
                                                     allow_download=False)
            same &= dict(result.summary) == dict(cold.summary)
        path = Path(tmp) / "phases.json"
        path.write_text(json.dumps(fresh_variant(baseline, "phases")), encoding="utf-8")
        with paused_gc():
            split = phases(scorer, path)
    lex_ms = lexicon_load_ms()
    print(f"new 500-claim submission, warm, one core: median {statistics.median(walls) * 1000:.0f} ms wall, "
          f"{statistics.median(cpus) * 1000:.0f} ms CPU over {args.n} (goal: <= 100 ms); figures "
          f"{'identical to cold runs' if same else 'DIFFERENT from cold runs'}")
    print(f"{'phase (one more new submission)':<36} {'CPU ms':>8}   derived floor")
    floor_of = {"tokenise (lower-cased)": "tokenise", "alignment (METEOR of every pair)": "alignment", "assignment": "assignment"}
    for name, ms in split.items():
        print(f"{name:<36} {ms:8.1f}   {FLOOR_MS.get(floor_of.get(name, ''), ''):>7}")
    print(f"{'lexical tables: open + first lookups':<36} {lex_ms:8.1f}   {FLOOR_MS['lexical tables']:>7}  (fresh process)")
    load = os.getloadavg()
    print(f"cores: {os.cpu_count()}; load average at the start {load_start[0]:.1f}, at the end {load[0]:.1f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"wall_s": walls, "cpu_s": cpus, "identical": same, "phases_ms": split,
                                                   "lexicon_load_ms": lex_ms, "loadavg": [load_start[0], load[0]]}, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
