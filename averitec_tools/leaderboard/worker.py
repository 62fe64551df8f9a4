"""The scoring worker: take the next submission, score it within its limits, store the outcome.

Memory is bounded per submission (:mod:`averitec_tools.leaderboard.isolation`): an upload
of at most 1 MiB is scored in the warm worker (its size bounds the memory, and the
worker forgets all but the gold side after every 64 MiB of them); a larger one in a
child process forked from it, killed past ``scoring.memory_mb`` of its own memory (a
refusal charged to the team, "too large to score"), whose memory goes back to the
system when it exits.

:func:`process_one` claims one pending submission with a lease that a heartbeat thread
renews, and scores it under the competition's ``scoring.timeout_seconds``
(:class:`~averitec_tools.leaderboard.deadline.Deadline`). The outcome is stored in one
transaction: the results and ``finished``, or ``failed`` with the team-safe reason and
the organisers' full one (:mod:`averitec_tools.leaderboard.failures`). A submission
cancelled while it is scored is dropped at the next heartbeat. :func:`run_worker` loops
over the queue, returns submissions of dead workers to it (:meth:`Store.recover`) and
keeps its row in the worker-health table current.

The server log is the ``averitec.leaderboard`` logger (stderr under ``serve``/``work``).
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.deadline import Deadline, Interrupted
from averitec_tools.leaderboard.failures import Failure, internal_failure
from averitec_tools.leaderboard.health import WorkerHealth
from averitec_tools.leaderboard.isolation import Isolation
from averitec_tools.leaderboard.processing import Scorer
from averitec_tools.leaderboard.queue import _LostLease
from averitec_tools.leaderboard.store import Store

logger = logging.getLogger("averitec.leaderboard")
#: Seconds, past the time limit, after which a worker whose submission did not stop
#: (stuck inside one C call) records the failure and exits for its supervisor to restart.
HARD_STOP_GRACE = 30.0
#: Seconds between two looks for submissions of stopped workers and past the watchdog (two
#: transactions; leases and time limits are counted in seconds to minutes).
UPKEEP_SECONDS = 0.5
#: This process's :class:`Isolation` (what it scored in itself since it last forgot).
_ISOLATION = Isolation()


def time_limit_reason(file_name: str, seconds: float) -> str:
    """The team-visible reason of a submission stopped by the time limit.

    Example:
        >>> time_limit_reason("p.json", 600)
        "p.json: scoring stopped at the competition's time limit of 600 s (make the submission smaller: fewer or shorter evidence strings)"
    """
    return (f"{file_name}: scoring stopped at the competition's time limit of {seconds:g} s "
            "(make the submission smaller: fewer or shorter evidence strings)")


def configure_logging() -> None:
    """The server log on stderr, with timestamps and the process id (once per process)."""
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s averitec-leaderboard[%(process)d] %(levelname)s %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


def process_one(store: Store, scorer: Scorer, *, lease_seconds: float = 120.0, submission_id: int | None = None,
                health: WorkerHealth | None = None, hard_exit: bool = False, isolation: Isolation | None = None) -> int | None:
    """Claim one pending submission (or ``submission_id``), score and audit it and store
    the outcome; returns its id (``None``: nothing pending).

    With ``hard_exit`` (a supervised worker process) a submission that does not stop at
    its time limit within :data:`HARD_STOP_GRACE` seconds is failed and the process
    exits, for its supervisor to replace.
    """
    taken = None if health is None else (lambda conn, sid: health.beat_in(conn, state="scoring", submission_id=sid))
    sid = store.claim(lease_seconds=lease_seconds, submission_id=submission_id,
                      by=health.name if health is not None else f"pid {os.getpid()}", also=taken)
    if sid is None:
        return None
    isolation = isolation if isolation is not None else _ISOLATION
    row = store.submission(sid)
    assert row is not None
    comp = store.competition()
    deadline = _deadline(store, sid, row["file_name"], comp.scoring.timeout_seconds, hard_exit=hard_exit)
    stop = threading.Event()
    beat = threading.Thread(target=_heartbeat, args=(store, sid, lease_seconds, stop, deadline, health), name=f"lease-{sid}",
                            daemon=True)
    interrupted = idle_written = False
    started = time.monotonic()
    try:
        with deadline:
            beat.start()
            results, audit = _score_and_audit(store, scorer, sid, row, isolation)
    except Interrupted as stopped:
        interrupted = True
        _record_stop(store, sid, row, stopped.kind, comp.scoring.timeout_seconds)
    except Failure as failure:
        store.fail(sid, failure.team, server_reason=failure.server, charged=failure.charged, drop_content=failure.drop_content)
        logger.info("submission %d (team %s) failed%s: %s", sid, row["team"], "" if failure.charged else " (not charged)", failure.server)
    except Exception as exc:  # a bug must not leave the submission stuck
        internal = internal_failure(exc)
        store.fail(sid, internal.team, server_reason=internal.server, charged=internal.charged)
        logger.error("submission %d: internal error while scoring:\n%s", sid, internal.server)
    else:
        # the results, the audit and the worker's row in one commit
        done = None if health is None else (lambda conn: health.beat_in(conn, state="idle", scored=1))
        try:
            store.finish(sid, results, audit=audit, also=done)
            idle_written = True
            logger.info("submission %d (team %s) finished in %.2f s", sid, row["team"], time.monotonic() - started)
        except _LostLease:
            store.save_audit(sid, audit)
            logger.warning("submission %d was taken back or cancelled while being scored; its result is dropped", sid)
    finally:
        stop.set()
        if beat.is_alive():
            beat.join()
        if interrupted or isolation.recycle_due():
            scorer.reset()  # after the heartbeat stopped: it forks new helpers
    if health is not None and not idle_written:
        health.beat(state="idle", scored=1, force=True)
    return sid


def _deadline(store: Store, sid: int, file_name: str, limit: float, *, hard_exit: bool) -> Deadline:
    """The submission's time limit; with ``hard_exit`` a stop that does not land fails it and exits the process."""

    def hard_stop() -> None:
        store.fail(sid, time_limit_reason(file_name, limit), server_reason=f"submission {sid}: still scoring "
                   f"{HARD_STOP_GRACE:g} s after the time limit ({limit:g} s); worker process {os.getpid()} exits")
        logger.error("submission %d did not stop at its time limit; worker %d exits for its supervisor to restart it", sid, os.getpid())
        logging.shutdown()
        os._exit(3)

    return Deadline(limit, hard_after=HARD_STOP_GRACE if hard_exit else None, on_hard_stop=hard_stop)


def _heartbeat(store: Store, sid: int, lease_seconds: float, stop: threading.Event, deadline: Deadline,
               health: WorkerHealth | None) -> None:
    """Renew the lease until ``stop``; a lease that cannot be renewed (cancelled, taken back) interrupts the run."""
    while not stop.wait(lease_seconds / 3):
        if not store.renew(sid, lease_seconds=lease_seconds):
            deadline.interrupt("cancelled")
            return
        if health is not None:
            health.beat(state="scoring", submission_id=sid)


def _score_and_audit(store: Store, scorer: Scorer, sid: int, row: dict[str, Any],
                     isolation: Isolation) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Score the submission (in this process or a memory-capped child), then audit its
    evidence (:mod:`~averitec_tools.leaderboard.audit_flags`): the results and the audit
    (stored with them). A phase rule the audit breaks refuses it (:class:`Failure`,
    charged, the reason shown to the team; the audit is stored)."""
    from averitec_tools.leaderboard.audit_flags import audit_submission, rejection
    from averitec_tools.metrics._gc import paused_gc

    comp = store.competition()
    phase = comp.phase(row["phase"])
    content, file_name = store.content(sid), row["file_name"]
    with contextlib.suppress(UserError):  # in this process, kept for the next runs (score() reports a missing gold file)
        scorer.prepare_gold(phase)

    snapshots = {} if row.get("fresh_judge") else store.judge_snapshots(sid)

    def job() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        # The collector paused for the whole job, not only the scoring: validation's parsed
        # upload and the audit's records (acyclic, bounded by the upload) otherwise trigger
        # young collections whose survivors fill the middle generation (~13 ms of a 500-claim
        # submission's ~31 ms of collections, measured with gc.callbacks).
        with paused_gc():
            results = scorer.score(phase=phase, content=content, file_name=file_name, limits=comp.validation, snapshots=snapshots)
            return results, audit_submission(content, gold=phase.gold)  # after validation: the file is within the limits

    results, audit = isolation.run(job, content=content, memory_bytes=comp.scoring.memory_bytes, file_name=file_name)
    reason = rejection(audit, rules=phase.reject, file_name=file_name)
    if reason is not None:
        store.save_audit(sid, audit)
        raise Failure(reason, f"submission {sid}: {reason}", charged=True)
    return results, audit


def _record_stop(store: Store, sid: int, row: dict[str, Any], kind: str, limit: float) -> None:
    if kind == "time":
        store.fail(sid, time_limit_reason(row["file_name"], limit), server_reason=f"submission {sid}: stopped at the time limit ({limit:g} s)")
        logger.warning("submission %d (team %s) stopped at the time limit of %g s", sid, row["team"], limit)
    else:
        logger.info("submission %d was cancelled (or taken back) while being scored; dropped", sid)


def run_worker(
    url: str,
    *,
    lease_seconds: float = 120.0,
    poll_seconds: float = 0.5,
    stop: threading.Event | None = None,
    once: bool = False,
    prepare: bool = True,
    parent_pid: int | None = None,
    jobs: int | None = 1,
    name: str | None = None,
    hard_exit: bool = False,
    wake: Any | None = None,
    settled: Any | None = None,
) -> int:
    """Score pending submissions until ``stop`` is set (or, with ``once``, none is left).

    Idle, the worker looks for new submissions every ``poll_seconds``, or at once when
    ``wake`` (a ``multiprocessing`` event that ``serve`` sets on every upload) is set; it sets
    ``settled`` (another) after each submission it took, once its outcome is committed.

    With ``parent_pid`` the worker also stops when that process is gone (a server killed
    without cleaning up must not leave workers behind). With ``name`` it keeps that row of
    the worker-health table (:mod:`averitec_tools.leaderboard.health`) current.
    """
    store = Store(url)
    scorer = Scorer(n_resamples=store.competition().n_resamples, jobs=jobs)
    health = WorkerHealth(store, name) if name else None
    if health is not None:
        health.started(pid=os.getpid())
    done = 0
    upkeep = -math.inf
    try:
        if prepare:
            _warm_up(store, scorer)
        while stop is None or not stop.is_set():
            if parent_pid is not None and os.getppid() != parent_pid:
                break
            if wake is not None:
                wake.clear()  # before claiming: an upload committed after this sets it again
            if health is not None:
                health.beat(state="idle")
            if time.monotonic() - upkeep >= UPKEEP_SECONDS:  # not between a wake-up and its claim every time
                upkeep = time.monotonic()
                _upkeep(store)
            if process_one(store, scorer, lease_seconds=lease_seconds, health=health, hard_exit=hard_exit) is not None:
                done += 1
                if settled is not None:
                    settled.set()
                continue
            if once:
                break
            _wait_for_work(wake, poll_seconds)
    finally:
        scorer.close()
        if health is not None:
            with contextlib.suppress(UserError):  # the database went away: the supervisor records the exit
                health.beat(state="stopped", force=True)
        store.close()
    return done


def _upkeep(store: Store) -> None:
    """Return submissions of stopped workers to the queue and fail those past the watchdog."""
    if store.recover():
        logger.info("returned submissions of a stopped worker to the queue (or failed them after their last attempt)")
    for stuck in store.watchdog():
        logger.error("watchdog: submission %d ran past its time limit and was not stopped; failed (not charged)", stuck)


def _warm_up(store: Store, scorer: Scorer) -> None:
    """Prepare every phase's gold side, freeze it out of the collector, fork the kept helpers."""
    from averitec_tools.metrics._gc import freeze_kept

    for phase in store.competition().phases:
        try:
            scorer.prepare_gold(phase)
        except UserError as exc:
            logger.warning("%s", exc)
    # The prepared gold side, WordNet and the code are kept for the process's life:
    # take them out of the collector's walks (and out of the helpers' copy-on-write);
    # each job's pause then freezes its survivors too (metrics/_gc.py).
    freeze_kept()
    scorer.start_helpers()


def _wait_for_work(wake: Any | None, poll_seconds: float) -> None:
    """Sleep ``poll_seconds``, or until ``wake`` (set by ``serve`` on every upload) is set."""
    if wake is None:
        time.sleep(poll_seconds)
    else:
        wake.wait(poll_seconds)


def worker_main(url: str, lease_seconds: float, poll_seconds: float, parent_pid: int, jobs: int | None = 1,
                name: str | None = None, wake: Any | None = None, settled: Any | None = None) -> None:
    """Entry point of a worker process started by ``serve`` (stops on SIGTERM or when the
    server process is gone)."""
    import signal

    configure_logging()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the server, which stops us
    run_worker(url, lease_seconds=lease_seconds, poll_seconds=poll_seconds, stop=stop, parent_pid=parent_pid, jobs=jobs,
               name=name, hard_exit=True, wake=wake, settled=settled)


def describe_exit(code: Any) -> str:
    """A process exit code as words (``-9`` is SIGKILL).

    Example:
        >>> describe_exit(-9), describe_exit(3)
        ('killed by SIGKILL', 'exit code 3')
    """
    import signal

    if isinstance(code, int) and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


__all__ = ["configure_logging", "describe_exit", "process_one", "run_worker", "worker_main"]
