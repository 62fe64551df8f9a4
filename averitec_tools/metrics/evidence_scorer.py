"""Evidence scorers: the metrics that score a predicted evidence text against its reference.

An evidence scorer is a registered :class:`~averitec_tools.metrics.base.Metric` (one
registry, one spelling: ``hu-meteor(normalise=candidate)``, ``minilm-qa-f1``,
``ev2r(url=...,model=...)``) that scores *items* -- anything with the claim, its gold label
and the two evidence texts (:class:`RatedItem`; ``averitec meta-eval``'s rated items) --
one score per item, ``None`` where none could be had (a judge failure). The scorers that
also score lists of Q+A strings (``score_strings``) serve ``averitec score
--evidence-scorer``. A scorer with a model names it, and the hash of its weights, in its
:meth:`EvidenceScorer.signature` (the one signature dialect).

    >>> qa_strings("Question: Who?\\nAnswer: Me.\\nQuestion: When?\\nAnswer: Now.")
    ['Who? Me.', 'When? Now.']
    >>> str(parse_evidence_scorer("hu-meteor(normalise=candidate)")), parse_evidence_scorer("bleu").llm
    ('hu-meteor(normalise=candidate)', False)
    >>> parse_evidence_scorer("blue")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: unknown evidence scorer 'blue' (did you mean: bleu...)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import METRICS, Metric, parse_metric
from averitec_tools.metrics.signature import render_signature
from averitec_tools.records.rated import RatedItem
from averitec_tools.registry import Registry

_QUESTION = re.compile(r"(?m)^Question:")


class EvidenceScorer(Metric):
    """Base of the evidence scorers: ``score(items=)``, whether it calls an LLM, its signature."""

    #: Whether the scorer calls an LLM (``averitec meta-eval`` reports it).
    llm: ClassVar[bool] = False

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        raise NotImplementedError

    def check_ready(self) -> None:
        """What a runnable spec needs beyond valid values (a judge's URL): a :class:`UserError`."""

    def details(self) -> dict[str, Any]:
        """Facts the meta-evaluation report prints with the scorer (failures, model hash ...)."""
        return {}

    def signature_fields(self) -> list[tuple[str, Any]]:
        """What decides the scores beyond the spec (a model, its weights' hash ...)."""
        return []

    def signature(self) -> str:
        """``metric:<spec>``, then :meth:`signature_fields`, then the version.

        Example:
            >>> METRICS.get("bleu").signature().rsplit("|version:", 1)[0]
            'metric:bleu'
        """
        return render_signature([("metric", str(self)), *self.signature_fields()])


class PerItemScorer(EvidenceScorer):
    """An evidence scorer of one item at a time: ``setup()`` once (an engine, a library object), then ``score_item``."""

    def setup(self) -> Any:
        """What ``score_item`` is given with each item (``None`` by default)."""
        return None

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        raise NotImplementedError

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        ctx = self.setup()
        return [self.score_item(it, ctx) for it in items]


def check_coverage(name: str, coverage: float) -> None:
    """The one-line error of a verdict scorer's ``coverage`` outside [0, 1].

    Example:
        >>> check_coverage("x", 1.5)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: x: coverage must lie in [0, 1], got 1.5
    """
    if not 0.0 <= coverage <= 1.0:
        raise UserError(f"{name}: coverage must lie in [0, 1], got {coverage}")


def qa_blocks(text: str) -> list[tuple[str, str]]:
    """``(question, answer)`` of each ``Question: ...\\nAnswer: ...`` block of an evidence text.

    Example:
        >>> qa_blocks("Question: Who?\\nAnswer: Me.\\n\\nQuestion: When?\\nAnswer: Now.\\n")
        [('Who?', 'Me.'), ('When?', 'Now.')]
    """
    out = []
    for block in _QUESTION.split(text):
        block = block.strip()
        if not block:
            continue
        q, _, a = block.partition("\nAnswer:")
        out.append((q.strip(), a.strip()))
    return out


def qa_strings(text: str) -> list[str]:
    """Each block as one ``"question answer"`` string (the official Q+A evidence strings)."""
    return [f"{q} {a}".strip() for q, a in qa_blocks(text)]


def evidence_scorer_names() -> list[str]:
    """Every registered evidence scorer's name, sorted.

    Example:
        >>> {"hu-meteor", "minilm-qa-f1", "ev2r"} <= set(evidence_scorer_names())
        True
    """
    from averitec_tools.metrics import all_metrics

    return [name for name in all_metrics() if isinstance(METRICS.get(name), EvidenceScorer)]


def parse_evidence_scorer(text: str) -> EvidenceScorer:
    """The evidence scorer a spec ``NAME`` or ``NAME(PARAM=VALUE,...)`` names, ready to run.

    Raises:
        UserError: An unknown scorer or parameter (with close names), a bad value, or a
            spec that cannot run (``ev2r`` without ``url=``).
    """
    from averitec_tools.metrics.base import split_spec

    name = split_spec(text, kind="scorer spec")[0]
    Registry.of_names("evidence scorer", evidence_scorer_names()).get(name)
    scorer: EvidenceScorer = parse_metric(text)
    scorer.check_ready()
    return scorer


def string_list_scorer(spec: str) -> Any:
    """The evidence scorer ``spec`` names, checked to score lists of Q+A strings (``score_strings``).

    Example:
        >>> string_list_scorer("bleu")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: bleu cannot score Q+A string lists (usable: minilm-qa-f1, minilm-verdict, nli-verdict)
    """
    scorer = parse_evidence_scorer(spec)
    if not hasattr(scorer, "score_strings"):
        usable = [n for n in evidence_scorer_names() if hasattr(METRICS.get(n), "score_strings")]
        raise UserError(f"{spec} cannot score Q+A string lists (usable: {', '.join(usable)})")
    return scorer


__all__ = [
    "EvidenceScorer", "PerItemScorer", "check_coverage", "evidence_scorer_names",
    "parse_evidence_scorer", "qa_blocks", "qa_strings", "string_list_scorer",
]
