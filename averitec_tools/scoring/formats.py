"""Submission and gold file formats: recognising one from an item, streaming a file.

:func:`sniff_item_format` recognises each format (and FEVER's) so that a file given to the
wrong profile gets "this looks like X; profile P expects Y"; :func:`iter_format` streams a
file's items and rejects items of another (or mixed) format as it reads them.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import Located, iter_records

FORMAT_DESCRIPTIONS: dict[str, str] = {
    "averitec2024": "the 2024 shared-task format [{claim_id, claim, pred_label, evidence: [{question, answer, url}]}]",
    "averitec2023": "the 2023 eval.py format [{claim, label, questions: [{question, answers: [{answer}]}]}]",
    "evalai": "the EvalAI line format {id, label, evidence: [str]}",
    "fever": "a FEVER file ({id, predicted_label, predicted_evidence} or {id, label, evidence})",
    "averimatec": "the AVerImaTeC submission format [{id, questions, justification, verdict, evidence: [{text, images}]}]",
    "averimatec-gold": "an AVerImaTeC gold file [{claim_text, claim_images, label, questions, justification, ...}]",
}

#: Which profile reads which format (for "use --profile X" hints).
FORMAT_PROFILE: dict[str, str] = {
    "averitec2024": "averitec2024",
    "averitec2023": "averitec2023",
    "evalai": "evalai",
    "fever": "fever",
    "averimatec": "averimatec",
    "averimatec-gold": "averimatec",
}


def sniff_item_format(item: Any) -> str | None:
    """Guess which submission/gold format one JSON item is in (``None`` if unknown).

    Example:
        >>> sniff_item_format({"claim_id": 0, "pred_label": "Supported", "evidence": []})
        'averitec2024'
        >>> sniff_item_format({"id": 0, "label": "Refuted", "evidence": ["q a"]})
        'evalai'
        >>> sniff_item_format({"id": 0, "verdict": "Refuted", "evidence": [{"text": "t", "images": []}]})
        'averimatec'
    """
    if not isinstance(item, Mapping):
        return None
    return next((name for name, looks_like in _SNIFFERS if looks_like(item)), None)


def _has(item: Mapping[str, Any], *keys: str) -> bool:
    return any(k in item for k in keys)


#: (format, test) in the order they are tried: the first that holds names the item.
_SNIFFERS: tuple[tuple[str, Callable[[Mapping[str, Any]], bool]], ...] = (
    ("averitec2024", lambda i: _has(i, "pred_label", "claim_id")),
    ("fever", lambda i: _has(i, "predicted_label", "predicted_evidence", "verifiable")),
    ("averimatec", lambda i: "id" in i and _has(i, "verdict", "justification", "questions")),
    # FEVER gold evidence is a list of evidence groups (lists); anything else with an id and
    # evidence is an EvalAI line, whose evidence check then names the wrong type.
    ("fever", lambda i: "id" in i and isinstance(i.get("evidence"), list) and any(isinstance(e, list) for e in i["evidence"])),
    ("evalai", lambda i: _has(i, "id") and "evidence" in i),
    ("averimatec-gold", lambda i: "claim_text" in i),
    ("averitec2023", lambda i: _has(i, "questions", "string_evidence") or ("claim" in i and "label" in i)),
)


#: The columns that make a CSV a FEVER-8 submission or solution file (``split`` is optional).
FEVER8_CSV_COLUMNS = frozenset({"id", "claim", "evi", "label"})


def is_fever8_csv(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with a FEVER-8 CSV header (``id,claim,evi,label[,split]``), whatever its name.

    Example:
        >>> import pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "run.fever8"
        >>> _ = p.write_bytes(b"\\xef\\xbb\\xbfid,claim,evi,label,split\\r\\n0,c,q,Refuted,pred\\r\\n")
        >>> is_fever8_csv(p), is_fever8_csv(__file__)
        (True, False)
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n", 1)[0]  # bare CR line ends too
        line = head.decode("utf-8-sig")
        return {c.strip() for c in next(csv.reader([line]), [])} >= FEVER8_CSV_COLUMNS
    except (OSError, UnicodeDecodeError, csv.Error):
        return False


def wrong_format_error(loc: Located, found: str, expected: str, profile: str) -> UserError:
    """The "this looks like X, profile P expects Y" error."""
    hint = None
    if found in FORMAT_PROFILE and FORMAT_PROFILE[found] != profile:
        hint = f"use --profile {FORMAT_PROFILE[found]}"
    return UserError(
        f"{loc.where}: this looks like {FORMAT_DESCRIPTIONS.get(found, found)}; "
        f"profile {profile} expects {FORMAT_DESCRIPTIONS[expected]}",
        hint=hint,
    )


def iter_format(path: str | os.PathLike[str], *, expected: str, profile: str, role: str) -> Iterator[Located]:
    """Stream the items of ``path``, rejecting items of another (or mixed) format.

    ``role`` is ``"predictions"`` or ``"references"`` (used in messages). Items are
    yielded as they are read, so a JSONL file is never held in memory twice.
    """
    first_format: str | None = None
    count = 0
    for loc in iter_records(path):
        count += 1
        if not isinstance(loc.value, Mapping):
            raise UserError(f"{loc.where}: each {role} item must be a JSON object, found {type(loc.value).__name__}")
        found = sniff_item_format(loc.value)
        if found is not None and found != expected:
            if first_format == expected:
                raise UserError(
                    f"{loc.where}: mixed formats: this item looks like {FORMAT_DESCRIPTIONS[found]}, "
                    f"earlier items are {FORMAT_DESCRIPTIONS[expected]}"
                )
            raise wrong_format_error(loc, found, expected, profile)
        if first_format is None and found is not None:
            first_format = found
        yield loc
    if count == 0:
        raise UserError(f"{path}: no {role} found (empty array or file)")


__all__ = ["is_fever8_csv", "iter_format", "sniff_item_format"]
