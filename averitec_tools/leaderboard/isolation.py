"""One scoring job in a child process with a memory limit, so the worker never grows.

:func:`run_isolated` forks the warm worker (the child shares its prepared gold side,
WordNet and code copy-on-write), runs the job there and sends the result back through a
pipe; the child then exits, so whatever the job allocated goes back to the operating
system whatever the allocator would have kept. While it waits, the worker reads the
child's private memory (pages it no longer shares with the worker) every 20 ms and
kills it past ``memory_bytes``: that is the submitter's file, a refusal charged to the
team ("too large to score"), never a dead worker. A stop of the worker (its time limit
or a cancel: an exception in the main thread while it waits) kills the child too.

An address-space limit (``RLIMIT_AS``, ``RLIMIT_DATA``) was tried first and refused even
the 50-claim demo submission: the BLAS thread the child starts reserves about 1 GB of
address space it never touches, so the bound is on memory really held instead.

A child costs a new submission some speed (it starts from the worker's caches but keeps
nothing it learns: measured on the 50-claim demo file, 0.36 s in the warm worker, 0.7 s in
a child, under a load average of 20), so :class:`Isolation` scores uploads of at most
1 MiB (the 500-claim 2024 baseline is 0.73 MB) in the worker, whose memory that size
bounds, and only larger ones in a child.

POSIX only (``fork``, Linux ``/proc``); elsewhere the job runs in the worker itself.

Example:
    >>> run_isolated(lambda: sum(range(10)), memory_bytes=256 << 20, file_name="p.json")
    45
    >>> try:
    ...     run_isolated(lambda: [b"x" * (1 << 20) for _ in range(1024)], memory_bytes=64 << 20, file_name="p.json")
    ... except Exception as exc:
    ...     print(exc.team)
    p.json: submission too large to score: it needs more than 64 MiB of memory (the competition's limit per submission; make it smaller: fewer or shorter evidence strings)
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from averitec_tools.leaderboard.failures import Failure, internal_failure

T = TypeVar("T")


def too_large_reason(file_name: str, memory_bytes: int) -> str:
    """The team-visible reason of a job past its memory limit."""
    return (f"{file_name}: submission too large to score: it needs more than {memory_bytes >> 20} MiB of memory "
            "(the competition's limit per submission; make it smaller: fewer or shorter evidence strings)")


def private_bytes(pid: int | str = "self") -> int:
    """Memory a process holds alone (``Private_Clean + Private_Dirty`` of
    ``/proc/PID/smaps_rollup``: what goes back to the system when it exits; pages it still
    shares copy-on-write with the worker are not counted). 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return sum(int(line.split()[1]) << 10 for line in fh if line.startswith(("Private_Clean:", "Private_Dirty:")))
    except (OSError, ValueError, IndexError):
        return 0


def _die_with_parent() -> None:
    """Linux: SIGKILL this process when the worker that forked it dies (a hard stop's
    ``os._exit``, a SIGKILL), so no orphaned job scores on."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(job: Callable[[], Any], write_fd: int, memory_bytes: int, file_name: str) -> None:
    _die_with_parent()
    outcome: tuple[str, Any]
    try:
        outcome = ("ok", job())
    except MemoryError:
        outcome = ("failure", Failure(too_large_reason(file_name, memory_bytes), "MemoryError while scoring"))
    except Failure as failure:
        outcome = ("failure", failure)
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the worker
        outcome = ("failure", internal_failure(exc))
    data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(data)
    while view:
        view = view[os.write(write_fd, view):]
    os.close(write_fd)


@dataclass
class JobStats:
    """What the last :func:`run_isolated` measured: the child's peak private memory, and
    whether the worker killed it (past its memory, or stopped)."""

    peak_private_bytes: int = 0
    killed: bool = False


#: Filled by each :func:`run_isolated` call (for logs and the benchmarks).
LAST = JobStats()


def run_isolated(job: Callable[[], T], *, memory_bytes: int, file_name: str, poll_seconds: float = 0.02) -> T:
    """Run ``job`` in a forked child that may hold at most ``memory_bytes`` of its own.

    The worker polls the child's private memory (:func:`private_bytes`) every
    ``poll_seconds`` while it waits and kills it past ``memory_bytes``; what a child can
    allocate between two polls is the only overshoot.

    Args:
        job: What to run (it sees the worker's state as it is now; what it changes
            stays in the child).
        memory_bytes: The memory the child may hold beyond what it shares with the worker.
        file_name: The team's file name, for the too-large reason.
        poll_seconds: How often the child's memory is read.

    Returns:
        What ``job`` returned (it must pickle).

    Raises:
        Failure: what the job raised as a :class:`Failure`; a charged refusal for a job
            past its memory; an internal failure (not charged) for anything else,
            including a child that died without a result.
    """
    if not hasattr(os, "fork"):
        return job()
    pid, read_fd = _fork(job, memory_bytes, file_name)
    LAST.peak_private_bytes, LAST.killed = 0, False
    chunks, too_large, status = _watch(pid, read_fd, memory_bytes=memory_bytes, poll_seconds=poll_seconds)
    if too_large:
        raise Failure(too_large_reason(file_name, memory_bytes),
                      f"scoring process {pid} held {LAST.peak_private_bytes >> 20} MiB of its own, past the limit of "
                      f"{memory_bytes >> 20} MiB; killed")
    if not chunks:
        raise Failure(internal_failure(RuntimeError("no result")).team,
                      f"scoring process {pid} died without a result ({_describe(status)})", charged=False)
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "ok":
        return value  # type: ignore[no-any-return]
    raise value


def _fork(job: Callable[[], Any], memory_bytes: int, file_name: str) -> tuple[int, int]:
    """(child pid, read end of the pipe its pickled result comes through); the child never returns."""
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 0
        try:
            os.close(read_fd)
            _child(job, write_fd, memory_bytes, file_name)
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _watch(pid: int, read_fd: int, *, memory_bytes: int, poll_seconds: float) -> tuple[list[bytes], bool, int]:
    """(result bytes, killed for its memory, wait status) of the child: its pipe read while its private
    memory is polled; a child past ``memory_bytes`` (or left when the wait is stopped) is killed and reaped."""
    chunks: list[bytes] = []
    too_large = reaped = False
    try:
        while True:
            ready, _, _ = select.select([read_fd], [], [], poll_seconds)
            if ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                continue
            held = private_bytes(pid)
            LAST.peak_private_bytes = max(LAST.peak_private_bytes, held)
            if held > memory_bytes:
                too_large = True
                break
        if not too_large:
            _, status = os.waitpid(pid, 0)
            reaped = True
    finally:
        os.close(read_fd)
        if not reaped:  # past its memory, or stopped while waiting (time limit, cancel)
            LAST.killed = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    return chunks, too_large, status


@dataclass
class Isolation:
    """Where a worker scores each submission, so that its memory stays bounded.

    An upload of at most ``in_process_bytes`` is scored in the worker itself, warm (its
    remembered pair scores make resubmissions fast); its memory is bounded by its size.
    Once ``recycle_bytes`` of uploads have been scored that way, the worker forgets all
    but the gold side (:meth:`recycle_due`), so what it keeps is bounded by bytes too,
    not by a count of strings. A larger upload is scored in a child process capped at
    ``memory_bytes`` (:func:`run_isolated`), whose memory goes back to the system after.

    Example:
        >>> iso = Isolation(in_process_bytes=10)
        >>> iso.in_process(b"[1, 2]"), iso.in_process(b"[" + b"1, " * 10 + b"1]")
        (True, False)
    """

    in_process_bytes: int = 1 << 20
    recycle_bytes: int = 64 << 20
    scored_in_process: int = 0

    def in_process(self, content: bytes) -> bool:
        return len(content) <= self.in_process_bytes

    def run(self, job: Callable[[], T], *, content: bytes, memory_bytes: int, file_name: str) -> T:
        """``job`` (scoring ``content``) where :class:`Isolation` says."""
        if not self.in_process(content):
            try:
                return run_isolated(job, memory_bytes=memory_bytes, file_name=file_name)
            finally:
                if LAST.killed:  # kept scoring helpers may be mid-way through its parts: replace them
                    self.scored_in_process = self.recycle_bytes
        self.scored_in_process += len(content)
        return job()

    def recycle_due(self) -> bool:
        """Whether the worker should forget all but the gold side now (call
        ``scorer.reset()`` then, with no other thread running: it forks new helpers)."""
        if self.scored_in_process < self.recycle_bytes:
            return False
        self.scored_in_process = 0
        return True


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"


__all__ = ["LAST", "Isolation", "private_bytes", "run_isolated"]
