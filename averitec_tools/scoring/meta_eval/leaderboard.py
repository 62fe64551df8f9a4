"""How well a few claims per team rank the 2024 teams as the full test-set leaderboard does.

The study's ``data/0_submissions_averitec.xlsx`` holds no per-claim predictions: it is the
2024 shared-task leaderboard, one row per team (``Rank``, ``Participant team``, ``Q only``,
``Q + A``, ``AVeriTeC Score``, each over the whole test set). The only per-claim
submissions public are the rated items (about 21 per team after the study's filters,
each team on its own claims). :func:`leaderboard_agreement` ranks the rated teams by an
automatic scorer's mean over their rated items and compares that ranking with the
leaderboard's (Kendall τ-b), with a percentile bootstrap interval that resamples each
team's items — how far a sample of that size, scored automatically, keeps the full
ranking. Team names are matched case-insensitively with ``_`` read as a space.

    >>> team_key("CTU_AIC") == team_key("ctu aic")
    True
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.scoring.meta_eval.ratings import RatedItem, read_xlsx_rows
from averitec_tools.scoring.meta_eval.stats import kendall, percentile_interval

LEADERBOARD_FILE = "data/0_submissions_averitec.xlsx"
COLUMNS = {"q_only": "Q only", "qa": "Q + A", "averitec_score": "AVeriTeC Score"}


def team_key(name: str) -> str:
    """The form team names are matched in."""
    return " ".join(str(name).replace("_", " ").casefold().split())


def read_leaderboard(path: Path) -> dict[str, dict[str, float]]:
    """Team → ``{q_only, qa, averitec_score}`` from the leaderboard workbook (blank rows skipped).

    Raises:
        UserError: A missing column or a non-numeric score (file and row named).
    """
    header, rows = read_xlsx_rows(path)
    need = ["Participant team", *COLUMNS.values()]
    missing = [c for c in need if c not in header]
    if missing:
        raise UserError(f"{path}: missing column {missing[0]!r}")
    col = {c: header.index(c) for c in need}
    out: dict[str, dict[str, float]] = {}
    for n, row in enumerate(rows, start=2):
        team = row[col["Participant team"]] if col["Participant team"] < len(row) else None
        if team in (None, ""):
            continue
        try:
            out[team_key(team)] = {k: float(row[col[c]]) for k, c in COLUMNS.items()}
        except (TypeError, ValueError):
            raise UserError(f"{path}: row {n}: team {team!r} has a non-numeric score") from None
    return out


def _tau(teams: Sequence[str], means: Mapping[str, float], board: Mapping[str, float]) -> float:
    return kendall(x=[board[t] for t in teams], y=[means[t] for t in teams])


def leaderboard_agreement(*, items: Sequence[RatedItem], scores: Sequence[float | None],
                          board: Mapping[str, Mapping[str, float]], column: str = "qa", resamples: int = 1000,
                          level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """τ between the teams' mean ``scores`` over their rated items and the leaderboard ``column``.

    Example:
        >>> its = [RatedItem(i, t, i, "", "", "", "Refuted") for i, t in enumerate("aabbcc")]
        >>> board = {"a": {"qa": 0.3}, "b": {"qa": 0.2}, "c": {"qa": 0.1}}
        >>> r = leaderboard_agreement(items=its, scores=[.9, .7, .5, .6, .1, .2], board=board, resamples=50)
        >>> r["kendall_tau"], r["teams"], r["items_per_team"]
        (1.0, 3, 2.0)
    """
    per_team: dict[str, list[float]] = defaultdict(list)
    for it, s in zip(items, scores, strict=True):
        if s is not None and team_key(it.team) in board:
            per_team[team_key(it.team)].append(float(s))
    teams = sorted(per_team)
    if len(teams) < 2:
        raise UserError("fewer than two rated teams are on the leaderboard")
    column_scores = {t: board[t][column] for t in teams}
    tau = _tau(teams, {t: float(np.mean(v)) for t, v in per_team.items()}, column_scores)
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(resamples):
        means = {t: float(np.mean(rng.choice(v, size=len(v)))) for t, v in per_team.items()}
        t = _tau(teams, means, column_scores)
        if not np.isnan(t):
            taus.append(t)
    return {"column": COLUMNS[column], "teams": len(teams), "kendall_tau": tau,
            "items_per_team": float(np.mean([len(v) for v in per_team.values()])),
            "ci": percentile_interval(taus, level=level, resamples=resamples).as_dict()}


__all__ = ["COLUMNS", "LEADERBOARD_FILE", "leaderboard_agreement", "read_leaderboard", "team_key"]
