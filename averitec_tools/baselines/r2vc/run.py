"""R2VC's library calls behind ``averitec baseline r2vc``: :func:`run`, :func:`calibrate`, :func:`ablations`.

Each takes an :class:`R2VCSpec` (the shared :class:`~averitec_tools.baselines._run.spec.RunSpec`
and R2VC's own flags); the CLI only parses flags into one and prints what comes back.
:func:`run` is the baselines' one driver (:func:`~averitec_tools.baselines._run.driver.drive`)
over :class:`R2VC`, R2VC's hooks: the configuration's preset decides the default claims and
whether ``--corpus`` is read, builds the pipeline and adds its summary keys.

Example:
    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "claims.json").write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    >>> run(R2VCSpec(config="offline-minilm", claims=str(d / "claims.json"), out=str(d / "p.json"), corpus="x"))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: config 'offline-minilm' builds its own corpus: drop --corpus
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.driver import (
    Baseline,
    ManifestParts,
    PredictMany,
    Run,
    drive,
    prepare,
)
from averitec_tools.baselines._run.spec import RunSpec, resolve_config
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.r2vc.config import BUILTIN_CONFIGS, R2VCConfig
from averitec_tools.baselines.r2vc.config import resolve_config as load_r2vc_config
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.presets import preset_for
from averitec_tools.baselines.r2vc.request import BuildRequest
from averitec_tools.errors import UserError


@dataclass(frozen=True, kw_only=True)
class R2VCSpec(RunSpec):
    """An R2VC run: the shared flags and R2VC's own.

    Args:
        corpus: The paragraph store directory.
        evidence: ``retrieved`` or ``given`` (claims carry their evidence).
        candidates: The candidate store directory (store or replay every claim's candidates).
        rebuild_index: Rebuild the retrieval indexes.
    """

    corpus: str | None = None
    evidence: str = "retrieved"
    candidates: str | None = None
    rebuild_index: bool = False

    def request(self, *, claims: Sequence[ClaimInput] = (), engine: Any = None,
                label_evidence: bool = True) -> BuildRequest:
        """What the pipeline is built with for this run."""
        return BuildRequest(corpus=self.corpus, claims=tuple(claims), rebuild_index=self.rebuild_index,
                            progress=self.progress, engine=engine, evidence=self.evidence,
                            candidates=self.candidates, label_evidence=label_evidence)


R2VCRun = Run[R2VCSpec, R2VCConfig, ClaimInput]


class R2VC(Baseline[R2VCSpec, R2VCConfig, ClaimInput, R2VCPipeline]):
    """R2VC's hooks on the baselines' driver."""

    builtin_configs = BUILTIN_CONFIGS
    writes_manifest = True

    def load_config(self, name: str) -> R2VCConfig:
        return load_r2vc_config(name)

    def default_claims(self, spec: R2VCSpec, config: R2VCConfig) -> str:
        return preset_for(config).default_claims(config)

    def read_claims(self, spec: R2VCSpec, config: R2VCConfig, path: str) -> list[ClaimInput]:
        from averitec_tools.baselines.r2vc.io.load import load_claims

        preset_for(config).check_corpus(config, spec.corpus)
        return load_claims(path=path, limit=spec.limit, evidence=spec.evidence, corpus=spec.corpus)

    def output_format(self, spec: R2VCSpec, claims: Sequence[ClaimInput]) -> str:
        from averitec_tools.baselines.r2vc.io.formats import default_format

        return default_format(claims) if spec.output_format == "auto" else spec.output_format

    def build(self, run: R2VCRun) -> R2VCPipeline:
        from averitec_tools.baselines.r2vc.build import build_pipeline

        if run.spec.candidates and run.engine.name != "local":
            raise UserError("--candidates needs --engine local (claims predicted on engine workers are not stored)")
        return build_pipeline(run.config, run.spec.request(claims=run.claims, engine=run.engine))

    def worker(self, run: R2VCRun) -> Callable[[], Callable[[list[ClaimInput]], list[Any]]]:
        from averitec_tools.baselines.r2vc.claim_worker import R2VCClaimWorker

        return R2VCClaimWorker(config=run.config, corpus=run.spec.corpus, claims=tuple(run.claims),
                               evidence=run.spec.evidence)

    def predict(self, pipe: R2VCPipeline, run: R2VCRun, predict_many: PredictMany | None) -> RunSummary:
        s = run.spec
        return pipe.run(run.claims, out=s.out, output_format=run.output_format, resume=s.resume,
                        overwrite=s.overwrite, progress=s.progress, predict_many=predict_many)

    def manifest(self, pipe: R2VCPipeline, run: R2VCRun) -> ManifestParts:
        from averitec_tools.baselines.r2vc.manifest import manifest_parts

        return manifest_parts(config=pipe.config, claims=run.claims_path, corpus=run.spec.corpus,
                              config_file=run.config_file, evidence=run.spec.evidence, limit=run.spec.limit)

    def summarise(self, summary: RunSummary, pipe: R2VCPipeline, run: R2VCRun, *, on_workers: bool,
                  manifest: Path | None) -> None:
        if pipe.candidate_store is not None:
            summary.extra["candidate_store"] = pipe.candidate_store.describe()
        summary.extra["evidence"] = run.spec.evidence
        summary.extra["manifest"] = str(manifest)
        summary.extra.update(preset_for(pipe.config).summary_extra(pipe.config))
        if run.spec.write_gold_subset:
            summary.extra["gold_subset"] = str(run.spec.write_gold_subset)


def run(spec: R2VCSpec) -> RunSummary:
    """Run R2VC on ``spec``'s claims and write ``spec.out`` (see the module docs).

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
        KeyboardInterrupt: progress is in ``OUT.partial.jsonl``; rerun with ``resume``.
    """
    return drive(R2VC(), spec)


def _check_calibrator_out(spec: R2VCSpec, claims_path: str, config_file: str | None) -> None:
    from averitec_tools.outputs import check_output_file

    check_output_file(spec.out, option="--out", inputs=[claims_path, config_file])


def calibrate(spec: R2VCSpec) -> dict[str, Any]:
    """Fit the SLC calibrator (§3.5) on ``spec``'s labelled claims and save it to ``spec.out``.

    The configuration's own ``calibration.path`` (usually the file being written) is
    ignored: inference is simulated without a calibrator.
    """
    from dataclasses import replace

    from averitec_tools.baselines.r2vc.build import build_pipeline
    from averitec_tools.baselines.r2vc.calibration_fit import fit_calibrator

    prepared = prepare(R2VC(), spec, check_outputs=_check_calibrator_out)
    config = prepared.config
    preset_for(config).check_calibrate(config)
    config = replace(config, calibration=replace(config.calibration, path=None),
                     ablation=replace(config.ablation, no_calibration=True))
    # the components name the evidence as a retrieved run does (as calibrate always has)
    pipe = build_pipeline(config, spec.request(claims=prepared.claims, label_evidence=False))
    cal = fit_calibrator(pipe, claims=prepared.claims, where=prepared.claims_path, progress=spec.progress)
    cal.save(spec.out)
    result = {"out": spec.out, "config": config.name, **cal.fit_info, "coef": list(cal.coef),
              "intercept": cal.intercept}
    if pipe.candidate_store is not None:
        result["candidate_store"] = pipe.candidate_store.describe()
    return result


def ablations(spec: R2VCSpec, *, rows: list[str]) -> tuple[dict[str, Any], int]:
    """Table 2 rows from ``spec.candidates``, the store a run with the same config and claims wrote.

    Writes ``ROW.json`` (``ROW.jsonl`` for FEVER claims) per row and ``ablations.json``
    into the directory ``spec.out`` (replaced whole, at the end); returns ablations.json's
    content and the number of claims. No LM is loaded (:func:`~averitec_tools.baselines.r2vc.build.ablation_inputs`).
    """
    import json

    from averitec_tools.baselines.r2vc.build import ablation_inputs
    from averitec_tools.baselines.r2vc.experiments.ablations import ABLATION_ROWS, run_ablations
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.jsonio import atomic_directory
    from averitec_tools.outputs import check_output_dir

    if not spec.candidates:
        raise UserError("--candidates DIR is required: the store written by `averitec baseline r2vc --candidates DIR`")
    if not rows:
        raise UserError("--rows: no row named")
    for r in rows:
        ABLATION_ROWS.get(r)  # unknown names: one line with suggestions
    spec.check_limit()
    resolved = resolve_config(spec.config, builtins=BUILTIN_CONFIGS, load=load_r2vc_config)
    config = resolved.config
    if any(getattr(config.ablation, f) for f in ("no_verifier_selection", "single_candidate", "no_calibration")) \
            or not config.calibration.abstain:
        raise UserError(f"config {config.name!r}: give the configuration the store was written with, ablation "
                        "switches off; the rows switch them on")
    claims_path = str(spec.claims) if spec.claims is not None else preset_for(config).default_claims(config)
    claims = read_claims(claims_path)[: spec.limit]
    fmt = R2VC().output_format(spec, claims)
    suffix = ".json" if fmt == "averitec2024" else ".jsonl"
    check_output_dir(spec.out, option="--out", inputs=[claims_path, resolved.file, spec.candidates],
                     files=[f"{r}{suffix}" for r in rows] + ["ablations.json"])
    preset_for(config).check_corpus(config, spec.corpus)
    inputs = ablation_inputs(config, spec.request(claims=claims))
    with atomic_directory(spec.out) as tmp:
        result = run_ablations(inputs, claims=claims, out_dir=tmp, output_format=fmt, rows=rows,
                               progress=spec.progress)
        for row in result["rows"].values():
            row["out"] = str(spec.out) + "/" + row["out"].rsplit("/", 1)[1]
        result["out"] = str(spec.out)
        result["config"] = config.name
        (tmp / "ablations.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return result, len(claims)


__all__ = ["R2VC", "R2VCSpec", "ablations", "calibrate", "run"]
