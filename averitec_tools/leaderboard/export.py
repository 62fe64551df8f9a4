"""Leaderboard tables as Markdown, HTML, JSON, CSV or LaTeX (``averitec leaderboard export``)."""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

from averitec_tools.leaderboard.competition import Competition, Phase, metric_title
from averitec_tools.leaderboard.ranking import Entry
from averitec_tools.registry import Registry

EXPORTERS: Registry[Callable[..., str]] = Registry("export format")


def entry_dict(entry: Entry, *, disclosure: Sequence[str]) -> dict[str, Any]:
    """The JSON row of one ranked system."""
    return {
        "rank": entry.rank,
        "tier": entry.tier,
        "team": entry.team,
        "system": entry.system,
        "submission_id": entry.submission_id,
        "metrics": entry.metrics,
        "ci": {k: list(v) for k, v in entry.ci.items()},
        "p_vs_tier_best_holm": entry.p_vs_tier_best,
        "disclosure": {k: entry.meta.get(k) for k in disclosure},
        "scorer_version": entry.scorer_version,
        "signature": entry.signature,
    }


def table_rows(entries: Sequence[Entry], *, phase: Phase, disclosure: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """Header and text cells shared by the text formats."""
    header = ["Rank", "Tier", "Team", "System"]
    for k in phase.columns:
        header.append(metric_title(k))
        if k == phase.primary_metric:
            header.append("95% CI")
    header += list(disclosure)
    rows = []
    for e in entries:
        row = [str(e.rank), str(e.tier), e.team, e.system]
        for k in phase.columns:
            row.append(f"{e.metrics[k]:.4f}" if k in e.metrics else "")
            if k == phase.primary_metric:
                lo, hi = e.ci.get(k, (float("nan"), float("nan")))
                row.append(f"[{lo:.4f}, {hi:.4f}]")
        row += [str(e.meta.get(k, "")) for k in disclosure]
        rows.append(row)
    return header, rows


def _markdown(entries: Sequence[Entry], *, competition: Competition, phase: Phase) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)

    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _html(entries: Sequence[Entry], *, competition: Competition, phase: Phase) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>", "<tbody>"]
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    out += ["</tbody>", "</table>"]
    return "\n".join(out) + "\n"


def _json(entries: Sequence[Entry], *, competition: Competition, phase: Phase) -> str:
    obj = {
        "competition": competition.name,
        "phase": phase.name,
        "primary_metric": phase.primary_metric,
        "alpha": competition.alpha,
        "test": competition.test,
        "rows": [entry_dict(e, disclosure=competition.disclosure) for e in entries],
    }
    return json.dumps(obj, ensure_ascii=False) + "\n"


def _csv(entries: Sequence[Entry], *, competition: Competition, phase: Phase) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX special characters.

    Example:
        >>> latex_escape("a_b & 50%")
        'a\\_b \\& 50\\%'
    """
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def _latex(entries: Sequence[Entry], *, competition: Competition, phase: Phase) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule"]
    lines.append(" & ".join(latex_escape(h) for h in header) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


for _name, _fn in (("md", _markdown), ("html", _html), ("json", _json), ("csv", _csv), ("latex", _latex)):
    EXPORTERS.add(_name, _fn)


def export(entries: Sequence[Entry], *, competition: Competition, phase: Phase, fmt: str) -> str:
    """Render ``entries`` in ``fmt`` (one of ``md, html, json, csv, latex``)."""
    return EXPORTERS.get(fmt)(entries, competition=competition, phase=phase)


__all__ = ["EXPORTERS", "entry_dict", "export", "latex_escape", "table_rows"]
