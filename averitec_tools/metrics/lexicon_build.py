"""Build the exact lexical tables of :mod:`averitec_tools.metrics.lexicon` with NLTK 3.9.1 itself.

Run under a real NLTK 3.9.1 (``benchmarks/build_lexicon.py`` refuses any other version):
the stems are ``PorterStemmer().stem(word)`` and the synonym sets come from
``nltk.corpus.wordnet.synsets`` -- the reference behaviour, not a reproduction of it.

The synonym keys are enumerated from NLTK's own WordNet maps (see the lexicon module for
why that enumeration is complete); the stem vocabulary is given by the caller.

Example:
    >>> bands = fixed_width([b"cat", b"kitten", b"a"], widths=(4,))
    >>> [a.dtype.str for a in bands], [a.tolist() for a in bands]
    (['|S4', '|S6'], [[b'a', b'cat'], [b'kitten']])
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.metrics.lexicon import stem_is_identity

#: Byte widths of the key arrays (a word goes to the narrowest that holds it; the last,
#: as wide as the longest key, holds the rest): less padding than one width.
WIDTHS = (8, 12, 16, 24)
#: Stem-table words longer than this many bytes are left to the stemmer.
LONGEST_WORD = 48
#: NLTK's ``POS_LIST``: the parts of speech ``wordnet.synsets`` visits.
POS_LIST = ("n", "v", "a", "r")
_CAPITAL = re.compile(r"[A-Z]")


def fixed_width(keys: list[bytes], *, widths: tuple[int, ...] = WIDTHS) -> list[np.ndarray]:
    """Sorted keys as fixed-width byte arrays, one per width band (see :data:`WIDTHS`)."""
    bands = []
    low = 1
    for width in widths:
        bands.append(np.array(sorted(k for k in keys if low <= len(k) <= width), dtype=f"S{width}"))
        low = width + 1
    rest = sorted(k for k in keys if len(k) >= low)
    bands.append(np.array(rest, dtype=f"S{max((len(k) for k in rest), default=low)}"))
    return bands


def _bands(prefix: str, bands: list[np.ndarray]) -> dict[str, np.ndarray]:
    return {f"{prefix}_{i}": band for i, band in enumerate(bands)}


def _in_order(bands: list[np.ndarray]) -> list[bytes]:
    return [bytes(k) for band in bands for k in band.tolist()]


def synonym_keys(wordnet: Any) -> Iterator[str]:
    """Every string from which ``wordnet.synsets`` reaches a synset, per NLTK 3.9.1's ``_morphy``.

    ``_morphy(form, pos)`` keeps those of ``[form] + exceptions[form]`` (when ``form`` is
    an exception-list key) or ``[form] + substitutions(form)`` that are index lemmas of
    ``pos``; so a form reaches a synset only if it is an index lemma, an exception key, or
    one substitution ``old -> new`` away from an index lemma ending in ``new``.
    """
    index: dict[str, dict[str, Any]] = wordnet._lemma_pos_offset_map
    for pos in POS_LIST:
        exceptions = wordnet._exception_map[pos]
        lemmas = [lemma for lemma, by_pos in index.items() if pos in by_pos]
        yield from lemmas
        yield from exceptions
        for lemma in lemmas:
            for old, new in wordnet.MORPHOLOGICAL_SUBSTITUTIONS[pos]:
                if lemma.endswith(new):
                    form = lemma[: len(lemma) - len(new)] + old
                    if form not in exceptions:
                        yield form


def relevant_synonyms(wordnet: Any, key: str) -> list[str]:
    """What METEOR's WordNet stage can match for stemmed word ``key``, exactly as NLTK 3.9.1 reads it:
    the lemma names of ``wordnet.synsets(key)`` without ``_`` (METEOR drops those), without
    ASCII capitals (they never equal a stem of a lower-cased word) and other than ``key``."""
    names = {lemma.name() for synset in wordnet.synsets(key) for lemma in synset.lemmas()}
    return sorted(n for n in names if "_" not in n and not _CAPITAL.search(n) and n != key)


def stem_arrays(*, vocabulary: Iterable[str], stemmer: Any) -> dict[str, np.ndarray]:
    """The stem table: each vocabulary word Porter does not leave alone by rule, and its stem, stored
    as the number of final characters the stemmer cuts and what it adds (at most 4 bytes)."""
    words = sorted({w for w in vocabulary if w and w == w.lower() and "\0" not in w and not stem_is_identity(w)
                    and len(w.encode("utf-8", "surrogatepass")) <= LONGEST_WORD})
    encoded = {w.encode("utf-8", "surrogatepass"): w for w in words}
    bands = fixed_width(list(encoded))
    cut, add = [], []
    for key in _in_order(bands):
        word = encoded[key]
        stem = stemmer.stem(word)
        same = next((i for i, (a, b) in enumerate(zip(word, stem, strict=False)) if a != b), min(len(word), len(stem)))
        cut.append(len(word) - same)
        add.append(stem[same:].encode("utf-8", "surrogatepass"))
    if max(map(len, add), default=0) > 4 or max(cut, default=0) > 255:
        raise ValueError("a stem differs from its word by more than the table can hold")
    return {**_bands("stem_words", bands), "stem_cut": np.array(cut, dtype=np.uint8), "stem_add": np.array(add, dtype=f"S{max(1, *map(len, add))}")}


def synonym_arrays(*, wordnet: Any, progress: Any = None) -> dict[str, np.ndarray]:
    """The synonym table: keys (every reachable form with a usable name), how many names each has,
    their name ids (key by key; a name's id is its position among the name bands), and the names."""
    table: dict[bytes, list[str]] = {}
    for key in dict.fromkeys(synonym_keys(wordnet)):
        if key != key.lower():
            raise ValueError(f"WordNet key {key!r} is not lower-case")
        names = relevant_synonyms(wordnet, key)
        if names:
            table[key.encode()] = names
        if progress is not None:
            progress.update(1)
    name_bands = fixed_width(sorted({n.encode() for v in table.values() for n in v}))
    name_id = {n.decode(): i for i, n in enumerate(_in_order(name_bands))}
    bands = fixed_width(list(table))
    ids: list[int] = []
    lengths = []
    for word in _in_order(bands):
        ids += sorted(name_id[n] for n in table[word])
        lengths.append(len(table[word]))
    if max(lengths) > 255:
        raise ValueError("a word with more than 255 synonym names")
    return {**_bands("syn_keys", bands), "syn_lengths": np.array(lengths, dtype=np.uint8),
            "syn_ids": np.array(ids, dtype=np.uint32), **_bands("names", name_bands)}


def content_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 of the tables' content (every array's name, type, shape and bytes, by name)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        digest.update(a.tobytes())
    return digest.hexdigest()


def write_lexicon(path: str | Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> str:
    """Write the tables as a folder of ``.npy`` files (uncompressed: they are memory-mapped) and
    ``meta.json`` with the content digest; returns the digest."""
    from averitec_tools.jsonio import atomic_directory

    digest = content_digest(arrays)
    bands = {prefix: sum(1 for name in arrays if name.rpartition("_")[0] == prefix)
             for prefix in ("stem_words", "syn_keys", "names")}
    with atomic_directory(path) as folder:
        for name, array in arrays.items():
            np.save(folder / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        (folder / "meta.json").write_text(json.dumps({**meta, "bands": bands, "digest": digest}, indent=1, sort_keys=True) + "\n")
    return digest


__all__ = ["LONGEST_WORD", "POS_LIST", "WIDTHS", "content_digest", "fixed_width", "relevant_synonyms", "stem_arrays",
           "synonym_arrays", "synonym_keys", "write_lexicon"]
