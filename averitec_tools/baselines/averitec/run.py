"""The AVeriTeC baseline's library call behind ``averitec baseline averitec``: :func:`run`.

:func:`run` takes an :class:`AVeriTeCSpec` (the shared
:class:`~averitec_tools.baselines._run.spec.RunSpec` and the baseline's own flags) and is the
baselines' one driver (:func:`~averitec_tools.baselines._run.driver.drive`) over
:class:`AVeriTeC`, this baseline's hooks: the default claims and knowledge store where none
is given (the downloaded or ``$AVERITEC_DATA_DIR`` dev set and its split's store), the
variant's pipeline, the notes its summary adds. The CLI only parses flags into the spec and
prints.

Example:
    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "claims.json").write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    >>> run(AVeriTeCSpec(config="offline-minilm", claims=str(d / "claims.json"), out=str(d / "p.json"), limit=0))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --limit must be at least 1, got 0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.driver import Baseline, PredictMany, Run, drive
from averitec_tools.baselines._run.spec import RunSpec
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.averitec.config import BUILTIN_CONFIGS, AVeriTeCConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline
from averitec_tools.errors import UserError


@dataclass(frozen=True, kw_only=True)
class AVeriTeCSpec(RunSpec):
    """An AVeriTeC baseline run: the shared flags and the baseline's own.

    Args:
        store: The knowledge store directory (None: the claims' split's downloaded one).
        variant: ``full``, ``no-reranker``, ``claim-only`` or ``gold-evidence``.
        stage_cache: Read and write the per-claim stage cache.
    """

    store: str | None = None
    variant: str = "full"
    stage_cache: bool = True


AVeriTeCRun = Run[AVeriTeCSpec, AVeriTeCConfig, ClaimItem]


def store_of(run: AVeriTeCRun) -> str | None:
    """``--store``, else the downloaded store of the claims' split (None where there is none)."""
    if run.spec.store is not None:
        return run.spec.store
    from averitec_tools.loaders.locate import store_for_claims

    found = store_for_claims(run.claims_path)
    return str(found) if found is not None else None


class AVeriTeC(Baseline[AVeriTeCSpec, AVeriTeCConfig, ClaimItem, AVeriTeCPipeline]):
    """The AVeriTeC baseline's hooks on the baselines' driver."""

    builtin_configs = BUILTIN_CONFIGS

    def load_config(self, name: str) -> AVeriTeCConfig:
        from averitec_tools.baselines.averitec.config import resolve_config

        return resolve_config(name)

    def configure(self, spec: AVeriTeCSpec, config: AVeriTeCConfig) -> AVeriTeCConfig:
        return config if spec.stage_cache else replace(config, data=replace(config.data, stage_cache=False))

    def default_claims(self, spec: AVeriTeCSpec, config: AVeriTeCConfig) -> str:
        from averitec_tools.loaders.locate import find_data_file

        found = find_data_file("averitec", "dev.json")  # $AVERITEC_DATA_DIR or `averitec data download`
        if found is None:
            raise UserError("--claims is required",
                            hint="or download the dev set: averitec data download averitec --split dev")
        return str(found)

    def read_claims(self, spec: AVeriTeCSpec, config: AVeriTeCConfig, path: str) -> list[ClaimItem]:
        from averitec_tools.baselines.averitec.io.data import read_claims

        return read_claims(path)[: spec.limit]

    def output_format(self, spec: AVeriTeCSpec, claims: Sequence[ClaimItem]) -> str:
        return "2024" if spec.output_format == "auto" else spec.output_format

    def build(self, run: AVeriTeCRun) -> AVeriTeCPipeline:
        from averitec_tools.baselines.averitec.build import build_pipeline
        from averitec_tools.baselines.averitec.variants import get_variant

        return build_pipeline(config=run.config, variant=get_variant(run.spec.variant), store=store_of(run),
                              claims=run.claims, progress=run.spec.progress)

    def worker(self, run: AVeriTeCRun) -> Callable[[], Callable[[list[ClaimItem]], list[Any]]]:
        from averitec_tools.baselines.averitec.claim_worker import AVeriTeCClaimWorker

        return AVeriTeCClaimWorker(config=run.config, variant=run.spec.variant, store=store_of(run),
                                   claims=tuple(run.claims))

    def predict(self, pipe: AVeriTeCPipeline, run: AVeriTeCRun, predict_many: PredictMany | None) -> RunSummary:
        s = run.spec
        return pipe.run(run.claims, out=s.out, output_format=run.output_format, resume=s.resume,
                        overwrite=s.overwrite, progress=s.progress, predict_many=predict_many)

    def summarise(self, summary: RunSummary, pipe: AVeriTeCPipeline, run: AVeriTeCRun, *, on_workers: bool,
                  manifest: Path | None) -> None:
        if on_workers:
            summary.note(f"engine {run.engine.name}: stage seconds, memory and stage-cache counts below count "
                         "only this process, not the Ray workers")
        if run.spec.write_gold_subset:
            summary.note(f"gold items of these {len(run.claims)} claims written to {run.spec.write_gold_subset}")


def run(spec: AVeriTeCSpec) -> RunSummary:
    """Run the AVeriTeC baseline on ``spec``'s claims and write ``spec.out`` (see the module docs).

    ``spec.output_format``: ``2024`` or ``2023`` (``auto``: 2024).

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
    """
    return drive(AVeriTeC(), spec)


__all__ = ["AVeriTeC", "AVeriTeCSpec", "run"]
