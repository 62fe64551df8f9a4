"""Start or join a Ray runtime with bounded waits and one-line errors.

``address=None`` starts a private local runtime (``num_cpus`` CPUs, no dashboard, usage
statistics off; Ray 2.60 advertises the machine's own address even when asked for
127.0.0.1, and protects its ports with token authentication); an address (``HOST:PORT``, ``ray://HOST:PORT`` or
``auto``) joins an existing cluster. Before joining, the address is probed with a plain
TCP connect bounded by ``timeout_s``, so an unreachable cluster is reported at once
instead of Ray's own long retry loop.

Example:
    >>> parse_address("ray://10.0.0.5:10001")
    ('10.0.0.5', 10001)
    >>> check_reachable("127.0.0.1:1", timeout_s=0.5)
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --ray-address 127.0.0.1:1: no Ray cluster answers there (...)
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

from averitec_tools.errors import ResourceError, UserError

#: Seconds to wait for a cluster address to accept a connection.
DEFAULT_CONNECT_TIMEOUT_S = 10.0
#: Signals the JVM handles itself (it raises SIGSEGV on purpose: implicit null checks, safepoints).
JVM_SIGNALS: tuple[str, ...] = ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL")


def parse_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address.

    Raises:
        UserError: The address has no numeric port.
    """
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UserError(f"--ray-address {address}: expected HOST:PORT or ray://HOST:PORT")
    return host.strip("[]"), int(port)


def check_reachable(address: str, *, timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S) -> None:
    """Raise a one-line :class:`UserError` unless ``address`` accepts a TCP connection."""
    host, port = parse_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise UserError(
            f"--ray-address {address}: no Ray cluster answers there ({reason} after at most {timeout_s:g} s)",
            hint="start one with `ray start --head --port PORT` or drop --ray-address for a local runtime",
        ) from None


def import_ray() -> Any:
    """Import ray, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise ResourceError("--engine ray needs Ray", hint="pip install 'averitec-tools[ray]'") from None
    return ray


@contextlib.contextmanager
def keep_jvm_signal_handlers() -> Iterator[None]:
    """Put back the JVM's crash-signal handlers after the block (Linux; only with a JVM running).

    ``ray.init`` installs failure-signal handlers in the driver (SIGSEGV, SIGBUS, ...).
    A JVM already running in this process (pyserini, through pyjnius) relies on its own
    SIGSEGV handler for normal operation, so with Ray's in place it dies at its next
    implicit null check (reproduced: pyserini index + search, then ``ray.init``, then
    more searches → segmentation fault). The JVM chains signals that are not its own to
    the handlers it found at start-up, so restoring it loses nothing. A JVM started
    after Ray installs its handlers over Ray's and needs nothing.
    """
    jnius_config = sys.modules.get("jnius_config")
    if jnius_config is None or not getattr(jnius_config, "vm_running", False) or not sys.platform.startswith("linux"):
        yield
        return
    import ctypes
    import signal

    libc = ctypes.CDLL(None, use_errno=True)
    saved = {}
    for name in JVM_SIGNALS:
        action = ctypes.create_string_buffer(512)  # opaque struct sigaction (152 bytes on glibc x86-64)
        if libc.sigaction(int(getattr(signal, name)), None, action) == 0:
            saved[name] = action
    try:
        yield
    finally:
        for name, action in saved.items():
            libc.sigaction(int(getattr(signal, name)), action, None)


def ensure_ray(
    *,
    address: str | None = None,
    num_cpus: int | None = None,
    timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
) -> Any:
    """Initialise Ray once per process and return the ``ray`` module.

    Args:
        address: ``None`` for a local runtime, else a cluster address (or ``auto``).
        num_cpus: CPUs of a local runtime (default: all of this machine's).
        timeout_s: Bound on the reachability probe of ``address``.
    """
    if address not in (None, "auto"):
        check_reachable(address, timeout_s=timeout_s)  # before importing Ray: fail fast
    ray = import_ray()
    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "configure_logging": False, "ignore_reinit_error": True}
    if address is None:
        kwargs["num_cpus"] = num_cpus
    else:
        kwargs["address"] = address
        kwargs.pop("include_dashboard")
    try:
        with keep_jvm_signal_handlers():
            ray.init(**kwargs)
    except (ConnectionError, RuntimeError, TimeoutError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"--ray-address {address or 'local'}: cannot start or join Ray ({first})") from None
    _quiet_data_context(ray)
    return ray


def _quiet_data_context(ray: Any) -> None:
    ctx = ray.data.DataContext.get_current()
    ctx.execution_options.preserve_order = True
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False


__all__ = ["ensure_ray"]
