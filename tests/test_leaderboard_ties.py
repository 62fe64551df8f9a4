"""Issue 39: ties told as ties, and a resolution floor stated before any submission.

* The displayed point rank is the rank of the unresampled means (min rank on ties), and the
  rank interval always contains it (hypothesis, over random boards with deliberate ties).
* A tie is never broken by row order or submission time: swapping the submission order
  (ids and times) leaves the shown order and ranks the same; tied rows are ``=k``.
* The floor equals an independent computation (numpy resampling written here, the p-value
  formula of the docs); a difference below it shares the tier even where the paired test
  alone would split it.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.leaderboard.competition import parse_competition
from averitec_tools.leaderboard.floor import resolution_floor
from averitec_tools.leaderboard.ranking import board_signature, phase_floor, rank_phase
from averitec_tools.leaderboard.tiers import rank_cell
from averitec_tools.metrics.signature import parse_signature

M = "label_accuracy"


def _competition(n_resamples: int = 200) -> Any:
    return parse_competition({"name": "c", "n_resamples": n_resamples, "phases": [
        {"name": "dev", "gold": "g.json", "primary_metric": M, "columns": [M]}]}, where="c.yaml")


def _board(values: list[list[float]], *, order: list[int] | None = None, floor: float = 0.0) -> list[Any]:
    """``values[k]``: system k's per-claim values; submitted in ``order`` (ids and times follow it)."""
    comp = _competition()
    order = order or list(range(len(values)))
    subs, results = [], {}
    t0 = dt.datetime(2026, 1, 1)
    for position, k in enumerate(order):
        sid = position + 1
        subs.append({"id": sid, "team": f"team-{k}", "system": "s", "state": "finished", "created_at": t0 + dt.timedelta(minutes=sid),
                     "meta": {}})
        per_claim = [{"id": i, "values": {M: v}} for i, v in enumerate(values[k])]
        results[sid] = [{"profile": "averitec2024", "per_claim": per_claim, "cis": {}, "signature": "s", "scorer_version": "1",
                         "summary": {}}]
    return rank_phase(competition=comp, phase=comp.phase("dev"), submissions=subs, results=results, revealed=True, floor=floor)


@st.composite
def boards(draw: st.DrawFn) -> list[list[float]]:
    n = draw(st.integers(4, 30))
    base = draw(st.lists(st.lists(st.sampled_from([0.0, 0.25, 1.0]), min_size=n, max_size=n), min_size=2, max_size=5))
    return base + [list(base[0])] * draw(st.integers(0, 2))  # exact ties with the first system


@settings(max_examples=40, deadline=None, derandomize=True)
@given(values=boards())
def test_point_rank_is_the_rank_of_the_means_and_inside_its_interval(values: list[list[float]]) -> None:
    entries = _board(values)
    means = {f"team-{k}": round(float(np.mean(v)), 12) for k, v in enumerate(values)}
    for e in entries:
        assert e.rank == 1 + sum(1 for m in means.values() if m > means[e.team])
        assert e.rank_interval is not None and e.rank_interval[0] <= e.rank <= e.rank_interval[1]
    ranks = [e.rank for e in entries]
    assert ranks == sorted(ranks)


def test_a_tie_is_never_broken_by_submission_order() -> None:
    a, b = [1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 1.0]  # the same mean, other claims
    worse = [0.0, 0.0, 1.0, 0.0]
    first = _board([a, b, worse], order=[0, 1, 2])
    second = _board([a, b, worse], order=[1, 0, 2])  # b uploaded first now
    for entries in (first, second):
        assert [(e.team, e.rank) for e in entries] == [("team-0", 1), ("team-1", 1), ("team-2", 3)]
        assert [rank_cell(e, entries) for e in entries] == ["=1", "=1", "3"]
        assert entries[0].tier == entries[1].tier and entries[0].tier_size >= 2


def test_floor_equals_an_independent_computation() -> None:
    n, b, seed, alpha, variance = 120, 400, 3, 0.05, 0.5
    floor = resolution_floor(n_claims=n, alpha=alpha, n_resamples=b, seed=seed, variance=variance)
    d = np.array([math.sqrt(variance) * (1 if i % 2 == 0 else -1) for i in range(n)])  # mean 0, variance 0.5
    idx = np.random.default_rng(seed).integers(0, n, size=(b, n))  # the documented resamples
    centred = np.array([d[idx[r]].mean() for r in range(b)])

    def p(delta: float) -> float:  # the board's paired bootstrap p-value for an observed difference delta
        return (1 + int(np.sum(np.abs(centred) >= abs(delta) - 1e-12))) / (b + 1)

    assert p(floor) >= alpha > p(floor + 1e-9)
    assert floor == pytest.approx(1.96 * math.sqrt(variance / n), rel=0.15)  # the normal approximation, roughly


def test_a_difference_below_the_floor_shares_the_tier() -> None:
    """B is A with 25 of 500 claims wrong: the paired test alone separates them (A leads on
    every resample), but 0.05 is below what 500 claims resolve (the floor, ~0.059)."""
    rng = np.random.default_rng(0)
    a = (rng.random(500) < 0.6).astype(float)
    b = a.copy()
    b[np.flatnonzero(a)[:25]] = 0.0
    comp = _competition(n_resamples=1000)
    floor = phase_floor(competition=comp, phase=comp.phase("dev"), n_total=500, revealed=True)
    assert floor is not None and floor.value > 0.05 == pytest.approx(a.mean() - b.mean())
    split = _board([list(a), list(b)])
    assert [e.tier for e in split] == [1, 2]  # no floor: the test decides
    tied = _board([list(a), list(b)], floor=floor.value)
    assert [e.tier for e in tied] == [1, 1] and tied[1].comparisons[0].why == ("floor",)
    sig = parse_signature(board_signature(competition=comp, phase=comp.phase("dev"), floor=floor))
    assert sig["floor"] == f"{floor.value:.4f}(variance)" and sig["ties"] == "min+floor+interval"


def test_the_baseline_states_the_floor_once_scored() -> None:
    comp = parse_competition({"name": "c", "n_resamples": 500, "phases": [
        {"name": "dev", "gold": "g.json", "primary_metric": M, "resolution": {"baseline": {"team": "team-0", "system": "s"}}}]},
        where="c.yaml")
    phase = comp.phase("dev")
    before = phase_floor(competition=comp, phase=phase, n_total=100, revealed=True)
    values = [[1.0] * 90 + [0.0] * 10, [1.0] * 50 + [0.0] * 50]
    entries = _board(values)
    after = phase_floor(competition=comp, phase=phase, n_total=100, revealed=True, entries=entries)
    assert before is not None and after is not None and (before.method, after.method) == ("variance", "baseline")
    # the baseline's spread (variance 0.09, doubled) is far below the stated bound's 0.5
    assert after.value < before.value
