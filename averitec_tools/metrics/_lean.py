"""Start-up time: import one submodule without running its parent packages' ``__init__``.

``import nltk`` executes NLTK's package ``__init__`` (parsers, chunkers, classifiers, ...;
about half a second) and ``scipy.optimize`` imports most of SciPy, while the scorer needs
only NLTK's Porter stemmer and Punkt, and SciPy's assignment solver. When a parent package
is not imported yet, :func:`import_lean` registers a bare stand-in for it (its ``__path__``
only) while the submodule loads, then removes the stand-in and what was loaded under it
from ``sys.modules`` again (the module is kept by :func:`import_lean`), so that a later
ordinary ``import nltk`` in the same process builds the real packages. When the parents
are imported already, it is a plain import.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
import types
from typing import Any


class _Deferred(types.ModuleType):
    """Stands in for a module that another imports but uses only in rare paths: the real one is
    imported on first attribute access (NLTK 3.10's Porter stemmer imports ``nltk.redos``, and
    with it the ``regex`` package, for its demo only)."""

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


#: Modules :func:`import_lean` defers while it loads a module under stand-in parents.
DEFERRED = ("nltk.redos",)


@functools.cache
def import_lean(name: str) -> Any:
    """Import module ``name`` (e.g. ``"nltk.stem.porter"``) skipping unimported parents' ``__init__``.

    Example:
        >>> import_lean("nltk.stem.porter").PorterStemmer().stem("running")
        'run'
    """
    if name in sys.modules:
        return sys.modules[name]
    parts = name.split(".")
    parents = [".".join(parts[:i]) for i in range(1, len(parts))]
    if all(p in sys.modules for p in parents):
        return importlib.import_module(name)
    before = set(sys.modules)
    stand_ins: list[str] = []
    try:
        for parent in parents:
            if parent in sys.modules:
                continue
            spec = importlib.util.find_spec(parent)
            if spec is None or not spec.submodule_search_locations:
                return importlib.import_module(name)
            stub = types.ModuleType(parent)
            stub.__path__ = list(spec.submodule_search_locations)
            stub.__spec__ = spec
            sys.modules[parent] = stub
            stand_ins.append(parent)
        for deferred in DEFERRED:
            if deferred not in sys.modules and any(deferred.startswith(p + ".") for p in stand_ins):
                sys.modules[deferred] = _Deferred(deferred)
        return importlib.import_module(name)
    finally:
        # Forget the stand-ins and everything loaded under them: a later ordinary import
        # then builds the real packages from scratch (the module returned keeps working).
        for key in set(sys.modules) - before:
            if any(key == p or key.startswith(p + ".") for p in stand_ins):
                del sys.modules[key]


def linear_sum_assignment(cost: Any, *, maximize: bool = False) -> Any:
    """SciPy's assignment solver, loaded without the rest of ``scipy.optimize``.

    Example:
        >>> import numpy as np
        >>> [a.tolist() for a in linear_sum_assignment(np.array([[1.0, 2.0], [3.0, 1.0]]), maximize=True)]
        [[0, 1], [1, 0]]
    """
    return import_lean("scipy.optimize._lsap").linear_sum_assignment(cost, maximize=maximize)


__all__ = ["import_lean", "linear_sum_assignment"]
