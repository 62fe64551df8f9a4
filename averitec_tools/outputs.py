"""Output-path safety: check every file a command will write *before* the work starts.

A command calls :func:`check_output_file` (or :func:`check_output_dir`) for each output
option right after parsing its arguments. The check refuses, with a one-line
:class:`~averitec_tools.errors.UserError` (exit 2):

* an output that is one of the command's inputs — the same path, a symlink to it or a hard
  link (compared by device and inode with :func:`os.path.samefile`) — or a file the command
  protects without reading it as an input (``protected``: a leaderboard's database, its gold
  files, its session secret); :func:`check_not_input` is the same check alone, for a path
  the command may only read or create (a secret file, a database);
* an existing directory given where a file is expected (or a file where a directory is);
* a location that cannot be written: the nearest existing ancestor is not a directory or
  refuses a probe file (so a read-only place fails in milliseconds, not after the work).

Files themselves are written with :func:`averitec_tools.jsonio.atomic_writer`, which
creates them with the mode a plain ``open()`` would give (``0o666`` minus the umask).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from averitec_tools.errors import UserError

PathLike = str | os.PathLike[str]


def umask() -> int:
    """The process umask (read without changing it for longer than one call).

    Example:
        >>> import os
        >>> previous = os.umask(0o027)
        >>> oct(umask())
        '0o27'
        >>> _ = os.umask(previous)
    """
    try:  # Linux: read it without touching it (no window where another thread sees a changed umask)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet): compare where they would point
        return os.path.realpath(a) == os.path.realpath(b)


def _nearest_existing(path: Path) -> Path:
    current = path
    while not os.path.lexists(current) and current != current.parent:
        current = current.parent
    return current


def _check_writable(directory: Path, *, option: str, target: Path) -> None:
    anchor = _nearest_existing(directory)
    if not anchor.is_dir():
        raise UserError(f"{option} {target}: cannot be created: {anchor} is not a directory")
    try:
        # A real probe: os.access is wrong for root, for ACLs and for read-only mounts.
        with tempfile.TemporaryFile(dir=anchor, prefix=".averitec-probe."):
            pass
    except OSError as exc:
        raise UserError(f"{option} {target}: cannot write in {anchor}: {exc.strerror or exc}") from None


def _check_not_input(target: Path, *, option: str, inputs: Iterable[PathLike | None],
                     protected: Iterable[tuple[PathLike, str]] = ()) -> None:
    labelled = [(raw, None) for raw in inputs] + [(raw, label) for raw, label in protected]
    for raw, label in labelled:
        if raw is None:
            continue
        source = Path(raw)
        if os.path.lexists(source) and _same_file(target, source):
            kind = label or f"the input {'folder' if source.is_dir() else 'file'}"
            what = "it" if label else "an input"
            raise UserError(
                f"{option} {target}: is {kind} {source}; refusing to overwrite {what}",
                hint="choose another output path",
            )


def check_not_input(path: PathLike, *, option: str, inputs: Iterable[PathLike | None] = (),
                    protected: Iterable[tuple[PathLike, str]] = ()) -> Path:
    """Refuse a path that a command will write (or create, or change the mode of) when it is
    one of the command's inputs or a ``protected`` file (a database, a gold file: ``(path,
    what it is)``), the same file by path, symlink or hard link. Unlike
    :func:`check_output_file` it does not probe the place (the file may be only read, e.g.
    an existing secret).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> db = d / "lb.db"
        >>> _ = db.write_bytes(b"")
        >>> check_not_input(d / "s.secret", option="--secret-file", protected=[(db, "the leaderboard database")]).name
        's.secret'
        >>> check_not_input(db, option="--secret-file", protected=[(db, "the leaderboard database")])
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --secret-file ...lb.db: is the leaderboard database ...lb.db; refusing to overwrite it (...)
    """
    target = Path(path)
    if str(path) == "":
        raise UserError(f"{option}: empty path")
    _check_not_input(target, option=option, inputs=inputs, protected=protected)
    return target


def _check_no_input_inside(target: Path, *, option: str, inputs: Iterable[PathLike | None]) -> None:
    """Output folders may be replaced whole (atomic_directory): no input may live inside one."""
    if not target.exists():
        return
    root = target.resolve()
    for raw in inputs:
        if raw is not None and os.path.lexists(raw) and Path(raw).resolve().is_relative_to(root):
            raise UserError(
                f"{option} {target}: holds the input {raw}; refusing to write over an input",
                hint="choose another output folder",
            )


def check_output_file(
    path: PathLike, *, option: str, inputs: Iterable[PathLike | None] = (),
    protected: Iterable[tuple[PathLike, str]] = (),
) -> Path:
    """Refuse an output file that would destroy an input or cannot be written.

    Args:
        path: The output file the command will write.
        option: How the user named it (``"--per-claim"``), used in the message.
        inputs: Every file the command reads (``None`` entries are ignored).
        protected: Files the command must never write although it does not name them as
            inputs, with what they are (``(lb.db, "the leaderboard database")``).

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        UserError: ``path`` is an input or protected, an existing directory, or not writable.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> gold = d / "gold.json"
        >>> _ = gold.write_text("[]")
        >>> check_output_file(d / "out.jsonl", option="--per-claim", inputs=[gold]).name
        'out.jsonl'
        >>> check_output_file(gold, option="--per-claim", inputs=[gold])
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --per-claim ...gold.json: is the input file ...
    """
    target = Path(path)
    inputs = list(inputs)
    if str(path) == "":
        raise UserError(f"{option}: empty path")
    if target.is_dir():
        raise UserError(f"{option} {target}: is an existing directory; give a file path")
    _check_not_input(target, option=option, inputs=inputs, protected=protected)
    if target.exists() and not target.is_file():  # /dev/null, a FIFO: written through as they are
        return target
    _check_writable(target.parent, option=option, target=target)
    return target


def check_output_dir(
    path: PathLike,
    *,
    option: str,
    inputs: Iterable[PathLike | None] = (),
    files: Iterable[str] = (),
) -> Path:
    """Refuse an output directory that is a file, cannot be written, or would overwrite an input.

    Args:
        path: The directory the command will create or fill.
        option: How the user named it (``"--plot"``).
        inputs: Every file the command reads.
        files: Names (relative to ``path``) of the files it will write there.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        UserError: ``path`` is an existing non-directory, is an input, one of ``files``
            would overwrite an input, or the place is not writable.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> check_output_dir(d / "plots", option="--plot", files=["a.png"]).name
        'plots'
    """
    target = Path(path)
    inputs = list(inputs)
    if str(path) == "":
        raise UserError(f"{option}: empty path")
    if os.path.lexists(target) and not target.is_dir():
        raise UserError(f"{option} {target}: exists and is not a directory")
    _check_not_input(target, option=option, inputs=inputs)
    _check_no_input_inside(target, option=option, inputs=inputs)
    for name in files:
        _check_not_input(target / name, option=option, inputs=inputs)
    _check_writable(target, option=option, target=target)
    return target


__all__ = ["check_not_input", "check_output_dir", "check_output_file", "umask"]
