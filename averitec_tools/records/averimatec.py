"""AVerImaTeC (FEVER-9) records: gold claims of ``train.json``/``val.json``/``test_data/test.json``
and the organisers' submission format.

Gold layout (one JSON array per split; a claim's id is its position in the file, as the
organisers' scorer aligns them)::

    {"claim_text": str, "claim_images": [NAME], "date": "YYYY-MM-DD", "location": "FI",
     "article": URL, "label": str, "justification": str,
     "questions": [{"question": str, "input_images": [NAME], "question_type": [str],
                    "answer_method": str,
                    "answers": [{"answer_type": "Extractive"|"Abstractive"|"Boolean"|"Image",
                                 "answer_text": str, "boolean_explanation": str,  # Boolean
                                 "image_answers": [NAME],                         # Image
                                 "source_url": URL, "source_medium": str}]}],
     "metadata": {"speaker": str, "transcription": str, "modality": str, ...}}

Image fields hold file names under the dataset's ``images/`` folder. ``test_data/test.json``
has no ``label``, ``justification`` or ``questions``. Submission layout (the organisers'
``Result_Convert`` notebook; ``id`` is the claim's position in the gold file)::

    {"id": int, "questions": [str], "justification": str, "verdict": str,
     "evidence": [{"text": "... [IMG_1] ...", "images": [BASE64]}]}

``[IMG_k]`` in a text refers to the k-th image (1-based) of the same item; a gold QA pair
numbers its question's images first, then its image answers (:meth:`AVerImaTeCQuestion.images`).
These constructors check structure only; decoding and bounding the images is
:mod:`averitec_tools.scoring.averimatec_images`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.records._fields import opt_str, opt_strs, req_str
from averitec_tools.records.averitec import AVERITEC_LABELS, parse_claim_date

#: The four verdicts (the AVeriTeC spelling; labels are compared as the organisers do,
#: ``pred.lower().strip() == gold.lower()``, so the records keep them as written).
AVERIMATEC_LABELS: tuple[str, ...] = AVERITEC_LABELS
#: Answer types: the four of the task page, and ``Unanswerable`` which the annotation
#: guidelines also name. Every type but ``Image`` carries ``answer_text``.
ANSWER_TYPES: tuple[str, ...] = ("Extractive", "Abstractive", "Boolean", "Image", "Unanswerable")
IMAGE_ANSWER, BOOLEAN_ANSWER = "Image", "Boolean"
#: ``[IMG_k]``: a reference to the k-th image of the same item (what the organisers' regex
#: ``\[IMG_.*?\]`` finds when k is a number).
IMAGE_TOKEN = re.compile(r"\[IMG_(\d+)\]")
#: Known ``metadata`` fields holding one string, and lists of strings.
METADATA_STRINGS = ("speaker", "transcription", "media_source", "original_claim_url", "reporting_source", "modality")
METADATA_LISTS = ("claim_types", "fact_checking_strategies", "refuting_reasons", "image_misuse_types")


def image_refs(text: str) -> tuple[int, ...]:
    """The numbers k of the ``[IMG_k]`` tokens in ``text``, in order.

    Example:
        >>> image_refs("A photo [IMG_1] beside [IMG_12] and [IMG_x]")
        (1, 12)
    """
    return tuple(int(m.group(1)) for m in IMAGE_TOKEN.finditer(text))


def canonical_label(label: str | None) -> str | None:
    """The verdict ``label`` names, ignoring case, spaces and hyphens (``None`` if none).

    Example:
        >>> canonical_label("conflicting evidence/cherry-picking")
        'Conflicting Evidence/Cherrypicking'
        >>> canonical_label("True") is None
        True
    """
    if label is None:
        return None
    squash = re.sub(r"[\s\-]+", "", label).casefold()
    return next((v for v in AVERIMATEC_LABELS if re.sub(r"[\s\-]+", "", v).casefold() == squash), None)


def _strings(obj: Mapping[str, Any], key: str, where: str, *, scalar_ok: bool = False) -> tuple[str, ...]:
    """``obj[key]``: a list of strings (absent/null: ``()``; with ``scalar_ok`` one string too)."""
    value = obj.get(key)
    if value is None:
        return ()
    if scalar_ok and isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: field {key!r} must be a list of strings")
    return tuple(value)


def _object(obj: Any, what: str, where: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise UserError(f"{where}: {what} must be an object, found {type(obj).__name__}")
    return obj


def _list(obj: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise UserError(f"{where}: field {key!r} must be a list, found {type(value).__name__}")
    return value


@dataclass(frozen=True)
class AVerImaTeCAnswer:
    """One answer: text (``Extractive``/``Abstractive``/``Unanswerable``), yes/no with an
    explanation (``Boolean``) or images (``Image``, file names in ``image_answers``).

    Example:
        >>> a = AVerImaTeCAnswer.from_dict({"answer_type": "Boolean", "answer_text": "No",
        ...                                 "boolean_explanation": "It is older."}, where="val.json[0]")
        >>> a.answer_text, a.is_image
        ('No', False)
    """

    answer_type: str
    answer_text: str | None = None
    boolean_explanation: str | None = None
    image_answers: tuple[str, ...] = ()
    source_url: str | None = None
    source_medium: str | None = None

    @property
    def is_image(self) -> bool:
        return self.answer_type == IMAGE_ANSWER

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> AVerImaTeCAnswer:
        """Read one answer; the fields the organisers' scorer reads for its type must be there."""
        obj = _object(obj, "answer", where)
        answer_type = req_str(obj, "answer_type", where)
        if answer_type == IMAGE_ANSWER:
            if "image_answers" not in obj:
                raise UserError(f"{where}: an Image answer needs 'image_answers'")
            text = opt_str(obj, "answer_text", where)
        else:
            text = req_str(obj, "answer_text", where)
        explanation = (req_str(obj, "boolean_explanation", where) if answer_type == BOOLEAN_ANSWER
                       else opt_str(obj, "boolean_explanation", where))
        return cls(answer_type=answer_type, answer_text=text, boolean_explanation=explanation,
                   image_answers=_strings(obj, "image_answers", where),
                   **opt_strs(obj, ("source_url", "source_medium"), where))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answer_type": self.answer_type}
        if self.answer_text is not None:
            out["answer_text"] = self.answer_text
        if self.boolean_explanation is not None:
            out["boolean_explanation"] = self.boolean_explanation
        if self.is_image or self.image_answers:
            out["image_answers"] = list(self.image_answers)
        for key in ("source_url", "source_medium"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclass(frozen=True)
class AVerImaTeCQuestion:
    """A gold evidence question with its input images and answers.

    Example:
        >>> q = AVerImaTeCQuestion.from_dict({"question": "Where?", "input_images": ["q.jpg"], "answers": [
        ...     {"answer_type": "Image", "image_answers": ["a.jpg"]}]}, where="val.json[0].questions[0]")
        >>> q.images()
        ('q.jpg', 'a.jpg')
    """

    question: str
    answers: tuple[AVerImaTeCAnswer, ...] = ()
    input_images: tuple[str, ...] = ()
    question_type: tuple[str, ...] = ()
    answer_method: str | None = None

    def images(self) -> tuple[str, ...]:
        """The pair's images as the organisers number them: the question's, then each
        image answer's (so ``[IMG_k]`` is the k-th of these)."""
        return self.input_images + tuple(name for a in self.answers if a.is_image for name in a.image_answers)

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> AVerImaTeCQuestion:
        obj = _object(obj, "question", where)
        return cls(
            question=req_str(obj, "question", where),
            answers=tuple(AVerImaTeCAnswer.from_dict(a, where=f"{where}.answers[{i}]")
                          for i, a in enumerate(_list(obj, "answers", where))),
            input_images=_strings(obj, "input_images", where),
            question_type=_strings(obj, "question_type", where, scalar_ok=True),
            answer_method=opt_str(obj, "answer_method", where),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"input_images": list(self.input_images), "answers": [a.to_dict() for a in self.answers],
                               "question": self.question}
        if self.answer_method is not None:
            out["answer_method"] = self.answer_method
        out["question_type"] = list(self.question_type)
        return out


@dataclass(frozen=True)
class AVerImaTeCMetadata:
    """The claim's ``metadata`` object: the known fields (:data:`METADATA_STRINGS`,
    :data:`METADATA_LISTS`); other keys are not kept. A list field given as one string
    is read as a one-item list."""

    speaker: str | None = None
    transcription: str | None = None
    media_source: str | None = None
    original_claim_url: str | None = None
    reporting_source: str | None = None
    modality: str | None = None
    claim_types: tuple[str, ...] = ()
    fact_checking_strategies: tuple[str, ...] = ()
    refuting_reasons: tuple[str, ...] = ()
    image_misuse_types: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> AVerImaTeCMetadata:
        obj = _object(obj, "metadata", where)
        fields: dict[str, Any] = dict(opt_strs(obj, METADATA_STRINGS, where))
        fields.update({key: _strings(obj, key, where, scalar_ok=True) for key in METADATA_LISTS})
        return cls(**fields)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in METADATA_STRINGS if getattr(self, k) is not None}
        out.update({k: list(getattr(self, k)) for k in METADATA_LISTS})
        return out


@dataclass(frozen=True)
class AVerImaTeCClaim:
    """One image-text claim with its gold annotation (``None``/empty on the test split).

    ``claim_id`` is the claim's position in its file (the id a submission uses).

    Example:
        >>> c = AVerImaTeCClaim.from_dict({"claim_text": "This photo shows X.", "claim_images": ["c.jpg"],
        ...     "date": "2023-07-08", "label": "Refuted", "questions": []}, where="val.json[3]", claim_id=3)
        >>> c.claim_id, c.parsed_date.year, c.is_labelled
        (3, 2023, True)
    """

    claim_text: str
    claim_images: tuple[str, ...] = ()
    date: str | None = None
    location: str | None = None
    article: str | None = None
    label: str | None = None
    justification: str | None = None
    questions: tuple[AVerImaTeCQuestion, ...] = ()
    metadata: AVerImaTeCMetadata | None = None
    claim_id: int | None = field(default=None, compare=False)

    @property
    def parsed_date(self) -> dt.date | None:
        """``date`` as a :class:`datetime.date` (``None`` when absent or unparseable)."""
        return parse_claim_date(self.date)

    @property
    def is_labelled(self) -> bool:
        return self.label is not None

    @classmethod
    def from_dict(cls, obj: Any, *, where: str, claim_id: int | None = None) -> AVerImaTeCClaim:
        obj = _object(obj, "claim", where)
        metadata = obj.get("metadata")
        return cls(
            claim_text=req_str(obj, "claim_text", where),
            claim_images=_strings(obj, "claim_images", where),
            **opt_strs(obj, ("date", "location", "article", "label", "justification"), where),
            questions=tuple(AVerImaTeCQuestion.from_dict(q, where=f"{where}.questions[{i}]")
                            for i, q in enumerate(_list(obj, "questions", where))),
            metadata=None if metadata is None else AVerImaTeCMetadata.from_dict(metadata, where=f"{where}.metadata"),
            claim_id=claim_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """The published JSON shape (keys as in the task page's examples; absent fields left out)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in ("article", "date", "label", "location")
                               if getattr(self, k) is not None}
        if self.questions or self.label is not None:
            out["questions"] = [q.to_dict() for q in self.questions]
        if self.justification is not None:
            out["justification"] = self.justification
        out["claim_text"] = self.claim_text
        out["claim_images"] = list(self.claim_images)
        if self.metadata is not None:
            out["metadata"] = self.metadata.to_dict()
        return out

    def image_names(self) -> tuple[str, ...]:
        """Every image file the claim names (claim, question and answer images), each once, in order."""
        names = self.claim_images + tuple(n for q in self.questions for n in q.images())
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class AVerImaTeCEvidence:
    """One predicted evidence item: text with ``[IMG_k]`` tokens and its images (base64 in
    the official format; file paths in the on-disk variant of ``averitec convert``)."""

    text: str
    images: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> AVerImaTeCEvidence:
        obj = _object(obj, "evidence item", where)
        return cls(text=req_str(obj, "text", where), images=_strings(obj, "images", where))

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "images": list(self.images)}


def _claim_id(obj: Mapping[str, Any], where: str) -> int:
    if "id" not in obj:
        raise UserError(f"{where}: missing key 'id'")
    value = obj["id"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{where}: field 'id' must be the claim's position in the gold file (an integer >= 0), "
                        f"found {repr(value)[:60]}")
    return value


@dataclass(frozen=True)
class AVerImaTeCPrediction:
    """One claim of a submission in the organisers' format.

    Example:
        >>> p = AVerImaTeCPrediction.from_dict({"id": 0, "questions": ["Who?"], "justification": "J.",
        ...     "verdict": "Refuted", "evidence": [{"text": "[IMG_1] is old.", "images": ["aGk="]}]}, where="sub.json[0]")
        >>> p.id, p.evidence[0].images
        (0, ('aGk=',))
    """

    id: int
    questions: tuple[str, ...]
    justification: str
    verdict: str
    evidence: tuple[AVerImaTeCEvidence, ...] = ()

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> AVerImaTeCPrediction:
        obj = _object(obj, "submission item", where)
        claim = _claim_id(obj, where)
        where = f"{where} (claim {claim})"
        if "questions" not in obj:
            raise UserError(f"{where}: missing key 'questions'")
        return cls(
            id=claim,
            questions=_strings(obj, "questions", where),
            justification=req_str(obj, "justification", where),
            verdict=req_str(obj, "verdict", where),
            evidence=tuple(AVerImaTeCEvidence.from_dict(e, where=f"{where}: evidence[{i}]")
                           for i, e in enumerate(_list(obj, "evidence", where))),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "questions": list(self.questions), "justification": self.justification,
                "verdict": self.verdict, "evidence": [e.to_dict() for e in self.evidence]}


__all__ = [
    "ANSWER_TYPES",
    "AVERIMATEC_LABELS",
    "AVerImaTeCAnswer",
    "AVerImaTeCClaim",
    "AVerImaTeCEvidence",
    "AVerImaTeCMetadata",
    "AVerImaTeCPrediction",
    "AVerImaTeCQuestion",
    "BOOLEAN_ANSWER",
    "IMAGE_ANSWER",
    "IMAGE_TOKEN",
    "METADATA_LISTS",
    "METADATA_STRINGS",
    "canonical_label",
    "image_refs",
]
