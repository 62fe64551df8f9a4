"""The study's published correlations, recomputed from its stored per-item scores.

For each of hmeteor, meteor, bleu and rouge, ``results/predictions_<scorer>.jsonl`` holds
one score per kept rating row, and ``results/correlation_<scorer>.csv`` the published
Spearman and Pearson correlation with each dimension. The study's join is reproduced as
it was written: every per-item line is matched to the *first* kept rating row with the
same claim id (one claim, 1460, was rated for two teams, so its second line is compared
with the first team's ratings), and a blank rating counts as 0. With that join all 48
figures come out equal to the published ones; :func:`correlate_items` in
:mod:`~averitec_tools.scoring.meta_eval.report` uses the row-true join and drops blanks.

    >>> study_pairs(ids=[7, 7], scores=[0.5, 0.25], rows=[{"id": 7, "coherence": 4.0},
    ...                                                   {"id": 7, "coherence": 2.0}], dimension="coherence")
    ([4.0, 4.0], [0.5, 0.25])
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.stored_scores import read_items_file
from averitec_tools.scoring.meta_eval.ratings import (
    DIMENSIONS,
    RATINGS_FILE,
    kept_rows,
    label_agrees,
)
from averitec_tools.scoring.meta_eval.stats import STATISTICS

#: The study's non-LLM scorers whose per-item scores are public.
STUDY_SCORERS: tuple[str, ...] = ("hmeteor", "meteor", "bleu", "rouge")
PUBLISHED_STATISTICS: dict[str, str] = {"spearman": "spearman_corr", "pearson": "pearson_corr"}


def _zero_if_blank(value: Any) -> float:
    return 0.0 if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def study_pairs(*, ids: Sequence[int], scores: Sequence[Any], rows: Sequence[dict[str, Any]],
                dimension: str) -> tuple[list[float], list[float]]:
    """(human, scorer) pairs as the study built them: first row per claim id, blanks as 0."""
    first: dict[int, dict[str, Any]] = {}
    for r in rows:
        first.setdefault(r["id"], r)
    human = [_zero_if_blank(first[i][dimension]) for i in ids]
    return human, [_zero_if_blank(s) for s in scores]


def read_published(path: Path) -> dict[tuple[str, str], float]:
    """``(dimension, statistic) → value`` of one published ``correlation_*.csv``."""
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    out = {}
    for n, row in enumerate(rows, start=2):
        try:
            for stat, col in PUBLISHED_STATISTICS.items():
                out[(row["dimension"], stat)] = float(row[col])
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{path}: line {n}: expected dimension, spearman_corr, pearson_corr") from None
    return out


def reproduce_study(*, data_dir: Path) -> list[dict[str, Any]]:
    """The 48 published figures with their recomputed values, in file order.

    Example:
        >>> import tempfile
        >>> reproduce_study(data_dir=Path(tempfile.mkdtemp()))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: ...AVERITEC_FC_Evidence_Evaluation_Responses.xlsx: no such file
    """
    rows = kept_rows(data_dir / RATINGS_FILE)
    out = []
    for scorer in STUDY_SCORERS:
        items = read_items_file(data_dir / "results" / f"predictions_{scorer}.jsonl")
        gold: dict[int, str] = {}
        for it in items:
            gold.setdefault(it["id"], it["gold"])
        with_agreement = [{**r, "verdict_agreement": label_agrees(gold=gold.get(r["id"], ""), majority=r["label_majority"])}
                          for r in rows]
        published = read_published(data_dir / "results" / f"correlation_{scorer}.csv")
        ids, scores = [it["id"] for it in items], [it["score"] for it in items]
        unknown = sorted(set(ids) - {r["id"] for r in rows})
        if unknown:
            raise UserError(f"predictions_{scorer}.jsonl: claim id {unknown[0]} has no kept rating row")
        for dim in DIMENSIONS:
            human, machine = study_pairs(ids=ids, scores=scores, rows=with_agreement, dimension=dim)
            for stat in PUBLISHED_STATISTICS:
                value = STATISTICS[stat](x=human, y=machine)
                pub = published.get((dim, stat))
                out.append({"scorer": scorer, "dimension": dim, "statistic": stat, "published": pub,
                            "reproduced": value,
                            "difference": None if pub is None else value - pub})
    return out


__all__ = ["reproduce_study", "study_pairs"]
