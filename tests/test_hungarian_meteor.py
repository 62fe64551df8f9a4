"""Hungarian METEOR: assignment, normalisation, and parallel == sequential."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.metrics import METRICS
from averitec_tools.metrics.base import parse_metric
from averitec_tools.metrics.hungarian_meteor import (
    HungarianTask,
    assignment_utility,
    pairwise_matrix,
    resolve_jobs,
    score_tasks,
)
from averitec_tools.metrics.meteor import MeteorEngine

RECORDED = json.loads((Path(__file__).parent / "data" / "nltk391_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def engine() -> MeteorEngine:
    return MeteorEngine(allow_download=False)


def test_assignment_prefers_global_optimum() -> None:
    # Greedy would take 0.9 then 0.1 (sum 1.0); the optimum is 0.8 + 0.7 = 1.5.
    m = np.array([[0.9, 0.8], [0.7, 0.1]])
    assert assignment_utility(m, normaliser=2) == pytest.approx(0.75)


def test_unmatched_gold_counts_as_zero() -> None:
    m = np.array([[1.0, 0.0, 0.0]])
    assert assignment_utility(m, normaliser=3) == pytest.approx(1 / 3)


def test_empty_candidates_score_zero() -> None:
    assert assignment_utility(np.empty((0, 2)), normaliser=2) == 0.0


def _best_assignment(matrix: list[list[float]]) -> float:
    # Exhaustive search over every injective candidate -> reference matching (no solver).
    n_cands, n_refs = len(matrix), len(matrix[0])
    if n_cands >= n_refs:
        return max(sum(matrix[c][r] for r, c in enumerate(cs)) for cs in itertools.permutations(range(n_cands), n_refs))
    return max(sum(matrix[c][r] for c, r in enumerate(rs)) for rs in itertools.permutations(range(n_refs), n_cands))


@pytest.mark.parametrize("case", RECORDED["hungarian_cases"], ids=lambda c: f"{len(c['candidates'])}x{len(c['references'])}")
def test_matrix_and_assignment_match_recorded_nltk391(case: dict, engine: MeteorEngine) -> None:
    # Reference: real NLTK 3.9.1 single_meteor_score(tokens(reference), tokens(candidate)) for
    # every pair of a dev claim's predicted vs gold questions (benchmarks/regen_nltk391_reference.py),
    # and the optimal matching found by exhaustive search, normalised by the gold count.
    m = pairwise_matrix(candidates=case["candidates"], references=case["references"], engine=engine)
    np.testing.assert_allclose(m, np.array(case["meteor"]), rtol=0, atol=1e-9)
    expected = _best_assignment(case["meteor"]) / len(case["references"])
    got = METRICS.get("hu-meteor")(candidates=case["candidates"], references=case["references"], engine=engine)
    assert got == pytest.approx(expected, abs=1e-9)


def test_normalise_by_candidates(engine: MeteorEngine) -> None:
    cands, refs = ["the cat sat", "zzz"], ["the cat sat"]
    by_ref = METRICS.get("hu-meteor")(candidates=cands, references=refs, engine=engine)
    by_cand = parse_metric("hu-meteor(normalise=candidate)")(candidates=cands, references=refs, engine=engine)
    assert by_cand == pytest.approx(by_ref / 2)  # normalise is the metric's parameter: one spelling, one object


def test_undefined_without_references(engine: MeteorEngine) -> None:
    with pytest.raises(ValueError, match="undefined"):
        score_tasks([HungarianTask(("a",), ())], engine=engine, jobs=1)


@pytest.mark.needs_fork
def test_parallel_equals_sequential(engine: MeteorEngine) -> None:
    words = ["the", "cat", "sat", "on", "a", "mat", "while", "dogs", "were", "barking", "at", "cars", "and", "people", "ran", "home"]
    tasks = [
        HungarianTask(
            tuple(" ".join(words[(i + k) % 15 : (i + k) % 15 + 4]) for k in range(3)),
            tuple(" ".join(words[(2 * i + k) % 13 : (2 * i + k) % 13 + 5]) for k in range(2)),
        )
        for i in range(40)
    ]
    sequential = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=1)
    parallel = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=2)
    assert sequential == parallel
    assert any(v > 0 for v in sequential)


def test_resolve_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_jobs(3, 10) == 3
    assert resolve_jobs(None, 5) == 1
    assert resolve_jobs(0, 5) == 1
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert resolve_jobs(None, 2000, load=0.0) == 1  # one process scores 500 claims' pairs in one batch
    assert resolve_jobs(None, 10_000, load=0.0) == 4  # capped
    assert resolve_jobs(None, 10_000, load=5.8) == 2  # two idle cores
    assert resolve_jobs(None, 10_000, load=9.0) == 1  # busy machine


@pytest.mark.needs_fork
def test_a_process_with_a_jvm_scores_serially_with_the_same_figures(engine: MeteorEngine,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked helper of a process that started a Java VM (pyserini) blocks forever: no pool there."""
    import sys
    import types

    from averitec_tools.metrics import hungarian_meteor

    tasks = [HungarianTask((f"the cat {i} sat", "a dog ran"), ("the cat sat on the mat",)) for i in range(40)]
    expected = score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=1)
    assert hungarian_meteor._fork_context() is not None
    monkeypatch.setitem(sys.modules, "jnius", types.ModuleType("jnius"))
    assert hungarian_meteor._fork_context() is None
    assert score_tasks(tasks, engine=MeteorEngine(allow_download=False), jobs=2) == expected
