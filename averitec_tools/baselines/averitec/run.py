"""The AVeriTeC baseline's library call behind ``averitec baseline averitec``: :func:`run`.

:func:`run` takes a :class:`~averitec_tools.baselines._run.spec.RunSpec`, finds the
default claims and knowledge store where none is given (the downloaded or
``$AVERITEC_DATA_DIR`` dev set and its split's store), checks every output and the
partial-run policy before a model is built, builds the variant's pipeline and runs it
through the shared run loop; the CLI only parses flags into the spec and prints.

Example:
    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "claims.json").write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    >>> run(RunSpec(config="offline-minilm", claims=str(d / "claims.json"), out=str(d / "p.json"), limit=0))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --limit must be at least 1, got 0
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from averitec_tools.baselines._run.spec import RunSpec
from averitec_tools.baselines.averitec.pipeline import RunSummary
from averitec_tools.errors import UserError


def resolve_inputs(spec: RunSpec) -> RunSpec:
    """``spec`` with the default claims (the dev set) and that split's downloaded store filled in.

    Raises:
        UserError: no claims found, no config or out given, a bad ``limit``.
    """
    from averitec_tools.loaders.locate import find_data_file, store_for_claims

    claims, store = spec.claims, spec.store
    if not claims:  # the dev set from $AVERITEC_DATA_DIR or `averitec data download`
        found = find_data_file("averitec", "dev.json")
        if found is None:
            raise UserError("--claims is required",
                            hint="or download the dev set: averitec data download averitec --split dev")
        claims = str(found)
    if store is None:  # that split's downloaded knowledge store
        found_store = store_for_claims(claims)
        store = str(found_store) if found_store is not None else None
    for opt in ("config", "out"):
        if not getattr(spec, opt):
            raise UserError(f"--{opt} is required")
    if spec.limit is not None and spec.limit < 1:
        raise UserError(f"--limit must be at least 1, got {spec.limit}")
    return replace(spec, claims=claims, store=store)


def check_run_outputs(spec: RunSpec) -> None:
    """Output safety and the partial-run policy, before any model is built."""
    from averitec_tools.baselines._run.sidecar import check_partial_policy
    from averitec_tools.outputs import check_output_file

    config_file = spec.config if isinstance(spec.config, str) and os.path.exists(spec.config) else None
    check_output_file(spec.out, option="--out", inputs=[spec.claims, config_file])
    if spec.write_gold_subset:
        check_output_file(spec.write_gold_subset, option="--write-gold-subset",
                          inputs=[spec.claims, config_file, spec.out])
        if os.path.abspath(spec.write_gold_subset) == os.path.abspath(spec.out):
            raise UserError(f"--write-gold-subset {spec.write_gold_subset}: is also --out")
    check_partial_policy(spec.out, resume=spec.resume, overwrite=spec.overwrite)


def _predict_many(spec: RunSpec, engine: Any, config: Any, claims: list[Any]) -> Any:
    """Claims on engine workers (None: in this process)."""
    if engine.name == "local":
        return None
    from averitec_tools.baselines.averitec.claim_worker import AVeriTeCClaimWorker
    from averitec_tools.engines import engine_predictor

    return engine_predictor(engine, worker=AVeriTeCClaimWorker(config=config, variant=spec.variant, store=spec.store,
                                                               claims=tuple(claims)))


def run(spec: RunSpec) -> RunSummary:
    """Run the AVeriTeC baseline on ``spec``'s claims and write ``spec.out`` (see the module docs).

    ``spec.output_format``: ``2024`` or ``2023`` (``auto``: 2024).

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
    """
    from averitec_tools.baselines.averitec.build import build_pipeline
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.data import read_claims
    from averitec_tools.baselines.averitec.output import write_gold_subset
    from averitec_tools.baselines.averitec.variants import get_variant

    spec = resolve_inputs(spec)
    check_run_outputs(spec)
    config = resolve_config(spec.config) if isinstance(spec.config, str) else spec.config
    if not spec.stage_cache:
        config = replace(config, data=replace(config.data, stage_cache=False))
    variant = get_variant(spec.variant)
    claims = read_claims(spec.claims)[: spec.limit]
    fmt = "2024" if spec.output_format == "auto" else spec.output_format
    engine = spec.resolved_engine()
    pipe = build_pipeline(config=config, variant=variant, store=spec.store, claims=claims, progress=spec.progress)
    predict_many = _predict_many(spec, engine, config, claims)
    summary = pipe.run(claims, out=spec.out, output_format=fmt, resume=spec.resume, overwrite=spec.overwrite,
                       progress=spec.progress, predict_many=predict_many)
    if predict_many is not None:
        summary.note(f"engine {engine.name}: stage seconds, memory and stage-cache counts below count only "
                     "this process, not the Ray workers")
    if spec.write_gold_subset:
        write_gold_subset(claims_path=spec.claims, n=len(claims), out=spec.write_gold_subset)
        summary.note(f"gold items of these {len(claims)} claims written to {spec.write_gold_subset}")
    summary.extra["engine"] = engine.describe()
    return summary


__all__ = ["check_run_outputs", "resolve_inputs", "run"]
