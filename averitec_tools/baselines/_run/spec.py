"""What a baseline run is asked to do: :class:`RunSpec`, the flags every baseline shares.

Each baseline extends it with its own flags (``R2VCSpec`` in
:mod:`averitec_tools.baselines.r2vc.run`, ``AVeriTeCSpec`` in
:mod:`averitec_tools.baselines.averitec.run`) and exposes one library call,
``run(spec) -> RunSummary``; ``averitec baseline r2vc|averitec`` only parse flags into a
spec, call it and print the summary. :func:`resolve_config` is the one way a spec's
``config`` (a built-in name, a file, or a configuration object) becomes a configuration,
and says whether it was read from a file.

Example:
    >>> spec = RunSpec(config="offline-minilm", out="preds.json", limit=5)
    >>> spec.resume, spec.overwrite, spec.output_format, spec.engine_name
    (False, False, 'auto', 'local')
    >>> resolve_config("offline-minilm", builtins=("offline-minilm",), load=str.upper)
    ResolvedConfig(config='OFFLINE-MINILM', file=None)
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

ConfigT = TypeVar("ConfigT")


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One baseline run: the flags of ``averitec baseline r2vc|averitec`` that every baseline has.

    Args:
        config: A built-in configuration name, a YAML path, or the baseline's config object.
        out: The prediction file to write.
        claims: The claims file (None: the baseline's default, where it has one).
        output_format: The output format (``auto``: the baseline's default for the claims).
        resume: Continue an interrupted run from ``OUT.partial.jsonl``.
        overwrite: Discard an interrupted run's partial progress and start over.
        limit: Only the first N claims.
        engine: Where the claims run (an :class:`~averitec_tools.engines.Engine`; None: local).
        progress: Show progress bars.
        write_gold_subset: Also write the gold items of the claims run here.
    """

    config: Any
    out: str
    claims: str | None = None
    output_format: str = "auto"
    resume: bool = False
    overwrite: bool = False
    limit: int | None = None
    engine: Any = None
    progress: bool = False
    write_gold_subset: str | None = None

    @property
    def engine_name(self) -> str:
        return "local" if self.engine is None else str(self.engine.name)

    def resolved_engine(self) -> Any:
        """The engine to run on (the local one when none is given)."""
        if self.engine is not None:
            return self.engine
        from averitec_tools.engines import get_engine

        return get_engine("local")

    def check_limit(self) -> None:
        """Refuse a ``--limit`` below 1 (one line, exit 2)."""
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit must be at least 1, got {self.limit}")


@dataclass(frozen=True)
class ResolvedConfig(Generic[ConfigT]):
    """A run's configuration and the file it was read from (None: a built-in or an object)."""

    config: ConfigT
    file: str | None


def resolve_config(config: Any, *, builtins: Collection[str], load: Callable[[str], ConfigT]) -> ResolvedConfig[ConfigT]:
    """The configuration a spec names: a configuration object as it is, else ``load(name)``.

    A name is a file unless it is one of the baseline's ``builtins`` (the one rule every
    baseline uses to tell them apart: the file is an input no output may overwrite, and
    the R2VC manifest hashes it).

    Example:
        >>> resolve_config("runs/c.yaml", builtins=("paper",), load=len).file
        'runs/c.yaml'
    """
    if not isinstance(config, str):
        return ResolvedConfig(config=config, file=None)
    return ResolvedConfig(config=load(config), file=None if config in builtins else config)


def builtin_or_file(name: str, *, builtins: Registry[Callable[[], ConfigT]], load: Callable[[str], ConfigT]) -> ConfigT:
    """A built-in configuration by ``name``, else the configuration file ``name`` read by ``load``.

    A name that is no file and does not end like one (``.yaml``, ``.yml``, ``.json``) is
    refused as an unknown built-in, with its close names, rather than as a missing file.

    Example:
        >>> from averitec_tools.registry import Registry
        >>> builtins: Registry = Registry("built-in configuration")
        >>> builtins.add("paper", lambda: "the paper's")
        >>> builtin_or_file("paper", builtins=builtins, load=str.upper), builtin_or_file("c.yaml", builtins=builtins, load=str.upper)
        ("the paper's", 'C.YAML')
        >>> builtin_or_file("papr", builtins=builtins, load=str.upper)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: unknown built-in configuration 'papr' (did you mean: paper?)
    """
    if name in builtins:
        return builtins.get(name)()
    if not Path(name).exists() and not name.endswith((".yaml", ".yml", ".json")):
        builtins.get(name)  # raises with suggestions
    return load(name)


__all__ = ["RunSpec", "builtin_or_file", "resolve_config"]
