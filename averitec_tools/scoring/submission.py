"""Submission files of the AVeriTeC leaderboards, parsed and validated into typed records.

Three prediction formats exist:

* ``averitec2024`` -- the 2024 shared task: a JSON array of
  ``{claim_id, claim, pred_label, evidence: [{question, answer, url}]}``;
* ``averitec2023`` -- the original ``eval.py``: the gold schema, a JSON array of
  ``{claim, label, questions: [{question, answers: [{answer, ...}]}], justification?}``
  (or ``string_evidence: [str]`` instead of questions);
* ``evalai`` -- the EvalAI leaderboard: JSON lines ``{id, label, evidence: [str]}``.

Any item may also carry ``confidence`` (a number) and ``probabilities`` (``{label: number}``)
for calibration analyses. Recognising a file's format and streaming it live in
:mod:`averitec_tools.scoring.formats`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import PredictionCountError, UserError
from averitec_tools.jsonio import Located
from averitec_tools.records.averitec import AVERITEC_LABELS, AVeriTeCClaim, Question
from averitec_tools.records.probability import probability
from averitec_tools.scoring.formats import iter_format
from averitec_tools.scoring.lenient import Lenience

# --------------------------------------------------------------------------- helpers


def require(obj: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in obj:
        raise UserError(f"{where}: missing key {key!r}")
    return obj[key]


def require_id(obj: Mapping[str, Any], key: str, where: str, *, strings: bool = False) -> Any:
    """``obj[key]`` as an item id: an integer (with ``strings``, or a string), never a bool."""
    value = require(obj, key, where)
    if isinstance(value, bool) or not isinstance(value, (int, str) if strings else int):
        raise UserError(f"{where}: field {key!r} must be an integer{' or string' if strings else ''}, found {value!r}")
    return value


def require_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = require(obj, key, where)
    if not isinstance(value, str):
        raise UserError(f"{where}: field {key!r} must be a string, found {type(value).__name__}")
    return value


def check_label(
    label: str, where: str, labels: Sequence[str] = AVERITEC_LABELS, key: str = "label", lenience: Lenience | None = None
) -> str:
    """Return ``label`` if valid; the official scorers compare labels exactly, so do we.

    With a lenient ``lenience`` an unknown label is returned as is (it then never equals a
    gold label: counted as wrong, as the official scorers count it).
    """
    if label in labels:
        return label
    if lenience is not None and lenience.tolerate("unknown_label"):
        return label
    close = [v for v in labels if v.casefold() == label.strip().casefold()]
    hint = f"did you mean {close[0]!r}? labels are compared exactly" if close else None
    raise UserError(
        f"{where}: unknown {key} {label!r}; valid labels: {', '.join(labels)}",
        hint=hint,
    )


def _string_list(obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...] | None:
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: field {key!r} must be a list of strings")
    return tuple(value)


def _optional_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise UserError(f"{where}: field {key!r} must be a string")
    return value


def _evidence_list(obj: Mapping[str, Any], key: str, where: str, lenience: Lenience, *, of: str,
                   tolerance: str, empty: str, hint: str) -> list[Any] | None:
    """``obj[key]``, a list of ``of`` (``None`` when absent; empty only where ``lenience`` tolerates it)."""
    if key not in obj:
        return None
    raw = obj[key]
    if not isinstance(raw, list):
        raise UserError(f"{where}: field {key!r} must be a list{of}")
    if not raw and not lenience.tolerate(tolerance):
        raise UserError(f"{where}: {empty}", hint=hint)
    return raw


def _string_evidence(obj: Mapping[str, Any], where: str, lenience: Lenience, *, beside: str,
                     found: bool) -> tuple[str, ...] | None:
    """``string_evidence``; without it the item must have ``beside`` (``found``), and some evidence."""
    strings = _string_list(obj, "string_evidence", where)
    if not found and strings is None:
        raise UserError(f"{where}: missing key {beside!r} (and no 'string_evidence')")
    if not found and not strings and not lenience.tolerate("empty_evidence"):
        raise UserError(f"{where}: empty evidence list ('string_evidence' is [])")
    return strings


def parse_confidence(obj: Mapping[str, Any], where: str, labels: Sequence[str]) -> tuple[float | None, dict[str, float] | None]:
    """Validate the optional ``confidence`` and ``probabilities`` fields."""
    confidence = obj.get("confidence")
    if confidence is not None:
        confidence = probability(confidence, where=where, field="confidence")
    probs_raw = obj.get("probabilities")
    probabilities: dict[str, float] | None = None
    if probs_raw is not None:
        if not isinstance(probs_raw, Mapping):
            raise UserError(f"{where}: field 'probabilities' must be an object {{label: number}}")
        probabilities = {}
        for label, value in probs_raw.items():
            check_label(label, where, labels, key="label in 'probabilities'")
            probabilities[label] = probability(value, where=where, field=f"probabilities[{label!r}]")
    return confidence, probabilities


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class EvidenceItem:
    """One predicted question-answer pair (2024 format)."""

    question: str
    answer: str
    url: str | None = None


@dataclass(frozen=True)
class Prediction2024:
    """One claim of a 2024 shared-task submission.

    ``evidence`` is ``None`` when the item has no ``evidence`` key (the official scorer
    then falls back to ``string_evidence`` for the question-only score).
    """

    claim_id: int
    pred_label: str
    claim: str | None = None
    evidence: tuple[EvidenceItem, ...] | None = None
    string_evidence: tuple[str, ...] | None = None
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None

    @classmethod
    def from_located(
        cls, loc: Located, *, labels: Sequence[str] = AVERITEC_LABELS, lenience: Lenience | None = None
    ) -> Prediction2024:
        obj, where = loc.value, loc.where
        lenience = lenience or Lenience()
        claim_id = require_id(obj, "claim_id", where)
        where = f"{where} (claim_id {claim_id})"
        pred_label = check_label(require_str(obj, "pred_label", where), where, labels, key="pred_label", lenience=lenience)
        claim = _optional_str(obj, "claim", where)
        evidence: tuple[EvidenceItem, ...] | None = None
        raw = _evidence_list(obj, "evidence", where, lenience, of=" of {question, answer, url} objects",
                             tolerance="empty_evidence", empty="empty evidence list",
                             hint="give at least one {question, answer} item; the official scorer would silently "
                             "score 0 (--lenient does the same)")
        if raw is not None:
            items = []
            for i, ev in enumerate(raw):
                ew = f"{where}.evidence[{i}]"
                if not isinstance(ev, Mapping):
                    raise UserError(f"{ew}: evidence item must be an object, found {type(ev).__name__}")
                url = ev.get("url")
                items.append(
                    EvidenceItem(
                        require_str(ev, "question", ew),
                        require_str(ev, "answer", ew),
                        url if isinstance(url, str) else None,
                    )
                )
            evidence = tuple(items)
        string_evidence = _string_evidence(obj, where, lenience, beside="evidence", found=evidence is not None)
        confidence, probabilities = parse_confidence(obj, where, labels)
        return cls(claim_id, pred_label, claim, evidence, string_evidence, confidence, probabilities)


@dataclass(frozen=True)
class Prediction2023:
    """One claim of a 2023 ``eval.py`` submission (the gold schema).

    ``questions`` is ``None`` when the item has no ``questions`` key.
    """

    label: str
    claim: str | None = None
    questions: tuple[Question, ...] | None = None
    string_evidence: tuple[str, ...] | None = None
    justification: str | None = None
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None

    @classmethod
    def from_located(
        cls, loc: Located, *, labels: Sequence[str] = AVERITEC_LABELS, lenience: Lenience | None = None
    ) -> Prediction2023:
        obj, where = loc.value, loc.where
        lenience = lenience or Lenience()
        label = check_label(require_str(obj, "label", where), where, labels, lenience=lenience)
        claim = _optional_str(obj, "claim", where)
        questions: tuple[Question, ...] | None = None
        raw = _evidence_list(obj, "questions", where, lenience, of="", tolerance="empty_questions",
                             empty="empty evidence list ('questions' is [])",
                             hint="eval.py would score the question-only figure 0 and use only 'string_evidence' "
                             "(--lenient does the same)")
        if raw is not None:
            parsed = []
            for i, q in enumerate(raw):
                qw = f"{where}.questions[{i}]"
                if isinstance(q, Mapping) and isinstance(q.get("answers"), Mapping):
                    q = {**q, "answers": [q["answers"]]}  # eval.py wraps a lone answer object in a list
                question = Question.from_dict(q, where=qw)
                for k, ans in enumerate(question.answers):
                    if ans.answer_type == "Boolean" and ans.boolean_explanation is None:
                        raise UserError(f"{qw}.answers[{k}]: Boolean answer without 'boolean_explanation'")
                parsed.append(question)
            questions = tuple(parsed)
        string_evidence = _string_evidence(obj, where, lenience, beside="questions", found=questions is not None)
        justification = obj.get("justification")
        if "justification" in obj and justification is None and not lenience.tolerate("null_justification"):
            raise UserError(
                f"{where}: field 'justification' is null",
                hint="leave the key out to fall back to the evidence strings (eval.py crashes on null; --lenient treats it as absent)",
            )
        justification = _optional_str(obj, "justification", where)
        confidence, probabilities = parse_confidence(obj, where, labels)
        return cls(label, claim, questions, string_evidence, justification, confidence, probabilities)


@dataclass(frozen=True)
class EvalAIItem:
    """One line of an EvalAI submission or gold file."""

    id: int | str
    label: str
    evidence: tuple[str, ...]
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None

    @classmethod
    def from_located(
        cls, loc: Located, *, role: str, labels: Sequence[str] = AVERITEC_LABELS, lenience: Lenience | None = None
    ) -> EvalAIItem:
        obj, where = loc.value, loc.where
        lenience = lenience or Lenience()
        item_id = require_id(obj, "id", where, strings=True)
        where = f"{where} (id {item_id})"
        label = check_label(
            require_str(obj, "label", where), where, labels, lenience=lenience if role == "predictions" else None
        )
        evidence = _string_list(obj, "evidence", where)
        if evidence is None:
            raise UserError(f"{where}: missing key 'evidence'")
        if not evidence and not (role == "predictions" and lenience.tolerate("empty_evidence_skipped")):
            if role == "predictions":
                raise UserError(
                    f"{where}: empty evidence list (the EvalAI scorer skips such a claim and scores it 0)",
                    hint="pass --lenient to score it 0 as the EvalAI scorer does",
                )
            raise UserError(f"{where}: empty evidence list (a reference claim needs evidence to match)")
        confidence, probabilities = parse_confidence(obj, where, labels)
        return cls(item_id, label, evidence, confidence, probabilities)


# --------------------------------------------------------------------------- loaders


def load_gold_claims(
    path: str | os.PathLike[str], *, profile: str, cache: dict[Any, Any] | None = None
) -> list[AVeriTeCClaim]:
    """Read AVeriTeC gold (``dev.json`` schema) for scoring: labels and questions required.

    With ``cache`` (a warm scorer's, see :mod:`averitec_tools.scoring.warm`) a file already
    parsed (same content) is reused.
    """
    if cache is None:
        return _parse_gold_claims(path, profile=profile)
    from averitec_tools.hashing import file_sha256

    key = (str(path), file_sha256(path), profile)
    if key not in cache:
        cache[key] = _parse_gold_claims(path, profile=profile)
    return list(cache[key])


def _parse_gold_claims(path: str | os.PathLike[str], *, profile: str) -> list[AVeriTeCClaim]:
    claims = []
    for loc in iter_format(path, expected="averitec2023", profile=profile, role="references"):
        claim = AVeriTeCClaim.from_dict(loc.value, where=loc.where, claim_id=loc.index)
        if claim.label is None:
            raise UserError(f"{loc.where}: reference claim has no 'label' (unlabelled test data cannot be scored)")
        if not claim.questions:
            raise UserError(f"{loc.where}: reference claim has no questions (empty evidence list)")
        for i, q in enumerate(claim.questions):
            for k, ans in enumerate(q.answers):
                if ans.answer_type == "Boolean" and ans.boolean_explanation is None:
                    raise UserError(f"{loc.where}.questions[{i}].answers[{k}]: Boolean answer without 'boolean_explanation'")
        claims.append(claim)
    return claims


def load_predictions_2024(
    path: str | os.PathLike[str], *, n_references: int, references: str, lenience: Lenience | None = None
) -> list[Prediction2024]:
    """Read a 2024 submission and order it by ``claim_id`` (0..n-1, each exactly once)."""
    by_id: dict[int, Prediction2024] = {}
    for loc in iter_format(path, expected="averitec2024", profile="averitec2024", role="predictions"):
        pred = Prediction2024.from_located(loc, lenience=lenience)
        if pred.claim_id in by_id:
            raise UserError(f"{loc.where}: duplicate claim_id {pred.claim_id}")
        if not 0 <= pred.claim_id < n_references:
            raise UserError(
                f"{loc.where}: claim_id {pred.claim_id} has no reference claim",
                detail=f"{references} has {n_references} claims, ids 0..{n_references - 1}",
            )
        by_id[pred.claim_id] = pred
    missing = [i for i in range(n_references) if i not in by_id]
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise PredictionCountError(
            f"{path}: {len(by_id)} predictions, not one for every reference claim",
            n_predictions=len(by_id), n_references=n_references,
            detail=f"{n_references} reference claims; missing claim_id {shown}",
            hint="the official scorer silently substitutes the first prediction for missing claims",
        )
    return [by_id[i] for i in range(n_references)]


def load_predictions_2023(
    path: str | os.PathLike[str], *, n_references: int, references: str, lenience: Lenience | None = None
) -> list[Prediction2023]:
    """Read a 2023 submission (aligned with the references by position)."""
    preds = [
        Prediction2023.from_located(loc, lenience=lenience)
        for loc in iter_format(path, expected="averitec2023", profile="averitec2023", role="predictions")
    ]
    if len(preds) != n_references:
        raise PredictionCountError(
            f"{path}: {len(preds)} predictions, not one per reference claim (eval.py aligns them by position)",
            n_predictions=len(preds), n_references=n_references,
            detail=f"{references} has {n_references} claims",
        )
    return preds


def load_evalai(path: str | os.PathLike[str], *, role: str, lenience: Lenience | None = None) -> list[EvalAIItem]:
    """Read an EvalAI gold or submission file."""
    return [
        EvalAIItem.from_located(loc, role=role, lenience=lenience)
        for loc in iter_format(path, expected="evalai", profile="evalai", role=role)
    ]


def check_claim_text(pred_claim: str | None, gold_claim: str, where: str) -> None:
    """Reject a prediction whose claim text is not the reference claim (misaligned files).

    Example:
        >>> check_claim_text("The sky is blue. ", "The sky is blue.", "p.json (claim_id 0)")  # whitespace aside
        >>> check_claim_text("Grass is red.", "The sky is blue.", "p.json (claim_id 0)")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json (claim_id 0): claim text 'Grass is red.' differs from the reference claim ...
    """
    if pred_claim is not None and pred_claim.strip() != gold_claim.strip():
        raise UserError(
            f"{where}: claim text {pred_claim[:60]!r} differs from the reference claim",
            detail=f"reference: {gold_claim[:60]!r}",
            hint="are the predictions and references the same split, in the same order?",
        )


__all__ = [
    "EvalAIItem", "EvidenceItem", "Prediction2023", "Prediction2024", "check_claim_text", "check_label",
    "load_evalai", "load_gold_claims", "load_predictions_2023", "load_predictions_2024",
]
