"""VitaminC records (Schuster et al., 2021): contrastive claim–evidence pairs.

Upstream rows (the JSONL files and the hub copy ``tals/vitaminc``): ``{unique_id, case_id,
claim, evidence, label, page, revision_type, wiki_revision_id, FEVER_id}`` with ``label`` in
SUPPORTS / REFUTES / NOT ENOUGH INFO. ``wiki_revision_id`` is the Wikipedia revision the
evidence sentence comes from; ``FEVER_id`` the FEVER claim a synthetic example was made
from (empty for real revisions).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.labels import normalize_label


def _opt_str(obj: Mapping[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise UserError(f"{where}: field {key!r} must be a string or null, found {type(value).__name__}")


@dataclass(frozen=True)
class VitaminCClaim:
    """One VitaminC example: a claim, one evidence sentence and a FEVER-style label.

    Example:
        >>> VitaminCClaim.from_dict({"claim": "c", "evidence": "e", "label": "supports"},
        ...                         where="train.jsonl:1").label
        'SUPPORTS'
        >>> VitaminCClaim.from_dict({"claim": "c", "evidence": "e", "label": "REFUTES",
        ...     "wiki_revision_id": 927477259, "FEVER_id": ""}, where="x").to_dict()["wiki_revision_id"]
        '927477259'
    """

    claim: str
    evidence: str
    label: str | None
    unique_id: str | None = None
    case_id: str | None = None
    page: str | None = None
    revision_type: str | None = None
    wiki_revision_id: str | None = None
    fever_id: str | None = None  # upstream field name: ``FEVER_id``

    @classmethod
    def from_dict(cls, obj: Any, *, where: str) -> VitaminCClaim:
        if not isinstance(obj, Mapping):
            raise UserError(f"{where}: expected a JSON object, found {type(obj).__name__}")
        for key in ("claim", "evidence"):
            if key not in obj:
                raise UserError(f"{where}: missing key {key!r}")
            if not isinstance(obj[key], str):
                raise UserError(f"{where}: field {key!r} must be a string, found {type(obj[key]).__name__}")
        raw = obj.get("label")
        return cls(
            claim=obj["claim"],
            evidence=obj["evidence"],
            label=None if raw is None else normalize_label(raw, space="vitaminc", where=where),
            unique_id=_opt_str(obj, "unique_id", where),
            case_id=_opt_str(obj, "case_id", where),
            page=_opt_str(obj, "page", where),
            revision_type=_opt_str(obj, "revision_type", where),
            wiki_revision_id=_opt_str(obj, "wiki_revision_id", where),
            fever_id=_opt_str(obj, "FEVER_id", where),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "unique_id": self.unique_id,
            "case_id": self.case_id,
            "claim": self.claim,
            "evidence": self.evidence,
            "label": self.label,
            "page": self.page,
            "revision_type": self.revision_type,
            "wiki_revision_id": self.wiki_revision_id,
            "FEVER_id": self.fever_id,
        }


__all__ = ["VitaminCClaim"]
