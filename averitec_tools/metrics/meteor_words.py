"""Words to stems to interned ids: the part of :class:`~averitec_tools.metrics.meteor.MeteorEngine`
that looks words up in the exact lexical tables and gives stems integer ids.

A word's stem comes from the tables (:mod:`~averitec_tools.metrics.lexicon`), or from NLTK's
Porter stemmer for a word outside them; a stem's id is its synonym-name id in the tables,
or a number counted on from there. With the C accelerator a word also gets a packed code
(its stem id and a word id) and a batch of strings is read in one pass over one table
(:func:`~averitec_tools.metrics.text_accel.analyse_many`).

Example:
    >>> from averitec_tools.metrics.meteor import MeteorEngine
    >>> MeteorEngine(allow_download=False).stem("running")
    'run'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import chain
from typing import Any

from averitec_tools.metrics import text_accel
from averitec_tools.metrics.lexicon import Lexicon, stem_is_identity


class WordInterning:
    """Stems and stem ids of words, remembered (the engine sets the attributes below)."""

    lexicon: Lexicon
    _accel: Any
    _stems: dict[str, str]
    _sid: dict[str, int]
    _next_id: int | None
    _present: set[int]
    _epoch: int
    _raw_synonyms: dict[int, tuple[int, ...]]

    @cached_property
    def _stemmer(self) -> Any:
        from averitec_tools.metrics._lean import import_lean
        from averitec_tools.metrics.porter import linear_porter

        # NLTK's rules, its consonant test in one pass (NLTK <= 3.9.1 recurses: see porter.py);
        # imported without NLTK's package __init__, and only for a word outside the tables
        return linear_porter(import_lean("nltk.stem.porter").PorterStemmer)()

    def _learn_words(self, words: Iterable[str]) -> None:
        stems = self._stems
        new = set(words).difference(stems)
        if not new:
            return
        stems.update(zip(new, new, strict=True))  # what the stemmer leaves alone by rule
        todo = [w for w in new if not stem_is_identity(w)]
        for w, stem in zip(todo, self.lexicon.stems(todo), strict=True):
            stems[w] = stem if stem is not None else self._stemmer.stem(w)

    def _learn_stems(self, stems: Iterable[str]) -> None:
        todo = list(set(stems).difference(self._sid))
        if not todo:
            return
        if self._next_id is None:
            self._next_id = self.lexicon.n_names
        sid, grew = self._sid, False
        for stem, name in zip(todo, self.lexicon.name_ids(todo), strict=True):
            if name >= 0:
                sid[stem] = name
                self._present.add(name)
                grew = True
            else:
                sid[stem] = self._next_id
                self._next_id += 1
        ids = [sid[s] for s in todo]
        raw = self.lexicon.synonym_ids(todo)
        self._raw_synonyms.update(zip(ids, raw, strict=True))
        if self._accel is not None:
            self._accel.ranges.add_many(ids, raw)
        if grew:
            self._epoch += 1

    def stem(self, word: str) -> str:
        """Porter stem (NLTK extensions mode) of a lower-cased word, cached."""
        if word not in self._stems:
            self._learn_words([word])
        return self._stems[word]

    def _intern_batch(self, words: Sequence[Sequence[str]], stems: Sequence[Sequence[str]] | None
                      ) -> tuple[Sequence[Sequence[str]], list[list[int]], Sequence[bytes | None]]:
        """Each string's stems (``stems`` ``None``: stemmed here), stem ids and packed codes (``None``
        without the accelerator), every new word and stem learnt on the way."""
        packed: Sequence[bytes | None] = [None] * len(words)
        if stems is None and self._accel is not None:  # one pass over the words (in C where built)
            new = text_accel.missing_many(words, self._accel.info)
            if new:
                self._learn_words(new)
                self._learn_stems({self._stems[w] for w in new})
                self._accel.add_words(new, self._stems, self._sid)
            stems, sids, packed = text_accel.analyse_many(words, self._accel.info)
        else:
            if stems is None:
                self._learn_words(text_accel.missing_many(words, self._stems))
                stems = text_accel.lookup_many(words, self._stems)
            else:
                self._stems.update(zip(chain.from_iterable(words), chain.from_iterable(stems), strict=True))
            self._learn_stems(text_accel.missing_many(stems, self._sid))
            sids = text_accel.lookup_many(stems, self._sid)
            if self._accel is not None:
                self._accel.add_words(text_accel.missing_many(words, self._accel.codes), self._stems, self._sid)
                packed = text_accel.join_many(words, self._accel.codes)
        return stems, sids, packed


__all__ = ["WordInterning"]
