"""Replay: the four AVerImaTeC columns from the organisers' own intermediate file, no judge.

The official ``eval_offline.py`` writes one row per claim to
``prepare_submission/intermediate_eval_results/<llm>_<mllm>_<n>.json``::

    {"ques_score": float, "evid_score": float | null, "verdict_score": float, "justi_score": float,
     "intermediate_info": {"ques_feedback": str, "ques_score": {...}, "justi_feedback": str,
                           "justi_score": {...}, "evid_feedback": str, "evid_image_score":
                           {"pred_in_ref": [{"info": [str], "score": str}], "ref_in_pred": [...]},
                           "evid_text_score": {...}}}

and its notebook aggregates the stored scores. :func:`replay` does the same (rows in claim
order, claim ``i`` = gold claim ``i``) and also recomputes each stored score from the row's
``intermediate_info`` with this package's arithmetic, counting the rows where the two
differ: a check of the restatement against what the official code wrote.

A resumed official run appends a second pass to the rows it had (``eval_offline.py``
loads the old rows and starts again from claim 0), so a file with more rows than gold
claims is refused unless ``rows="last"`` takes its last N rows.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import load_json
from averitec_tools.metrics.averimatec import (
    ClaimScores,
    RecallTuple,
    counted_tuples,
    evidence_recall,
    justification_score,
    question_score,
    verdict_score,
)
from averitec_tools.records.averimatec import AVerImaTeCClaim, AVerImaTeCPrediction

PathLike = str | os.PathLike[str]
SCORE_FIELDS = ("ques_score", "evid_score", "verdict_score", "justi_score")
ROW_CHOICES = ("all", "last")


@dataclass(frozen=True)
class Replayed:
    """The stored per-claim scores, the file read, and rows whose recomputation differs, by column."""

    scores: list[ClaimScores]
    path: Path
    rows_in_file: int
    mismatches: dict[str, int]


def replay_file(path: PathLike) -> Path:
    """The intermediate file: ``path`` itself, or the one ``.json`` in the folder ``path``.

    Example:
        >>> import pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "gemma_gemma_12.json").write_text("[]")
        >>> replay_file(d).name
        'gemma_gemma_12.json'
    """
    p = Path(path)
    if p.is_dir():
        found = sorted(p.glob("*.json"))
        if len(found) != 1:
            names = ", ".join(f.name for f in found[:5]) or "none"
            raise UserError(f"{p}: --replay needs one intermediate file; this folder holds {len(found)} .json "
                            f"files ({names})", hint="give the file itself: --replay DIR/NAME.json")
        return found[0]
    return p


def _score(row: Mapping[str, Any], key: str, where: str, *, nullable: bool = False) -> float | None:
    value = row.get(key)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise UserError(f"{where}: field {key!r} must be a number, found {repr(value)[:40]}")
    return float(value)


def _rows(path: Path, n_gold: int, rows: str) -> tuple[list[Any], int]:
    data = load_json(path)
    if not isinstance(data, list):
        raise UserError(f"{path}: expected the official intermediate rows (a JSON array), found {type(data).__name__}")
    if len(data) < n_gold:
        raise UserError(f"{path}: {len(data)} rows for {n_gold} gold claims (an unfinished official run)")
    if len(data) > n_gold and rows != "last":
        raise UserError(f"{path}: {len(data)} rows for {n_gold} gold claims: a resumed official run appends a "
                        "second pass to the old rows", hint="--replay-rows last takes the last rows, a finished pass")
    return data[len(data) - n_gold:], len(data)


def _recompute(info: Mapping[str, Any], gold: AVerImaTeCClaim, pred: AVerImaTeCPrediction) -> dict[str, float | None]:
    """The row's scores from its ``intermediate_info`` (what the official code would compute)."""
    out: dict[str, float | None] = {}
    ques = info.get("ques_score")
    if isinstance(ques, Mapping) and isinstance(info.get("ques_feedback"), str):
        out["ques_score"] = question_score(str(info["ques_feedback"]), n_gold=len(gold.questions),
                                           n_pred=len(pred.questions))
    if isinstance(info.get("justi_feedback"), str):  # no marker: theirs raises; the departure scores 0
        score = justification_score(str(info["justi_feedback"]))
        out["justi_score"] = 0.0 if score is None else score
    images = info.get("evid_image_score")
    if isinstance(images, Mapping) and isinstance(images.get("ref_in_pred"), list):
        listed = [r for r in images["ref_in_pred"] if isinstance(r, Mapping) and isinstance(r.get("info"), list)]
        counted = counted_tuples([[str(x) for x in r["info"]] for r in listed])
        plan = [RecallTuple(ref, pred, True) for _, ref, pred in counted]
        ratings = [str(listed[position].get("score", "")) for position, _, _ in counted]
        out["evid_score"] = evidence_recall(plan, ratings, n_gold=len(gold.questions), n_pred=len(pred.evidence))
    return out


def replay(path: PathLike, *, gold: Sequence[AVerImaTeCClaim], predictions: Sequence[AVerImaTeCPrediction],
           rows: str = "all") -> Replayed:
    """Read the rows (one per gold claim, in order) and recompute each from its details."""
    file = replay_file(path)
    data, total = _rows(file, len(gold), rows)
    scores, mismatches = [], dict.fromkeys(SCORE_FIELDS, 0)
    for i, (row, g, p) in enumerate(zip(data, gold, predictions, strict=False)):
        where = f"{file}[{total - len(data) + i}]"
        if not isinstance(row, Mapping):
            raise UserError(f"{where}: each row must be an object, found {type(row).__name__}")
        stored = {k: _score(row, k, where, nullable=k == "evid_score") for k in SCORE_FIELDS}
        info = row.get("intermediate_info")
        again = _recompute(info, g, p) if isinstance(info, Mapping) else {}
        again["verdict_score"] = verdict_score(p.verdict, g.label or "")
        for key, value in again.items():
            mismatches[key] += _differs(stored[key], value)
        scores.append(ClaimScores(stored["ques_score"] or 0.0, stored["evid_score"], stored["verdict_score"] or 0.0,
                                  stored["justi_score"] or 0.0))
    return Replayed(scores, file, total, mismatches)


def _differs(stored: float | None, again: float | None) -> bool:
    if stored is None or again is None:
        return (stored is None) != (again is None)
    return abs(stored - again) > 1e-12


__all__ = ["ROW_CHOICES", "Replayed", "replay", "replay_file"]
