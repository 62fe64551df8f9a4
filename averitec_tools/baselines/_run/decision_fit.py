"""A decision fit on held-out training claims, as both baselines make one: cached on disk.

Each baseline fits its decision settings on a slice of training claims its models never
trained on — R2VC's offline preset its y_NLI thresholds, calibrator, gates and claim rules
(:func:`averitec_tools.baselines.r2vc.offline.fit.fit_on_slice`), the AVeriTeC baseline its
reranker choice and label offsets
(:func:`averitec_tools.baselines.averitec.stages.decision.slice.fit_decision`). Running the slice
costs minutes, so a fit is kept under a path keyed by everything it depends on:
:func:`cached_fit` reads it back where an earlier run (or another engine worker) made it,
else makes it and writes it atomically — a worker reading it never sees half a file.

Example:
    >>> import json, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "fit-abc.json"
    >>> def write(value, p):
    ...     p.write_text(json.dumps(value))
    >>> cached_fit(path, lambda: {"bias": 1.0}, read=lambda p: json.loads(p.read_text()) | {"cached": True}, write=write)
    {'bias': 1.0}
    >>> cached_fit(path, lambda: 1 / 0, read=lambda p: json.loads(p.read_text()) | {"cached": True}, write=write)
    {'bias': 1.0, 'cached': True}
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def cached_fit(path: Path, make: Callable[[], T], *, read: Callable[[Path], T], write: Callable[[T, Path], None],
               read_back: bool = False) -> T:
    """The fit kept at ``path``: ``read(path)`` where it exists, else ``make()``, written by ``write``.

    Args:
        path: Where the fit is kept (its name carries the key of what it depends on).
        make: Makes the fit (runs the slice).
        read: Reads a kept fit back.
        write: Writes a fit to a path, atomically (:func:`averitec_tools.jsonio.atomic_writer`).
        read_back: Return the fit as :func:`read` gives it back after writing it (what a
            later run gets), not the object ``make`` returned.
    """
    if path.is_file():
        return read(path)
    value = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    write(value, path)
    return read(path) if read_back else value


__all__ = ["cached_fit"]
