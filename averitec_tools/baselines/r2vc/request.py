"""What an R2VC pipeline is built with (:class:`BuildRequest`), and the two things every
preset's builder does with it the same way: name the evidence setting in the components
(:func:`evidence_components`) and open the candidate store (:func:`candidate_store`).

A preset (:mod:`~averitec_tools.baselines.r2vc.presets`) builds its stages and describes
them; :func:`whole_pipeline` names the evidence setting, opens the store and builds the
:class:`~averitec_tools.baselines.r2vc.pipeline.R2VCPipeline`: complete when it is built,
nothing changes it afterwards.

Example:
    >>> evidence_components({"retrieval": {"retriever": "bm25s"}, "verifier": "v"}, evidence="given")["retrieval"]
    {'retriever': 'none: given evidence (oracle-document setting; retrieval skipped)', 'evidence': 'given'}
    >>> BuildRequest().evidence, BuildRequest().candidates is None
    ('retrieved', True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines._run.memory import ResidentModels
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline


@dataclass(frozen=True)
class BuildRequest:
    """What a pipeline is built for.

    Attributes:
        corpus: The paragraph store directory (None: ``retrieval.corpus``).
        claims: The run's claims (the offline preset's leak guard reads their texts).
        rebuild_index: Rebuild the retrieval indexes.
        progress: Progress bars.
        engine: A non-local engine builds missing retrieval indexes on it.
        evidence: ``retrieved``, or ``given`` (claims carry their evidence: no retriever
            is needed, and the components name the oracle-document setting).
        candidates: The candidate store directory (None: no store).
        label_evidence: Name the ``given`` setting in the components (``r2vc-calibrate``
            names them as a retrieved run does).
        models: Lends the retriever, the NLI model and the generator to every pipeline built
            with the same settings (:class:`~averitec_tools.baselines._run.memory.ResidentModels`:
            the paper runs' stages and Table 2 rows), instead of loading them again for each.
    """

    corpus: str | None = None
    claims: Sequence[ClaimInput] = ()
    rebuild_index: bool = False
    progress: bool = True
    engine: Any = None
    evidence: str = "retrieved"
    candidates: str | None = None
    label_evidence: bool = True
    models: ResidentModels | None = None

    def components(self, described: Mapping[str, Any]) -> dict[str, Any]:
        """``described`` with the evidence setting named (where it is labelled)."""
        return evidence_components(described, evidence=self.evidence if self.label_evidence else "retrieved")


def evidence_components(components: Mapping[str, Any], *, evidence: str) -> dict[str, Any]:
    """``components`` with the oracle-document setting (``given``) named in place of the retriever."""
    if evidence != "given":
        return dict(components)
    from averitec_tools.baselines.r2vc.io.given_evidence import GIVEN_COMPONENT

    return {**components, "retrieval": {"retriever": GIVEN_COMPONENT, "evidence": "given"}}


#: What a preset adds to a candidate-store key: (configuration, components) → (settings, described).
StoreSettings = Callable[[R2VCConfig, dict[str, Any]], tuple[dict[str, Any] | None, dict[str, Any] | None]]


def whole_pipeline(request: BuildRequest, *, config: R2VCConfig, described: Mapping[str, Any],
                   store_settings: StoreSettings | None = None, **stages: Any) -> R2VCPipeline:
    """The pipeline a preset built, complete: ``stages`` (retriever, generator, verifier,
    calibrator, question writer; fitted values, leak guard, claim rules, build seconds)
    with the ``described`` components, the evidence setting named in them, and the
    candidate store of ``request`` (its key extended by ``store_settings``)."""
    components = request.components(described)
    settings, store_described = store_settings(config, components) if store_settings is not None else (None, None)
    store = candidate_store(request, config=config, components=components, settings=settings,
                            described=store_described)
    return R2VCPipeline(config=config, components=components, candidate_store=store, **stages)


def candidate_store(request: BuildRequest, *, config: R2VCConfig, components: dict[str, Any],
                    settings: dict[str, Any] | None, described: dict[str, Any] | None) -> CandidateStore | None:
    """The candidate store of ``request.candidates`` for a pipeline of ``config`` (None without one).

    ``settings`` and ``described``: what the preset adds to the store key
    (:meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.store_settings`).
    """
    if not request.candidates:
        return None
    from averitec_tools.baselines.r2vc.io.candidates import open_store

    return open_store(request.candidates, config=config, components=components, settings=settings,
                      described=described, corpus=request.corpus)


__all__ = ["BuildRequest", "StoreSettings", "candidate_store", "evidence_components", "whole_pipeline"]
