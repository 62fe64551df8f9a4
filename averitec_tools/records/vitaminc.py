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
from averitec_tools.records._fields import opt_str, opt_strs, req_str

#: The optional fields read as strings (integers as their digits), upstream names.
_OPTIONAL = ("unique_id", "case_id", "page", "revision_type", "wiki_revision_id")


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
        claim, evidence = req_str(obj, "claim", where), req_str(obj, "evidence", where)
        raw = obj.get("label")
        return cls(
            claim=claim,
            evidence=evidence,
            label=None if raw is None else normalize_label(raw, space="vitaminc", where=where),
            **opt_strs(obj, _OPTIONAL, where, ints=True),
            fever_id=opt_str(obj, "FEVER_id", where, ints=True),
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
