"""A disk cache of prepared (tokenised, lower-cased, stemmed) gold strings, keyed by the gold file.

Tokenising and stemming the gold evidence is a large part of a cold ``averitec score``;
the gold file rarely changes. The cache file's name holds the SHA-256 of the gold file's
bytes, the tokenizer behaviour, the NLTK version (Porter stems come from NLTK) and the
package version, so a changed file or setup never reads stale data. Only the ``averitec``
CLI uses it (:func:`averitec_tools.cache.cache_root`: ``$AVERITEC_CACHE_DIR``, else
``$XDG_CACHE_HOME/averitec-tools``, default ``~/.cache/averitec-tools``;
``AVERITEC_NO_CACHE=1`` turns it off); an unreadable or unwritable cache is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.hashing import file_sha256, sha256_hex
from averitec_tools.metrics.tokenize import TOKENIZER_NAME


def lexicon_digest() -> str:
    """The shipped lexical tables' digest (stems come from them)."""
    from averitec_tools.metrics.lexicon import default_lexicon

    return default_lexicon().digest


def _nltk_version() -> str:
    """The installed NLTK's version, read from its ``VERSION`` file as ``nltk/__init__.py`` reads it
    (neither NLTK nor ``importlib.metadata`` is imported: that took a tenth of a cold start)."""
    import importlib.util

    spec = importlib.util.find_spec("nltk")
    try:
        return (Path(spec.origin).parent / "VERSION").read_text(encoding="utf-8").strip()  # type: ignore[arg-type, union-attr]
    except (OSError, TypeError, AttributeError):  # pragma: no cover - NLTK is a dependency
        return "unknown"


#: Each entry is ``[text, words, stems]``, words and stems joined by spaces (tokens hold none):
#: three strings encode and decode several times faster than two lists of tokens.
_FORMAT = "entries-v2"


def prepared_cache_file(*, references: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None) -> Path | None:
    """Where the prepared strings of gold file ``references`` are cached (``None``: no cache).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "gold.json").write_text("[]")
        >>> prepared_cache_file(references=d / "gold.json", cache_dir=d / "c").name[:16]
        '4f53cda18c2baa0c'
        >>> prepared_cache_file(references=d / "gold.json", cache_dir=None) is None
        True
    """
    if cache_dir is None:
        return None
    try:
        digest = file_sha256(references)
    except OSError:
        return None
    setup = sha256_hex(f"{TOKENIZER_NAME}|nltk-{_nltk_version()}|{__version__}|{lexicon_digest()}|{_FORMAT}", length=12)
    return Path(cache_dir) / "prepared" / f"{digest}-{setup}.json"


def load_prepared(engine: Any, path: Path | None) -> int:
    """Register cached analyses (and the word stems in them) with ``engine``; returns how many strings were loaded."""
    if path is None or not path.is_file():
        return 0
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    try:
        texts, words, stems = zip(*entries, strict=True) if entries else ((), (), ())
        engine.add_analysed_many(texts, [w.split(" ") if w else [] for w in words],
                                 [s.split(" ") if s else [] for s in stems])  # the words' stems are learnt too
    except (TypeError, ValueError, AttributeError):  # a damaged file: prepare from scratch
        return 0
    return len(entries)


def save_prepared(engine: Any, path: Path | None, texts: Iterable[str]) -> None:
    """Write the analyses of ``texts`` (already prepared by ``engine``) to ``path``, atomically."""
    if path is None or path.exists():
        return
    from averitec_tools.jsonio import atomic_writer

    entries = []
    for text in dict.fromkeys(texts):
        prepared = engine._prepared.get(text)
        if prepared is not None:
            entries.append([text, " ".join(prepared.words), " ".join(prepared.stems)])
    try:
        with atomic_writer(path) as fh:
            # dumps: the C encoder (dump streams in Python); ASCII output (non-ASCII characters
            # escaped) is written without a UTF-8 encoding pass and read back faster, and lists of
            # strings need no cycle check: half the time of ensure_ascii=False with the check
            fh.write(json.dumps(entries, ensure_ascii=True, check_circular=False))
    except OSError:
        return


__all__ = ["load_prepared", "prepared_cache_file", "save_prepared"]
