"""Benchmark: ``averitec score`` on one claim whose predicted answer is a very long string.

A single upload can hold one enormous evidence string; the scorer's work must grow
linearly with it. Each case scores a one-claim file -- claim 0 of the bundled demo gold
(``examples/demo_gold.json``) and its baseline prediction with the first answer replaced
-- as a whole ``averitec score --json`` process (start-up, imports and resource loading
included, prepared-gold cache off), then, in the same run, the reference scorer
(``reference_scorer.py``: ``nltk.word_tokenize`` + ``single_meteor_score`` for every pair,
under a real NLTK 3.9.1), checks that every figure agrees to 1e-9 and prints both times.
The reference is stopped after ``--reference-timeout`` seconds (NLTK's matcher and one
of its tokenizer rules are quadratic on some of these strings).

Times are wall-clock and CPU (user + system) seconds of each whole process: on a shared
machine the CPU seconds are the steadier figure. Subtract the ``plain`` row (the same claim
without a long answer) for the cost of the long string itself.

Cases (``--cases``, default all; ``N`` in thousands of words or characters):

* ``plain`` -- the claim as it is (start-up and the fixed cost of one claim)
* ``repeat-N`` -- the answer is one word N times (``word word word ...``), N = 10, 20, 40, 100
* ``synonym-N`` -- the answer is ``car`` N times and the gold answer gains ``auto`` (a
  WordNet synonym of ``car``): every repeat competes for one gold word, N = 20, 100
* ``text-100`` -- 100k words of running text without a long repeat: the gold claims,
  questions, answers and justifications of ``dev.json`` then ``train.json``, in file
  order, as one answer
* ``distinct-100`` -- 100k distinct tokens (``w0 w1 w2 ...``)
* ``spaces-N`` -- ``... run by Mr.``, N thousand spaces, ``a satire site``: Punkt keeps it
  one sentence and NLTK 3.9.1's first Treebank punctuation rule backtracks over every
  split of the spaces (quadratic), N = 20, 100

Usage::

    python benchmarks/bench_long_strings.py                      # make bench-long
    python benchmarks/bench_long_strings.py --cases repeat-10 repeat-100 --reference-timeout 60
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_scorer import compare  # noqa: E402  (benchmarks/ is not a package)

DEMO_GOLD = HERE.parent / "examples" / "demo_gold.json"
DEMO_PRED = HERE.parent / "examples" / "demo_predictions.json"


def _running_text(data: Path, n_words: int) -> str:
    gold = [claim for split in ("dev", "train") for claim in json.loads((data / "averitec" / f"{split}.json").read_text(encoding="utf-8"))]
    words: list[str] = []
    for claim in gold:
        parts = [claim["claim"], claim.get("justification") or ""]
        for q in claim.get("questions") or []:
            parts.append(q["question"])
            parts += [a.get("answer") or "" for a in q.get("answers") or []]
        for part in parts:
            words += part.split()
        if len(words) >= n_words:
            break
    return " ".join(words[:n_words])


def _cases(data: Path) -> dict[str, tuple[Callable[[], str], bool]]:
    """name -> (the long answer, whether the gold gains a synonym of ``car``)."""
    cases: dict[str, tuple[Callable[[], str], bool]] = {"plain": (lambda: "", False)}
    for n in (10, 20, 40, 100):
        cases[f"repeat-{n}"] = (lambda n=n: " ".join(["word"] * (n * 1000)), False)
    for n in (20, 100):
        cases[f"synonym-{n}"] = (lambda n=n: " ".join(["car"] * (n * 1000)), True)
    cases["text-100"] = (lambda: _running_text(data, 100_000), False)
    cases["distinct-100"] = (lambda: " ".join(f"w{i}" for i in range(100_000)), False)
    for n in (20, 100):
        cases[f"spaces-{n}"] = (lambda n=n: "The site is run by Mr." + " " * (n * 1000) + "a satire site", False)
    return cases


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cmd: list[str], env: dict[str, str], timeout: float | None) -> tuple[float, float, dict[str, Any] | None]:
    """Wall-clock and CPU seconds, and the parsed JSON output (``None``: stopped at ``timeout``)."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:  # the child is killed and reaped: its CPU time is counted
        return time.perf_counter() - start, _children_cpu() - cpu0, None
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd[:4])} ...\n{proc.stderr.strip()[-2000:]}")
    return elapsed, _children_cpu() - cpu0, json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(HERE.parent.parent / "shared" / "data")))
    parser.add_argument("--cases", nargs="+", default=None, help="cases to run (default all)")
    parser.add_argument("--nltk-path", default=str(HERE.parent / ".venv" / "nltk391"),
                        help="folder with NLTK 3.9.1 for the reference (default .venv/nltk391)")
    parser.add_argument("--reference-timeout", type=float, default=300.0,
                        help="stop the reference after this many seconds (default 300; 0: skip it)")
    parser.add_argument("--json-out", default=None, help="also write the timings as JSON to this file")
    args = parser.parse_args(argv)

    data = Path(args.data_dir)
    cases = _cases(data)
    unknown = sorted(set(args.cases or []) - set(cases))
    if unknown:
        raise SystemExit(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(cases)}")
    with_reference = args.reference_timeout > 0
    if with_reference and not (Path(args.nltk_path) / "nltk").is_dir():
        raise SystemExit(f"no NLTK 3.9.1 at {args.nltk_path}: run `make .venv/nltk391` or pass --nltk-path")
    env = dict(os.environ)
    env.setdefault("NLTK_DATA", str(data.parent / "nltk_data"))
    env.update(AVERITEC_NO_DOWNLOAD="1", AVERITEC_NO_CACHE="1")
    ref_env = dict(env, PYTHONPATH=os.pathsep.join([args.nltk_path, str(HERE.parent)]))
    gold_claim = json.loads(DEMO_GOLD.read_text(encoding="utf-8"))[0]
    pred_claim = json.loads(DEMO_PRED.read_text(encoding="utf-8"))[0]
    rows = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="averitec-bench-long-") as tmp:
        for name in args.cases or list(cases):
            make_answer, synonym_in_gold = cases[name]
            answer = make_answer()
            pred = json.loads(json.dumps(pred_claim))
            if name != "plain":
                pred["evidence"][0]["answer"] = answer
            else:
                answer = pred["evidence"][0]["answer"]
            gold = json.loads(json.dumps(gold_claim))
            if synonym_in_gold:
                gold["questions"][0]["answers"][0]["answer"] += " auto"
            pred_file, gold_file = Path(tmp) / "pred.json", Path(tmp) / "gold.json"
            pred_file.write_text(json.dumps([pred]), encoding="utf-8")
            gold_file.write_text(json.dumps([gold]), encoding="utf-8")
            ours_cmd = [sys.executable, "-m", "averitec_tools.cli.main", "score", str(pred_file), str(gold_file),
                        "--profile", "averitec2024", "--json"]
            t_ours, c_ours, ours = _run(ours_cmd, env, None)
            assert ours is not None
            t_ref, c_ref, reference = None, None, None
            if with_reference:
                ref_cmd = [sys.executable, str(HERE / "reference_scorer.py"), "--profile", "averitec2024",
                           str(pred_file), str(gold_file)]
                t_ref, c_ref, reference = _run(ref_cmd, ref_env, args.reference_timeout)
            problems = compare(ours, reference) if reference is not None else []
            failed |= bool(problems)
            n_words, n_bytes = len(answer.split()), len(answer.encode("utf-8"))
            finished = reference is not None
            rows.append({"case": name, "words": n_words, "bytes": n_bytes, "ours_s": t_ours, "cpu_ours_s": c_ours,
                         "reference_s": t_ref if finished else None, "cpu_reference_s": c_ref if finished else None,
                         "reference_stopped_after_s": t_ref if with_reference and not finished else None,
                         "cpu_reference_when_stopped_s": c_ref if with_reference and not finished else None,
                         "identical": None if not finished else not problems})
            if finished and t_ref is not None and c_ref is not None:
                ref_text = (f"reference {t_ref:7.2f} s ({c_ref:6.2f} CPU)   speed-up {t_ref / t_ours:5.1f}x "
                            f"({c_ref / c_ours:5.1f}x CPU)   " + ("identical" if not problems else "DIFFERENT"))
            elif with_reference and c_ref is not None:
                ref_text = f"reference stopped after {args.reference_timeout:.0f} s ({c_ref:.0f} CPU s), did not finish"
            else:
                ref_text = "reference skipped"
            print(f"{name:<13} {n_words:>7} words {n_bytes / 1e3:6.0f} kB   averitec score {t_ours:6.2f} s "
                  f"({c_ours:5.2f} CPU)   {ref_text}", flush=True)
            for p in problems[:10]:
                print(f"    {p}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"one claim, profile averitec2024, whole processes, prepared-gold cache off; cores: {os.cpu_count()}; "
          f"load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"rows": rows, "cpu_count": os.cpu_count(), "loadavg": list(load)},
                                                  indent=1) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
