"""The FEVER-8 leaderboard CSV (``id, claim, evi, label, split``): reading it, and the ``evi``
field's question/answer pairs, joined and split byte for byte as the organisers'
``prepare_leaderboard_submission.py`` writes them."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from pathlib import Path

from averitec_tools.errors import UserError

FEVER8_COLUMNS = ("id", "claim", "evi", "label", "split")
#: The FEVER-8 leaderboard's separators inside the ``evi`` column.
SEP_QA = "\t\t\n"


SEP_PAIR = "\t\t\n\n"


def join_evi(pairs: Iterable[tuple[str, str]], *, where: str = "evidence") -> str:
    """The FEVER-8 ``evi`` string of question/answer pairs, as the organisers build it.

    Every pair is ``question SEP_QA answer SEP_PAIR`` (the last one too), which is what
    their converter writes and what their judge is shown.

    Example:
        >>> join_evi([("Who?", "Bob."), ("When?", "2020.")])
        'Who?\\t\\t\\nBob.\\t\\t\\n\\nWhen?\\t\\t\\n2020.\\t\\t\\n\\n'
    """
    out = []
    for question, answer in pairs:
        for text in (question, answer):
            if SEP_QA in text:
                raise UserError(f"{where}: text contains the FEVER-8 separator '\\t\\t\\n' and cannot be written as evi")
        out.append(f"{question}{SEP_QA}{answer}{SEP_PAIR}")
    return "".join(out)


def split_evi(evi: str, *, where: str) -> list[tuple[str, str]]:
    """Question/answer pairs of a FEVER-8 ``evi`` string (empty pieces are skipped, as the scorer does).

    Example:
        >>> split_evi('Who?\\t\\t\\nBob.\\t\\t\\n\\nWhen?\\t\\t\\n2020.', where="x")
        [('Who?', 'Bob.'), ('When?', '2020.')]
    """
    pairs = []
    for k, piece in enumerate(evi.split(SEP_PAIR)):
        if piece == "":
            continue
        parts = piece.split(SEP_QA)
        if len(parts) != 2:
            raise UserError(f"{where}: evi pair {k} is not 'question<TAB><TAB><NL>answer' ({len(parts)} parts)")
        pairs.append((parts[0], parts[1]))
    return pairs


def evi_questions(evi: str) -> str:
    """The questions of an ``evi`` string joined by spaces, as the organisers' Ev2R sends them.

    Each piece between ``SEP_PAIR`` separators contributes the text before its first
    ``SEP_QA`` when that text is not empty.

    Example:
        >>> evi_questions('Who?\\t\\t\\nBob.\\t\\t\\n\\n\\t\\t\\nx\\t\\t\\n\\nWhen?\\t\\t\\n2020.\\t\\t\\n\\n')
        'Who? When?'
    """
    return " ".join(q for q in (piece.split(SEP_QA)[0] for piece in evi.split(SEP_PAIR)) if q)


def read_fever8_csv(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Rows of a FEVER-8 CSV (``id, claim, evi, label[, split]``), checked for the columns."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{p}: no such file")
    try:
        with p.open(encoding="utf-8-sig", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in FEVER8_COLUMNS[:4] if c not in (reader.fieldnames or [])]
            if missing:
                raise UserError(f"{p}:1: FEVER-8 CSV needs columns {', '.join(FEVER8_COLUMNS)}; missing {', '.join(missing)}")
            return [dict(row) for row in reader]
    except UnicodeDecodeError as exc:
        raise UserError(f"{p}: file is not valid UTF-8 ({exc.reason})") from None
    except csv.Error as exc:
        raise UserError(f"{p}: not a valid CSV file ({exc})") from None


def csv_id(value: str) -> int | str:
    return int(value) if value.strip().lstrip("-").isdigit() else value


__all__ = ["FEVER8_COLUMNS", "SEP_PAIR", "SEP_QA", "csv_id", "evi_questions", "join_evi", "read_fever8_csv", "split_evi"]
