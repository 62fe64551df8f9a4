"""``metrics/_gc.py``: a pause of the collector ends by aging its survivors (O(1)), every
``FULL_EVERY``-th pause by a full collection, and never unfreezes what another part froze."""

from __future__ import annotations

import gc
import weakref

import pytest

from averitec_tools.metrics import _gc


class _Node:
    other: object = None


@pytest.fixture(autouse=True)
def _counter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_gc, "_AGED", [0])
    monkeypatch.setattr(_gc, "_KEPT", [False])


def test_survivors_are_aged_and_the_collector_resumes() -> None:
    if gc.get_freeze_count():
        pytest.skip("objects frozen by an earlier test: the pause ends as a plain one")
    with _gc.paused_gc():
        assert not gc.isenabled()
        kept: list[list[int]] = [[]]
    assert gc.isenabled()
    assert any(o is kept for o in gc.get_objects(generation=2))
    assert not any(o is kept for o in gc.get_objects(generation=0))


def test_every_full_every_th_pause_collects_cycles() -> None:
    _gc._AGED[0] = _gc.FULL_EVERY - 1
    with _gc.paused_gc():
        node = _Node()
        node.other = node  # a cycle: only the collector frees it
        probe = weakref.ref(node)
        del node
        assert probe() is not None
    assert probe() is None


def test_frozen_objects_stay_frozen() -> None:
    before = gc.get_freeze_count()
    frozen: list[list[int]] = [[]]
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        with _gc.paused_gc():
            young: list[list[int]] = [[]]
        assert gc.get_freeze_count() == count and young
        assert not _gc.age_survivors()
    finally:
        if before == 0:
            gc.unfreeze()
    assert frozen


def test_after_freeze_kept_survivors_are_frozen_and_cycles_collected_every_full_every() -> None:
    before = gc.get_freeze_count()
    kept: list[list[int]] = [[]]
    _gc.freeze_kept()
    try:
        probes = []
        for _ in range(_gc.FULL_EVERY - 1):  # each pause leaves a cycle: frozen, not yet freed
            with _gc.paused_gc():
                node = _Node()
                node.other = node
                probes.append(weakref.ref(node))
                del node
        assert all(p() is not None for p in probes)
        assert gc.get_count()[0] < gc.get_threshold()[0]  # no young collection left pending
        frozen = gc.get_freeze_count()
        with _gc.paused_gc():  # the FULL_EVERY-th: everything collected, what is left frozen again
            survivor: list[list[int]] = [[]]
        assert all(p() is None for p in probes)
        assert gc.get_freeze_count() < frozen
        assert not any(o is survivor or o is kept for o in gc.get_objects())  # still frozen
        assert gc.isenabled()
    finally:
        if before == 0:
            gc.unfreeze()
