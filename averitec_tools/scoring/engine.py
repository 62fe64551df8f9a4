"""Pieces shared by the AVeriTeC scoring profiles: comparison strings, engine, signature."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.signature import Signature, wordnet_field
from averitec_tools.metrics.tokenize import TOKENIZER_NAME
from averitec_tools.records.averitec import Question

#: The official scorers score only the first 10 predicted evidence items.
MAX_EVIDENCE = 10
NO_ANSWER = " No answer could be found."
#: ``--metric`` values: every figure of the profile, or Hungarian METEOR only.
METRIC_CHOICES = ("all", "hu-meteor")


def qa_strings(questions: Sequence[Question]) -> list[str]:
    """The official "question answer" strings of gold-schema questions.

    One string per answer; a Boolean answer gets ``". " + boolean_explanation`` appended;
    a question without answers becomes ``"<question> No answer could be found."``.

    Example:
        >>> from averitec_tools.records.averitec import Answer
        >>> qa_strings([Question("Is it?", (Answer("No", "Boolean", boolean_explanation="It is not"),)),
        ...             Question("Who?", ())])
        ['Is it? No. It is not', 'Who? No answer could be found.']
    """
    out: list[str] = []
    for q in questions:
        for a in q.answers:
            s = q.question + " " + a.answer
            if a.answer_type == "Boolean":
                s += ". " + (a.boolean_explanation or "")
            out.append(s)
        if not q.answers:
            out.append(q.question + NO_ANSWER)
    return out


def answer_strings(questions: Sequence[Question]) -> list[str]:
    """Answer-only counterparts of :func:`qa_strings` (Boolean explanation kept).

    This is averitec-tools' own answer-only definition (``answers_only_averitec_tools``);
    the public one (``answers_only``) uses :func:`raw_answers`.

    Example:
        >>> from averitec_tools.records.averitec import Answer
        >>> answer_strings([Question("Who?", (Answer("Bob"),)), Question("Why?", ())])
        ['Bob', 'No answer could be found.']
    """
    out: list[str] = []
    for q in questions:
        for a in q.answers:
            s = a.answer
            if a.answer_type == "Boolean":
                s += ". " + (a.boolean_explanation or "")
            out.append(s)
        if not q.answers:
            out.append(NO_ANSWER.strip())
    return out


def raw_answers(questions: Sequence[Question]) -> list[str]:
    """Gold answers as the public answer-only scorer reads them: the raw ``answer`` fields.

    No Boolean explanation is appended and a question without answers contributes
    nothing (unlike :func:`answer_strings`).

    Example:
        >>> from averitec_tools.records.averitec import Answer
        >>> raw_answers([Question("Is it?", (Answer("No", "Boolean", boolean_explanation="It is not"),)),
        ...              Question("Who?", ())])
        ['No']
    """
    return [a.answer for q in questions for a in q.answers]


def make_engine(options: dict[str, Any]) -> MeteorEngine:
    """A fresh METEOR engine, or the warm one a long-lived scorer lent (see ``scoring.warm``)."""
    from averitec_tools.scoring.warm import lent_engine

    return lent_engine() or MeteorEngine(allow_download=bool(options.get("allow_download", True)))


def check_options(profile: str, options: dict[str, Any], allowed: Sequence[str]) -> None:
    unknown = set(options) - set(allowed)
    if unknown:
        raise UserError(
            f"profile {profile!r} does not take option(s): {', '.join(sorted(unknown))}",
            hint=f"it takes {', '.join(allowed)}",
        )
    metric = options.get("metric", "all")
    if metric not in METRIC_CHOICES:
        from averitec_tools.registry import close_names

        close = close_names(str(metric), METRIC_CHOICES, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}?" if close else f"choose one of: {', '.join(METRIC_CHOICES)}"
        raise UserError(f"unknown metric {metric!r} for profile {profile!r}", hint=hint)


def signature(
    *,
    profile: str,
    engine: MeteorEngine,
    thresholds: Sequence[float],
    comparison: str,
    normalisation: str,
    evidence_cap: int | None,
    lenient: bool = False,
) -> str:
    return Signature(
        profile=profile,
        metric="hu-meteor",
        tokenizer=TOKENIZER_NAME,
        wordnet=wordnet_field(engine.wordnet),
        thresholds=tuple(thresholds),
        comparison=comparison,
        normalisation=normalisation,
        evidence_cap=evidence_cap,
        version=__version__,
        lenient=lenient,
    ).render()


__all__ = ["MAX_EVIDENCE", "METRIC_CHOICES", "answer_strings", "raw_answers", "check_options", "make_engine", "qa_strings", "signature"]
