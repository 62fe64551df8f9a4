"""Input rows of R2VC generator training: standardised VitaminC-style records.

A row is ``{claim, evidence_text, label}`` (optional ``title``/``page`` and ``id``), one per
JSONL line or JSON-array item. Labels may be written in any of the FEVER/VitaminC, ternary
or R2VC spellings (``SUPPORTS``, ``REFUTES``, ``NOT ENOUGH INFO``/``NEI``,
``True``/``False``/``Uncertain``). :mod:`~averitec_tools.baselines.r2vc.training.data` turns
rows into SFT examples and DPO preference pairs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any

from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class TrainingRow:
    """One standardised claim–evidence–label example.

    Attributes:
        claim: The claim text.
        evidence_text: The single evidence snippet.
        label: The R2VC label (True/False/Uncertain).
        title: The evidence page title ("" if unknown).
        row_id: Identifier for error messages and provenance.
        group: VitaminC ``case_id`` ("" if unknown): rows of one group are never each
            other's distractors.
    """

    claim: str
    evidence_text: str
    label: str
    title: str = ""
    row_id: str = ""
    group: str = ""

    @property
    def passage(self) -> Passage:
        """The evidence as passage [1] of the prompt."""
        return Passage(doc_id=self.row_id, title=self.title, url="", text=self.evidence_text)


def _text_field(value: Any, *, where: str, name: str, required: bool) -> str:
    if value is None:
        if required:
            raise UserError(f"{where}: missing field {name!r}")
        return ""
    if not isinstance(value, str):
        raise UserError(f"{where}: field {name!r} must be a string, found {type(value).__name__}")
    text = _WS.sub(" ", value).strip()
    if required and not text:
        raise UserError(f"{where}: field {name!r} is empty")
    return text


def row_from_dict(record: Any, *, where: str) -> TrainingRow:
    """Normalise one input record into a :class:`TrainingRow`.

    Args:
        record: A mapping with ``claim``, ``evidence_text`` (or ``evidence``) and ``label``.
        where: Location for error messages (``file:line``).

    Raises:
        UserError: naming ``where`` and the field, for a missing/empty/mistyped field or
            an unknown label.

    Example:
        >>> row_from_dict({"claim": "c", "evidence_text": "e", "label": "REFUTES"}, where="x:1").label
        'False'
    """
    from averitec_tools.labels import map_label

    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object, found {type(record).__name__}")
    evidence_key = "evidence_text" if "evidence_text" in record else "evidence"
    label_value = record.get("label")
    if not isinstance(label_value, str):
        raise UserError(f"{where}: field 'label' must be a string, found {type(label_value).__name__}")
    row_id = record.get("id", record.get("unique_id", ""))
    group = record.get("case_id")
    return TrainingRow(
        claim=_text_field(record.get("claim"), where=where, name="claim", required=True),
        evidence_text=_text_field(
            record.get(evidence_key), where=where, name="evidence_text", required=True
        ),
        label=map_label(label_value, source="ternary", target="r2vc", where=where),
        title=_text_field(record.get("title", record.get("page")), where=where, name="title", required=False),
        row_id=str(row_id) if row_id is not None else "",
        group=str(group) if group is not None else "",
    )


def read_training_rows(path: str | os.PathLike[str], *, limit: int | None = None) -> list[TrainingRow]:
    """Read standardised rows from a JSONL file or a JSON array.

    Args:
        path: The data file.
        limit: Keep only the first ``limit`` rows.

    Returns:
        The rows, in file order; row ids default to ``file:line``.

    Raises:
        UserError: for an unreadable file, malformed JSON, a bad row (file:line named), or
            an empty file.

    Example:
        >>> read_training_rows("vitaminc_train.jsonl", limit=2)  # doctest: +SKIP
    """
    from averitec_tools.jsonio import iter_records

    rows: list[TrainingRow] = []
    for located in iter_records(path):
        if limit is not None and len(rows) >= limit:
            break
        row = row_from_dict(located.value, where=located.where)
        if not row.row_id:
            row = replace(row, row_id=located.where)
        rows.append(row)
    if not rows:
        raise UserError(f"{os.fspath(path)}: no training rows found")
    return rows


__all__ = ["TrainingRow", "read_training_rows"]
