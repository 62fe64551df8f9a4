"""The baselines' per-claim stages on an engine: model-holding workers over claim batches.

A worker factory rebuilds the baseline's pipeline once per worker (under ``--engine ray``:
once per actor, so weights load once per worker process) and predicts a batch of claims
with it. Predictions come back in claim order; every stochastic step is seeded per
claim (:func:`averitec_tools.baselines.r2vc.pipeline.claim_seed`), never per worker, so
deterministic stages give the same output on any engine and any number of workers.

The driver builds the pipeline first (indexes, cached offline models), so workers only
load finished artefacts and never race to build them.

Example:
    >>> from averitec_tools.engines import get_engine
    >>> predict = engine_predictor(get_engine("local"), worker=lambda: (lambda cs: [c.upper() for c in cs]))
    >>> list(predict(["a", "b"]))
    ['A', 'B']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

#: Claims per batch handed to a worker.
CLAIM_BATCH = 4


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


@dataclass(frozen=True)
class AVeriTeCClaimWorker:
    """Worker factory for ``averitec baseline averitec``: builds the pipeline, runs claims.

    ``claims`` is the whole run's claim list: training excludes every one of them, so
    each worker finds the driver's cached checkpoints.
    """

    config: Any
    variant: str
    store: str | None
    claims: tuple[Any, ...] = ()

    def __call__(self) -> Callable[[list[Any]], list[Any]]:
        from averitec_tools.baselines.averitec.pipeline import build_pipeline
        from averitec_tools.baselines.averitec.variants import get_variant

        pipe = build_pipeline(config=self.config, variant=get_variant(self.variant), store=self.store,
                              claims=list(self.claims), progress=False)
        return lambda batch: [pipe.run_claim(c) for c in batch]


def engine_predictor(engine: Any, *, worker: Callable[[], Callable[[list[Any]], list[Any]]],
                     batch_size: int = CLAIM_BATCH) -> Callable[[list[Any]], Iterator[Any]]:
    """A ``predict_many`` callable running ``worker`` on ``engine`` over claim batches."""

    def predict_many(claims: list[Any]) -> Iterator[Any]:
        return engine.map_batches(claims, worker=worker, batch_size=batch_size)  # type: ignore[no-any-return]

    return predict_many


__all__ = ["CLAIM_BATCH", "AVeriTeCClaimWorker", "R2VCClaimWorker", "engine_predictor"]
