"""A self-contained HTML page for an :class:`~averitec_tools.leakage.audit.AuditReport`."""

from __future__ import annotations

import html
import os

from averitec_tools.jsonio import atomic_writer
from averitec_tools.leakage.audit import RULE_ORDER, AuditReport, Row

_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top;font-size:.9em}
th{background:#f3f3f3} td.url{word-break:break-all} .note{color:#666;font-size:.9em}
details{margin:.5em 0} summary{cursor:pointer;font-weight:600}
"""

_NOTES = {
    "archived_after_claim": "Archive snapshot dates are an upper bound on the publication date, "
    "not the publication date: annotators usually archived pages after the claim date.",
}


def _rows_table(rows: tuple[Row, ...], limit: int) -> str:
    if not rows:
        return "<p class='note'>none</p>"
    body = "".join(
        f"<tr><td>{r.claim_index}</td><td class='url'>{html.escape(r.url or '')}</td>"
        f"<td>{html.escape(r.date or '')}</td><td>{html.escape(r.detail)}</td></tr>"
        for r in rows[:limit]
    )
    more = f"<p class='note'>{len(rows) - limit} more rows in --json output</p>" if len(rows) > limit else ""
    return f"<table><tr><th>claim</th><th>url</th><th>date</th><th>detail</th></tr>{body}</table>{more}"


def render_html(report: AuditReport, *, max_rows: int = 500) -> str:
    """The report as one HTML page (summary table, split ranges, per-rule rows).

    Example:
        >>> import json, pathlib, tempfile
        >>> from averitec_tools.leakage.audit import run_audit
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "dev.json").write_text(json.dumps([{"claim": "c", "claim_date": "01-10-2020",
        ...     "questions": []}]))
        >>> "<html" in render_html(run_audit(d / "dev.json"))
        True
    """
    e = html.escape
    summary = "".join(
        f"<tr><td>{e(name)}</td><td>{r.count}</td><td>{r.rate:.2%}</td><td>{r.n_claims}</td>"
        f"<td>{e(r.description)}</td></tr>"
        for name in RULE_ORDER
        for r in (report.rules[name],)
    )
    ranges = "".join(
        f"<tr><td>{e(r.split)}</td><td>{r.n_claims}</td><td>{r.first or ''}</td><td>{r.last or ''}</td>"
        f"<td>{len(r.unparseable)}</td></tr>"
        for r in report.split_ranges
    )
    overlaps = "".join(
        f"<li>{e(o.a)} and {e(o.b)} overlap from {o.start} to {o.end} ({o.n_claims_in_overlap} claims)</li>"
        for o in report.split_overlaps
    ) or "<li>no overlap between the claim-date ranges of the loaded splits</li>"
    sections = "".join(
        f"<details{' open' if report.rules[name].count and name != 'archived_after_claim' else ''}>"
        f"<summary>{e(name)} ({report.rules[name].count})</summary>"
        f"{'<p class=note>' + e(_NOTES[name]) + '</p>' if name in _NOTES else ''}"
        f"{_rows_table(report.rules[name].rows, max_rows)}</details>"
        for name in RULE_ORDER
    )
    extra = (
        f"<details><summary>invalid URLs ({len(report.invalid_urls)})</summary>{_rows_table(report.invalid_urls, max_rows)}</details>"
        f"<details><summary>unparseable dates ({len(report.unparseable_dates)})</summary>"
        f"{_rows_table(report.unparseable_dates, max_rows)}</details>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>averitec audit: {e(os.path.basename(report.path))}</title><style>{_STYLE}</style></head><body>"
        f"<h1>Temporal-leakage and evidence-source audit</h1>"
        f"<p>{e(report.path)} ({e(report.kind)}): {report.n_claims} claims, {report.n_evidence} evidence items "
        f"with a URL ({report.n_evidence_without_url} without), {report.n_claims_without_date} claims without a usable date.</p>"
        "<h2>Rules</h2><table><tr><th>rule</th><th>evidence flagged</th><th>rate</th><th>claims</th><th>meaning</th></tr>"
        f"{summary}</table>"
        "<h2>Splits</h2><table><tr><th>split</th><th>claims</th><th>first claim date</th><th>last claim date</th>"
        f"<th>unparseable</th></tr>{ranges}</table><ul>{overlaps}</ul>"
        f"<h2>Flagged evidence</h2>{sections}{extra}</body></html>\n"
    )


def write_html(report: AuditReport, path: str | os.PathLike[str]) -> None:
    """Write :func:`render_html` atomically to ``path``."""
    with atomic_writer(path) as fh:
        fh.write(render_html(report))


__all__ = ["render_html", "write_html"]
