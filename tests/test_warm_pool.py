"""Kept helper processes of a warm METEOR engine (``metrics/warm_pool.py``).

The pool must never change a score: the helpers' parts are compared with one process on
real dev claims, a helper killed between calls is replaced by the caller (same scores,
one warning), and killing the owning process takes its helpers with it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks, solve_task
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.warm_pool import WarmPool

pytestmark = pytest.mark.needs_fork  # forked helpers: a fresh process where a JVM runs (conftest)


def _dev_tasks(shared_data: Path, n: int) -> list[HungarianTask]:
    gold = json.loads((shared_data / "averitec" / "dev.json").read_text(encoding="utf-8"))[:n]
    preds = json.loads((shared_data / "averitec" / "baseline_dev_predictions.json").read_text(encoding="utf-8"))[:n]
    tasks = []
    for g, p in zip(gold, preds, strict=True):
        refs = tuple(q["question"] for q in g["questions"])
        tasks.append(HungarianTask(tuple(e["question"] for e in p["evidence"][:10]), refs))
        tasks.append(HungarianTask(tuple(e["question"] + " " + e["answer"] for e in p["evidence"][:10]), refs))
    return tasks


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_rejects_no_processes() -> None:
    with pytest.raises(ValueError, match="processes"):
        WarmPool(engine=MeteorEngine(allow_download=False), processes=0)


def test_helpers_score_exactly_like_one_process(shared_data: Path) -> None:
    tasks = _dev_tasks(shared_data, 120)
    expected = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=1)
    one_by_one = MeteorEngine(allow_download=False)
    assert expected == [solve_task(task, one_by_one) for task in tasks]  # the batch path is the per-pair one
    engine = MeteorEngine(allow_download=False)
    engine.pool = WarmPool(engine=engine, processes=3)
    try:
        assert engine.pool.processes == 3
        assert len(set(engine.pool.helper_pids())) == 2
        assert score_tasks(tasks, engine=engine, jobs=1) == expected  # through the engine's pool
        assert score_tasks(tasks, engine=engine, jobs=1, n_claims=120) == expected  # a claim's tasks together
        # past PARALLEL_MIN_TASKS score_tasks hands the tasks to the pool (each process solves its part in one batch)
        assert score_tasks([*tasks, *tasks], engine=engine, jobs=1) == expected * 2
        groups = [7 - (i % 8) for i in range(len(tasks))]  # groups in any order
        assert engine.pool.solve(tasks, groups=groups) == expected
        with pytest.raises(ValueError, match="group ids"):
            engine.pool.solve(tasks, groups=[0])
        assert engine.pool.solve(tasks[:5]) == expected[:5]  # fewer tasks than processes' share
        assert engine.pool.solve([]) == []
    finally:
        engine.pool.close()
    assert engine.pool is None


def test_a_dead_helper_is_replaced_by_the_caller(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _dev_tasks(shared_data, 40)
    expected = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=1)
    engine = MeteorEngine(allow_download=False)
    pool = WarmPool(engine=engine, processes=2)
    try:
        (pid,) = pool.helper_pids()
        os.kill(pid, signal.SIGKILL)
        assert pool.solve(tasks) == expected
        assert pool.processes == 1
        assert "helper process died" in capsys.readouterr().err
        assert pool.solve(tasks) == expected  # and the caller alone from then on
    finally:
        pool.close()


def test_helpers_die_with_their_parent(tmp_path: Path) -> None:
    script = tmp_path / "owner.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        from averitec_tools.metrics.meteor import MeteorEngine
        from averitec_tools.metrics.warm_pool import WarmPool
        pool = WarmPool(engine=MeteorEngine(allow_download=False), processes=3)
        print(" ".join(map(str, pool.helper_pids())), flush=True)
        time.sleep(600)
    """))
    owner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    try:
        assert owner.stdout is not None
        pids = [int(p) for p in owner.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        owner.kill()
        owner.wait(timeout=30)
    deadline = time.monotonic() + 30  # a bound, not a timing assertion
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids)


def test_trim_forgets_unpinned_strings_and_scores_stay_the_same(shared_data: Path) -> None:
    tasks = _dev_tasks(shared_data, 30)
    expected = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=1)
    engine = MeteorEngine(allow_download=False)
    gold = {r for t in tasks for r in t.references}
    for text in gold:
        engine.prepare(text)
    assert engine.pin(gold) == len(gold)
    assert not engine.trim()  # no limit set: never
    engine.max_prepared = len(gold) + 10
    assert score_tasks(tasks, engine=engine, jobs=1) == expected
    assert engine.trim()
    assert {t for t in gold if engine.is_prepared(t)} == gold
    assert not any(engine.is_prepared(c) for t in tasks for c in t.candidates if c not in gold)
    assert score_tasks(tasks, engine=engine, jobs=1) == expected  # prepared again, same scores


def test_warm_scorer_memory_stays_bounded(tmp_path: Path) -> None:
    from averitec_tools.leaderboard.competition import load_competition_text
    from averitec_tools.leaderboard.processing import Scorer
    from tests._leaderboard_helpers import competition_yaml, variant

    phase = load_competition_text(competition_yaml(), where="c.yaml").phase("dev")
    bounded = Scorer(cache_dir=False, n_resamples=20, max_prepared=1)
    unbounded = Scorer(cache_dir=False, n_resamples=20, max_prepared=10**9)
    n_gold = bounded.prepare_gold(phase)
    unbounded.prepare_gold(phase)
    for seed in (1, 2, 3):
        a, b = bounded.score(phase=phase, content=variant(seed)), unbounded.score(phase=phase, content=variant(seed))
        assert a == b
        assert len(bounded.engine._prepared) == n_gold  # the gold side only, after each submission
        assert not bounded.engine._pair_scores
    assert len(unbounded.engine._prepared) > n_gold
