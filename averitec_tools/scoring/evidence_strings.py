"""The evidence strings the AVeriTeC scorers compare: gold questions and answers as the
official scripts join them, and the first-10 evidence cap."""

from __future__ import annotations

from collections.abc import Sequence

from averitec_tools.records.averitec import Question

#: The official scorers score only the first 10 predicted evidence items.
MAX_EVIDENCE = 10
NO_ANSWER = " No answer could be found."


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


__all__ = ["MAX_EVIDENCE", "NO_ANSWER", "answer_strings", "qa_strings", "raw_answers"]
