"""WikiExtractor dumps → the paragraph store: in-process (:func:`build_corpus_from_wikipedia`) or
on an engine (:func:`build_wikipedia_corpus`).

On an engine, split a WikiExtractor dump's files into paragraphs.

Each dump file (``AA/wiki_00`` ...) is one work item; workers parse and split it and
return its paragraphs; the driver writes them, file by file in sorted order, through
:func:`~averitec_tools.baselines.r2vc.corpus.store.build_corpus` — the same passages in the same
order as :func:`build_corpus_from_wikipedia`, so the
store (and its fingerprint) is identical. The driver holds one file's paragraphs at a
time (plus the set of ids ``build_corpus`` checks for duplicates).

Example:
    >>> import json, os, tempfile
    >>> tmp = tempfile.mkdtemp()
    >>> with open(os.path.join(tmp, "wiki_00"), "w") as fh:
    ...     _ = fh.write(json.dumps({"id": "1", "title": "Cat", "text": "Cat\\n\\nCats purr.\\nThey nap."}) + "\\n")
    >>> len(build_wikipedia_corpus(path=tmp, out_dir=os.path.join(tmp, "store")))
    2
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore, build_corpus
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.jsonio import iter_jsonl


@dataclass(frozen=True)
class WikipediaFileWorker:
    """Picklable worker factory: dump files → their paragraphs."""

    min_chars: int = 1

    def __call__(self) -> Callable[[list[Any]], list[list[Any]]]:
        return lambda files: [list(iter_wikipedia_paragraphs(path=f, min_chars=self.min_chars)) for f in files]


def build_wikipedia_corpus(
    *,
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    engine: Any = None,
    min_chars: int = 1,
) -> Any:
    """Build a paragraph store from a WikiExtractor dump (file or directory) on ``engine``."""
    from averitec_tools.engines import get_engine

    engine = engine or get_engine("local")
    files = [str(f) for f in _dump_files(path)]
    per_file: Iterator[list[Any]] = engine.map_batches(files, worker=WikipediaFileWorker(min_chars=min_chars),
                                                       batch_size=1)
    root = Path(out_dir)
    existed = root.exists()
    try:
        return build_corpus(passages=chain.from_iterable(per_file), out_dir=out_dir, source=str(Path(path)))
    except BaseException:
        if not existed and root.is_dir() and not any(root.iterdir()):
            root.rmdir()  # bad input leaves nothing behind
        raise


_PARAGRAPH_SPLIT = re.compile(r"\n\s*\n|\n")


def split_paragraphs(text: str, *, min_chars: int = 1) -> list[str]:
    """Split an article body into paragraphs (on newlines), dropping short/blank ones.

    Example:
        >>> split_paragraphs("Intro line.\\n\\nSecond para.\\n   \\nThird.")
        ['Intro line.', 'Second para.', 'Third.']
    """
    parts = (p.strip() for p in _PARAGRAPH_SPLIT.split(text))
    return [p for p in parts if len(p) >= min_chars]


def _dump_files(path: str | os.PathLike[str]) -> list[Path]:
    """``path`` itself, or every non-hidden file under it (WikiExtractor writes AA/wiki_00 ...)."""
    root = Path(path)
    if not root.is_dir():
        return [root]
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise UserError(f"{root}: directory holds no dump files")
    return files


def iter_wikipedia_paragraphs(
    *, path: str | os.PathLike[str], min_chars: int = 1, skip_title_paragraph: bool = True
) -> Iterator[Passage]:
    """Split a WikiExtractor-style JSONL dump (``{"id","title","url","text"}`` per article)
    into paragraphs with ids ``"<article id>_<paragraph number>"``.

    Args:
        path: The dump (one article per line), or a directory of such files (WikiExtractor
            ``--json`` output: ``AA/wiki_00``, ``AA/wiki_01``, ...), read in sorted order.
        min_chars: Drop paragraphs shorter than this.
        skip_title_paragraph: WikiExtractor repeats the title as the first line; drop it.

    Raises:
        UserError: A line that is not an article object (names file and line).
    """
    for item in (loc for file in _dump_files(path) for loc in iter_jsonl(file)):
        art = item.value
        if not isinstance(art, dict) or "text" not in art or ("id" not in art and "title" not in art):
            raise UserError(f"{item.where}: expected a Wikipedia article object with id/title/text")
        if not isinstance(art["text"], str):
            raise UserError(f"{item.where}: article 'text' must be a string")
        title = str(art.get("title") or "")
        art_id = str(art.get("id") or title)
        url = str(art.get("url") or "")
        paragraphs = split_paragraphs(art["text"], min_chars=min_chars)
        if skip_title_paragraph and paragraphs and paragraphs[0] == title:
            paragraphs = paragraphs[1:]
        for k, para in enumerate(paragraphs):
            yield Passage(doc_id=f"{art_id}_{k}", title=title, url=url, text=para)


def build_corpus_from_wikipedia(
    *,
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    min_chars: int = 1,
) -> ParagraphStore:
    """Build a paragraph store from a WikiExtractor-style JSONL article dump."""
    return build_corpus(
        passages=iter_wikipedia_paragraphs(path=path, min_chars=min_chars), out_dir=out_dir, source=str(path)
    )


__all__ = ["build_wikipedia_corpus"]
