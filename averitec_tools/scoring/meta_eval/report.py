"""One meta-evaluation run: every scorer against every human dimension, with intervals.

Each scorer scores every rated item; each (scorer, dimension) pair is then correlated over
the items that have both a score and a rating (the row-true join: item i with rating row
i, blanks and judge failures left out, never counted as 0), with Spearman, Pearson and
Kendall and a claim-clustered percentile bootstrap interval of each.

    >>> from averitec_tools.scoring.meta_eval.ratings import RatedItem
    >>> items = [RatedItem(i, "t", i // 2, "c", "p", "r", "Supported", {"coherence": float(i % 3)})
    ...          for i in range(6)]
    >>> rows = correlate(spec="x", llm=False, scores=[0, 1, 2, 0, 1, None], items=items,
    ...                  dimensions=("coherence",), resamples=50)
    >>> rows[0]["spearman"], rows[0]["n"], rows[0]["excluded"]
    (1.0, 5, 1)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.scoring.meta_eval.ratings import DIMENSIONS, RatedItem, load_rated_items
from averitec_tools.scoring.meta_eval.stats import STATISTICS, clustered_bootstrap

DEFAULT_SCORERS: tuple[str, ...] = ("hu-meteor", "hu-meteor-study", "meteor", "bleu", "rouge", "minilm-qa-f1")


def correlate(*, spec: str, llm: bool, scores: Sequence[float | None], items: Sequence[RatedItem],
              dimensions: Sequence[str] = DIMENSIONS, resamples: int = 1000, level: float = 0.95,
              seed: int = 0) -> list[dict[str, Any]]:
    """One row per dimension: ``{spec, llm, dimension, spearman, pearson, kendall, ci, n, excluded}``."""
    rows = []
    for dim in dimensions:
        pairs = [(s, it.ratings.get(dim), it.claim_id) for s, it in zip(scores, items, strict=True)
                 if s is not None and it.ratings.get(dim) is not None]
        machine = [float(p[0]) for p in pairs]
        human = [float(p[1]) for p in pairs]  # type: ignore[arg-type]
        claims = [p[2] for p in pairs]
        row: dict[str, Any] = {"spec": spec, "llm": llm, "dimension": dim}
        ci = {}
        for name, fn in STATISTICS.items():
            row[name] = fn(x=human, y=machine)
            ci[name] = clustered_bootstrap(x=human, y=machine, clusters=claims, statistic=name,
                                           resamples=resamples, level=level, seed=seed).as_dict()
        row.update(ci=ci, n=len(pairs), excluded=sum(s is None for s in scores))
        rows.append(row)
    return rows


def run_scorers(*, specs: Sequence[str], items: Sequence[RatedItem], resamples: int = 1000, level: float = 0.95,
                seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(correlation rows, one info dict per scorer: spec, llm, seconds, details)."""
    from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer

    scorers = [parse_evidence_scorer(s) for s in specs]  # every spec checked before anything runs
    rows, infos = [], []
    for scorer in scorers:
        start = time.perf_counter()
        scores = scorer.score(items=items)
        seconds = time.perf_counter() - start
        rows += correlate(spec=str(scorer), llm=scorer.llm, scores=scores, items=items, resamples=resamples,
                          level=level, seed=seed)
        infos.append({"spec": str(scorer), "llm": scorer.llm, "seconds": seconds,
                      "scored": sum(s is not None for s in scores), "details": scorer.details(),
                      "scores": scores})
    return rows, infos


def _leaderboard_rows(*, data_dir: Path, items: Sequence[RatedItem], infos: Sequence[dict[str, Any]],
                      resamples: int, level: float, seed: int) -> list[dict[str, Any]]:
    """Per scorer: τ of its team means over the rated items with the full leaderboard's Q+A (none without the file)."""
    from averitec_tools.scoring.meta_eval.leaderboard import (
        LEADERBOARD_FILE,
        leaderboard_agreement,
        read_leaderboard,
    )

    path = data_dir / LEADERBOARD_FILE
    if not path.is_file():
        return []
    board = read_leaderboard(path)
    return [{"spec": info["spec"], **leaderboard_agreement(items=items, scores=info["scores"], board=board,
                                                          resamples=resamples, level=level, seed=seed)}
            for info in infos]


def meta_eval(*, data_dir: Path, specs: Sequence[str] = DEFAULT_SCORERS, resamples: int = 1000,
              level: float = 0.95, seed: int = 0, reproduce: bool = True, lite_size: int = 0,
              ratings: Path | None = None, items_file: Path | None = None) -> dict[str, Any]:
    """The whole report: ``reproduction`` (48 figures), ``scorers`` (rows), ``items`` and optional ``lite``.

    ``ratings`` / ``items_file`` replace the ratings workbook / per-item file of ``data_dir``.
    """
    from averitec_tools.scoring.meta_eval.reproduce import reproduce_study

    items = load_rated_items(data_dir=data_dir, ratings=ratings, items=items_file)
    rows, infos = run_scorers(specs=specs, items=items, resamples=resamples, level=level, seed=seed)
    report: dict[str, Any] = {
        "data": str(data_dir),
        "items": {"rated_rows_kept": len(items), "claims": len({it.claim_id for it in items}),
                  "teams": len({it.team for it in items})},
        "bootstrap": {"resamples": resamples, "level": level, "seed": seed, "cluster": "claim"},
        "reproduction": reproduce_study(data_dir=data_dir) if reproduce else [],
        "scorers": rows,
        "scorer_info": [{k: v for k, v in info.items() if k != "scores"} for info in infos],
    }
    if lite_size:
        from averitec_tools.scoring.meta_eval.lite import lite_report

        report["lite"] = lite_report(items=items, size=lite_size, resamples=resamples, level=level, seed=seed)
        report["lite"]["leaderboard"] = _leaderboard_rows(data_dir=data_dir, items=items, infos=infos,
                                                          resamples=resamples, level=level, seed=seed)
    return report


__all__ = ["DEFAULT_SCORERS", "correlate", "meta_eval"]
