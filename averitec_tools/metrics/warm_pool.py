"""Helper processes forked from a warm METEOR engine and kept between scoring calls.

A long-lived scorer (a leaderboard worker) tokenises and stems the gold side once and
loads WordNet once. Forking helpers *after* that gives each of them those caches without
copying or recomputing them, and keeping the helpers alive means no submission pays for
a fork. Per call, the tasks' groups (their claims) are cut into contiguous ranges: the
calling process solves the first range itself and helper ``k`` always gets range
``k + 1``, so a claim's strings are tokenised in one process, and a resubmission meets
its remembered pair scores in the same process. Each process solves its range in one
batch (:func:`~averitec_tools.metrics.hungarian_meteor.solve_batch`: its new strings
prepared at once, its distinct pairs aligned at once); the caller does not prepare the
helpers' strings first (it once did, and each helper then tokenised them again one pair
at a time: a warm board's new submission took 2.6 s instead of 0.7 s).
Every task is a pure function of its strings, so the results are identical to solving
everything in one process (tested).

If a helper dies (killed, out of memory), its part is solved in the calling process, the
helper is dropped and a warning goes to stderr: a submission is never lost or changed by
it. On Linux, helpers are killed with their parent (``PR_SET_PDEATHSIG``), so a killed
worker leaves no orphans.

Example:
    >>> from averitec_tools.metrics.hungarian_meteor import HungarianTask
    >>> pool = WarmPool(engine=MeteorEngine(allow_download=False), processes=1)
    >>> pool.solve([HungarianTask(("a cat",), ("a cat",))])
    [0.9375]
    >>> pool.close()
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from averitec_tools.forking import fork_is_safe
from averitec_tools.metrics._gc import paused_gc
from averitec_tools.metrics.meteor import MeteorEngine

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from averitec_tools.metrics.hungarian_meteor import HungarianTask

_PR_SET_PDEATHSIG = 1
#: A helper runs a full garbage collection after every this many parts (between calls).
COLLECT_EVERY = 20


def _die_with_parent(parent_pid: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        # without it a helper still ends when its pipe closes
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(0)


def _helper_main(conn: Connection, inherited: list[Connection], engine: MeteorEngine, parent_pid: int) -> None:
    """A helper's loop: receive a part, send back its scores; stop when the pipe closes."""
    from averitec_tools.metrics.hungarian_meteor import solve_batch

    for other in inherited:  # the parent's ends of every pipe: EOF must reach each side
        other.close()
    _die_with_parent(parent_pid)
    engine.pool = None  # a helper solves its part itself
    parts = 0
    while True:
        try:
            tasks = conn.recv()
        except (EOFError, OSError):
            return
        try:
            with paused_gc():
                reply: tuple[str, Any] = ("ok", solve_batch(tasks, engine))
        except Exception as exc:  # the caller re-solves the part and raises it there
            reply = ("error", repr(exc))
        conn.send(reply)
        engine.trim()
        parts += 1
        if parts % COLLECT_EVERY == 0:
            gc.collect()  # after replying: the caller does not wait for it


class WarmPool:
    """``processes - 1`` helper processes forked now from ``engine``, plus the caller.

    Args:
        engine: The warm engine; fork after its gold strings are prepared.
        processes: Processes per call, the caller included (1: no helpers).

    Raises:
        ValueError: ``processes`` < 1.
    """

    def __init__(self, *, engine: MeteorEngine, processes: int) -> None:
        if processes < 1:
            raise ValueError(f"processes must be >= 1, not {processes}")
        self.engine = engine
        self._helpers: list[tuple[int, Connection]] = []
        if not fork_is_safe() or processes == 1:  # no fork (or a JVM here, forking.py): the caller alone
            return
        from multiprocessing import Pipe

        engine.tokenizer.load()
        engine.load()  # punkt_tab read and the tables opened once here, shared by the forks
        parent = os.getpid()
        for _ in range(processes - 1):
            ours, theirs = Pipe()
            inherited = [ours] + [conn for _, conn in self._helpers]
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the helper: never returns into the caller's code
                code = 0
                try:
                    _helper_main(theirs, inherited, engine, parent)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            theirs.close()
            self._helpers.append((pid, ours))

    @property
    def processes(self) -> int:
        """Processes that share a call (the caller and the live helpers)."""
        return 1 + len(self._helpers)

    def helper_pids(self) -> list[int]:
        """Process ids of the helpers (for monitoring and tests)."""
        return [pid for pid, _ in self._helpers]

    def solve(self, tasks: Sequence[HungarianTask], *, groups: Sequence[int] | None = None) -> list[float]:
        """Hungarian METEOR of every task, in order (identical to one process).

        Args:
            tasks: The tasks.
            groups: A non-negative group id per task (e.g. its claim): a group's tasks go
                to one process, which then tokenises their shared strings once. Groups
                are cut into contiguous ranges, one per process. Default: each task alone.
        """
        from averitec_tools.metrics.hungarian_meteor import solve_batch

        if groups is None:
            groups = range(len(tasks))
        if len(groups) != len(tasks):
            raise ValueError(f"{len(groups)} group ids for {len(tasks)} tasks")
        n_groups = max(groups, default=-1) + 1
        k = self.processes
        parts: list[list[int]] = [[] for _ in range(k)]
        for i, group in enumerate(groups):
            parts[group * k // n_groups].append(i)
        sent = []
        for (pid, conn), indices in zip(self._helpers, parts[1:], strict=True):
            try:
                conn.send([tasks[i] for i in indices])
                sent.append((pid, conn, indices, True))
            except OSError:
                sent.append((pid, conn, indices, False))
        results: list[float] = [0.0] * len(tasks)
        for i, value in zip(parts[0], solve_batch([tasks[i] for i in parts[0]], self.engine), strict=True):
            results[i] = value
        dead = []
        for pid, conn, indices, ok in sent:
            reply: Any = None
            if ok:
                try:
                    reply = conn.recv()
                except (EOFError, OSError):
                    reply = None
            if reply is None:
                dead.append((pid, conn))
            if reply is None or reply[0] != "ok":
                reply = ("ok", solve_batch([tasks[i] for i in indices], self.engine))  # a real error raises here
            for i, value in zip(indices, reply[1], strict=True):
                results[i] = value
        for pid, conn in dead:
            self._helpers.remove((pid, conn))
            conn.close()
            _reap(pid, timeout=1.0)
            print(f"averitec: warning: a scoring helper process died; its part was scored in process {os.getpid()} "
                  f"({len(self._helpers)} helper(s) remain)", file=sys.stderr)
        return results

    def close(self) -> None:
        """Stop the helpers (closing their pipes ends their loops)."""
        for _, conn in self._helpers:
            conn.close()
        for pid, _ in self._helpers:
            if not _reap(pid, timeout=5.0):
                os.kill(pid, 9)
                _reap(pid, timeout=5.0)
        self._helpers.clear()
        if self.engine.pool is self:
            self.engine.pool = None


def _reap(pid: int, *, timeout: float) -> bool:
    """Wait up to ``timeout`` s for helper ``pid`` to exit; whether it did."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)


__all__ = ["WarmPool"]
