"""The AVeriTeC baseline's per-claim stages on an engine: a model-holding worker.

The worker factory rebuilds the pipeline once per worker (under ``--engine ray``: once per
actor) and runs a batch of claims with it; :func:`averitec_tools.engines.engine_predictor`
runs it over claim batches, results in claim order. ``claims`` is the whole run's claim
list: training excludes every one of them, so each worker finds the driver's cached
checkpoints.

Example:
    A tiny random 4-way verdict model, the claim-only variant (no store, no reranker)
    and the extractive justification; the worker builds the pipeline and runs a batch,
    here on the local engine:

    >>> import tempfile, pathlib, torch
    >>> from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast
    >>> from averitec_tools.baselines.averitec.config import config_from_mapping
    >>> from averitec_tools.baselines.averitec.io.data import read_claims
    >>> from averitec_tools.engines import engine_predictor, get_engine
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "vocab.txt").write_text(chr(10).join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "moon"]))
    >>> _ = torch.manual_seed(0)
    >>> BertForSequenceClassification(BertConfig(vocab_size=6, hidden_size=8, num_hidden_layers=1,
    ...     num_attention_heads=2, intermediate_size=16, num_labels=4)).save_pretrained(d / "verdict")
    >>> BertTokenizerFast(vocab_file=str(d / "vocab.txt")).save_pretrained(d / "verdict")  # doctest: +ELLIPSIS
    (...)
    >>> cfg = config_from_mapping({"base": "offline-minilm", "verdict": {"checkpoint": str(d / "verdict")},
    ...                            "justification": {"model": "extractive-fallback"},
    ...                            "data": {"stage_cache": False}}, source="example")
    >>> _ = (d / "claims.json").write_text('[{"claim": "The moon is made of cheese.", "label": "Refuted"}]')
    >>> claims = read_claims(d / "claims.json")
    >>> worker = AVeriTeCClaimWorker(config=cfg, variant="claim-only", store=None, claims=tuple(claims))
    >>> [(r.claim_id, r.label in ("Supported", "Refuted", "Not Enough Evidence",
    ...   "Conflicting Evidence/Cherrypicking"), round(sum(r.probabilities.values()), 6))
    ...  for r in engine_predictor(get_engine("local"), worker=worker)(claims)]
    [(0, True, 1.0)]
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
        from averitec_tools.baselines.averitec.build import build_pipeline
        from averitec_tools.baselines.averitec.variants import get_variant

        pipe = build_pipeline(config=self.config, variant=get_variant(self.variant), store=self.store,
                              claims=list(self.claims), progress=False)
        return lambda batch: [pipe.run_claim(c) for c in batch]


__all__ = ["AVeriTeCClaimWorker"]
