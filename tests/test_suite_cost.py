"""benchmarks/suite_cost.py: the docs/testing.md tables from a JUnit report (hand-made here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.test_a" name="test_one" time="2.5"/>
<testcase classname="tests.test_a.TestGroup" name="test_two" time="0.5"><skipped message="no data"/></testcase>
<testcase classname="tests.test_b" name="test_three[x]" time="4.0"><failure message="boom"/></testcase>
</testsuite></testsuites>
"""


def _module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("suite_cost", ROOT / "benchmarks" / "suite_cost.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tables_from_a_junit_report(tmp_path: Path) -> None:
    suite_cost = _module()
    (tmp_path / "r.xml").write_text(JUNIT, encoding="utf-8")
    rows = suite_cost.read_junit(tmp_path / "r.xml")
    assert [(r["file"], r["outcome"]) for r in rows] == [
        ("tests/test_a.py", "passed"), ("tests/test_a.py", "skipped"), ("tests/test_b.py", "failed")]
    cost = suite_cost.cost_table(rows, wall=10.0, cpu=7.0, loads=[1.0, 3.0]).splitlines()
    assert cost[2] == "| `tests/test_b.py` | 1 | 1 / 0 | 4.0 |"  # costliest first
    assert cost[3] == "| `tests/test_a.py` | 2 | 0 / 1 | 3.0 |"
    assert cost[4] == ("| **2 files** (wall 10 s, CPU 7 s; load average 1.0–3.0 (mean 2.0, 2 samples)) | **3** | "
                       "1 / 1 | **7.0** |")
    slowest = suite_cost.slowest_table(rows, n=2).splitlines()
    assert slowest[2:] == ["| `tests/test_b.py::test_three[x]` | 4.0 |", "| `tests/test_a.py::test_one` | 2.5 |"]


def test_load_sampler_stops_and_keeps_samples() -> None:
    sampler = _module().LoadSampler(every=3600)
    sampler.start()
    samples = sampler.stop()
    assert len(samples) == 2 and all(s >= 0 for s in samples)
