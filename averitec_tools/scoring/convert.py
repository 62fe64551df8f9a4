"""Convert submissions between the AVeriTeC leaderboard formats.

Formats (see :mod:`averitec_tools.scoring.submission`):

* ``2024`` -- the 2024 shared task: JSON array ``{claim_id, claim, pred_label, evidence:
  [{question, answer, url}]}`` (or ``string_evidence``);
* ``2023`` -- ``eval.py``: the gold schema, JSON array ``{claim, label, questions:
  [{question, answers: [{answer, source_url}]}]}`` aligned with the references by position;
* ``evalai`` -- JSON lines ``{id, label, evidence: ["question answer", ...]}``;
* ``fever8`` -- the FEVER-8 leaderboard CSV ``id, claim, evi, label, split`` where ``evi``
  holds the question/answer pairs as ``question SEP_QA answer SEP_PAIR`` each, written
  byte for byte as the organisers' ``prepare_leaderboard_submission.py`` writes it (CRLF
  rows, ``split`` = ``pred``). A file is recognised as FEVER-8 by its header, whatever its name.

Everything a scorer reads (claim id and text, label, questions, answers, evidence
strings) is carried over exactly or the conversion stops with an error naming what the
target cannot hold (e.g. EvalAI lines hold no claim text: give ``references``). Data no
scorer reads and the target has no place for (evidence URLs, confidences) is dropped
and counted in :attr:`Converted.dropped`. A 2023 Boolean answer becomes ``answer + ". " +
boolean_explanation`` and an unanswered question ``"No answer could be found."``: the
comparison strings every scorer builds stay the same.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer, iter_records
from averitec_tools.scoring.fever8_csv import (
    FEVER8_COLUMNS,
    csv_id,
    join_evi,
    read_fever8_csv,
    split_evi,
)
from averitec_tools.scoring.formats import is_fever8_csv, iter_format, sniff_item_format
from averitec_tools.scoring.submission import (
    EvalAIItem,
    EvidenceItem,
    Prediction2023,
    Prediction2024,
    check_claim_text,
    check_label,
)

NO_ANSWER = "No answer could be found."
FORMATS = ("2023", "2024", "evalai", "fever8")


@dataclass(frozen=True)
class Item:
    """One predicted claim, in a form every format can be written from."""

    id: int | str
    label: str
    claim: str | None = None
    evidence: tuple[EvidenceItem, ...] | None = None
    strings: tuple[str, ...] | None = None
    justification: str | None = None
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None


@dataclass
class Converted:
    """What :func:`convert` did."""

    source_format: str
    target_format: str
    n_claims: int
    dropped: Counter[str] = field(default_factory=Counter)


# --------------------------------------------------------------------------- FEVER-8 evi


# --------------------------------------------------------------------------- readers


def _read_2024(path: str) -> list[Item]:
    items = []
    for loc in iter_format(path, expected="averitec2024", profile="averitec2024", role="predictions"):
        p = Prediction2024.from_located(loc)
        just = loc.value.get("justification")
        items.append(Item(p.claim_id, p.pred_label, p.claim, p.evidence, p.string_evidence,
                          just if isinstance(just, str) else None, p.confidence, p.probabilities))
    items.sort(key=lambda i: i.id)  # type: ignore[arg-type,return-value]
    return items


def _read_2023(path: str) -> list[Item]:
    items = []
    for loc in iter_format(path, expected="averitec2023", profile="averitec2023", role="predictions"):
        p = Prediction2023.from_located(loc)
        evidence = None
        if p.questions is not None:
            ev = []
            for q in p.questions:
                for a in q.answers:
                    text = a.answer + (". " + (a.boolean_explanation or "") if a.answer_type == "Boolean" else "")
                    ev.append(EvidenceItem(q.question, text, a.source_url))
                if not q.answers:
                    ev.append(EvidenceItem(q.question, NO_ANSWER))
            evidence = tuple(ev)
        items.append(Item(loc.index, p.label, p.claim, evidence, p.string_evidence, p.justification,
                          p.confidence, p.probabilities))
    return items


def _read_evalai(path: str) -> list[Item]:
    return [
        Item(e.id, e.label, None, None, e.evidence, None, e.confidence, e.probabilities)
        for e in (EvalAIItem.from_located(loc, role="predictions")
                  for loc in iter_format(path, expected="evalai", profile="evalai", role="predictions"))
    ]


def _read_fever8(path: str) -> list[Item]:
    items = []
    for line, row in enumerate(read_fever8_csv(path), start=2):
        where = f"{path}:{line}"
        label = row.get("label") or ""
        check_label(label, where)
        pairs = split_evi(row.get("evi") or "", where=where)
        items.append(Item(csv_id(row["id"]), label, row.get("claim"), tuple(EvidenceItem(q, a) for q, a in pairs)))
    return items


READERS: dict[str, Callable[[str], list[Item]]] = {
    "2024": _read_2024,
    "2023": _read_2023,
    "evalai": _read_evalai,
    "fever8": _read_fever8,
}

_SNIFFED = {"averitec2024": "2024", "averitec2023": "2023", "evalai": "evalai"}


def sniff_submission_format(path: str | os.PathLike[str]) -> str:
    """Which of :data:`FORMATS` a submission file is in (FEVER-8: a ``.csv`` name or a FEVER-8 header).

    Example:
        >>> import json, pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
        >>> _ = p.write_text(json.dumps({"id": 0, "label": "Refuted", "evidence": ["Q A"]}) + "\\n")
        >>> sniff_submission_format(p)
        'evalai'
    """
    if str(path).lower().endswith(".csv") or is_fever8_csv(path):
        return "fever8"
    for loc in iter_records(path):
        found = sniff_item_format(loc.value)
        if found in _SNIFFED:
            return _SNIFFED[found]
        raise UserError(f"{loc.where}: not a 2023, 2024, EvalAI or FEVER-8 (.csv) submission item")
    raise UserError(f"{path}: no items")


# --------------------------------------------------------------------------- writers


def _qa_pairs(item: Item, where: str) -> list[tuple[str, str]]:
    if item.strings:
        raise UserError(
            f"{where}: {len(item.strings)} evidence string(s) without a question/answer split; "
            "the target format needs questions and answers"
        )
    return [(e.question, e.answer) for e in item.evidence or ()]


def _need_claim(item: Item, where: str, target: str) -> str:
    if item.claim is None:
        raise UserError(
            f"{where}: no claim text; the {target} format needs it",
            hint="pass --references GOLD (the dev.json the ids refer to) to take claim texts from it",
        )
    return item.claim


def _common(item: Item, out: dict[str, Any]) -> dict[str, Any]:
    if item.confidence is not None:
        out["confidence"] = item.confidence
    if item.probabilities is not None:
        out["probabilities"] = dict(item.probabilities)
    return out


def _json_fields(item: Item, out: dict[str, Any]) -> dict[str, Any]:
    """The fields both JSON submission formats (2023, 2024) carry besides the evidence."""
    if item.strings is not None:
        out["string_evidence"] = list(item.strings)
    if item.justification is not None:
        out["justification"] = item.justification
    return _common(item, out)


def _write_2024(items: Sequence[Item], out: Path, dropped: Counter[str]) -> None:
    rows = []
    for item in items:
        where = f"claim {item.id!r}"
        if not isinstance(item.id, int):
            raise UserError(f"{where}: the 2024 format needs integer claim ids")
        row: dict[str, Any] = {"claim_id": item.id, "claim": _need_claim(item, where, "2024"), "pred_label": item.label}
        if item.evidence is not None:
            row["evidence"] = [
                {"question": e.question, "answer": e.answer, **({"url": e.url} if e.url is not None else {})}
                for e in item.evidence
            ]
        rows.append(_json_fields(item, row))
    _write_json(out, rows)


def _write_2023(items: Sequence[Item], out: Path, dropped: Counter[str]) -> None:
    rows = []
    for position, item in enumerate(items):
        where = f"claim {item.id!r}"
        if item.id != position:
            raise UserError(f"{where}: the 2023 format aligns claims by position; ids must be 0..n-1 in order")
        row: dict[str, Any] = {"claim": _need_claim(item, where, "2023"), "label": item.label}
        if item.evidence is not None:
            row["questions"] = [
                {"question": e.question, "answers": [{"answer": e.answer, **({"source_url": e.url} if e.url else {})}]}
                for e in item.evidence
            ]
        rows.append(_json_fields(item, row))
    _write_json(out, rows)


def _write_evalai(items: Sequence[Item], out: Path, dropped: Counter[str]) -> None:
    import json

    with atomic_writer(out) as fh:
        for item in items:
            evidence = [e.question + " " + e.answer for e in item.evidence or ()] + list(item.strings or ())
            dropped["url"] += sum(1 for e in item.evidence or () if e.url)
            dropped["claim"] += item.claim is not None
            dropped["justification"] += item.justification is not None
            row = _common(item, {"id": item.id, "label": item.label, "evidence": evidence})
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _write_fever8(items: Sequence[Item], out: Path, dropped: Counter[str], split: str = "pred") -> None:
    with atomic_writer(out) as fh:
        writer = csv.writer(fh)  # CRLF rows, as the organisers' converter writes them
        writer.writerow(FEVER8_COLUMNS)
        for item in items:
            where = f"claim {item.id!r}"
            evi = join_evi(_qa_pairs(item, where), where=where)
            dropped["url"] += sum(1 for e in item.evidence or () if e.url)
            dropped["justification"] += item.justification is not None
            dropped["confidence"] += item.confidence is not None or item.probabilities is not None
            writer.writerow([item.id, _need_claim(item, where, "FEVER-8"), evi, item.label, split])


def _write_json(out: Path, rows: list[dict[str, Any]]) -> None:
    import json

    with atomic_writer(out) as fh:
        json.dump(rows, fh, ensure_ascii=False, indent=1)
        fh.write("\n")


WRITERS: dict[str, Callable[[Sequence[Item], Path, Counter[str]], None]] = {
    "2024": _write_2024,
    "2023": _write_2023,
    "evalai": _write_evalai,
    "fever8": _write_fever8,
}


# --------------------------------------------------------------------------- entry point


def read_submission(path: str | os.PathLike[str], *, source_format: str | None = None) -> tuple[str, list[Item]]:
    """Read any submission format into :class:`Item` records (format sniffed if not given)."""
    fmt = source_format or sniff_submission_format(path)
    if fmt not in READERS:
        raise UserError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    items = READERS[fmt](str(path))
    seen: set[Any] = set()
    for item in items:  # every scorer refuses a file that predicts a claim twice: so does a conversion
        if item.id in seen:
            raise UserError(f"{path} (claim {item.id!r}): duplicate claim id; every scorer refuses this file",
                            hint="keep one prediction per claim")
        seen.add(item.id)
    return fmt, items


def _with_references(items: list[Item], references: str | os.PathLike[str]) -> list[Item]:
    from averitec_tools.scoring.submission import load_gold_claims

    gold = load_gold_claims(references, profile="averitec2024")
    out = []
    for item in items:
        if not isinstance(item.id, int) or not 0 <= item.id < len(gold):
            raise UserError(f"claim {item.id!r}: no claim with that id in {references} ({len(gold)} claims)")
        text = gold[item.id].claim
        check_claim_text(item.claim, text, f"claim {item.id!r}")
        out.append(Item(item.id, item.label, text, item.evidence, item.strings, item.justification,
                        item.confidence, item.probabilities))
    return out


def convert(
    *,
    source: str | os.PathLike[str],
    target_format: str,
    out: str | os.PathLike[str],
    references: str | os.PathLike[str] | None = None,
    source_format: str | None = None,
) -> Converted:
    """Convert the submission ``source`` to ``target_format``, written atomically to ``out``.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "p.json").write_text(json.dumps([{"claim_id": 0, "claim": "C", "pred_label": "Refuted",
        ...     "evidence": [{"question": "Q?", "answer": "A.", "url": "u"}]}]))
        >>> convert(source=d / "p.json", target_format="2023", out=d / "p23.json").n_claims
        1
        >>> json.loads((d / "p23.json").read_text())[0]["questions"]
        [{'question': 'Q?', 'answers': [{'answer': 'A.', 'source_url': 'u'}]}]
    """
    if target_format not in WRITERS:
        raise UserError(f"unknown target format {target_format!r}; choose one of: {', '.join(FORMATS)}")
    if os.path.realpath(out) == os.path.realpath(source):  # realpath: a symlink loop is a path, not an exception
        raise UserError(f"{out}: the output would overwrite the input file")
    fmt, items = read_submission(source, source_format=source_format)
    if references is not None:
        items = _with_references(items, references)
    result = Converted(fmt, target_format, len(items))
    WRITERS[target_format](items, Path(out), result.dropped)
    result.dropped = Counter({k: v for k, v in result.dropped.items() if v})
    return result


__all__ = ["FORMATS", "Item", "convert", "read_submission", "sniff_submission_format"]
