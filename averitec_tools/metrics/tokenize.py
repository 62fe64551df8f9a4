"""NLTK 3.9.1's ``word_tokenize``, reproduced so scores do not depend on the installed NLTK, and fast.

The official AVeriTeC scorers call ``nltk.word_tokenize`` and were run with NLTK 3.8.1 /
3.9.1. NLTK 3.10 changed three things that move scores:

* the Treebank rule for a leading single quote (``'Destroying`` stays one token in 3.9.1,
  becomes ``'``, ``Destroying`` in 3.10);
* Unicode dashes (U+2012..U+2015) are split off as punctuation in 3.10;
* Punkt treats curly quotes and guillemets as closing punctuation in 3.10, which moves
  sentence boundaries (and with them which periods are split off).

:class:`WordTokenizer` pins the 3.9.1 behaviour: sentences from
:class:`~averitec_tools.metrics.punkt.SentenceSplitter` (3.9.1's Punkt, decisions
remembered per context), then each distinct sentence's Treebank tokens from
:class:`~averitec_tools.metrics.treebank.ChunkTokenizer` (3.9.1's rules, chunks
remembered). Pure Python on the standard ``re`` module; ``tests/test_tokenize.py`` checks
it token for token against NLTK 3.9.1 on every string of the shared AVeriTeC files
(train, dev, baseline predictions, EvalAI gold) and on a generated adversarial set.

Example:
    >>> WordTokenizer(allow_download=False).tokenize("The 'Destroying' claim. It was false.")
    ['The', "'Destroying", "'", 'claim', '.', 'It', 'was', 'false', '.']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from itertools import chain

from averitec_tools.metrics import text_accel
from averitec_tools.metrics.punkt import SentenceSplitter, one_sentence
from averitec_tools.metrics.treebank import ChunkTokenizer, lower_all, treebank_tokenize

#: Name recorded in score signatures.
TOKENIZER_NAME = "nltk-3.9.1-word_tokenize"


class WordTokenizer:
    """``nltk.word_tokenize`` with NLTK 3.9.1 behaviour, whatever NLTK is installed.

    Punkt parameters are resolved lazily through :mod:`averitec_tools.resources`.

    Args:
        allow_download: Whether a missing ``punkt_tab`` may be fetched (announced on stderr).
        max_sentences: Forget the remembered sentences once more than this many are held.
    """

    name = TOKENIZER_NAME

    def __init__(self, *, allow_download: bool = True, max_sentences: int = 200_000) -> None:
        self.allow_download = allow_download
        self.max_sentences = max_sentences
        self._sentence_tokens: dict[str, tuple[str, ...]] = {}
        self._sentence_lower: dict[str, tuple[str, ...]] = {}
        self.chunks = ChunkTokenizer()

    @cached_property
    def splitter(self) -> SentenceSplitter:
        """The Punkt sentence splitter (reads ``punkt_tab`` on first use)."""
        from averitec_tools.resources import find_resource

        return SentenceSplitter(find_resource("punkt_tab", allow_download=self.allow_download))

    def load(self) -> None:
        """Resolve and read ``punkt_tab`` now (otherwise on the first multi-sentence text)."""
        _ = self.splitter.params

    def sentences(self, text: str) -> list[str]:
        """Split ``text`` into sentences (Punkt, English, 3.9.1 language variables)."""
        single = one_sentence(text)  # no candidate break: no need for punkt_tab
        return single if single is not None else self.splitter.sentences(text)

    def _decide(self, context: str) -> bool:
        return self.splitter.decide(context)

    def sentences_many(self, texts: Sequence[str]) -> list[list[str]]:
        """:meth:`sentences` of each text (Punkt's scan in C where the extension is built)."""
        # the splitter's memo once it exists; before, an empty one (punkt_tab is read only for a period)
        memo = self.__dict__["splitter"]._breaks if "splitter" in self.__dict__ else {}
        return text_accel.sentences_many(texts, memo=memo, decide=self._decide, python=self.sentences)

    def clear_cache(self) -> None:
        """Forget the remembered sentences, chunks and Punkt decisions."""
        self._sentence_tokens.clear()
        self._sentence_lower.clear()
        self.chunks.clear()
        if "splitter" in self.__dict__:
            self.splitter._breaks.clear()

    def tokenize(self, text: str) -> list[str]:
        """Tokenize ``text`` exactly as ``nltk.word_tokenize`` under NLTK 3.9.1."""
        return self.tokenize_many([text])[0]

    def tokenize_many(self, texts: Iterable[str], *, lower: bool = False) -> list[list[str]]:
        """Tokenize several texts (same result as :meth:`tokenize` on each, faster together:
        the new sentences of all of them go through the Treebank rules at once); ``lower``:
        the tokens lower-cased (:func:`lower_all`; sentences assembled from lower-cased chunks)."""
        split = self.sentences_many(texts if isinstance(texts, list) else list(texts))
        known = self._sentence_lower if lower else self._sentence_tokens
        if len(known) > self.max_sentences:
            known.clear()
        new = [s for s in dict.fromkeys(chain.from_iterable(split)) if s not in known]
        if new:  # lower-cased ones assembled from lower-cased chunks (never a sentence's tokens lower-cased)
            known.update(zip(new, map(tuple, self.chunks.tokenize_many(new, lower=lower)), strict=True))
        return text_accel.concat_many(split, known)


__all__ = ["TOKENIZER_NAME", "WordTokenizer", "lower_all", "treebank_tokenize"]
