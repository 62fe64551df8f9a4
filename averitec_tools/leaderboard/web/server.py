"""``averitec leaderboard serve``: uvicorn for the web app plus supervised scoring workers.

:class:`Supervisor` starts each worker as its own process and watches it: a worker that
exits (killed, out of memory, a hard stop after the time limit) is logged and started
again after a back-off that doubles with each quick failure (1 s, 2 s, 4 s ... at most
60 s; reset once a worker has run for a minute). Each start and exit is recorded in the
worker-health table, so ``/admin`` and ``status --json`` show every worker of every
server process. The submission a killed worker held is scored again once its lease
runs out (``--lease-seconds``), by whichever worker comes first.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from averitec_tools.jsonio import print_json
from averitec_tools.leaderboard.store import Store, upgrade_schema
from averitec_tools.leaderboard.web.connections import (
    HEADER_TIMEOUT,
    MAX_CONNECTIONS,
    PER_CLIENT,
    REQUEST_SECONDS,
)

logger = logging.getLogger("averitec.leaderboard")
#: The supervisor runs the watchdog every this many rounds of 0.25 s (5 s).
WATCHDOG_ROUNDS = 20


@dataclass
class _Slot:
    index: int
    name: str
    proc: Any = None
    started: float = 0.0
    quick_failures: int = 0
    restart_at: float | None = None


class Supervisor:
    """Start ``n`` worker processes and restart each one that exits, with back-off.

    Args:
        url: The database.
        n: Worker processes.
        lease_seconds, poll_seconds, jobs: Passed to each worker.
        min_backoff, max_backoff: First and longest wait before a restart (seconds).
        stable_after: A worker that ran this long before exiting restarts after ``min_backoff``.
    """

    def __init__(self, url: str, *, n: int, lease_seconds: float, poll_seconds: float = 0.5, jobs: int | None = 1,
                 min_backoff: float = 1.0, max_backoff: float = 60.0, stable_after: float = 60.0) -> None:
        from averitec_tools.leaderboard.health import worker_name
        from averitec_tools.leaderboard.processing import worker_jobs

        self.url = url
        self.args = (lease_seconds, poll_seconds, os.getpid(), worker_jobs(jobs, workers=max(1, n)))
        self.min_backoff, self.max_backoff, self.stable_after = min_backoff, max_backoff, stable_after
        self.slots = [_Slot(i, worker_name(i, server_pid=os.getpid())) for i in range(n)]
        self._context = multiprocessing.get_context("spawn")
        #: Set on every upload (:meth:`notify`): an idle worker takes it at once instead of at its next poll.
        self.wake = self._context.Event()
        #: Set by a worker after each submission it settled: ``?wait=`` requests look then, not every 10 ms.
        self.settled = self._context.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._store: Store | None = None

    def _health(self, slot: _Slot) -> Any:
        from averitec_tools.leaderboard.health import WorkerHealth

        if self._store is None:
            self._store = Store(self.url)
        return WorkerHealth(self._store, slot.name)

    def _spawn(self, slot: _Slot) -> None:
        from averitec_tools.leaderboard.worker import worker_main

        slot.proc = self._context.Process(target=worker_main, args=(self.url, *self.args, slot.name), kwargs={"wake": self.wake, "settled": self.settled},
                                          daemon=True, name=f"averitec-worker-{slot.index}")
        slot.proc.start()
        slot.started = time.monotonic()
        slot.restart_at = None

    def notify(self) -> None:
        """Wake the idle workers: a submission is pending."""
        self.wake.set()

    def start(self) -> None:
        """Start every worker and the thread that watches them (and runs the watchdog, also
        with no worker here: they may run elsewhere, with ``work``)."""
        from averitec_tools.leaderboard.health import prune

        store = Store(self.url)
        prune(store)  # rows of earlier server runs not heard from for a day
        store.close()
        for slot in self.slots:
            self._spawn(slot)
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)
        self._thread.start()

    def check(self) -> None:
        """One round of watching: record exits, restart workers whose back-off is over."""
        from averitec_tools.leaderboard.worker import describe_exit

        now = time.monotonic()
        for slot in self.slots:
            if self._stopping.is_set():
                return
            if slot.restart_at is None and slot.proc is not None and not slot.proc.is_alive():
                slot.proc.join(timeout=0)
                how = describe_exit(slot.proc.exitcode)
                if now - slot.started >= self.stable_after:
                    slot.quick_failures = 0
                delay = min(self.max_backoff, self.min_backoff * 2 ** slot.quick_failures)
                slot.quick_failures += 1
                slot.restart_at = now + delay
                logger.warning("worker %d (pid %s) exited: %s; restarting it in %g s", slot.index, slot.proc.pid, how, delay)
                try:
                    self._health(slot).exited(how=f"pid {slot.proc.pid} {how}; restarting in {delay:g} s", restarting=True)
                except Exception as exc:  # the database may be what failed: keep supervising
                    logger.error("could not record the exit of worker %d: %s", slot.index, exc)
            elif slot.restart_at is not None and now >= slot.restart_at:
                self._spawn(slot)
                logger.info("worker %d restarted (pid %s)", slot.index, slot.proc.pid)

    def _watch(self) -> None:
        rounds = 0
        while not self._stopping.wait(0.25):
            self.check()
            rounds += 1
            if rounds % WATCHDOG_ROUNDS == 0:
                self.watchdog()

    def watchdog(self) -> None:
        """Fail submissions stuck past their time limit (:meth:`Store.watchdog`), even when
        every worker is the one stuck; a database error is logged, never fatal."""
        try:
            if self._store is None:
                self._store = Store(self.url)
            for stuck in self._store.watchdog():
                logger.error("watchdog: submission %d ran past its time limit and was not stopped; failed (not charged)", stuck)
        except Exception as exc:  # keep supervising
            logger.error("watchdog: %s", exc)

    def stop(self) -> None:
        """Stop the workers (SIGTERM, then SIGKILL after 10 s) and record it."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        procs = [s.proc for s in self.slots if s.proc is not None]
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)
        for slot in self.slots:
            with contextlib.suppress(Exception):  # the database may be gone at shutdown
                self._health(slot).exited(how="stopped with the server", restarting=False)
        if self._store is not None:
            self._store.close()


def uvicorn_config(app: Any, *, host: str, port: int, trusted_proxies: tuple[str, ...] = (), header_timeout: float = HEADER_TIMEOUT,
                   max_connections: int = MAX_CONNECTIONS, request_seconds: float = REQUEST_SECONDS,
                   per_client: int = PER_CLIENT) -> Any:
    """uvicorn's settings for the app: proxy headers (``X-Forwarded-For``/``-Proto``)
    honoured only from ``trusted_proxies`` (none by default: the connection's address is
    the client's), the header and request timeouts and connection caps of
    :func:`~averitec_tools.leaderboard.web.connections.bounded_protocol` (no cap per client
    behind a trusted proxy: every client would share its address), no ``server`` header.

    Example:
        >>> config = uvicorn_config(None, host="127.0.0.1", port=8000)
        >>> config.proxy_headers, config.http.header_timeout
        (False, 10.0)
        >>> uvicorn_config(None, host="127.0.0.1", port=8000, trusted_proxies=("10.0.0.1",)).forwarded_allow_ips
        ['10.0.0.1']
    """
    import uvicorn

    from averitec_tools.leaderboard.web.connections import bounded_protocol

    return uvicorn.Config(app, host=host, port=port, log_level="warning", server_header=False, proxy_headers=bool(trusted_proxies),
                          forwarded_allow_ips=list(trusted_proxies) or None,
                          http=bounded_protocol(header_timeout=header_timeout, max_connections=max_connections,
                                                request_seconds=request_seconds,
                                                per_client=None if trusted_proxies else per_client))


def serve(*, url: str, host: str = "127.0.0.1", port: int = 8000, workers: int = 1, lease_seconds: float = 120.0,
          poll_seconds: float = 0.5, jobs: int | None = 1, json_out: bool = False, secret_file: str | None = None,
          trusted_proxies: tuple[str, ...] = (), header_timeout: float = HEADER_TIMEOUT, max_connections: int = MAX_CONNECTIONS) -> None:
    """Run the leaderboard at ``http://host:port/`` until interrupted (the options: :func:`uvicorn_config`)."""
    import uvicorn

    from averitec_tools.leaderboard.web.app import create_app
    from averitec_tools.leaderboard.worker import configure_logging

    configure_logging()
    store = Store(url, create=False)
    limits = store.competition().rate_limits  # UserError if `init` has not run
    store.check_writable()  # before "serving": a read-only database would stop the server at once
    upgrade_schema(store.engine)
    store.close()
    supervisor = Supervisor(url, n=workers, lease_seconds=lease_seconds, poll_seconds=poll_seconds, jobs=jobs)
    app = create_app(url, secret_file=secret_file, on_queued=supervisor.notify,
                     settled=supervisor.settled if workers > 0 else None)  # creates the session secret if absent
    config = uvicorn_config(app, host=host, port=port, trusted_proxies=trusted_proxies, header_timeout=header_timeout,
                            max_connections=max_connections, request_seconds=limits.request_seconds,
                            per_client=limits.connections_per_client)
    address = f"http://{host}:{port}/"
    if json_out:
        print_json({"url": address, "db": url, "workers": workers})
    else:
        print(f"averitec leaderboard: serving {address} (database {url}, {workers} scoring worker(s)); Ctrl-C stops", flush=True)
    sys.stdout.flush()
    supervisor.start()
    # uvicorn re-raises SIGTERM after its graceful shutdown; with the default handler that
    # would end the process before `finally` stops the workers (they also watch our pid).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        uvicorn.Server(config).run()
    finally:
        supervisor.stop()
