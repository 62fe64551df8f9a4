"""The AVeriTeC baseline's per-claim stages on an engine: a model-holding worker.

The worker factory rebuilds the pipeline once per worker (under ``--engine ray``: once per
actor) and runs a batch of claims with it; :func:`averitec_tools.engines.engine_predictor`
runs it over claim batches, results in claim order. ``claims`` is the whole run's claim
list: training excludes every one of them, so each worker finds the driver's cached
checkpoints.

Example:
    >>> worker = AVeriTeCClaimWorker(config=None, variant="claim-only", store=None)
    >>> worker.claims
    ()
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AVeriTeCClaimWorker:
    """Worker factory for ``averitec baseline averitec``: builds the pipeline, runs claims."""

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


__all__ = ["AVeriTeCClaimWorker"]
