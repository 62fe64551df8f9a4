"""What a test run costs, as the two tables of docs/testing.md ("What the suite costs").

Runs pytest (this interpreter) with a JUnit XML report while sampling the 1-minute load
average every 30 s, then prints, in Markdown:

* the cost per test file (tests, failures and skips, seconds from the JUnit report), with
  a total row carrying the run's wall and CPU seconds and the load average seen;
* the slowest 20 tests (JUnit ``time``: setup + call + teardown).

Usage::

    python benchmarks/suite_cost.py -- -q tests/                 # the whole suite (make test's set)
    python benchmarks/suite_cost.py -- -q tests/test_cli_score.py  # a subset
    python benchmarks/suite_cost.py --keep run.xml -- -q tests/  # ... and keep the JUnit report
    python benchmarks/suite_cost.py --junit run.xml              # tables of an earlier run's report

PostgreSQL-backed tests need ``bash .ci/with_services.sh`` in front, as for pytest itself.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Any


def load_average() -> float:
    """The 1-minute load average (``os.getloadavg``)."""
    return os.getloadavg()[0]


class LoadSampler(threading.Thread):
    """Samples :func:`load_average` every ``every`` seconds until :meth:`stop`."""

    def __init__(self, every: float = 30.0) -> None:
        super().__init__(daemon=True)
        self.every, self.samples = every, [load_average()]
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(self.every):
            self.samples.append(load_average())

    def stop(self) -> list[float]:
        self._done.set()
        self.join()
        self.samples.append(load_average())
        return self.samples


def read_junit(path: Path) -> list[dict[str, Any]]:
    """One row per test case: file, name, seconds, outcome (passed / failed / skipped)."""
    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = "skipped"
        module = case.get("classname", "").split(".")
        file = "/".join(m for m in module if not m[:1].isupper()) + ".py"
        rows.append({"file": file, "name": case.get("name", ""), "seconds": float(case.get("time", 0.0)),
                     "outcome": outcome})
    return rows


def cost_table(rows: list[dict[str, Any]], *, wall: float | None, cpu: float | None, loads: list[float]) -> str:
    """Markdown: per-file cost, costliest first, and a total row."""
    files: dict[str, dict[str, float]] = defaultdict(lambda: {"tests": 0, "failed": 0, "skipped": 0, "seconds": 0.0})
    for r in rows:
        f = files[r["file"]]
        f["tests"] += 1
        f["seconds"] += r["seconds"]
        if r["outcome"] != "passed":
            f[r["outcome"]] += 1
    lines = ["| test file | tests | failed / skipped | seconds |", "|---|---:|---:|---:|"]
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["seconds"]):
        lines.append(f"| `{name}` | {int(f['tests'])} | {int(f['failed'])} / {int(f['skipped'])} | {f['seconds']:.1f} |")
    total = sum(f["seconds"] for f in files.values())
    run = []
    if wall is not None and cpu is not None:
        run.append(f"wall {wall:.0f} s, CPU {cpu:.0f} s")
    if loads:
        run.append(f"load average {min(loads):.1f}–{max(loads):.1f} (mean {sum(loads) / len(loads):.1f}, "
                   f"{len(loads)} samples)")
    failed = sum(int(f["failed"]) for f in files.values())
    skipped = sum(int(f["skipped"]) for f in files.values())
    lines.append(f"| **{len(files)} files** ({'; '.join(run) or 'from a JUnit report'}) | **{len(rows)}** | "
                 f"{failed} / {skipped} | **{total:.1f}** |")
    return "\n".join(lines)


def slowest_table(rows: list[dict[str, Any]], n: int = 20) -> str:
    """Markdown: the ``n`` slowest tests."""
    lines = ["| test | seconds |", "|---|---:|"]
    for r in sorted(rows, key=lambda r: -r["seconds"])[:n]:
        lines.append(f"| `{r['file']}::{r['name']}` | {r['seconds']:.1f} |")
    return "\n".join(lines)


def run_pytest(args: list[str], junit: Path) -> tuple[int, float, float, list[float]]:
    """Run pytest; its exit code, wall seconds, CPU seconds of the run, load samples."""
    sampler = LoadSampler()
    sampler.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    code = subprocess.call([sys.executable, "-m", "pytest", f"--junitxml={junit}", *args])
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, wall, cpu, sampler.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--junit", type=Path, help="print the tables of this JUnit XML report instead of running")
    parser.add_argument("--keep", type=Path, help="also keep the run's JUnit XML report here")
    parser.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- then pytest's arguments")
    args = parser.parse_args(argv)
    wall = cpu = None
    loads: list[float] = []
    code = 0
    if args.junit:
        rows = read_junit(args.junit)
    else:
        pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
        with tempfile.TemporaryDirectory() as tmp:
            junit = Path(tmp) / "junit.xml"
            code, wall, cpu, loads = run_pytest(pytest_args, junit)
            rows = read_junit(junit)
            if args.keep:
                args.keep.write_bytes(junit.read_bytes())
    print("\n## Suite cost\n")
    print(cost_table(rows, wall=wall, cpu=cpu, loads=loads))
    print("\n## The slowest 20 tests\n")
    print(slowest_table(rows))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
