"""The one driver of every baseline run: the preamble once, the baseline's hooks in between.

A baseline is a :class:`Baseline`: how it names and loads its configurations, reads its
claims and picks its output format, and three hooks — ``build`` (the pipeline),
``predict`` (the claims through the shared run loop, :mod:`.loop`) and ``summarise``
(what its summary adds once the run is written). :func:`drive` does the rest, in this
order, the same for every baseline:

1. ``--limit`` checked; the configuration resolved (:func:`~.spec.resolve_config`: one
   rule tells a file from a built-in name);
2. the claims file (``--claims`` or the baseline's default) and, before any model is
   built, every output checked (:func:`check_run_outputs`: ``--out``, its manifest,
   ``--write-gold-subset``, the partial-run policy);
3. the claims read, the output format chosen, the engine resolved;
4. ``build``; ``predict`` (on engine workers, :func:`averitec_tools.engines.engine_predictor`
   over the baseline's ``worker``, unless the engine is local);
5. the engine named in the summary, the manifest written (git commit read at the start),
   the gold subset written, then ``summarise``.

A third baseline is a wing with a :class:`Baseline` and its pipeline; ``run(spec)`` is
``drive(THE_BASELINE, spec)``.

(``tests/test_baseline_driver.py`` drives a toy baseline through every step.)

Example:
    >>> check_run_outputs(RunSpec(config="c", out="p.json", write_gold_subset="./p.json"), claims_path="c.json",
    ...                   config_file=None, manifest=True)
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --write-gold-subset ./p.json: is also --out
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from averitec_tools.baselines._run.spec import RunSpec, resolve_config
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.errors import UserError

SpecT = TypeVar("SpecT", bound=RunSpec)
ConfigT = TypeVar("ConfigT")
ClaimT = TypeVar("ClaimT")
PipeT = TypeVar("PipeT")
#: Claims still to do → their predictions, in order.
PredictMany = Callable[[list[Any]], Iterable[Any]]


@dataclass(frozen=True)
class Run(Generic[SpecT, ConfigT, ClaimT]):
    """A run once its preamble is done: what every hook is given.

    Attributes:
        spec: The run's specification.
        config: The resolved configuration.
        config_file: The file it was read from (None: a built-in or an object).
        claims_path: The claims file read.
        claims: Its claims (the first ``--limit``).
        output_format: The output format written.
        engine: The engine the claims run on.
    """

    spec: SpecT
    config: ConfigT
    config_file: str | None
    claims_path: str
    claims: list[ClaimT]
    output_format: str
    engine: Any


@dataclass(frozen=True)
class ManifestParts:
    """What a baseline's run manifest records beyond the shared fields: input files, seeds, the
    configuration as it ran, extra keys."""

    data: dict[str, Any]
    config: Any
    seeds: dict[str, Any]
    extra: dict[str, Any]


class Baseline(ABC, Generic[SpecT, ConfigT, ClaimT, PipeT]):
    """A baseline on the driver: its configurations, its claims, its hooks (see the module docs)."""

    #: Built-in configuration names (any other name is a file).
    builtin_configs: Collection[str] = ()
    #: Whether runs write ``PREDICTIONS.manifest.json`` (:meth:`manifest`).
    writes_manifest: bool = False

    @abstractmethod
    def load_config(self, name: str) -> ConfigT:
        """A built-in configuration by name, or one read from a file."""

    def configure(self, spec: SpecT, config: ConfigT) -> ConfigT:
        """``config`` as this run's flags adjust it (default: unchanged)."""
        return config

    @abstractmethod
    def default_claims(self, spec: SpecT, config: ConfigT) -> str:
        """The claims file run without ``--claims`` (a UserError where there is none)."""

    @abstractmethod
    def read_claims(self, spec: SpecT, config: ConfigT, path: str) -> list[ClaimT]:
        """The claims of ``path``, the first ``spec.limit`` of them."""

    @abstractmethod
    def output_format(self, spec: SpecT, claims: Sequence[ClaimT]) -> str:
        """The format to write (``spec.output_format``, ``auto`` resolved)."""

    @abstractmethod
    def build(self, run: Run[SpecT, ConfigT, ClaimT]) -> PipeT:
        """The pipeline of the run (models trained or loaded, indexes built)."""

    def worker(self, run: Run[SpecT, ConfigT, ClaimT]) -> Callable[[], Callable[[list[ClaimT]], list[Any]]]:
        """A worker factory that builds the pipeline on an engine worker and predicts batches
        (default: none, the baseline runs on the local engine only)."""
        raise UserError(f"{type(self).__name__} runs on the local engine only", hint="drop --engine")

    @abstractmethod
    def predict(self, pipe: PipeT, run: Run[SpecT, ConfigT, ClaimT], predict_many: PredictMany | None) -> RunSummary:
        """Run the claims through the shared run loop and write the predictions (``predict_many``:
        on engine workers; None: in this process)."""

    def manifest(self, pipe: PipeT, run: Run[SpecT, ConfigT, ClaimT]) -> ManifestParts:
        """What the manifest records (only called where :attr:`writes_manifest`)."""
        raise NotImplementedError

    def summarise(self, summary: RunSummary, pipe: PipeT, run: Run[SpecT, ConfigT, ClaimT], *,
                  on_workers: bool, manifest: Path | None) -> None:
        """Add what the summary says once the run is written (default: nothing)."""


def check_run_outputs(spec: RunSpec, *, claims_path: str, config_file: str | None, manifest: bool) -> None:
    """Output safety (issue 12) and the partial-run policy, before any model is built.

    Raises:
        UserError: an output that is an input, a directory or unwritable; ``--write-gold-subset``
            the same file as ``--out``; a partial run present without ``--resume``/``--overwrite``.
    """
    from averitec_tools.baselines._run.manifest import manifest_path
    from averitec_tools.baselines._run.sidecar import check_partial_policy
    from averitec_tools.outputs import check_output_file

    inputs = [claims_path, config_file]
    check_output_file(spec.out, option="--out", inputs=inputs)
    if manifest:
        check_output_file(manifest_path(spec.out), option="--out (its .manifest.json)", inputs=inputs)
    if spec.write_gold_subset:
        if os.path.abspath(spec.write_gold_subset) == os.path.abspath(spec.out):
            raise UserError(f"--write-gold-subset {spec.write_gold_subset}: is also --out")
        check_output_file(spec.write_gold_subset, option="--write-gold-subset", inputs=[*inputs, spec.out])
    check_partial_policy(spec.out, resume=spec.resume, overwrite=spec.overwrite)


def prepare(baseline: Baseline[SpecT, ConfigT, ClaimT, Any], spec: SpecT, *,
            check_outputs: Callable[[SpecT, str, str | None], None] | None = None) -> Run[SpecT, ConfigT, ClaimT]:
    """Steps 1-3 of :func:`drive`: the run with its configuration, claims, format and engine.

    ``check_outputs(spec, claims_path, config_file)`` checks the outputs in place of
    :func:`check_run_outputs` (a command that writes something else than predictions).
    """
    for flag, value in (("config", spec.config), ("out", spec.out)):
        if not value:
            raise UserError(f"--{flag} is required")
    spec.check_limit()
    resolved = resolve_config(spec.config, builtins=baseline.builtin_configs, load=baseline.load_config)
    config = baseline.configure(spec, resolved.config)
    claims_path = str(spec.claims) if spec.claims else baseline.default_claims(spec, config)
    if check_outputs is not None:
        check_outputs(spec, claims_path, resolved.file)
    else:
        check_run_outputs(spec, claims_path=claims_path, config_file=resolved.file, manifest=baseline.writes_manifest)
    claims = baseline.read_claims(spec, config, claims_path)
    return Run(spec=spec, config=config, config_file=resolved.file, claims_path=claims_path, claims=claims,
               output_format=baseline.output_format(spec, claims), engine=spec.resolved_engine())


def drive(baseline: Baseline[SpecT, Any, Any, Any], spec: SpecT) -> RunSummary:
    """Run ``baseline`` on ``spec`` (see the module docs) and return its summary.

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
        KeyboardInterrupt: progress is in ``OUT.partial.jsonl``; rerun with ``resume``.
    """
    from averitec_tools.baselines._run.manifest import git_state

    git = git_state() if baseline.writes_manifest else None  # the code that starts the run, not the one at its end
    run = prepare(baseline, spec)
    pipe = baseline.build(run)
    predict_many = None
    if run.engine.name != "local":
        from averitec_tools.engines import engine_predictor

        predict_many = engine_predictor(run.engine, worker=baseline.worker(run))
    summary = baseline.predict(pipe, run, predict_many)
    summary.extra["engine"] = run.engine.describe()
    manifest = _write_manifest(baseline, pipe, run, git) if baseline.writes_manifest else None
    if spec.write_gold_subset:
        from averitec_tools.jsonio import write_head

        write_head(run.claims_path, n=len(run.claims), out=spec.write_gold_subset)
    baseline.summarise(summary, pipe, run, on_workers=predict_many is not None, manifest=manifest)
    mark_data(summary, claims_path=run.claims_path)
    return summary


def mark_data(summary: RunSummary, *, claims_path: str) -> None:
    """Add the claims file's ``data:`` field to the summary's run signature (R2VC's ``r2vc-run|…``),
    when the file is one ``averitec data download`` fetched and unchanged since
    (:func:`~averitec_tools.scoring.data_source.data_fields`); else leave the signature as it is.

    Example:
        >>> s = RunSummary(out="p.json", config="c", output_format="2024", extra={"signature": "r2vc-run|config:c"})
        >>> mark_data(s, claims_path="no-such-dir/dev.json"); s.extra["signature"]
        'r2vc-run|config:c'
    """
    signature = summary.extra.get("signature")
    if not isinstance(signature, str) or not signature:
        return
    from averitec_tools.scoring.data_source import data_fields

    fields = data_fields(claims_path)
    if fields:
        from averitec_tools.metrics.signature import extend_signature

        summary.extra["signature"] = extend_signature(signature, fields)


def _write_manifest(baseline: Baseline[Any, Any, Any, PipeT], pipe: PipeT, run: Run[Any, Any, Any],
                    git: dict[str, Any] | None) -> Path:
    from averitec_tools.baselines._run.manifest import manifest_path, run_manifest, write_manifest

    parts = baseline.manifest(pipe, run)
    path = manifest_path(run.spec.out)
    write_manifest(path, run_manifest(data=parts.data, seeds=parts.seeds, config=parts.config, git=git,
                                      extra=parts.extra))
    return path


__all__ = ["Baseline", "ManifestParts", "PredictMany", "Run", "check_run_outputs", "drive", "mark_data", "prepare"]
