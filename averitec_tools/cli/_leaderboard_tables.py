"""The ranking of ``averitec leaderboard show`` as terminal tables (rich)."""

from __future__ import annotations

from typing import Any


def terminal_tables(entries: list[Any], *, competition: Any, phase: Any, width: int | None = None) -> list[Any]:
    """The ranking as rich tables that stay readable at 80 columns: numbers are never cut
    (names and headers wrap instead); metric columns that do not fit beside rank, tier,
    team, system, the primary metric and its CI continue in further tables (keyed by rank
    and team), and disclosure metadata comes in its own table."""
    import shutil

    from rich import box
    from rich.markup import escape
    from rich.table import Table

    from averitec_tools.leaderboard.export import table_rows

    width = width or shutil.get_terminal_size((80, 24)).columns
    header, rows = table_rows(entries, phase=phase, disclosure=())
    columns = [(h, [r[k] for r in rows]) for k, h in enumerate(header)]
    names = {"Team", "System"}
    primary = header.index("95% CI") - 1

    def need(col: tuple[str, list[str]]) -> int:
        title, values = col
        words = max((len(w) for w in title.split()), default=1)
        if title in names:
            return min(14, max([words, *map(len, values)])) + 2
        cells = max((len(w) for v in values for w in v.split()), default=1)
        return max(words, cells) + 2

    def table(cols: list[tuple[str, list[str]]], title: str | None) -> Any:
        t = Table(title=escape(title) if title else None, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for name, values in cols:
            if name in names:
                t.add_column(escape(name), overflow="fold", ratio=1, min_width=6)
            else:
                t.add_column(escape(name), justify="right", min_width=need((name, values)) - 2)
        for k in range(len(rows)):
            t.add_row(*(escape(values[k]) for _, values in cols))
        return t

    main = columns[: primary + 4]  # ... the primary metric, its CI, the rank interval, P(first)
    rest = columns[primary + 4 :]
    while rest and sum(map(need, main)) + need(rest[0]) <= width:
        main.append(rest.pop(0))
    title = (f"{competition.title}: {phase.title} (tiers: Holm-corrected paired {competition.test}, α={competition.alpha}; "
             f"rank intervals and P(first): {competition.n_resamples} paired bootstrap resamples, seed {competition.seed})")
    tables = [table(main, title)]
    key = [columns[0], columns[2]]  # rank, team
    while rest:
        chunk = [rest.pop(0)]
        while rest and sum(map(need, key + chunk)) + need(rest[0]) <= width:
            chunk.append(rest.pop(0))
        tables.append(table(key + chunk, "more metrics"))
    if competition.disclosure and entries:
        meta = Table(title="disclosure", box=box.SIMPLE_HEAD, pad_edge=False)
        for h in ("Rank", "Team", "System", *competition.disclosure):
            meta.add_column(escape(h), overflow="fold")
        for e in entries:
            meta.add_row(str(e.rank), escape(e.team), escape(e.system), *(escape(str(e.meta.get(k, ""))) for k in competition.disclosure))
        tables.append(meta)
    return tables


__all__ = ["terminal_tables"]
