"""Leaderboard tables as Markdown, HTML, JSON, CSV or LaTeX (``averitec leaderboard export``).

Team and system names and metadata are chosen by teams, so every text format escapes
them for where the file will be opened (``tests/test_leaderboard_exports.py`` runs an
injection set through each):

* CSV: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return (after
  leading spaces) is prefixed with ``'`` so spreadsheets show it as text instead of
  running it as a formula (OWASP "CSV injection"); the csv module quotes the rest.
* Markdown: HTML is escaped (``&``, ``<``, ``>``, quotes), as are Markdown's own
  punctuation (links, emphasis, code, table pipes) and line breaks, so a renderer shows
  the text, never markup.
* LaTeX: the special characters are escaped, control and format characters removed,
  line breaks become spaces: every row is one line, so the table holds no blank line.
* HTML: :func:`html.escape`.
"""

from __future__ import annotations

import csv
import html
import io
import json
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from averitec_tools.leaderboard.competition import Competition, Phase, metric_title
from averitec_tools.leaderboard.floor import Floor
from averitec_tools.leaderboard.names import REFUSED_CATEGORIES
from averitec_tools.leaderboard.ranking import Entry, board_signature
from averitec_tools.leaderboard.tiers import rank_cell, tier_cell
from averitec_tools.registry import Registry

EXPORTERS: Registry[Callable[..., str]] = Registry("export format")


def entry_dict(entry: Entry, *, disclosure: Sequence[str]) -> dict[str, Any]:
    """The JSON row of one system (``rank`` and ``tier`` ``null`` for an unranked one: ``status``)."""
    ranked = entry.status == "ranked"
    return {
        "rank": entry.rank if ranked else None,
        "tier": entry.tier if ranked else None,
        "tier_size": entry.tier_size if ranked else None,
        "status": entry.status,
        "team": entry.team,
        "system": entry.system,
        "submission_id": entry.submission_id,
        "metrics": entry.metrics,
        "ci": {k: list(v) for k, v in entry.ci.items()},
        "p_vs_tier_best_holm": entry.p_vs_tier_best,
        "rank_interval": None if entry.rank_interval is None else list(entry.rank_interval),
        "p_first": entry.p_first,
        "disclosure": {k: entry.meta.get(k) for k in disclosure},
        "scorer_version": entry.scorer_version,
        "signature": entry.signature,
        "n_unscored": entry.n_unscored,
        "unscored": dict(entry.unscored),
        "audit": None if entry.audit is None else {k: entry.audit.get(k) for k in ("status", "counts", "reason")},
        "audit_url": f"/submission/{entry.submission_id}/audit",
        "declaration": entry.declaration,
    }


def unscored_cell(entry: Entry) -> str:
    """The "Unscored" cell: the count and, when any, the reasons.

    Example:
        >>> from types import SimpleNamespace
        >>> unscored_cell(SimpleNamespace(n_unscored=3, unscored={"judge_request_failed": 2, "judge_reply_unparseable": 1}))
        '3 (judge_request_failed 2, judge_reply_unparseable 1)'
    """
    if not entry.n_unscored:
        return "0"
    return f"{entry.n_unscored} (" + ", ".join(f"{k} {v}" for k, v in entry.unscored.items()) + ")"


def audit_cell(audit: Any) -> str:
    """The "Audit flags" cell: flagged evidence per shown rule, "not audited" or empty (no audit).

    Example:
        >>> audit_cell({"status": "audited", "counts": {"published_after_claim": 2, "fact_checker_source": 0,
        ...             "own_fact_check_article": 1}})
        'after claim 2, fact-checker 0, own fact-check 1'
    """
    if not audit:
        return ""
    if audit.get("status") != "audited":
        return "not audited"
    short = {"published_after_claim": "after claim", "fact_checker_source": "fact-checker", "own_fact_check_article": "own fact-check"}
    return ", ".join(f"{short[k]} {audit['counts'].get(k, 0)}" for k in short)


def table_rows(entries: Sequence[Entry], *, phase: Phase, disclosure: Sequence[str]) -> tuple[list[str], list[list[str]]]:
    """Header and text cells shared by the text formats."""
    header = ["Rank", "Tier", "Team", "System"]
    for k in phase.columns:
        header.append(metric_title(k))
        if k == phase.primary_metric:
            header += ["95% CI", "Rank interval", "P(first)"]
    from averitec_tools.leaderboard.phase_rules import uses_judge

    judge = uses_judge(phase.profiles)
    header += (["Unscored"] if judge else []) + ["Audit flags", *disclosure, "Training data (declared)", "Dev claims used (declared)"]
    rows = []
    for e in entries:
        row = [rank_cell(e, entries), tier_cell(e), e.team, e.system]
        for k in phase.columns:
            row.append(f"{e.metrics[k]:.4f}" if k in e.metrics else "")
            if k == phase.primary_metric:
                lo, hi = e.ci.get(k, (float("nan"), float("nan")))
                row.append(f"[{lo:.4f}, {hi:.4f}]")
                row.append("" if e.rank_interval is None else f"[{e.rank_interval[0]}, {e.rank_interval[1]}]")
                row.append("" if e.p_first is None else f"{e.p_first:.3f}")
        row += ([unscored_cell(e)] if judge else []) + [audit_cell(e.audit)]
        row += [str(e.meta.get(k, "")) for k in disclosure]
        declared = e.declaration or {}
        row += [declared.get("training_data", ""), declared.get("dev_claims_used", "")]
        rows.append(row)
    return header, rows


def one_line(text: str) -> str:
    """``text`` without control, format or separator characters; line breaks and tabs
    become spaces.

    Example:
        >>> one_line("a\\nb\\u202ec\\x00d")
        'a bcd'
    """
    out = []
    for ch in text:
        if ch in "\t\n\r\v\f\u2028\u2029\x85":
            out.append(" ")
        elif unicodedata.category(ch) not in REFUSED_CATEGORIES:
            out.append(ch)
    return "".join(out)


_MD_PUNCTUATION = frozenset("\\`*_{}[]()#+-.!|~<>")


def markdown_escape(text: str) -> str:
    r"""Escape ``text`` for a Markdown table cell: HTML entities for ``& < > " '``,
    backslashes before Markdown punctuation, one line.

    Example:
        >>> markdown_escape("<b>x</b> [a](javascript:1) | *y*")
        '&lt;b&gt;x&lt;/b&gt; \\[a\\]\\(javascript:1\\) \\| \\*y\\*'
    """
    out = []
    for ch in one_line(text):
        if ch in "&<>\"'":
            out.append(html.escape(ch, quote=True))
        elif ch in _MD_PUNCTUATION:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _markdown(entries: Sequence[Entry], *, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    lines = ["| " + " | ".join(markdown_escape(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _html(entries: Sequence[Entry], *, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    out = ["<table>", "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>", "<tbody>"]
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    out += ["</tbody>", "</table>"]
    return "\n".join(out) + "\n"


def _json(entries: Sequence[Entry], *, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    obj = {
        "competition": competition.name,
        "phase": phase.name,
        "primary_metric": phase.primary_metric,
        "alpha": competition.alpha,
        "test": competition.test,
        "n_resamples": competition.n_resamples,
        "seed": competition.seed,
        "resolution_floor": None if floor is None else floor.as_json(),
        "deadline": None if phase.deadline is None else phase.deadline.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "signature": board_signature(competition=competition, phase=phase, floor=floor),
        "rows": [entry_dict(e, disclosure=competition.disclosure) for e in entries],
    }
    return json.dumps(obj, ensure_ascii=False) + "\n"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text: str) -> str:
    """Neutralise a spreadsheet formula (OWASP CSV injection): a cell that starts, after
    spaces, with ``= + - @``, tab or CR gets a leading ``'``.

    Example:
        >>> print(csv_cell('=HYPERLINK("http://x")'), csv_cell(" @SUM(A1)"), csv_cell("0.1600"))
        '=HYPERLINK("http://x") ' @SUM(A1) 0.1600
    """
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_START) or text.startswith(_FORMULA_START) else text


def _csv(entries: Sequence[Entry], *, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    if floor is not None:
        header, rows = [*header, "Resolution floor"], [[*row, f"{floor.value:.4f}"] for row in rows]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow([csv_cell(h) for h in header])
    writer.writerows([[csv_cell(c) for c in row] for row in rows])
    return buf.getvalue()


_LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}", '"': r"\textquotedbl{}",
}


#: Combining marks as the accent commands of LaTeX's OT1/T1 text encodings.
_LATEX_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
                  "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0327": "c",
                  "\u0328": "k", "\u0323": "d", "\u0331": "b"}
#: Letters and signs without a decomposition that every LaTeX text font has a command for.
_LATEX_LETTERS = {"ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}", "ø": r"\o{}", "Ø": r"\O{}", "œ": r"\oe{}",
                  "Œ": r"\OE{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}", "ȷ": r"\j{}", "å": r"\aa{}",
                  "Å": r"\AA{}", "£": r"\pounds{}", "§": r"\S{}", "¶": r"\P{}", "©": r"\copyright{}",
                  "€": r"\texteuro{}", "°": r"\textdegree{}", "\u00a0": "~", "–": "--", "—": "---",
                  "‘": "`", "’": "'", "“": "``", "”": "''", "…": r"\dots{}"}
#: Defined at the top of every LaTeX export: a character as itself under XeLaTeX/LuaLaTeX
#: (Unicode engines, where the document's font decides the glyph), as ``U+XXXX`` under
#: pdflatex (whose default set-up has no glyph for it and would stop with an error).
LATEX_PREAMBLE = r'\providecommand{\lbuni}[1]{\ifdefined\Umathcode\char"#1\relax\else\texttt{[U+#1]}\fi}'


def _latex_char(ch: str, marks: str = "") -> str:
    """One character and the combining marks after it, as ASCII LaTeX."""
    if not marks and ch.isascii():
        return _LATEX_SPECIAL.get(ch, ch)
    if not marks and ch in _LATEX_LETTERS:
        return _LATEX_LETTERS[ch]
    decomposed = unicodedata.normalize("NFD", ch) + marks
    base, accents = decomposed[0], list(decomposed[1:])
    if base.isascii() and base.isalpha() and accents and all(m in _LATEX_ACCENTS for m in accents):
        dotless = accents[0] not in ("\u0327", "\u0328", "\u0323", "\u0331")  # marks above drop i's dot
        out = {"i": r"\i{}", "j": r"\j{}"}.get(base, base) if dotless else base
        for mark in accents:
            out = f"\\{_LATEX_ACCENTS[mark]}{{{out}}}"
        return out
    return "".join(rf"\lbuni{{{ord(c):X}}}" for c in ch + marks)


def latex_escape(text: str) -> str:
    r"""Escape ``text`` to ASCII LaTeX that compiles under pdflatex, XeLaTeX and LuaLaTeX:
    special characters escaped; accented Latin letters as accent commands; other
    non-ASCII characters as ``\lbuni{HEX}`` (:data:`LATEX_PREAMBLE`); control characters
    dropped, line breaks spaces (so a cell is one line and a table never holds a blank line).

    Example:
        >>> latex_escape("a_b & 50%\n\n\\input{x}")
        'a\\_b \\& 50\\%  \\textbackslash{}input\\{x\\}'
        >>> print(latex_escape("Zoë Łódź 日😀"))
        Zo\"{e} \L{}\'{o}d\'{z} \lbuni{65E5}\lbuni{1F600}
    """
    out: list[tuple[str, str]] = []  # (character, combining marks after it), NFC first
    for ch in unicodedata.normalize("NFC", one_line(text)):
        if out and unicodedata.combining(ch):
            out[-1] = (out[-1][0], out[-1][1] + ch)
        else:
            out.append((ch, ""))
    return "".join(_latex_char(ch, marks) for ch, marks in out)


def _latex(entries: Sequence[Entry], *, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    header, rows = table_rows(entries, phase=phase, disclosure=competition.disclosure)
    lines = [LATEX_PREAMBLE, r"\begin{tabular}{" + "l" * len(header) + "}", r"\toprule"]
    lines.append(" & ".join(latex_escape(h) for h in header) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


for _name, _fn in (("md", _markdown), ("html", _html), ("json", _json), ("csv", _csv), ("latex", _latex)):
    EXPORTERS.add(_name, _fn)


def export(entries: Sequence[Entry], *, competition: Competition, phase: Phase, fmt: str, floor: Floor | None = None) -> str:
    """Render ``entries`` in ``fmt`` (one of ``md, html, json, csv, latex``); every format
    states the phase's resolution floor (JSON: ``resolution_floor``; the text formats: a line
    after the table)."""
    text = EXPORTERS.get(fmt)(entries, competition=competition, phase=phase, floor=floor)
    return text if fmt in ("json", "csv") else text + floor_note(floor, fmt=fmt)


def floor_note(floor: Floor | None, *, fmt: str) -> str:
    """The line after a text table that states the floor (in the format's comment syntax where it has one).

    Example:
        >>> floor_note(Floor(0.0594, 500, "variance"), fmt="md")
        '\\nResolution floor: 0.0594 (the smallest difference of the primary metric 500 claims resolve; from the stated variance); rows closer than that share a tier.\\n'
    """
    if floor is None:
        return ""
    how = "the baseline submission's spread" if floor.method == "baseline" else "the stated variance"
    text = (f"Resolution floor: {floor.value:.4f} (the smallest difference of the primary metric {floor.n_claims} claims "
            f"resolve; from {how}); rows closer than that share a tier.")
    if fmt == "html":
        return f"<p>{html.escape(text)}</p>\n"
    if fmt == "latex":
        return "% " + text + "\n"
    return "\n" + text + "\n"


__all__ = ["audit_cell", "entry_dict", "export", "floor_note", "table_rows"]
