"""AVeriTeC gold annotation records (the schema of the official ``train/dev.json``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.records._fields import opt_str, opt_strs, req_str, str_list

#: The four AVeriTeC verdicts, spelled exactly as in the official files.
AVERITEC_LABELS: tuple[str, ...] = (
    "Supported",
    "Refuted",
    "Not Enough Evidence",
    "Conflicting Evidence/Cherrypicking",
)

ANSWER_TYPES: tuple[str, ...] = ("Extractive", "Abstractive", "Boolean", "Unanswerable")


def parse_claim_date(raw: str | None) -> dt.date | None:
    """Parse AVeriTeC's ``DD-MM-YYYY`` claim date; ``None`` when absent or unparseable.

    Example:
        >>> parse_claim_date("31-10-2020")
        datetime.date(2020, 10, 31)
        >>> parse_claim_date("sometime") is None
        True
    """
    if not raw:
        return None
    return _parse_date_memo(raw) if len(raw) <= 64 else _parse_date(raw)


def _parse_date(raw: str) -> dt.date | None:
    for fmt in ("%d-%m-%Y", "%Y-%m-%d", "%d/%m/%Y"):
        try:
            return dt.datetime.strptime(raw.strip(), fmt).date()
        except ValueError:
            continue
    return None


#: strptime costs ~30 µs; a worker auditing every submission against one gold file reads
#: the same dates again and again (a few thousand short strings at most are kept)
_parse_date_memo = lru_cache(maxsize=4096)(_parse_date)


#: The optional string fields of an answer, in ``dev.json`` order.
_ANSWER_OPTIONAL = ("answer_type", "source_url", "cached_source_url", "source_medium", "boolean_explanation")
#: The optional string fields of a claim read as they are.
_CLAIM_OPTIONAL = ("justification", "claim_date", "speaker", "original_claim_url", "cached_original_claim_url",
                   "fact_checking_article", "reporting_source", "location_ISO_code")


@dataclass(frozen=True)
class Answer:
    """One answer to an evidence question.

    ``boolean_explanation`` is set for ``answer_type == "Boolean"``;
    ``source_url``/``cached_source_url`` are absent for unanswerable questions.
    """

    answer: str
    answer_type: str | None = None
    source_url: str | None = None
    cached_source_url: str | None = None
    source_medium: str | None = None
    boolean_explanation: str | None = None

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> Answer:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: answer must be an object, found {type(obj).__name__}")
        return cls(answer=req_str(obj, "answer", where), **opt_strs(obj, _ANSWER_OPTIONAL, where))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answer": self.answer}
        for key in _ANSWER_OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Question:
    """An evidence question with its answers (possibly several)."""

    question: str
    answers: tuple[Answer, ...] = ()

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> Question:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: question must be an object, found {type(obj).__name__}")
        answers = obj.get("answers") or []
        if not isinstance(answers, list):
            raise UserError(f"{where}: field 'answers' must be a list")
        return cls(
            question=req_str(obj, "question", where),
            answers=tuple(Answer.from_dict(a, where=f"{where}.answers[{i}]") for i, a in enumerate(answers)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "answers": [a.to_dict() for a in self.answers]}


@dataclass(frozen=True)
class AVeriTeCClaim:
    """One AVeriTeC claim with its full gold annotation (every field of ``dev.json``).

    ``label``, ``justification`` and ``questions`` are ``None``/empty for unlabelled test
    claims. ``claim_date`` keeps the raw string; :attr:`date` is the parsed value.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "label": "Refuted",
        ...                              "claim_date": "31-10-2020"}, where="dev.json[0]")
        >>> c.date.year
        2020
    """

    claim: str
    label: str | None = None
    justification: str | None = None
    claim_date: str | None = None
    speaker: str | None = None
    original_claim_url: str | None = None
    cached_original_claim_url: str | None = None
    fact_checking_article: str | None = None
    reporting_source: str | None = None
    location_ISO_code: str | None = None
    claim_types: tuple[str, ...] = ()
    fact_checking_strategies: tuple[str, ...] = ()
    required_reannotation: bool | None = None
    questions: tuple[Question, ...] = ()
    claim_id: int | None = field(default=None, compare=False)

    @property
    def date(self) -> dt.date | None:
        return parse_claim_date(self.claim_date)

    @classmethod
    def from_dict(cls, obj: Any, *, where: str, claim_id: int | None = None) -> AVeriTeCClaim:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: claim must be an object, found {type(obj).__name__}")
        label = opt_str(obj, "label", where)
        if label is not None and label not in AVERITEC_LABELS:
            raise UserError(
                f"{where}: unknown label {label!r}",
                hint=f"valid labels: {', '.join(AVERITEC_LABELS)}",
            )
        questions = obj.get("questions") or []
        if not isinstance(questions, list):
            raise UserError(f"{where}: field 'questions' must be a list")
        rr = obj.get("required_reannotation")
        return cls(
            claim=req_str(obj, "claim", where),
            label=label,
            **opt_strs(obj, _CLAIM_OPTIONAL, where),
            claim_types=str_list(obj, "claim_types", where),
            fact_checking_strategies=str_list(obj, "fact_checking_strategies", where),
            required_reannotation=bool(rr) if rr is not None else None,
            questions=tuple(
                Question.from_dict(q, where=f"{where}.questions[{i}]") for i, q in enumerate(questions)
            ),
            claim_id=claim_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """The official JSON shape (field order as in ``dev.json``)."""
        return {
            "claim": self.claim,
            "required_reannotation": self.required_reannotation,
            "label": self.label,
            "justification": self.justification,
            "claim_date": self.claim_date,
            "speaker": self.speaker,
            "original_claim_url": self.original_claim_url,
            "fact_checking_article": self.fact_checking_article,
            "reporting_source": self.reporting_source,
            "location_ISO_code": self.location_ISO_code,
            "claim_types": list(self.claim_types),
            "fact_checking_strategies": list(self.fact_checking_strategies),
            "questions": [q.to_dict() for q in self.questions],
            "cached_original_claim_url": self.cached_original_claim_url,
        }


__all__ = ["AVERITEC_LABELS", "AVeriTeCClaim", "Answer", "Question", "parse_claim_date"]
