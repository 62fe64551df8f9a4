"""Exact lexical tables: the Porter stems and WordNet synonym sets METEOR needs, precomputed.

NLTK's METEOR stems every word with ``PorterStemmer`` and, for every stemmed hypothesis
word, reads the WordNet synonym set (the single-word lemma names of every synset of the
word, any part of speech, after NLTK 3.9.1's one-step ``_morphy``). Both are pure
functions of the word. ``lexicon.npz`` (package data) holds them, computed once with NLTK
3.9.1 itself by :mod:`averitec_tools.metrics.lexicon_build`
(``benchmarks/build_lexicon.py``), with the SHA-256 of its content in ``meta.json`` and
in every score signature (``lex:``). The tables are uncompressed ``.npy`` files opened as
memory maps: loading them takes a millisecond, a lookup reads only the pages it touches,
and a batch of words is looked up at once (``numpy.searchsorted``). The installed NLTK's
WordNet is never read on the scoring path.

How a word outside the tables is handled (exactness holds for every input):

* **Synonyms: no word is outside.** The keys are *every* string from which NLTK 3.9.1's
  ``wordnet.synsets`` reaches a synset with a usable lemma name: every index lemma, every
  exception-list form, and every form one morphological substitution turns into an index
  lemma (``_morphy`` applies exceptions or one round of substitutions, nothing else), for
  all four parts of speech. A string that is not a key therefore has no synonym but
  itself, exactly as NLTK computes. Lemma names holding ``_`` are left out (NLTK's METEOR
  drops them), and so are names holding an ASCII capital: METEOR compares them with
  Porter stems of lower-cased words, which never hold one.
* **Stems: a vocabulary, then NLTK's own stemmer.** The stem table covers the words of the
  AVeriTeC training split and WordNet's single-word lemmas (no dev or test string, so
  benchmarks on them measure the fallback honestly). A word it lacks is stemmed by the
  installed NLTK's ``PorterStemmer`` with its consonant test made linear
  (:mod:`averitec_tools.metrics.porter`; equal to 3.9.1's, tested), unless
  :func:`stem_is_identity` shows that Porter returns it unchanged.

Example:
    >>> lex = default_lexicon()
    >>> lex.stems(["running", "xqzzyrunning"])  # the second is not in the vocabulary
    ['run', None]
    >>> sorted(lex.synonym_names("dog"))[:3]
    ['andiron', 'blackguard', 'bounder']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

#: The tables shipped with the package (a folder of ``averitec_tools/data``).
TABLE_FOLDER = "lexicon"
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def stem_is_identity(word: str) -> bool:
    """Whether NLTK's Porter stemmer (NLTK extensions mode) returns the lower-cased ``word`` unchanged
    by rule, so that neither the table nor the stemmer is needed.

    Words of one or two characters are returned as they are, and every rule removes or
    replaces a suffix that ends in a lower-case ASCII letter, so a word ending in anything
    else (a digit, punctuation, ``é``) goes through untouched. Tested against NLTK 3.9.1's
    stemmer (``tests/test_lexicon.py``).

    Example:
        >>> stem_is_identity("is"), stem_is_identity("1990s"), stem_is_identity("2020"), stem_is_identity("café")
        (True, False, True, True)
    """
    return len(word) <= 2 or word[-1] not in _LOWER


def _encoded(queries: Sequence[str]) -> list[bytes]:
    return [q.encode("utf-8", "surrogatepass") for q in queries]


def sorted_find(arrays: Sequence[np.ndarray], queries: Sequence[bytes]) -> np.ndarray:
    """Index of each query among the keys of ``arrays`` (``-1``: absent), all queries at once.

    ``arrays`` are sorted fixed-width byte-string arrays of increasing width holding every
    key in that width band; indices count through them in order. A query is searched only
    in the array whose width band holds its length (a fixed-width array would otherwise
    truncate it), and never when it holds a NUL byte (fixed-width arrays strip them).

    Example:
        >>> short, long_ = np.array([b"a", b"cat"], dtype="S3"), np.array([b"kitten"], dtype="S6")
        >>> sorted_find([short, long_], [b"cat", b"kitten", b"dog", b"kitte"]).tolist()
        [1, 2, -1, -1]
    """
    n = len(queries)
    found = np.full(n, -1, dtype=np.int64)
    if not n:
        return found
    # ``0 in q``: a NUL byte, tested as an int (``b"\0" in q`` first tries the bytes as an int and
    # raises and clears a TypeError inside: ~1 % of a cold ``averitec score``)
    lengths = np.fromiter((len(q) if 0 not in q else 0 for q in queries), dtype=np.int64, count=n)
    low, base = 1, 0
    for keys in arrays:
        width = keys.dtype.itemsize
        chosen = np.flatnonzero((lengths >= low) & (lengths <= width))
        if chosen.size and keys.size:
            probe = np.array([queries[int(i)] for i in chosen], dtype=keys.dtype)
            at = np.minimum(np.searchsorted(keys, probe), keys.size - 1)
            hit = keys[at] == probe
            found[chosen[hit]] = at[hit] + base
        low, base = width + 1, base + keys.size
    return found


class Lexicon:
    """The exact lexical tables (see the module docstring), memory-mapped lazily from ``path``.

    Args:
        path: A tables folder written by :func:`~averitec_tools.metrics.lexicon_build.write_lexicon`
            (default: the one shipped with the package).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = path
        self._opened: dict[str, np.ndarray] = {}

    @cached_property
    def folder(self) -> Path:
        """Where the tables are."""
        if self._path is not None:
            return Path(self._path)
        # the package's data folder on disk (memory-mapped below, so never inside a zip): importlib.resources
        # would import zipfile and its readers at every start
        return Path(__file__).resolve().parent.parent / "data" / TABLE_FOLDER

    def _array(self, name: str) -> np.ndarray:
        array = self._opened.get(name)
        if array is None:
            array = self._opened[name] = np.load(self.folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        return array

    def _bands(self, prefix: str) -> list[np.ndarray]:
        bands = self.__dict__.get(f"_bands_{prefix}")
        if bands is None:
            bands = self.__dict__[f"_bands_{prefix}"] = [
                self._array(f"{prefix}_{i}") for i in range(int(self.meta["bands"][prefix]))]
        return bands  # type: ignore[no-any-return]

    @cached_property
    def meta(self) -> dict[str, Any]:
        """The header: NLTK version, WordNet version and file checksum, vocabulary, counts, digest."""
        meta: dict[str, Any] = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
        return meta

    @property
    def version(self) -> str:
        """WordNet version the synonym sets come from (``"3.0"``)."""
        return str(self.meta["wordnet_version"])

    @property
    def checksum(self) -> str:
        """First 12 hex digits of the SHA-256 of the WordNet files the tables were built from."""
        return str(self.meta["wordnet_checksum"])

    @property
    def digest(self) -> str:
        """First 12 hex digits of the SHA-256 of the tables' content (the signature's ``lex:``)."""
        return str(self.meta["digest"])[:12]

    def load(self) -> None:
        """Read the tables now (otherwise on first use)."""
        _ = self.meta

    @cached_property
    def _syn_offsets(self) -> np.ndarray:
        lengths = self._array("syn_lengths")
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return offsets

    @cached_property
    def n_names(self) -> int:
        """Number of distinct synonym names; a name's id is its position in the name bands."""
        return sum(int(band.size) for band in self._bands("names"))

    def stems(self, words: Sequence[str]) -> list[str | None]:
        """Porter stem of each lower-cased word in the table (``None``: not in the vocabulary)."""
        at = sorted_find(self._bands("stem_words"), _encoded(words))
        found = at[at >= 0]  # the rows of the words found, read in one step each (not an element at a time)
        cuts, adds = iter(self._array("stem_cut")[found].tolist()), iter(self._array("stem_add")[found].tolist())
        return [w[: len(w) - next(cuts)] + next(adds).decode("utf-8", "surrogatepass") if i >= 0 else None
                for w, i in zip(words, at.tolist(), strict=True)]

    def name_ids(self, stems: Sequence[str]) -> list[int]:
        """Each string's synonym-name id (``-1``: it is no synonym name of any word)."""
        return sorted_find(self._bands("names"), _encoded(stems)).tolist()  # type: ignore[no-any-return]

    def synonym_ids(self, stems: Sequence[str]) -> list[tuple[int, ...]]:
        """For each stemmed word, the ids of its WordNet synonym names other than itself (exact)."""
        keys = [s.lower() for s in stems]  # as wordnet.synsets does
        at = sorted_find(self._bands("syn_keys"), _encoded(keys))
        offsets, ids = self._syn_offsets, self._array("syn_ids")
        return [tuple(ids[offsets[i]:offsets[i + 1]].tolist()) if i >= 0 else () for i in at.tolist()]

    def synonym_names(self, stem: str) -> frozenset[str]:
        """The synonym names of one stemmed word other than itself, as strings (for people and tests)."""
        out = []
        for i in self.synonym_ids([stem])[0]:
            for band in self._bands("names"):
                if i < band.size:
                    out.append(band[i].decode("utf-8"))
                    break
                i -= band.size
        return frozenset(out)


@cache
def default_lexicon() -> Lexicon:
    """The process-wide :class:`Lexicon` of the shipped tables."""
    return Lexicon()


__all__ = ["TABLE_FOLDER", "Lexicon", "default_lexicon", "sorted_find", "stem_is_identity"]
