"""Corpus building on an engine: split a WikiExtractor dump's files into paragraphs.

Each dump file (``AA/wiki_00`` ...) is one work item; workers parse and split it and
return its paragraphs; the driver writes them, file by file in sorted order, through
:func:`~averitec_tools.baselines.r2vc.corpus.store.build_corpus` — the same passages in the same
order as :func:`~averitec_tools.baselines.r2vc.corpus.store.build_corpus_from_wikipedia`, so the
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class WikipediaFileWorker:
    """Picklable worker factory: dump files → their paragraphs."""

    min_chars: int = 1

    def __call__(self) -> Callable[[list[Any]], list[list[Any]]]:
        from averitec_tools.baselines.r2vc.corpus.store import iter_wikipedia_paragraphs

        return lambda files: [list(iter_wikipedia_paragraphs(path=f, min_chars=self.min_chars)) for f in files]


def build_wikipedia_corpus(
    *,
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    engine: Any = None,
    min_chars: int = 1,
) -> Any:
    """Build a paragraph store from a WikiExtractor dump (file or directory) on ``engine``."""
    from averitec_tools.baselines.r2vc.corpus.store import _dump_files, build_corpus
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


__all__ = ["WikipediaFileWorker", "build_wikipedia_corpus"]
