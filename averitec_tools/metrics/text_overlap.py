"""``bleu`` and ``rouge``: the study's library text-overlap scorers of whole evidence texts.

Both come from the libraries the study's HF ``evaluate`` metrics wrap (``sacrebleu``,
``rouge-score``; ``pip install 'averitec-tools[meta-eval]'``), imported only when a scorer
runs.

    >>> str(Bleu()), Rouge().llm
    ('bleu', False)
"""

from __future__ import annotations

import importlib
from typing import Any

from averitec_tools.errors import ResourceError
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import PerItemScorer
from averitec_tools.records.rated import RatedItem


def _library(module: str, package: str, scorer: str) -> Any:
    """``import module``, or a ResourceError naming the scorer and the package it needs."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ResourceError(f"the {scorer} scorer needs {package}", hint="pip install 'averitec-tools[meta-eval]'") from None


@register_metric
class Bleu(PerItemScorer, name="bleu", higher_is_better=True, citation="Papineni et al. (2002); sacrebleu",
           description="sentence BLEU-4 of the whole evidence texts on whitespace tokens, no smoothing (sacrebleu)"):
    """Sentence BLEU-4 on whitespace tokens, no smoothing (``sacrebleu``; the study's HF ``bleu``)."""

    def setup(self) -> Any:
        return _library("sacrebleu", "sacrebleu", self.name).metrics.BLEU(smooth_method="none", tokenize="none",
                                                                          force=True)

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return ctx.corpus_score([" ".join(item.predicted.split())], [[" ".join(item.reference.split())]]).score / 100


@register_metric
class Rouge(PerItemScorer, name="rouge", higher_is_better=True, citation="Lin (2004); rouge-score",
            description="ROUGE-L F-measure of the whole evidence texts, no stemming (rouge-score)"):
    """ROUGE-L F-measure (``rouge-score``, no stemming; the study's HF ``rouge`` ``rougeL``)."""

    def setup(self) -> Any:
        return _library("rouge_score.rouge_scorer", "rouge-score", self.name).RougeScorer(["rougeL"], use_stemmer=False)

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return ctx.score(item.reference, item.predicted)["rougeL"].fmeasure


__all__ = ["Bleu", "Rouge"]
