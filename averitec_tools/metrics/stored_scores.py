"""``file(path=...)``: stored per-item scores, as an evidence scorer.

The Ev2R study publishes its scorers' per-item outputs as JSON lines (``claim``,
``evidence``, ``response.{reference_evidence, score}``, ``gold``, ``id``; one line per
rated item, in order); ``file(path=FILE.jsonl)`` reads such a file in place of running a
scorer, so any scorer run elsewhere can be correlated with the ratings.

    >>> StoredScores().check_ready()
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: scorer file needs path=FILE.jsonl
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import EvidenceScorer
from averitec_tools.records.rated import RatedItem


def read_items_file(path: Path) -> list[dict[str, Any]]:
    """The study's per-item JSON lines (``claim, evidence, response.{reference_evidence, score}, gold, id``)."""
    from averitec_tools.jsonio import iter_jsonl

    out = []
    for rec in iter_jsonl(path):  # missing file, bad UTF-8, bad or too deeply nested JSON: one line
        obj = rec.value
        try:
            score = obj["response"].get("score")
            if score is not None and not isinstance(score, int | float) or isinstance(score, bool):
                raise TypeError(f"score is {score!r}")
            out.append({"id": int(obj["id"]), "claim": str(obj["claim"]), "evidence": str(obj["evidence"]),
                        "reference": str(obj["response"]["reference_evidence"]), "gold": str(obj["gold"]),
                        "score": score})
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            raise UserError(f"{rec.where}: not a per-item record ({type(exc).__name__}: {exc})") from None
    return out


@register_metric
class StoredScores(
    EvidenceScorer, name="file", higher_is_better=True,
    description="stored per-item scores: a JSON-lines file in the Ev2R study's format, one line per rated item",
):
    """Stored per-item scores (see the module docstring); blank or NaN scores are left out, never 0."""

    path: str = ""

    def check_ready(self) -> None:
        if not self.path:
            raise UserError("scorer file needs path=FILE.jsonl")

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        rows = read_items_file(Path(self.path))
        if len(rows) != len(items):
            raise UserError(f"{self.path}: {len(rows)} lines, expected one per rated item ({len(items)})")
        out: list[float | None] = []
        for n, (row, it) in enumerate(zip(rows, items, strict=True), start=1):
            if row["id"] != it.claim_id:
                raise UserError(f"{self.path}: line {n}: claim id {row['id']}, expected {it.claim_id}")
            s = row["score"]
            out.append(None if s is None or s != s else float(s))  # blank or NaN: left out, not 0
        return out


__all__ = ["StoredScores", "read_items_file"]
