"""FEVER 1.0 records: gold claims with evidence sets, and system predictions.

Gold lines look like ``{"id", "verifiable", "label", "claim", "evidence": [[[annotation_id,
evidence_id, wiki_page, sentence_index], ...], ...]}``: ``evidence`` is a list of
alternative evidence *sets* (groups); a claim is fully supported/refuted by any one
complete group. NOT ENOUGH INFO claims have groups whose page/line are ``null``.

Prediction lines look like ``{"id", "predicted_label", "predicted_evidence": [[page,
line], ...]}`` (the shared-task format); ``label``/``evidence`` are accepted as synonyms
when the ``predicted_*`` keys are absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.labels import FEVER_LABELS, normalize_label
from averitec_tools.records.probability import probability


@dataclass(frozen=True)
class FeverEvidence:
    """One annotated evidence sentence: ``page``/``line`` are ``None`` for NEI.

    ``text`` is the Wikipedia sentence when a wiki-pages directory was given to the
    loader (``None`` otherwise; the upstream files do not carry it).
    """

    annotation_id: int | None
    evidence_id: int | None
    page: str | None
    line: int | None
    text: str | None = None

    @property
    def key(self) -> tuple[str | None, int | None]:
        """``(page, line)``: what predictions are matched on."""
        return (self.page, self.line)


def _int_or_none(value: Any, where: str, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{where}: {what} must be an integer or null, found {value!r}")
    return value


@dataclass(frozen=True)
class FeverClaim:
    """A FEVER gold claim.

    Example:
        >>> c = FeverClaim.from_dict({"id": 1, "label": "SUPPORTS", "claim": "x",
        ...     "verifiable": "VERIFIABLE", "evidence": [[[7, 8, "Page", 0]]]}, where="dev:1")
        >>> c.evidence[0][0].key
        ('Page', 0)
    """

    id: int | str
    claim: str
    label: str | None
    verifiable: str | None = None
    evidence: tuple[tuple[FeverEvidence, ...], ...] = ()

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> FeverClaim:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: expected a JSON object, found {type(obj).__name__}")
        if "id" not in obj:
            raise UserError(f"{where}: missing key 'id'")
        claim = obj.get("claim")
        if not isinstance(claim, str):
            raise UserError(f"{where}: field 'claim' must be a string")
        raw_label = obj.get("label")
        label = None if raw_label is None else normalize_label(raw_label, space="fever", where=where)
        groups = obj.get("evidence") or []
        if not isinstance(groups, list):
            raise UserError(f"{where}: field 'evidence' must be a list of evidence groups")
        parsed: list[tuple[FeverEvidence, ...]] = []
        for gi, group in enumerate(groups):
            if not isinstance(group, list):
                raise UserError(f"{where}: evidence[{gi}] must be a list of [annotation_id, evidence_id, page, line]")
            items = []
            for ei, item in enumerate(group):
                w = f"{where}: evidence[{gi}][{ei}]"
                if not isinstance(item, list) or len(item) != 4:
                    raise UserError(f"{w} must be [annotation_id, evidence_id, page, line], found {item!r}")
                page = item[2]
                if page is not None and not isinstance(page, str):
                    raise UserError(f"{w}: page must be a string or null, found {page!r}")
                items.append(
                    FeverEvidence(
                        annotation_id=_int_or_none(item[0], w, "annotation_id"),
                        evidence_id=_int_or_none(item[1], w, "evidence_id"),
                        page=page,
                        line=_int_or_none(item[3], w, "line"),
                    )
                )
            parsed.append(tuple(items))
        verifiable = obj.get("verifiable")
        return cls(
            id=obj["id"],
            claim=claim,
            label=label,
            verifiable=verifiable if isinstance(verifiable, str) else None,
            evidence=tuple(parsed),
        )

    def to_dict(self) -> dict[str, Any]:
        """The upstream JSONL shape."""
        return {
            "id": self.id,
            "verifiable": self.verifiable,
            "label": self.label,
            "claim": self.claim,
            "evidence": [
                [[e.annotation_id, e.evidence_id, e.page, e.line] for e in group]
                for group in self.evidence
            ],
        }

    def evidence_sentences(self) -> tuple[tuple[str, int], ...]:
        """Distinct ``(page, line)`` pairs over all groups, in first-seen order (no NEI nulls)."""
        seen: dict[tuple[str, int], None] = {}
        for group in self.evidence:
            for e in group:
                if e.page is not None and e.line is not None:
                    seen.setdefault((e.page, e.line), None)
        return tuple(seen)


@dataclass(frozen=True)
class FeverPrediction:
    """A system prediction for one FEVER claim.

    ``predicted_label`` keeps the submitted spelling (the reference scorer compares
    labels case-insensitively); it must be one of the FEVER labels up to case.

    Example:
        >>> p = FeverPrediction.from_dict({"id": 1, "predicted_label": "supports",
        ...     "predicted_evidence": [["Page", 0]]}, where="pred:1")
        >>> p.predicted_evidence
        (('Page', 0),)
    """

    id: int | str | None
    predicted_label: str
    predicted_evidence: tuple[tuple[str, int], ...] = ()
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> FeverPrediction:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: expected a JSON object, found {type(obj).__name__}")
        label_key = "predicted_label" if "predicted_label" in obj else "label"
        ev_key = "predicted_evidence" if "predicted_evidence" in obj else "evidence"
        if label_key not in obj:
            raise UserError(f"{where}: missing key 'predicted_label'")
        if ev_key not in obj:
            raise UserError(
                f"{where}: missing key 'predicted_evidence'",
                hint="the FEVER score needs predicted evidence; use [] for none",
            )
        label = obj[label_key]
        if not isinstance(label, str) or label.strip().upper() not in FEVER_LABELS or label != label.strip():
            raise UserError(
                f"{where}: unknown label {label!r}",
                hint=f"valid labels (any case): {', '.join(FEVER_LABELS)}",
            )
        pairs = _predicted_pairs(obj[ev_key], key=ev_key, where=where)
        confidence, probabilities = _confidences(obj, where)
        return cls(id=obj.get("id"), predicted_label=label, predicted_evidence=pairs, confidence=confidence,
                   probabilities=probabilities)


def _predicted_pairs(evidence: Any, *, key: str, where: str) -> tuple[tuple[str, int], ...]:
    """The ``[page, line]`` pairs of a prediction's evidence list (a gold-shaped group is named as such)."""
    if evidence is None:  # the reference scorer crashes on it; [] is how "no evidence" is written
        raise UserError(f"{where}: '{key}' is null", hint="use [] for no predicted evidence")
    if not isinstance(evidence, list):
        raise UserError(f"{where}: '{key}' must be a list of [page, line] pairs")
    pairs: list[tuple[str, int]] = []
    for i, item in enumerate(evidence):
        if (
            not isinstance(item, list)
            or len(item) != 2
            or not isinstance(item[0], str)
            or isinstance(item[1], bool)
            or not isinstance(item[1], int)
        ):
            looks_gold = isinstance(item, list) and item and isinstance(item[0], list)
            raise UserError(
                f"{where}: {key}[{i}] must be a [page<string>, line<int>] pair, found {item!r}",
                hint="this looks like a gold evidence group; pass the gold file as REFERENCES" if looks_gold else None,
            )
        pairs.append((item[0], item[1]))
    return tuple(pairs)


def _confidences(obj: Mapping[str, Any], where: str) -> tuple[float | None, dict[str, float] | None]:
    """A prediction's optional ``confidence`` and per-label ``probabilities``, each checked to lie in [0, 1]."""
    confidence = obj.get("confidence")
    if confidence is not None:
        confidence = float(probability(confidence, where=where, field="confidence"))
    probabilities = obj.get("probabilities")
    if probabilities is not None:
        if not isinstance(probabilities, Mapping):
            raise UserError(f"{where}: 'probabilities' must map labels to numbers")
        probabilities = {str(k): probability(v, where=where, field=f"probabilities[{k!r}]") for k, v in probabilities.items()}
    return confidence, probabilities


__all__ = ["FeverClaim", "FeverEvidence", "FeverPrediction"]
