"""The optional C accelerator of tokenising and interning, and its pure-Python equivalents.

``averitec_tools.metrics._text_c`` is a second small C extension built at install when a C
compiler is there (``setup.py``, optional like ``_meteor_c``: without a compiler the package
installs as pure Python and gives the same tokens and scores). It offers:

* :func:`sentences_many` -- NLTK 3.9.1's Punkt sentences of many texts
  (:func:`~averitec_tools.metrics.punkt.one_sentence`, else
  :meth:`~averitec_tools.metrics.punkt.SentenceSplitter.sentences`): the candidate breaks,
  their contexts and the boundary realignment in C, a period's decision from the splitter's
  memo or, for a context not seen before, from Punkt's rules in Python;
* :func:`lookup_many`, :func:`join_many`, :func:`concat_many` and :func:`missing_many` --
  every token of many strings looked up in a table (word to stem, stem to id), its packed
  codes joined (what the alignment reads), a text's sentences' tokens chained, the keys not
  in a table yet; :func:`analyse_many`: each string's stems, stem ids and packed codes in one
  pass over its words.

Each falls back to the pure-Python code when the extension is absent or turned off
(``AVERITEC_PURE_PYTHON=1``, the switch :mod:`~averitec_tools.metrics.meteor_accel` reads).
``tests/test_tokenize.py`` checks the sentences of both paths against each other and NLTK
3.9.1 on every shared string and the adversarial set; ``tests/test_text_accel.py`` the rest.

Example:
    >>> lookup_many([["a", "b"], []], {"a": 1, "b": 2}), join_many([["a", "a"]], {"a": b"x"})
    ([[1, 2], []], [b'xx'])
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any, TypeVar

from averitec_tools.metrics.meteor_accel import PURE_PYTHON_ENV

#: What this module expects of the extension (its ``API`` constant).
API = 7
V = TypeVar("V")

native: Any
try:
    native = importlib.import_module("averitec_tools.metrics._text_c")
except ImportError:  # built without a C compiler: the pure-Python path
    native = None
if native is not None and getattr(native, "API", None) != API:
    native = None  # a stale build left in place: rebuild with pip install -e . or setup.py build_ext --inplace


def enabled() -> bool:
    """Whether the C extension is installed and not turned off by ``AVERITEC_PURE_PYTHON=1``."""
    return native is not None and os.environ.get(PURE_PYTHON_ENV, "").strip() in ("", "0")


def active() -> Any:
    """The extension module when :func:`enabled`, else ``None``."""
    return native if enabled() else None


def lookup_many(lists: Sequence[Sequence[str]], mapping: Mapping[str, V]) -> list[list[V]]:
    """``[[mapping[x] for x in xs] for xs in lists]`` (``KeyError`` on a missing key)."""
    c = active()
    if c is not None and isinstance(mapping, dict):
        return c.lookup_many(lists if isinstance(lists, list) else list(lists), mapping)  # type: ignore[no-any-return]
    get = mapping.__getitem__
    return [list(map(get, xs)) for xs in lists]


def join_many(lists: Sequence[Sequence[str]], codes: Mapping[str, bytes]) -> list[bytes]:
    """``[b"".join(codes[x] for x in xs) for xs in lists]``."""
    c = active()
    if c is not None and isinstance(codes, dict):
        return c.join_many(lists if isinstance(lists, list) else list(lists), codes)  # type: ignore[no-any-return]
    get = codes.__getitem__
    return [b"".join(map(get, xs)) for xs in lists]


def concat_many(lists: Sequence[Sequence[str]], mapping: Mapping[str, Sequence[V]]) -> list[list[V]]:
    """``[[y for x in xs for y in mapping[x]] for xs in lists]``."""
    c = active()
    if c is not None and isinstance(mapping, dict):
        return c.concat_many(lists if isinstance(lists, list) else list(lists), mapping)  # type: ignore[no-any-return]
    return [list(chain.from_iterable(map(mapping.__getitem__, xs))) for xs in lists]


def missing_many(lists: Sequence[Sequence[str]], mapping: Mapping[str, Any]) -> set[str]:
    """``{x for xs in lists for x in xs if x not in mapping}``."""
    c = active()
    if c is not None and isinstance(mapping, dict):
        return c.missing_many(lists if isinstance(lists, list) else list(lists), mapping)  # type: ignore[no-any-return]
    return set(chain.from_iterable(lists)).difference(mapping)


def analyse_many(lists: Sequence[Sequence[str]], info: Mapping[str, tuple[str, int, bytes]]
                 ) -> tuple[list[list[str]], list[list[int]], list[bytes]]:
    """Each list's stems, stem ids and joined codes, from ``info[word] = (stem, stem id, code)``."""
    c = active()
    if c is not None and isinstance(info, dict):
        return c.analyse_many(lists if isinstance(lists, list) else list(lists), info)  # type: ignore[no-any-return]
    rows = [[info[w] for w in ws] for ws in lists]
    return ([[e[0] for e in row] for row in rows], [[e[1] for e in row] for row in rows],
            [b"".join(e[2] for e in row) for row in rows])


def inert_many(chunks: list[str]) -> list[bool | None]:
    """Per chunk, :func:`~averitec_tools.metrics.treebank.is_inert` where it needs no regular
    expression (``None``: undecided, the caller asks ``is_inert``)."""
    c = active()
    return c.inert_many(chunks) if c is not None else [None] * len(chunks)  # type: ignore[no-any-return]


def sentences_many(texts: Sequence[str], *, memo: dict[str, bool], decide: Callable[[str], bool],
                   python: Callable[[str], list[str]]) -> list[list[str]]:
    """Punkt's sentences of each text: in C (a period's context looked up in ``memo``, else
    ``decide(context)``), or ``python(text)`` for each without the extension."""
    c = active()
    if c is not None:
        return c.sentences_many(texts if isinstance(texts, list) else list(texts), memo, decide)  # type: ignore[no-any-return]
    return [python(t) for t in texts]


__all__ = ["API", "active", "analyse_many", "concat_many", "enabled", "inert_many", "join_many", "lookup_many", "missing_many", "native", "sentences_many"]
