"""The outcome watch behind ``?wait=``: one look-up for all waiters, a cap on waiters, no
task left when nobody waits (a fake store: no server, no database)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from conftest import skip_or_fail

try:
    import fastapi  # noqa: F401
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)

from averitec_tools.leaderboard.web import waits  # noqa: E402


def _recording() -> tuple[list[list[int]], set[int], Callable[[list[int]], set[int]]]:
    """A fake store's ``settled``: records each look-up's ids, answers with those in ``done``."""
    calls: list[list[int]] = []
    done: set[int] = set()

    def settled(ids: list[int]) -> set[int]:
        calls.append(sorted(ids))
        return done & set(ids)

    return calls, done, settled


def test_one_lookup_for_every_waiter_and_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waits, "CHECK_SECONDS", 0.001)
    monkeypatch.setattr(waits, "MAX_WAITERS", 3)
    calls, done, settled = _recording()
    watch = waits.OutcomeWatch(settled)

    async def scenario() -> list[str]:
        order: list[str] = []

        async def wait(sid: int, seconds: float, name: str) -> None:
            await watch.wait(sid, seconds)
            order.append(name)

        tasks = [asyncio.create_task(wait(1, 30, "a")), asyncio.create_task(wait(1, 30, "b")),
                 asyncio.create_task(wait(2, 30, "c"))]
        while watch.count < 3:
            await asyncio.sleep(0)
        await wait(3, 30, "over the cap")  # a fourth waiter is answered at once
        done.add(1)
        await asyncio.gather(*tasks[:2])
        await wait(2, 0.01, "timed out")  # its own short wait runs out first
        done.add(2)
        await tasks[2]
        return order

    order = asyncio.run(scenario())
    assert order[:3] == ["over the cap", "a", "b"] and set(order[3:]) == {"timed out", "c"}
    assert all(ids in ([1, 2], [2], [1], []) for ids in calls) and [1, 2] in calls  # both ids in one look-up
    assert watch.count == 0 and not watch._waiting and watch._task is None


def test_with_a_signal_the_watch_looks_when_signalled_not_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve``'s workers set the signal after each outcome: one look when a request
    starts waiting, one per signal, none in between (the fallback interval is long here)."""
    import threading

    monkeypatch.setattr(waits, "CHECK_SECONDS", 0.001)
    monkeypatch.setattr(waits, "FALLBACK_SECONDS", 30.0)
    calls, done, settled = _recording()
    signal = threading.Event()  # the same wait/set/clear as the multiprocessing event
    watch = waits.OutcomeWatch(settled, signal)

    async def scenario() -> None:
        first = asyncio.create_task(watch.wait(1, 30))
        while len(calls) < 1:
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.05)  # with 1 ms polling this would be ~50 look-ups
        assert calls == [[1]]
        second = asyncio.create_task(watch.wait(2, 30))  # a new waiter: looked up at once
        while len(calls) < 2:
            await asyncio.sleep(0.001)
        assert calls[1] == [1, 2]
        done.add(1)
        signal.set()  # a worker committed an outcome
        await first
        assert len(calls) == 3 and not signal.is_set()
        done.add(2)
        signal.set()
        await second

    asyncio.run(scenario())
    assert len(calls) == 4 and watch.count == 0 and not watch._waiting and watch._task is None
