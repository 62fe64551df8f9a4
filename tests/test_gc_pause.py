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


def test_frozen_objects_stay_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_freeze_count()
    frozen: list[list[int]] = [[]]
    gc.freeze()
    unfreeze = gc.unfreeze
    try:
        count = gc.get_freeze_count()
        # nothing unfrozen, nothing young frozen: the count may only fall, as another thread
        # of the test process (xdist's) frees frozen objects meanwhile
        monkeypatch.setattr(gc, "unfreeze", lambda: pytest.fail("the pause unfroze the frozen objects"))
        with _gc.paused_gc():
            young: list[list[int]] = [[]]
        assert 0 < gc.get_freeze_count() <= count and young
        assert not _gc.age_survivors()
    finally:
        monkeypatch.undo()
        if before == 0:
            unfreeze()
    assert frozen


def test_after_freeze_kept_pauses_end_plainly_and_cycles_are_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_freeze_count()
    kept: list[list[int]] = [[]]
    _gc.freeze_kept()
    try:
        monkeypatch.setattr(gc, "get_freeze_count", lambda: pytest.fail("the frozen list was walked"))
        with _gc.paused_gc():  # a cycle the job leaves behind: not frozen, so collectable
            node = _Node()
            node.other = node
            probe = weakref.ref(node)
            del node
        assert _gc._AGED == [0]  # ended as a plain pause: nothing aged
        gc.collect()
        assert probe() is None
        assert not any(o is kept for o in gc.get_objects())  # the kept state stays frozen
        assert gc.isenabled()
    finally:
        monkeypatch.undo()
        if before == 0:
            gc.unfreeze()
