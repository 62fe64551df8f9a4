"""Waking idle scoring workers on upload (``serve``), with polling kept as the fallback.

Deterministic: a recording stand-in for the ``multiprocessing`` event, no clock."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from averitec_tools.leaderboard.store import Store
from averitec_tools.leaderboard.worker import run_worker

COMPETITION = "name: d\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]\n"


def _store(tmp_path: Path) -> Store:
    store = Store(f"sqlite:///{tmp_path}/lb.db")
    store.init(COMPETITION, where="d.yaml")
    store.add_team("blue")
    return store


def test_an_upload_and_a_requeue_wake_the_workers_after_their_commit(tmp_path: Path) -> None:
    store = _store(tmp_path)
    seen: list[list[str]] = []

    def on_queued() -> None:  # what a woken worker would see: another connection
        other = Store(store.url)
        seen.append([str(row["state"]) for row in other.submissions()])
        other.close()

    store.on_queued = on_queued
    first = store.submit(team="blue", system="s", phase="dev", content=b"[1]", file_name="p.json")
    assert seen == [["pending"]]
    assert not store.submit(team="blue", system="s", phase="dev", content=b"[1]", file_name="p.json").created
    assert len(seen) == 1  # the same bytes again: nothing new is pending
    assert store.claim(lease_seconds=60) == first.id
    store.finish(first.id, [])
    assert store.requeue(submission_id=first.id) == 1
    assert seen[-1] == ["pending"] and len(seen) == 2


class RecordingWake:
    """Records what the worker does with its wake-up event; the first wait stops the worker."""

    def __init__(self, stop: threading.Event) -> None:
        self.calls: list[Any] = []
        self.stop = stop

    def clear(self) -> None:
        self.calls.append("clear")

    def wait(self, timeout: float) -> bool:
        self.calls.append(("wait", timeout))
        self.stop.set()
        return True


def test_an_idle_worker_waits_on_its_wake_event_with_the_poll_interval_as_fallback(tmp_path: Path) -> None:
    store = _store(tmp_path)
    stop = threading.Event()
    wake = RecordingWake(stop)
    assert run_worker(store.url, poll_seconds=7.5, stop=stop, prepare=False, wake=wake) == 0
    # cleared before looking for work (an upload after that sets it again), then waited on
    assert wake.calls == ["clear", ("wait", 7.5)]


def test_a_worker_signals_each_outcome_after_its_commit(tmp_path: Path) -> None:
    """The ``settled`` event wakes ``serve``'s ``?wait=`` watcher: set once the outcome (here
    a failure: the file is no prediction list) is committed, not when nothing was taken."""
    store = _store(tmp_path)
    settled = threading.Event()
    assert run_worker(store.url, once=True, prepare=False, settled=settled) == 0
    assert not settled.is_set()
    sid = store.submit(team="blue", system="s", phase="dev", content=b"[1]", file_name="p.json").id
    assert run_worker(store.url, once=True, prepare=False, settled=settled) == 1
    assert settled.is_set() and store.settled([sid]) == {sid}
