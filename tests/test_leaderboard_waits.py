"""The outcome watch behind ``?wait=``: one look-up for all waiters, a cap on waiters, no
task left when nobody waits (a fake store: no server, no database)."""

from __future__ import annotations

import asyncio

import pytest
from conftest import skip_or_fail

try:
    import fastapi  # noqa: F401
except ImportError:  # the leaderboard extra: a skip locally, a failure in CI
    skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')", module_level=True)

from averitec_tools.leaderboard.web import waits  # noqa: E402


def test_one_lookup_for_every_waiter_and_a_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waits, "CHECK_SECONDS", 0.001)
    monkeypatch.setattr(waits, "MAX_WAITERS", 3)
    calls: list[list[int]] = []
    done: set[int] = set()

    def settled(ids: list[int]) -> set[int]:
        calls.append(sorted(ids))
        return done & set(ids)

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
