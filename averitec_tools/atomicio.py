"""Writing files and directories atomically: a temporary beside the target, renamed on success.

An interrupted or failing write never leaves a partial file or directory at the target, the
result gets the mode a plain ``open()`` would give (umask respected), and write failures
become a one-line :class:`~averitec_tools.errors.UserError`. Every command writes its outputs
through these (``averitec_tools.jsonio`` re-exports them).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from averitec_tools.errors import UserError


def _new_file_mode(target: Path) -> int:
    """The mode ``open(target, "w")`` would leave: the old file's, else 0o666 minus the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        from averitec_tools.outputs import umask

        return 0o666 & ~umask()


def _is_special(target: Path) -> bool:
    """An existing target (after symlinks) that is neither a regular file nor a directory."""
    try:
        st_mode = target.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(st_mode) or stat.S_ISDIR(st_mode))


def _write_error(target: Path, exc: OSError) -> UserError:
    return UserError(f"{target}: cannot write: {exc.strerror or exc}")


@contextmanager
def atomic_writer(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO[Any]]:
    """Write to a temporary file beside ``path`` and rename on success.

    An interrupted or failing write never leaves a partial file at ``path``. The file gets
    the mode a plain ``open()`` would give (an existing file's mode, else 0o666 minus the
    umask). Failures to create, flush or rename the file become a one-line
    :class:`UserError`.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
        >>> with atomic_writer(target) as fh:
        ...     _ = fh.write("done")
        >>> target.read_text()
        'done'
    """
    target = Path(path)
    if _is_special(target):  # /dev/null, a FIFO, /dev/stdout: write through, never replace it
        try:
            special = open(target, mode, encoding=None if "b" in mode else "utf-8")  # noqa: SIM115
        except OSError as exc:
            raise _write_error(target, exc) from None
        with special:
            yield special
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        file_mode = _new_file_mode(target)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise _write_error(target, exc) from None
    try:
        os.fchmod(fd, file_mode)
        fh = os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8")
        with fh:
            yield fh
            try:
                fh.flush()
            except OSError as exc:
                raise _write_error(target, exc) from None
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise _write_error(target, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_directory(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a directory beside ``path`` and swap it in only on success.

    Yields the temporary directory to fill. An existing ``path`` is replaced when the
    block finishes; an exception leaves ``path`` untouched and removes the temporary one.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "index"
        >>> with atomic_directory(target) as tmp:
        ...     _ = (tmp / "meta.json").write_text("{}")
        >>> sorted(p.name for p in target.iterdir())
        ['meta.json']
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    except OSError as exc:
        raise _write_error(target, exc) from None
    try:
        from averitec_tools.outputs import umask

        tmp.chmod(0o777 & ~umask())  # mkdtemp makes it 0700
        yield tmp
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


__all__ = ["atomic_directory", "atomic_writer"]
