"""R2VC's library calls behind ``averitec baseline r2vc``: :func:`run`, :func:`calibrate`, :func:`ablations`.

Each takes a :class:`~averitec_tools.baselines._run.spec.RunSpec`; the CLI only parses
flags into one and prints what comes back. :func:`run` checks every output before a
model is built (the partial-run policy included), builds the pipeline with the
configuration's preset, runs it through the shared run loop, writes the manifest (git
commit read at the start) and returns the summary.

Example:
    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "claims.json").write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    >>> run(RunSpec(config="offline-minilm", claims=str(d / "claims.json"), out=str(d / "p.json"), corpus="x"))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: config 'offline-minilm' builds its own corpus: drop --corpus
"""

from __future__ import annotations

import os
from typing import Any

from averitec_tools.baselines._run.spec import RunSpec
from averitec_tools.baselines.r2vc.config import R2VCConfig, resolve_config
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.presets import preset_for
from averitec_tools.baselines.r2vc.reporting import RunSummary
from averitec_tools.errors import UserError


def _claims(spec: RunSpec, config: R2VCConfig, claims_path: str) -> list[ClaimInput]:
    from averitec_tools.baselines.r2vc.io.load import load_claims

    preset_for(config).check_corpus(config, spec.corpus)
    return load_claims(path=claims_path, limit=spec.limit, evidence=spec.evidence, corpus=spec.corpus)


def check_run_outputs(spec: RunSpec, claims_path: str) -> None:
    """Output safety (issue 12) and the partial-run policy, before any model is built."""
    from averitec_tools.baselines._run.manifest import manifest_path
    from averitec_tools.baselines._run.sidecar import check_partial_policy
    from averitec_tools.outputs import check_output_file

    inputs = [claims_path, spec.config_file]
    check_output_file(spec.out, option="--out", inputs=inputs)
    check_output_file(manifest_path(spec.out), option="--out (its .manifest.json)", inputs=inputs)
    if spec.write_gold_subset:
        check_output_file(spec.write_gold_subset, option="--write-gold-subset", inputs=inputs)
        if os.path.abspath(spec.write_gold_subset) == os.path.abspath(spec.out):
            raise UserError(f"--write-gold-subset {spec.write_gold_subset}: is also --out")
    check_partial_policy(spec.out, resume=spec.resume, overwrite=spec.overwrite)


def _name_evidence(components: dict[str, Any], evidence: str) -> None:
    """Name the oracle-document setting (``--evidence given``) in the components."""
    if evidence == "given":
        from averitec_tools.baselines.r2vc.io.given_evidence import GIVEN_COMPONENT

        components["retrieval"] = {"retriever": GIVEN_COMPONENT, "evidence": "given"}


def _prepare(pipe: Any, spec: RunSpec) -> None:
    """Name the evidence setting in the components; open the candidate store (``--candidates``)."""
    _name_evidence(pipe.components, spec.evidence)
    if spec.candidates:
        from averitec_tools.baselines.r2vc.io.candidates import open_store

        settings, described = preset_for(pipe.config).store_settings(pipe.config, pipe.components)
        pipe.candidate_store = open_store(spec.candidates, config=pipe.config, components=pipe.components,
                                          settings=settings, described=described, corpus=spec.corpus)


def _predict_many(spec: RunSpec, engine: Any, config: R2VCConfig, claims: list[ClaimInput]) -> Any:
    """Claims on engine workers (None: in this process)."""
    if engine.name == "local":
        return None
    from averitec_tools.baselines.r2vc.claim_worker import R2VCClaimWorker
    from averitec_tools.engines import engine_predictor

    return engine_predictor(engine, worker=R2VCClaimWorker(config=config, corpus=spec.corpus, claims=tuple(claims),
                                                           evidence=spec.evidence))


def run(spec: RunSpec) -> RunSummary:
    """Run R2VC on ``spec``'s claims and write ``spec.out`` (see the module docs).

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
        KeyboardInterrupt: progress is in ``OUT.partial.jsonl``; rerun with ``resume``.
    """
    from averitec_tools.baselines._run.manifest import git_state
    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.io.formats import default_format
    from averitec_tools.baselines.r2vc.manifest import write_run_manifest

    git = git_state()  # the code that starts the run, not whatever the checkout holds at its end
    if spec.limit is not None and spec.limit < 1:
        raise UserError(f"--limit must be at least 1, got {spec.limit}")
    config = resolve_config(spec.config) if isinstance(spec.config, str) else spec.config
    claims_path = str(spec.claims) if spec.claims is not None else preset_for(config).default_claims(config)
    check_run_outputs(spec, claims_path)
    claims = _claims(spec, config, claims_path)
    fmt = default_format(claims) if spec.output_format == "auto" else spec.output_format
    engine = spec.resolved_engine()
    if spec.candidates and engine.name != "local":
        raise UserError("--candidates needs --engine local (claims predicted on engine workers are not stored)")
    pipe = build_pipeline(config, corpus=spec.corpus, claims=claims, rebuild_index=spec.rebuild_index,
                          progress=spec.progress, engine=engine, evidence=spec.evidence)
    _prepare(pipe, spec)
    summary = pipe.run(claims, out=spec.out, output_format=fmt, resume=spec.resume, overwrite=spec.overwrite,
                       progress=spec.progress, predict_many=_predict_many(spec, engine, config, claims))
    summary.extra["engine"] = engine.describe()
    if pipe.candidate_store is not None:
        summary.extra["candidate_store"] = pipe.candidate_store.describe()
    summary.extra["evidence"] = spec.evidence
    summary.extra["manifest"] = str(write_run_manifest(
        out=spec.out, config=pipe.config, claims=claims_path, corpus=spec.corpus, config_file=spec.config_file,
        evidence=spec.evidence, limit=spec.limit, git=git))
    if spec.write_gold_subset:
        from averitec_tools.jsonio import write_head

        write_head(claims_path, n=len(claims), out=spec.write_gold_subset)
    summary.extra.update(preset_for(pipe.config).summary_extra(pipe.config))
    if spec.write_gold_subset:
        summary.extra["gold_subset"] = str(spec.write_gold_subset)
    return summary


def calibrate(spec: RunSpec) -> dict[str, Any]:
    """Fit the SLC calibrator (§3.5) on ``spec``'s labelled claims and save it to ``spec.out``.

    The configuration's own ``calibration.path`` (usually the file being written) is
    ignored: inference is simulated without a calibrator.
    """
    from dataclasses import replace

    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.calibration_fit import fit_calibrator
    from averitec_tools.outputs import check_output_file

    if spec.limit is not None and spec.limit < 1:
        raise UserError(f"--limit must be at least 1, got {spec.limit}")
    config = resolve_config(spec.config) if isinstance(spec.config, str) else spec.config
    claims_path = str(spec.claims) if spec.claims is not None else preset_for(config).default_claims(config)
    check_output_file(spec.out, option="--out", inputs=[claims_path, spec.config_file])
    claims = _claims(spec, config, claims_path)
    preset_for(config).check_calibrate(config)
    config = replace(config, calibration=replace(config.calibration, path=None),
                     ablation=replace(config.ablation, no_calibration=True))
    pipe = build_pipeline(config, corpus=spec.corpus, claims=claims, rebuild_index=spec.rebuild_index,
                          progress=spec.progress, evidence=spec.evidence)
    _prepare(pipe, replace(spec, evidence="retrieved"))
    cal = fit_calibrator(pipe, claims=claims, where=claims_path, progress=spec.progress)
    cal.save(spec.out)
    result = {"out": spec.out, "config": config.name, **cal.fit_info, "coef": list(cal.coef),
              "intercept": cal.intercept}
    if pipe.candidate_store is not None:
        result["candidate_store"] = pipe.candidate_store.describe()
    return result


def ablations(spec: RunSpec, *, rows: list[str]) -> tuple[dict[str, Any], int]:
    """Table 2 rows from ``spec.candidates``, the store a run with the same config and claims wrote.

    Writes ``ROW.json`` (``ROW.jsonl`` for FEVER claims) per row and ``ablations.json``
    into the directory ``spec.out`` (replaced whole, at the end); returns ablations.json's
    content and the number of claims. No LM is loaded (:func:`~averitec_tools.baselines.r2vc.build.ablation_inputs`).
    """
    import json

    from averitec_tools.baselines.r2vc.build import ablation_inputs
    from averitec_tools.baselines.r2vc.experiments.ablations import ABLATION_ROWS, run_ablations
    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.baselines.r2vc.io.formats import default_format
    from averitec_tools.jsonio import atomic_directory
    from averitec_tools.outputs import check_output_dir

    if not spec.candidates:
        raise UserError("--candidates DIR is required: the store written by `averitec baseline r2vc --candidates DIR`")
    if not rows:
        raise UserError("--rows: no row named")
    for r in rows:
        ABLATION_ROWS.get(r)  # unknown names: one line with suggestions
    if spec.limit is not None and spec.limit < 1:
        raise UserError(f"--limit must be at least 1, got {spec.limit}")
    config = resolve_config(spec.config) if isinstance(spec.config, str) else spec.config
    if any(getattr(config.ablation, f) for f in ("no_verifier_selection", "single_candidate", "no_calibration")) \
            or not config.calibration.abstain:
        raise UserError(f"config {config.name!r}: give the configuration the store was written with, ablation "
                        "switches off; the rows switch them on")
    claims_path = str(spec.claims) if spec.claims is not None else preset_for(config).default_claims(config)
    claims = read_claims(claims_path)[: spec.limit]
    fmt = default_format(claims) if spec.output_format == "auto" else spec.output_format
    suffix = ".json" if fmt == "averitec2024" else ".jsonl"
    check_output_dir(spec.out, option="--out", inputs=[claims_path, spec.config_file, spec.candidates],
                     files=[f"{r}{suffix}" for r in rows] + ["ablations.json"])
    preset_for(config).check_corpus(config, spec.corpus)
    calibrator, row_config, store_config, components, fitted = ablation_inputs(config, claims=claims,
                                                                               progress=spec.progress)
    _name_evidence(components, spec.evidence)  # as `r2vc --evidence given` named it when it wrote the store
    settings, described = preset_for(store_config).store_settings(store_config, components)
    store = open_store(spec.candidates, config=store_config, components=components, settings=settings,
                       described=described, corpus=spec.corpus, replay_only=True)
    with atomic_directory(spec.out) as tmp:
        result = run_ablations(config=row_config, store=store, claims=claims, calibrator=calibrator,
                               components=components, out_dir=tmp, output_format=fmt, rows=rows,
                               progress=spec.progress, fitted=fitted)
        for row in result["rows"].values():
            row["out"] = str(spec.out) + "/" + row["out"].rsplit("/", 1)[1]
        result["out"] = str(spec.out)
        result["config"] = config.name
        (tmp / "ablations.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return result, len(claims)


__all__ = ["ablations", "calibrate", "check_run_outputs", "run"]
