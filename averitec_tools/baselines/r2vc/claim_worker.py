"""R2VC's per-claim stages on an engine: a model-holding worker over claim batches.

The worker factory rebuilds the pipeline once per worker (under ``--engine ray``: once per
actor, so weights load once per worker process) and predicts a batch of claims with it;
:func:`averitec_tools.engines.engine_predictor` runs it over claim batches. Predictions
come back in claim order; every stochastic step is seeded per claim
(:func:`averitec_tools.baselines.r2vc.pipeline.claim_seed`), never per worker, so
deterministic stages give the same output on any engine and any number of workers.

The driver builds the pipeline first (indexes, cached offline models), so workers only
load finished artefacts and never race to build them.

Example:
    >>> from averitec_tools.engines import engine_predictor, get_engine
    >>> worker = R2VCClaimWorker(config=None, corpus=None, evidence="given")
    >>> predict = engine_predictor(get_engine("local"), worker=lambda: (lambda cs: [c.upper() for c in cs]))
    >>> (worker.evidence, list(predict(["a", "b"])))
    ('given', ['A', 'B'])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class R2VCClaimWorker:
    """Worker factory for ``averitec baseline r2vc``: builds the pipeline, predicts claims."""

    config: Any
    corpus: str | None
    claims: tuple[Any, ...] = ()
    #: ``retrieved`` or ``given`` (claims carry their evidence: no retriever is built).
    evidence: str = "retrieved"

    def __call__(self) -> Callable[[list[Any]], list[Any]]:
        from averitec_tools.baselines.r2vc.build import build_pipeline

        pipe = build_pipeline(self.config, corpus=self.corpus, claims=list(self.claims), progress=False,
                              evidence=self.evidence)
        return lambda batch: [pipe.predict(c) for c in batch]


__all__ = ["R2VCClaimWorker"]
