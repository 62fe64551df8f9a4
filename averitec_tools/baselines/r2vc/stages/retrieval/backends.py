"""The sparse retrieval backends, by name: one registry that the retriever, the engine
builders and ``averitec index sparse`` all dispatch through.

Each :class:`SparseBackend` says how to load (or build in-process) its retriever and how
to build its index on an engine; the backend module holding the heavy library is
imported only when one of them is called.

Example:
    >>> SPARSE_BACKENDS.names()
    ['bm25s', 'pyserini']
    >>> SPARSE_BACKENDS.get("bm25s").meta_file
    'averitec_bm25s.json'
    >>> SPARSE_BACKENDS.get("bm26")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: unknown sparse retriever 'bm26' (did you mean: bm25s?)
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from averitec_tools.registry import Registry


@dataclass(frozen=True)
class SparseBackend:
    """A sparse backend: its module, its in-process loader and its engine builder."""

    name: str
    #: The backend module (defines ``META_FILE`` and the retriever class).
    module: str
    #: ``(store=, index_dir=, rebuild=, show_progress=)`` → the loaded (or built) retriever.
    load_or_build: Callable[..., Any]
    #: ``(corpus=, out_dir=, engine=, ...)`` → a summary dict of the index built on the engine.
    build_on_engine: Callable[..., dict[str, Any]]

    @property
    def meta_file(self) -> str:
        """The metadata file whose presence in the index folder marks a finished index."""
        return str(importlib.import_module(self.module).META_FILE)


def _bm25s_load(*, store: Any, index_dir: str | os.PathLike[str] | None, rebuild: bool,
                show_progress: bool) -> Any:
    from averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend import Bm25sRetriever

    return Bm25sRetriever.load_or_build(store=store, index_dir=index_dir, rebuild=rebuild,
                                        show_progress=show_progress)


def _pyserini_load(*, store: Any, index_dir: str | os.PathLike[str] | None, rebuild: bool,
                   show_progress: bool) -> Any:
    from averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend import PyseriniRetriever

    del show_progress  # Anserini reports nothing we could show
    return PyseriniRetriever.load_or_build(store=store, index_dir=index_dir, rebuild=rebuild)


def _bm25s_engine(**kwargs: Any) -> dict[str, Any]:
    from averitec_tools.baselines.r2vc.stages.retrieval.sparse_build import build_bm25s

    return build_bm25s(**kwargs)


def _pyserini_engine(**kwargs: Any) -> dict[str, Any]:
    from averitec_tools.baselines.r2vc.stages.retrieval.lucene_build import build_pyserini

    return build_pyserini(**kwargs)


#: Sparse backend name → :class:`SparseBackend`.
SPARSE_BACKENDS: Registry[SparseBackend] = Registry("sparse retriever")
SPARSE_BACKENDS.add("bm25s", SparseBackend("bm25s", "averitec_tools.baselines.r2vc.stages.retrieval.bm25s_backend",
                                           _bm25s_load, _bm25s_engine))
SPARSE_BACKENDS.add("pyserini", SparseBackend("pyserini", "averitec_tools.baselines.r2vc.stages.retrieval.pyserini_backend",
                                              _pyserini_load, _pyserini_engine))

__all__ = ["SPARSE_BACKENDS", "SparseBackend"]
