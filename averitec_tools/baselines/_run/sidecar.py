"""The crash-safe sidecar of a run: finished claims appended to ``<out>.partial.jsonl``.

One file format and one policy for every baseline (and for R2VC's candidate store):

* the first line is a header (:func:`sidecar_header`): a ``_<kind>_sidecar`` version
  marker plus what decides the records (configuration fingerprint, output format,
  claims fingerprint); every later line is ``{"key": ..., "record": ...}``;
* :func:`open_sidecar` applies the partial-run policy: a sidecar left by an interrupted
  run is refused unless ``resume`` (continue it: its header must match) or
  ``overwrite`` (delete it and start over) — never deleted silently;
* :func:`read_sidecar` drops a torn last line (truncating the file to the last good one).

Example:
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "preds.json"
    >>> header = sidecar_header("demo", config="c1", format="f", claims=claims_fingerprint([0, 1]))
    >>> with open_sidecar(out, header=header, resume=False, overwrite=False) as side:
    ...     side.append(0, {"label": "Supported"})
    >>> _ = sidecar_path(out).open("a").write('{"key": "1", "rec')  # an interrupted write
    >>> open_sidecar(out, header=header, resume=False, overwrite=False)
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: .../preds.json.partial.jsonl: an interrupted run left partial progress here (pass --resume to continue it or --overwrite to start over)
    >>> with open_sidecar(out, header=header, resume=True, overwrite=False) as side:
    ...     side.done
    {'0': {'label': 'Supported'}}
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from averitec_tools.errors import UserError

SIDECAR_VERSION = 1


def sidecar_path(out: str | os.PathLike[str]) -> Path:
    """Where a run writes its finished claims before the final output exists.

    Example:
        >>> sidecar_path("runs/preds.json").as_posix()
        'runs/preds.json.partial.jsonl'
    """
    p = Path(out)
    return p.with_name(p.name + ".partial.jsonl")


def sidecar_key(claim_id: Any) -> str:
    """The key a claim's record is stored under (its id as JSON: ``0`` and ``"0"`` differ).

    Example:
        >>> sidecar_key(0), sidecar_key("0")
        ('0', '"0"')
    """
    return json.dumps(claim_id)


def claims_fingerprint(claim_ids: Iterable[Any]) -> str:
    """Short hash of the claims of a run, in order (a resumed run must have the same claims).

    Example:
        >>> claims_fingerprint([0, 1]) == claims_fingerprint([0, 1]), claims_fingerprint([0, 1]) == claims_fingerprint([1, 0])
        (True, False)
    """
    from averitec_tools.hashing import json_digest

    return json_digest([sidecar_key(c) for c in claim_ids])


def sidecar_header(kind: str, **fields: Any) -> dict[str, Any]:
    """The header line of a sidecar: the ``_<kind>_sidecar`` marker, then ``fields``.

    Example:
        >>> sidecar_header("r2vc", config="abc", format="averitec2024")
        {'_r2vc_sidecar': 1, 'config': 'abc', 'format': 'averitec2024'}
    """
    return {f"_{kind}_sidecar": SIDECAR_VERSION, **fields}


def _marker(header: Mapping[str, Any]) -> str:
    return next(k for k in header if k.startswith("_") and k.endswith("_sidecar"))


def _check_header(path: Path, found: Any, header: Mapping[str, Any], what: str) -> None:
    marker = _marker(header)
    if not isinstance(found, dict) or found.get(marker) != header[marker]:
        raise UserError(f"{path}:1: not a {what} of this kind (no {marker!r} header)",
                        hint="delete it or choose another --out")
    differ = [k for k in header if k != marker and found.get(k) != header[k]]
    if differ:
        raise UserError(
            f"{path}: the {what} was written with a different {', '.join(_NAMES.get(k, k) for k in differ)}",
            hint="rerun with --overwrite to start over",
        )


_NAMES = {"config": "configuration", "format": "output format", "claims": "claims", "variant": "variant"}


def read_sidecar(path: Path, header: Mapping[str, Any], *, what: str = "partial-run file") -> dict[str, Any]:
    """Read a sidecar whose header must match ``header``: key → record.

    A torn last line (an interrupted write) is dropped and the file truncated to the
    last good line; any other bad line is an error. ``what`` names the file in error
    messages (the candidate store reuses this format).

    Example:
        >>> import tempfile, pathlib, json
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "x.partial.jsonl"
        >>> h = sidecar_header("demo", config="c")
        >>> _ = f.write_text(json.dumps(h) + '\\n{"key": "0", "record": 1}\\n{"key": "1", "rec')
        >>> read_sidecar(f, h), f.read_text().count("\\n")
        ({'0': 1}, 2)
        >>> read_sidecar(f, sidecar_header("demo", config="other"))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: ...: the partial-run file was written with a different configuration (rerun with --overwrite to start over)
    """
    done: dict[str, Any] = {}
    good_end = 0
    with path.open("rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    pos = 0
    for i, raw in enumerate(lines):
        end = pos + len(raw) + 1
        if not raw.strip():
            pos = end
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if i >= len(lines) - 2:  # torn last line from an interrupted write
                break
            raise UserError(f"{path}:{i + 1}: corrupt {what}", hint="delete it or rerun with --overwrite") from None
        if i == 0:
            _check_header(path, obj, header, what)
        else:
            if not isinstance(obj, dict) or "key" not in obj or "record" not in obj:
                raise UserError(f"{path}:{i + 1}: corrupt {what}", hint="delete it or rerun with --overwrite")
            done[obj["key"]] = obj["record"]
        good_end = min(end, len(data))
        pos = end
    if good_end < len(data):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
            if good_end and not data[:good_end].endswith(b"\n"):
                fh.seek(good_end)
                fh.write(b"\n")
    if good_end == 0:
        raise UserError(f"{path}: {what} has no header", hint="delete it or rerun with --overwrite")
    return done


def append_record(fh: IO[str], key: str, record: Any) -> None:
    """Append one ``{"key", "record"}`` line and fsync it (a crash keeps every finished claim)."""
    fh.write(json.dumps({"key": key, "record": record}) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def check_partial_policy(out: str | os.PathLike[str], *, resume: bool, overwrite: bool) -> Path:
    """The one partial-run policy, checked before any model is built; returns the sidecar path.

    A sidecar left by an interrupted run is refused unless ``resume`` or ``overwrite``
    (it is not deleted here: :func:`open_sidecar` does that, once the run starts).

    Raises:
        UserError: both flags, or a partial run present and neither flag (exit 2).
    """
    side = sidecar_path(out)
    if resume and overwrite:
        raise UserError("--resume and --overwrite contradict each other; choose one")
    if side.exists() and not resume and not overwrite:
        raise UserError(f"{side}: an interrupted run left partial progress here",
                        hint="pass --resume to continue it or --overwrite to start over")
    return side


class Sidecar:
    """An open sidecar (use :func:`open_sidecar`): ``done`` holds the records read back.

    The file is created with the first finished claim, so a run that fails before any
    claim is done (bad input, a model that cannot load) leaves no partial run behind.
    """

    def __init__(self, path: Path, *, header: Mapping[str, Any], done: dict[str, Any]) -> None:
        self.path = path
        self.done = done
        self.n_resumed = len(done)
        self._header = dict(header)
        self._fh: IO[str] | None = None

    def append(self, claim_id: Any, record: Any) -> None:
        """Record one finished claim (fsynced)."""
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists()
            self._fh = self.path.open("a", encoding="utf-8")
            if fresh:
                self._fh.write(json.dumps(self._header) + "\n")
        key = sidecar_key(claim_id)
        append_record(self._fh, key, record)
        self.done[key] = record

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()

    def __enter__(self) -> Sidecar:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def open_sidecar(out: str | os.PathLike[str], *, header: Mapping[str, Any], resume: bool,
                 overwrite: bool) -> Sidecar:
    """Open the sidecar of ``out`` under the partial-run policy (:func:`check_partial_policy`).

    ``resume``: continue it (its header must equal ``header``; a torn last line is
    repaired); ``overwrite``: delete it and start over; neither: refuse if it exists.
    """
    side = check_partial_policy(out, resume=resume, overwrite=overwrite)
    done: dict[str, Any] = {}
    if side.exists():
        if overwrite:
            side.unlink()
        else:
            done = read_sidecar(side, header)
    return Sidecar(side, header=header, done=done)


__all__ = ["check_partial_policy", "claims_fingerprint", "open_sidecar", "read_sidecar", "sidecar_header",
           "sidecar_key", "sidecar_path"]
