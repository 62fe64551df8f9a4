"""WordNet synonym sets exactly as NLTK METEOR sees them, without NLTK's slow reader start-up.

NLTK's METEOR matches a hypothesis word ``w`` to a reference word ``r`` when ``r`` is in

    {lemma.name() for s in wordnet.synsets(w) for lemma in s.lemmas() if "_" not in lemma.name()} | {w}

``WordNetCorpusReader`` builds a full lemma index (and, in NLTK 3.10, a sense map) when it
starts, which costs seconds. This reader keeps the raw index lines, parses only the lines
it is asked about, and reads a synset's lemma names by seeking in ``data.<pos>`` -- the
same files, the same morphology (NLTK 3.9.1's one-step ``_morphy`` with the exception
lists) and therefore the same sets; ``tests/test_meteor.py`` checks this against NLTK's
reader on every word of the shared AVeriTeC files.
"""

from __future__ import annotations

import hashlib
import re
from functools import cached_property
from typing import Any

_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
#: NLTK's ``POS_LIST``: the order ``wordnet.synsets`` visits parts of speech.
_POS_LIST = ("n", "v", "a", "r")
_SUBSTITUTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"),
          ("ches", "ch"), ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\(.*\))?$")
_VERSION = re.compile(r"WordNet (\d+(?:\.\d+)?) Copyright")


class WordNetSynonyms:
    """Lazy WordNet reader answering "which single-word lemma names share a synset with w".

    Args:
        pointer: An ``nltk.data`` path pointer to a ``corpora/wordnet`` folder or zip
            member (see :func:`averitec_tools.resources.find_resource`).

    Example:
        >>> from averitec_tools.resources import find_resource
        >>> wn = WordNetSynonyms(find_resource("wordnet", allow_download=False))
        >>> sorted(wn.synonyms("dogs"))[:3]
        ['andiron', 'blackguard', 'bounder']
    """

    def __init__(self, pointer: Any) -> None:
        self._pointer = pointer
        self._index: dict[str, dict[str, str]] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        self._data: dict[str, bytes] = {}
        self._names_cache: dict[tuple[str, int], tuple[str, ...]] = {}
        self._syn_cache: dict[str, frozenset[str]] = {}
        self._digest = hashlib.sha256()
        self._loaded = False

    def _read(self, name: str) -> bytes:
        with self._pointer.join(name).open() as fh:
            data = fh.read()
        blob = data if isinstance(data, bytes) else data.encode("utf-8")
        self._digest.update(name.encode() + b"\0" + blob)
        return blob

    def load(self) -> None:
        """Read the WordNet files now (otherwise done on first use)."""
        self._load()

    def _load(self) -> None:
        if self._loaded:
            return
        for pos, suffix in _FILES.items():
            lines: dict[str, str] = {}
            for line in self._read(f"index.{suffix}").decode("utf-8").split("\n"):
                if not line or line.startswith(" "):
                    continue
                lemma, _, _rest = line.partition(" ")
                lines[lemma] = line
            self._index[pos] = lines
            exc: dict[str, list[str]] = {}
            for line in self._read(f"{suffix}.exc").decode("utf-8").splitlines():
                terms = line.split()
                if terms:
                    exc[terms[0]] = terms[1:]
            self._exceptions[pos] = exc
        for pos, suffix in _FILES.items():
            self._data[pos] = self._read(f"data.{suffix}")
        self._loaded = True

    @cached_property
    def version(self) -> str:
        """WordNet version from the licence header (``"3.0"``), or ``"unknown"``."""
        self._load()
        head = self._data["n"][:4096].decode("utf-8", "replace")
        match = _VERSION.search(head)
        return match.group(1) if match else "unknown"

    @cached_property
    def checksum(self) -> str:
        """First 12 hex digits of the SHA-256 of every WordNet file this reader uses."""
        self._load()
        return self._digest.hexdigest()[:12]

    def _offsets(self, form: str, pos: str) -> list[int]:
        line = self._index[pos].get(form)
        if line is None:
            return []
        tokens = line.split()
        n_synsets = int(tokens[2])
        n_pointers = int(tokens[3])
        start = 4 + n_pointers + 2
        return [int(t) for t in tokens[start : start + n_synsets]]

    def _morphy(self, form: str, pos: str) -> list[str]:
        # NLTK 3.9.1: exceptions replace the rules; one round of rules; keep known forms.
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[: -len(old)] + new for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)]
        index = self._index[pos]
        result: list[str] = []
        for candidate in [form, *forms]:
            if candidate in index and candidate not in result:
                result.append(candidate)
        return result

    def _lemma_names(self, pos: str, offset: int) -> tuple[str, ...]:
        key = (pos, offset)
        cached = self._names_cache.get(key)
        if cached is not None:
            return cached
        data = self._data[pos]
        end = data.find(b"\n", offset)
        line = data[offset : end if end >= 0 else len(data)].decode("utf-8")
        if not line.startswith(f"{offset:08d}"):
            names: tuple[str, ...] = ()  # NLTK warns and skips a bad offset
        else:
            tokens = line.split("|", 1)[0].split()
            n_lemmas = int(tokens[3], 16)
            raw = tokens[4 : 4 + 2 * n_lemmas : 2]
            names = tuple(_SYNTACTIC_MARKER.match(name).group(1) for name in raw)  # type: ignore[union-attr]
        self._names_cache[key] = names
        return names

    def clear_cache(self) -> None:
        """Forget the synonym sets computed so far (the files stay loaded)."""
        self._syn_cache.clear()

    def synonyms(self, word: str) -> frozenset[str]:
        """The set NLTK METEOR compares reference words against for hypothesis word ``word``.

        Single-word lemma names of every synset of ``word`` (any part of speech), plus
        ``word`` itself.
        """
        cached = self._syn_cache.get(word)
        if cached is not None:
            return cached
        self._load()
        lemma = word.lower()
        names = {word}
        for pos in _POS_LIST:
            for form in self._morphy(lemma, pos):
                for offset in self._offsets(form, pos):
                    names.update(n for n in self._lemma_names(pos, offset) if "_" not in n)
        result = frozenset(names)
        self._syn_cache[word] = result
        return result


__all__ = ["WordNetSynonyms"]
