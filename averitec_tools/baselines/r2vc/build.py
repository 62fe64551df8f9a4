"""Build an :class:`~averitec_tools.baselines.r2vc.pipeline.R2VCPipeline` from a configuration:
its preset's builder (:meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.build`), and what
the ablation rows replay with (:func:`ablation_inputs`).

Nothing is substituted silently: a standard configuration must name its generator
and calibrator or switch on the matching ablation
(:meth:`~averitec_tools.baselines.r2vc.config.R2VCConfig.check_components`), and the
pipeline's ``components`` name what each stage runs.

Example:
    >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
    >>> build_pipeline(R2VCConfig(name="paper"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: config 'paper': generator.model is not set (...)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.presets import preset_for
from averitec_tools.baselines.r2vc.request import BuildRequest
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator, ClaimCalibrator


def build_pipeline(config: R2VCConfig, request: BuildRequest | None = None) -> R2VCPipeline:
    """The pipeline of ``config`` (its ablation switches applied), built whole by its preset.

    With ``request.evidence == "given"`` (claims carry their own evidence, the
    oracle-document setting) the standard preset builds no retriever and needs no
    corpus. A non-local ``request.engine`` builds missing retrieval indexes on it (see
    :func:`~averitec_tools.baselines.r2vc.stages.retrieval.build_retriever`).

    Raises:
        UserError / ResourceError: a component left unset without its ablation, no
            corpus, a missing or corrupt index, a model that cannot be loaded (offline:
            at once, never waiting on the network).
    """
    return preset_for(config).build(config, request or BuildRequest())


@dataclass(frozen=True)
class AblationInputs:
    """What the ablation rows replay with, no LM loaded.

    Attributes:
        config: The row configuration (the store's, with ``config``'s ablation switches).
        store: The candidate store a run of the same configuration wrote (replayed only).
        calibrator: The calibrator the configuration uses (None without one).
        components: The writing run's components.
        fitted: The preset's fitted values (offline), None otherwise.
    """

    config: R2VCConfig
    store: CandidateStore
    calibrator: Calibrator | ClaimCalibrator | None
    components: dict[str, Any]
    fitted: dict[str, Any] | None


def ablation_inputs(config: R2VCConfig, request: BuildRequest) -> AblationInputs:
    """What the ablation rows replay with from ``request.candidates``, loading no LM.

    A preset that fits its own models (offline) is built (small, cached) for its fitted
    values, claim-level rules and calibrator; the row configuration keeps ``config``'s
    ablation switches. Otherwise the calibrator is the configured file and the components
    are named from the configuration. The components name the evidence setting as the
    run that wrote the store named them.
    """
    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import load_or_none

    assert request.candidates is not None
    preset = preset_for(config)
    if preset.fits_own_models:
        pipe = build_pipeline(config, replace(request, candidates=None))
        store_config, calibrator, fitted = pipe.config, pipe.calibrator, pipe.fitted
        row_config = replace(pipe.config, ablation=config.ablation)
        components = request.components(pipe.components)
    else:
        store_config = config.effective()
        store_config.check_components()
        row_config, calibrator, fitted = config, load_or_none(store_config.calibration.path), None
        components = request.components({
            "retrieval": {"sparse": store_config.retrieval.sparse, "dense": store_config.retrieval.dense_model},
            "generator": ({"model": store_config.generator.model} if store_config.generator.model
                          else "ablation:nli_only"),
            "verifier": {"backend": f"hf:{store_config.verifier.model}"},
        })
    settings, described = preset.store_settings(store_config, components)
    store = open_store(request.candidates, config=store_config, components=components, settings=settings,
                       described=described, corpus=request.corpus, replay_only=True)
    return AblationInputs(config=row_config, store=store, calibrator=calibrator, components=components,
                          fitted=fitted)


__all__ = ["AblationInputs", "ablation_inputs", "build_pipeline"]
