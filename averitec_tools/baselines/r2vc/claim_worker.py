"""R2VC's per-claim stages on an engine: a model-holding worker over claim batches.

The worker factory rebuilds the pipeline once per worker (under ``--engine ray``: once per
actor, so weights load once per worker process) and predicts a batch of claims with it;
:func:`averitec_tools.engines.engine_predictor` runs it over claim batches. Predictions
come back in claim order; every stochastic step is seeded per claim
(:func:`averitec_tools.baselines.r2vc.stages.generation.sampling.claim_seed`), never per worker, so
deterministic stages give the same output on any engine and any number of workers.

The driver builds the pipeline first (indexes, cached offline models), so workers only
load finished artefacts and never race to build them.

Example:
    A tiny random NLI model, claims that carry their evidence (no retriever), the
    NLI-only generator; the worker builds the pipeline and predicts a batch, here on the
    local engine:

    >>> import tempfile, pathlib, torch
    >>> from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast
    >>> from averitec_tools.baselines.r2vc.config import config_from_mapping
    >>> from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    >>> from averitec_tools.baselines.r2vc.types import Passage
    >>> from averitec_tools.engines import engine_predictor, get_engine
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "vocab.txt").write_text(chr(10).join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "paris", "france"]))
    >>> labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    >>> _ = torch.manual_seed(0)
    >>> BertForSequenceClassification(BertConfig(vocab_size=7, hidden_size=8, num_hidden_layers=1,
    ...     num_attention_heads=2, intermediate_size=16, num_labels=3, id2label=labels,
    ...     label2id={v: k for k, v in labels.items()})).save_pretrained(d)
    >>> BertTokenizerFast(vocab_file=str(d / "vocab.txt")).save_pretrained(d)  # doctest: +ELLIPSIS
    (...)
    >>> cfg = config_from_mapping({"verifier": {"model": str(d), "device": "cpu"}, "generator": {"k": 2},
    ...                            "ablation": {"nli_only": True, "no_calibration": True}}, source="example")
    >>> claims = [ClaimInput(claim_id=i, claim="Paris is in France.",
    ...                      evidence=(Passage("d1", "Paris", "https://p.org", "Paris is in France."),)) for i in (7, 8)]
    >>> predict = engine_predictor(get_engine("local"), worker=R2VCClaimWorker(config=cfg, corpus=None,
    ...                                                                           evidence="given"))
    >>> [(p.claim.claim_id, p.n_candidates, p.label in ("True", "False", "Uncertain")) for p in predict(claims)]
    [(7, 2, True), (8, 2, True)]
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
        from averitec_tools.baselines.r2vc.request import BuildRequest

        pipe = build_pipeline(self.config, BuildRequest(corpus=self.corpus, claims=self.claims, progress=False,
                                                        evidence=self.evidence))
        return lambda batch: [pipe.predict(c) for c in batch]


__all__ = ["R2VCClaimWorker"]
