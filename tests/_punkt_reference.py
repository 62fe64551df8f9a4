"""NLTK's own Punkt (the installed NLTK's algorithm, unchanged since 3.8.1) with NLTK 3.9.1's
language variables and token regular expressions: the reference for
:mod:`averitec_tools.metrics.punkt`, which writes Punkt's decisions out itself."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from averitec_tools.metrics.punkt import (
    BOUNDARY_REALIGNMENT,
    PERIOD_CONTEXT,
    SENT_END_CHARS,
    WORD_TOKENIZER,
)


@cache
def nltk_punkt_391() -> Any:
    """An NLTK ``PunktSentenceTokenizer`` with 3.9.1's language variables, token class and English parameters."""
    from nltk.tokenize import punkt

    from averitec_tools.resources import find_resource

    class Punkt391LanguageVars(punkt.PunktLanguageVars):  # type: ignore[misc]
        __slots__ = ()
        re_boundary_realignment = BOUNDARY_REALIGNMENT
        internal_punctuation = ",:;"

        def word_tokenize(self, s: str) -> list[str]:
            return WORD_TOKENIZER.findall(s)

        def period_context_re(self) -> re.Pattern[str]:
            return PERIOD_CONTEXT

        def _word_tokenizer_re(self) -> re.Pattern[str]:
            return WORD_TOKENIZER

    Punkt391LanguageVars.sent_end_chars = SENT_END_CHARS
    non_punct = re.compile(r"[^\W\d]", re.UNICODE)

    class Punkt391Token(punkt.PunktToken):  # type: ignore[misc]
        __slots__ = ()
        _RE_ELLIPSIS = re.compile(r"\.\.+$")
        _RE_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
        _RE_INITIAL = re.compile(r"[^\W\d]\.$", re.UNICODE)
        _RE_ALPHA = re.compile(r"[^\W\d]+$", re.UNICODE)

        def _get_type(self, tok: str) -> str:
            return self._RE_NUMERIC.sub("##number##", tok.lower())

        @property
        def is_non_punct(self) -> Any:
            return non_punct.search(self.type)

    pointer = find_resource("punkt_tab", allow_download=False)
    params = punkt.PunktParameters()

    def lines(name: str) -> list[str]:
        with pointer.join(name).open(encoding="utf-8") as fh:
            return [line.rstrip("\n") for line in fh]

    params.collocations = {tuple(line.split("\t")) for line in lines("collocations.tab")}
    params.sent_starters = set(lines("sent_starters.txt"))
    params.abbrev_types = set(lines("abbrev_types.txt"))
    for line in lines("ortho_context.tab"):
        word, value = line.split("\t")
        params.ortho_context[word] = int(value)
    splitter = punkt.PunktSentenceTokenizer(lang_vars=Punkt391LanguageVars(), token_cls=Punkt391Token)
    splitter._params = params
    return splitter
