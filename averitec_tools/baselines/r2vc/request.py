"""What an R2VC pipeline is built with (:class:`BuildRequest`), and the two things every
preset's builder does with it the same way: name the evidence setting in the components
(:func:`evidence_components`) and open the candidate store (:func:`candidate_store`).

A preset (:mod:`~averitec_tools.baselines.r2vc.presets`) builds its stages, then passes the
components and the store to :class:`~averitec_tools.baselines.r2vc.pipeline.R2VCPipeline`:
the pipeline is complete when it is built, and nothing changes it afterwards.

Example:
    >>> evidence_components({"retrieval": {"retriever": "bm25s"}, "verifier": "v"}, evidence="given")["retrieval"]
    {'retriever': 'none: given evidence (oracle-document setting; retrieval skipped)', 'evidence': 'given'}
    >>> BuildRequest().evidence, BuildRequest().candidates is None
    ('retrieved', True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore
from averitec_tools.baselines.r2vc.io.claims import ClaimInput


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
    """

    corpus: str | None = None
    claims: Sequence[ClaimInput] = ()
    rebuild_index: bool = False
    progress: bool = True
    engine: Any = None
    evidence: str = "retrieved"
    candidates: str | None = None
    label_evidence: bool = True

    def components(self, described: Mapping[str, Any]) -> dict[str, Any]:
        """``described`` with the evidence setting named (where it is labelled)."""
        return evidence_components(described, evidence=self.evidence if self.label_evidence else "retrieved")


def evidence_components(components: Mapping[str, Any], *, evidence: str) -> dict[str, Any]:
    """``components`` with the oracle-document setting (``given``) named in place of the retriever."""
    if evidence != "given":
        return dict(components)
    from averitec_tools.baselines.r2vc.io.given_evidence import GIVEN_COMPONENT

    return {**components, "retrieval": {"retriever": GIVEN_COMPONENT, "evidence": "given"}}


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


__all__ = ["BuildRequest", "candidate_store", "evidence_components"]
