"""FEVER's own Wikipedia (``wiki-pages/wiki-*.jsonl``) as a paragraph store of sentence units.

FEVER 1.0 ships the June 2017 Wikipedia introductions it was annotated on: 109 JSONL
files, one page per line::

    {"id": "Savages_-LRB-2012_film-RRB-", "text": "...",
     "lines": "0\\tSavages is a 2012 American crime thriller film ...\\tcrime thriller\\n1\\t..."}

``lines`` holds one sentence per ``\\n``-separated entry: its number, a tab, the sentence
(PTB-tokenised, brackets written ``-LRB-``/``-RRB-``...), then optional tab-separated
hyperlink anchors. Each non-empty sentence becomes one retrieval unit whose ``doc_id`` is
``<page id>#<line>`` and whose ``title`` is the page's readable title
(:func:`averitec_tools.loaders.fever.page_title`), so the R2VC ternary output writes
``predicted_evidence`` as ``[page id, line]`` — the FEVER evidence ids that ``averitec
score --profile fever`` scores (:func:`averitec_tools.baselines.r2vc.io.formats.to_ternary`).
The sentence text has its bracket tokens turned back into brackets (the models read
natural text); nothing else is changed.

The first record of ``wiki-001.jsonl`` has an empty ``id`` and is skipped, as are empty
sentences; both are counted in :class:`FeverWikiStats`.

Example:
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> page = {"id": "Soul_Food_-LRB-film-RRB-", "text": "",
    ...         "lines": "0\\tSoul Food is a 1997 film .\\tfilm\\n1\\t\\n2\\tIt -LRB- the film -RRB- grossed well ."}
    >>> _ = (d / "wiki-001.jsonl").write_text(json.dumps(page) + "\\n")
    >>> [(p.doc_id, p.title, p.text) for p in iter_fever_wiki_sentences(path=d)]  # doctest: +NORMALIZE_WHITESPACE
    [('Soul_Food_-LRB-film-RRB-#0', 'Soul Food (film)', 'Soul Food is a 1997 film .'),
     ('Soul_Food_-LRB-film-RRB-#2', 'Soul Food (film)', 'It (the film) grossed well .')]
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import iter_jsonl

#: PTB bracket tokens of FEVER sentences and the characters they stand for.
_TOKENS = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}",
           "-COLON-": ":"}
_OPEN_SPACE = re.compile(r"([(\[{]) ")
_SPACE_CLOSE = re.compile(r" ([)\]}])")


def sentence_doc_id(page: str, line: int) -> str:
    """The store id of sentence ``line`` of FEVER page ``page``.

    Example:
        >>> sentence_doc_id("Nikolaj_Coster-Waldau", 7)
        'Nikolaj_Coster-Waldau#7'
    """
    return f"{page}#{line}"


def detokenize_brackets(text: str) -> str:
    """FEVER's bracket tokens back to brackets, without the padding spaces inside them.

    Example:
        >>> detokenize_brackets("Savages -LRB- 2012 film -RRB- is a film .")
        'Savages (2012 film) is a film .'
    """
    for token, char in _TOKENS.items():
        text = text.replace(token, char)
    return _SPACE_CLOSE.sub(r"\1", _OPEN_SPACE.sub(r"\1", text))


@dataclass
class FeverWikiStats:
    """What a FEVER wiki-pages build read and kept.

    Attributes:
        files: ``wiki-*.jsonl`` files read.
        pages: Pages with a non-empty ``id``.
        sentences: Sentence units kept.
        empty_sentences: ``lines`` entries with no sentence text (skipped).
        short_sentences: Sentences shorter than ``min_chars`` (skipped).
        untitled_records: Records with an empty ``id`` (``wiki-001.jsonl``'s first line).
    """

    files: int = 0
    pages: int = 0
    sentences: int = 0
    empty_sentences: int = 0
    short_sentences: int = 0
    untitled_records: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def wiki_files(path: str | os.PathLike[str]) -> list[Path]:
    """The ``*.jsonl`` files of a wiki-pages directory (sorted), or ``path`` itself.

    Raises:
        UserError: a missing path or a directory without ``*.jsonl`` files.
    """
    root = Path(path)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise UserError(f"{root}: FEVER wiki-pages directory not found")
    files = sorted(root.glob("*.jsonl"))
    if not files:
        raise UserError(f"{root}: no *.jsonl files (FEVER's wiki-pages directory expected)")
    return files


def page_url(page: str) -> str:
    """The English Wikipedia URL of a FEVER page id.

    Example:
        >>> page_url("Savages_-LRB-2012_film-RRB-")
        'https://en.wikipedia.org/wiki/Savages_(2012_film)'
    """
    from averitec_tools.loaders.fever import page_title

    return "https://en.wikipedia.org/wiki/" + quote(page_title(page).replace(" ", "_"), safe="()_,:'!-.")


def _sentences(record: Any, *, where: str, min_chars: int, stats: FeverWikiStats) -> Iterator[Passage]:
    from averitec_tools.loaders.fever import page_title

    if not isinstance(record, dict) or "id" not in record or "lines" not in record:
        raise UserError(f"{where}: expected a FEVER wiki-pages object with 'id' and 'lines'")
    page, lines = record["id"], record["lines"]
    if not isinstance(page, str) or not isinstance(lines, str):
        raise UserError(f"{where}: wiki-pages 'id' and 'lines' must be strings")
    if not page:
        stats.untitled_records += 1
        return
    stats.pages += 1
    title, url = page_title(page), page_url(page)
    for number, entry in enumerate(lines.split("\n")):
        fields = entry.split("\t")
        # A sentence's number is its first field; FEVER numbers them 0, 1, ... in order.
        line = int(fields[0]) if fields[0].isdigit() else number
        text = detokenize_brackets(fields[1].strip()) if len(fields) > 1 else ""
        if not text:
            stats.empty_sentences += 1
            continue
        if len(text) < min_chars:
            stats.short_sentences += 1
            continue
        stats.sentences += 1
        yield Passage(doc_id=sentence_doc_id(page, line), title=title, url=url, text=text)


def iter_fever_wiki_sentences(
    *, path: str | os.PathLike[str], min_chars: int = 1, stats: FeverWikiStats | None = None
) -> Iterator[Passage]:
    """Every sentence of a FEVER wiki-pages dump (directory or one file) as a passage.

    Args:
        path: The ``wiki-pages`` directory (``wiki-001.jsonl`` ... read in sorted order)
            or a single file of it.
        min_chars: Drop sentences shorter than this (after detokenising).
        stats: Filled with the counts of what was read and skipped.

    Raises:
        UserError: a missing directory, invalid JSON or a record that is not a page
            (names file and line).
    """
    if min_chars < 1:
        raise UserError(f"min_chars must be >= 1, got {min_chars}")
    stats = stats if stats is not None else FeverWikiStats()
    for file in wiki_files(path):
        stats.files += 1
        for item in iter_jsonl(file):
            yield from _sentences(item.value, where=item.where, min_chars=min_chars, stats=stats)


def build_corpus_from_fever_wiki(
    *, path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None = None, min_chars: int = 1
) -> tuple[Any, FeverWikiStats]:
    """Build a paragraph store of FEVER sentence units; returns ``(store, stats)``.

    Example:
        >>> import json, tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "wiki-001.jsonl").write_text(json.dumps({"id": "", "text": "", "lines": ""}) + "\\n"
        ...     + json.dumps({"id": "A", "text": "", "lines": "0\\tA is a letter ."}) + "\\n")
        >>> store, stats = build_corpus_from_fever_wiki(path=d)
        >>> store.get("A#0").text, stats.untitled_records
        ('A is a letter .', 1)
    """
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    stats = FeverWikiStats()
    root = Path(out_dir) if out_dir is not None else None
    existed = root is not None and root.exists()
    try:
        store = build_corpus(passages=iter_fever_wiki_sentences(path=path, min_chars=min_chars, stats=stats),
                             out_dir=out_dir, source=str(path))
    except BaseException:
        if root is not None and not existed and root.is_dir() and not any(root.iterdir()):
            root.rmdir()  # bad input leaves nothing behind
        raise
    return store, stats


__all__ = ["build_corpus_from_fever_wiki", "detokenize_brackets", "page_url", "sentence_doc_id"]
