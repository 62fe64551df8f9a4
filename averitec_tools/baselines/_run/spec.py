"""What a baseline run is asked to do (:class:`RunSpec`) and what it reports (:class:`RunSummary`).

Each baseline exposes one library call, ``run(spec) -> RunSummary``
(:func:`averitec_tools.baselines.r2vc.run.run`, :func:`averitec_tools.baselines.averitec.run.run`);
``averitec baseline r2vc|averitec`` only parse flags into a :class:`RunSpec`, call it and
print the summary.

Example:
    >>> spec = RunSpec(config="offline-minilm", out="preds.json", limit=5)
    >>> spec.resume, spec.overwrite, spec.output_format, spec.engine_name
    (False, False, 'auto', 'local')
    >>> s = RunSummary(out="preds.json")
    >>> s.note("engine ray: counts cover this process only")
    >>> s.extra
    {'notes': ['engine ray: counts cover this process only']}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, kw_only=True)
class RunSpec:
    """One baseline run (the flags of ``averitec baseline r2vc|averitec``).

    Args:
        config: A built-in configuration name, a YAML path, or the baseline's config object.
        out: The prediction file to write.
        claims: The claims file (None: the configuration's default, where it has one).
        output_format: The output format (``auto``: the baseline's default for the claims).
        resume: Continue an interrupted run from ``OUT.partial.jsonl``.
        overwrite: Discard an interrupted run's partial progress and start over.
        limit: Only the first N claims.
        engine: Where the claims run (an :class:`~averitec_tools.engines.Engine`; None: local).
        progress: Show progress bars.
        write_gold_subset: Also write the gold items of the claims run here.
        corpus: R2VC: the paragraph store directory.
        evidence: R2VC: ``retrieved`` or ``given`` (claims carry their evidence).
        candidates: R2VC: the candidate store directory (store or replay every claim's candidates).
        rebuild_index: R2VC: rebuild the retrieval indexes.
        store: AVeriTeC: the knowledge store directory (None: the claims' split's downloaded one).
        variant: AVeriTeC: ``full``, ``no-reranker``, ``claim-only`` or ``gold-evidence``.
        stage_cache: AVeriTeC: read and write the per-claim stage cache.
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
    corpus: str | None = None
    evidence: str = "retrieved"
    candidates: str | None = None
    rebuild_index: bool = False
    store: str | None = None
    variant: str = "full"
    stage_cache: bool = True

    @property
    def config_file(self) -> str | None:
        """``config`` when it names a file (a path with a suffix), else None."""
        return self.config if isinstance(self.config, str) and "." in self.config else None

    @property
    def engine_name(self) -> str:
        return "local" if self.engine is None else str(self.engine.name)

    def resolved_engine(self) -> Any:
        """The engine to run on (the local one when none is given)."""
        if self.engine is not None:
            return self.engine
        from averitec_tools.engines import get_engine

        return get_engine("local")


@dataclass(kw_only=True)
class RunSummary:
    """The part of a run summary every baseline has; ``extra`` is its one extension field.

    ``extra`` holds what the run adds beyond the baseline's fields (engine, manifest,
    notes, ...); each baseline's ``to_dict`` places it.
    """

    out: str
    n_claims: int = 0
    n_resumed: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    components: dict[str, Any] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def note(self, text: str) -> None:
        """Add a note (printed after the summary, ``notes`` in ``--json``)."""
        self.extra.setdefault("notes", []).append(text)

    @property
    def notes(self) -> list[str]:
        return list(self.extra.get("notes", []))


__all__ = ["RunSpec", "RunSummary"]
