"""The Ev2R study's human ratings of AVeriTeC 2024 submissions, joined to their evidence texts.

The ratings workbook (``AVERITEC_FC_Evidence_Evaluation_Responses.xlsx``, one row per rated
submission item: team, claim id, the annotators' verdict from the evidence, five 1-5
ratings) holds no reference evidence and no gold label; the study's per-item score files
(``results/predictions_*.jsonl``) hold both, one line per *kept* rating row, in order.
The kept rows are the study's: the five gold-check claims (ids 333, 446, 844, 1161, 1641)
and every row whose annotator flagged a major error ("Yes, the evidence is ...") are
dropped, which leaves 278 of 389. Verdict agreement is 1 when the annotators' verdict,
"information" read as "evidence", equals the gold label (the study's rule: its
"conflicting/cherry-picking" never equals the gold "Conflicting Evidence/Cherrypicking").

    >>> label_agrees(gold="Not Enough Evidence", majority="c. not enough information")
    1
    >>> label_agrees(gold="Conflicting Evidence/Cherrypicking", majority="d. conflicting/cherry-picking")
    0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.metrics.stored_scores import read_items_file
from averitec_tools.records.rated import RatedItem

#: The human dimensions, in the study's order (verdict agreement derived from the label).
DIMENSIONS: tuple[str, ...] = ("semantic_coverage", "coherence", "redundancy", "consistency", "relevance",
                               "verdict_agreement")
RATED_DIMENSIONS: tuple[str, ...] = DIMENSIONS[:5]
#: Claims the study rated as annotator checks, not as submissions.
GOLD_CHECK_IDS: frozenset[int] = frozenset({333, 446, 844, 1161, 1641})
ERROR_COLUMN_PREFIX = "1. Does the predicted evidence contain any of the following three major errors?"
REQUIRED_COLUMNS: tuple[str, ...] = ("Team", "id", "claim", "label_majority", *RATED_DIMENSIONS)
RATINGS_FILE = "data/AVERITEC_FC_Evidence_Evaluation_Responses.xlsx"
ITEMS_FILE = "results/predictions_hmeteor.jsonl"


def label_agrees(*, gold: str, majority: str) -> int:
    """The study's verdict agreement: the majority label (``"b. refuted"``) equals the gold one."""
    label = majority[2:] if len(majority) > 2 and majority[1] == "." else majority
    return int(gold.lower().strip() == label.replace("information", "evidence").lower().strip())


def read_xlsx_rows(path: Path) -> tuple[list[str], list[list[Any]]]:
    """Header and data rows of the first sheet of a workbook (``openpyxl``, read-only)."""
    try:
        import openpyxl
    except ImportError:
        raise ResourceError("reading the ratings workbook needs openpyxl",
                            hint="pip install 'averitec-tools[meta-eval]'") from None
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except Exception as exc:  # zipfile.BadZipFile, KeyError, InvalidFileException ...
        raise UserError(f"{path}: not an Excel workbook ({type(exc).__name__})") from None
    rows = [list(r) for r in book.worksheets[0].iter_rows(values_only=True)]
    book.close()
    if not rows:
        raise UserError(f"{path}: the first sheet is empty")
    return [str(h).strip() if h is not None else "" for h in rows[0]], rows[1:]


def _columns(header: Sequence[str], path: Path) -> dict[str, int]:
    where = {name: i for i, name in enumerate(header)}
    error_col = next((i for i, h in enumerate(header) if h.startswith(ERROR_COLUMN_PREFIX)), None)
    missing = [c for c in REQUIRED_COLUMNS if c not in where]
    if error_col is None:
        missing.append(f"{ERROR_COLUMN_PREFIX} ...")
    if missing:
        raise UserError(f"{path}: missing column(s): {', '.join(missing)}",
                        hint="expected the study's ratings workbook (AVERITEC_FC_Evidence_Evaluation_Responses.xlsx)")
    return {**{c: where[c] for c in REQUIRED_COLUMNS}, "error": error_col}  # type: ignore[dict-item]


def _rating(value: Any, path: Path, line: int, column: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise UserError(f"{path}: row {line}: {column} is not a number: {value!r}") from None
    return None if math.isnan(v) else v


def kept_rows(path: Path) -> list[dict[str, Any]]:
    """The study's kept rating rows (gold checks and flagged errors dropped), in file order."""
    header, rows = read_xlsx_rows(path)
    col = _columns(header, path)
    kept = []
    for n, raw in enumerate(rows, start=2):
        if all(v is None for v in raw):
            continue
        cell = dict(zip(header, raw, strict=False))
        try:
            claim_id = int(raw[col["id"]])
        except (TypeError, ValueError):
            raise UserError(f"{path}: row {n}: id is not a claim id: {raw[col['id']]!r}") from None
        if claim_id in GOLD_CHECK_IDS or "Yes," in str(raw[col["error"]] or ""):
            continue
        kept.append({"line": n, "team": str(cell["Team"]), "id": claim_id,
                     "label_majority": str(raw[col["label_majority"]] or ""),
                     **{d: _rating(raw[col[d]], path, n, d) for d in RATED_DIMENSIONS}})
    return kept


def load_rated_items(*, data_dir: Path, ratings: Path | None = None, items: Path | None = None) -> list[RatedItem]:
    """The kept rating rows of ``data_dir`` joined, row by row, to the per-item texts.

    ``ratings`` / ``items`` replace the workbook / the per-item file of ``data_dir``.

    Raises:
        UserError: A missing file or column, or a per-item line whose claim id is not the
            rating row's.

    Example:
        >>> import tempfile
        >>> load_rated_items(data_dir=Path(tempfile.mkdtemp()))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: ...AVERITEC_FC_Evidence_Evaluation_Responses.xlsx: no such file
    """
    rows = kept_rows(ratings or data_dir / RATINGS_FILE)
    items_path = items or data_dir / ITEMS_FILE
    texts = read_items_file(items_path)
    if len(texts) != len(rows):
        raise UserError(f"{items_path}: {len(texts)} items, but the ratings keep {len(rows)} rows")
    out = []
    for i, (r, t) in enumerate(zip(rows, texts, strict=True)):
        if r["id"] != t["id"]:
            raise UserError(f"{items_path}: line {i + 1}: claim id {t['id']}, but rating row {r['line']} "
                            f"is claim {r['id']}")
        rated: dict[str, float | None] = {d: r[d] for d in RATED_DIMENSIONS}
        rated["verdict_agreement"] = float(label_agrees(gold=t["gold"], majority=r["label_majority"]))
        out.append(RatedItem(row=i, team=r["team"], claim_id=r["id"], claim=t["claim"], predicted=t["evidence"],
                             reference=t["reference"], gold=t["gold"], ratings=rated))
    return out


__all__ = ["DIMENSIONS", "RATINGS_FILE", "RatedItem", "kept_rows", "label_agrees", "load_rated_items", "read_xlsx_rows"]
