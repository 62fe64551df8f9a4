"""METEOR exactly as NLTK's ``single_meteor_score`` computes it (3.8.1/3.9.1), but fast.

The official AVeriTeC scorers call ``single_meteor_score(word_tokenize(reference),
word_tokenize(candidate))`` once per (prediction, gold) pair. :class:`MeteorEngine`
tokenises every distinct string once, stems every distinct word once, looks up WordNet
synonyms once per distinct stem, and then scores pairs with an equivalent matcher:

* exact and stem stages: NLTK scans hypothesis words from last to first and takes the
  last still-unmatched reference word that is equal; for each word this pairs the k-th
  last hypothesis occurrence with the k-th last reference occurrence, which we compute
  directly from per-string position lists;
* WordNet stage: NLTK looks synonyms up for the *stemmed* remaining hypothesis words and
  compares them with *stemmed* reference words (a quirk kept here); done sequentially,
  as in NLTK, because different words compete for the same reference word;
* the score formula uses NLTK's operations in NLTK's order, so results are bit-identical.

Example:
    >>> engine = MeteorEngine()  # doctest: +SKIP
    >>> round(engine.score(candidate="the cat sat", reference="a cat sat down"), 4)  # doctest: +SKIP
    0.4808
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from averitec_tools.metrics.base import MetricInfo, register_metric
from averitec_tools.metrics.tokenize import WordTokenizer

ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5


@dataclass(frozen=True)
class PreparedText:
    """A string tokenised, lower-cased and stemmed once, ready to be scored many times."""

    words: tuple[str, ...]
    stems: tuple[str, ...]
    #: word -> ascending positions
    word_positions: dict[str, tuple[int, ...]] = field(compare=False, repr=False)
    stem_set: frozenset[str] = field(compare=False, repr=False, default=frozenset())

    @classmethod
    def build(cls, words: Sequence[str], stems: Sequence[str]) -> PreparedText:
        positions: dict[str, list[int]] = {}
        for i, w in enumerate(words):
            positions.setdefault(w, []).append(i)
        return cls(tuple(words), tuple(stems), {w: tuple(p) for w, p in positions.items()}, frozenset(stems))


def _pair_from_end(
    hyp_groups: dict[str, list[int]], ref_groups: dict[str, list[int]], matches: list[tuple[int, int]]
) -> tuple[set[int], set[int]]:
    matched_h: set[int] = set()
    matched_r: set[int] = set()
    small, large, hyp_is_small = (
        (hyp_groups, ref_groups, True) if len(hyp_groups) <= len(ref_groups) else (ref_groups, hyp_groups, False)
    )
    for key, pos_small in small.items():
        pos_large = large.get(key)
        if pos_large is None:
            continue
        hp, rp = (pos_small, pos_large) if hyp_is_small else (pos_large, pos_small)
        k = min(len(hp), len(rp))
        for h, r in zip(hp[len(hp) - k :], rp[len(rp) - k :], strict=True):
            matches.append((h, r))
            matched_h.add(h)
            matched_r.add(r)
    return matched_h, matched_r


class MeteorEngine:
    """Reference-exact, cached METEOR (NLTK ``single_meteor_score`` defaults).

    Args:
        tokenizer: Word tokenizer (default: NLTK 3.9.1 ``word_tokenize`` behaviour).
        allow_download: Whether missing NLTK data may be downloaded (announced on stderr).
    """

    def __init__(self, *, tokenizer: WordTokenizer | None = None, allow_download: bool = True) -> None:
        self.allow_download = allow_download
        self.tokenizer = tokenizer or WordTokenizer(allow_download=allow_download)
        self._prepared: dict[str, PreparedText] = {}
        self._stems: dict[str, str] = {}
        self._synonym_cache: dict[str, frozenset[str]] = {}

    @cached_property
    def _stemmer(self) -> Any:
        from averitec_tools.metrics._lean import import_lean

        return import_lean("nltk.stem.porter").PorterStemmer()  # without NLTK's package __init__

    @cached_property
    def wordnet(self) -> Any:
        """The :class:`~averitec_tools.metrics.wordnet_synonyms.WordNetSynonyms` in use."""
        from averitec_tools.metrics.wordnet_synonyms import WordNetSynonyms
        from averitec_tools.resources import find_resource

        return WordNetSynonyms(find_resource("wordnet", allow_download=self.allow_download))

    def stem(self, word: str) -> str:
        """Porter stem (NLTK extensions mode) of a lower-cased word, cached."""
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stemmer.stem(word)
            self._stems[word] = stem
        return stem

    def prepare_tokens(self, tokens: Sequence[str]) -> PreparedText:
        """Prepare already-tokenised text (lower-casing and stemming it)."""
        words = [t.lower() for t in tokens]
        return PreparedText.build(words, self._stem_all(words))

    def _stem_all(self, words: Sequence[str]) -> list[str]:
        cache = self._stems
        out = []
        for w in words:
            stem = cache.get(w)
            if stem is None:
                stem = cache[w] = self._stemmer.stem(w)
            out.append(stem)
        return out

    def prepare(self, text: str) -> PreparedText:
        """Tokenise, lower-case and stem ``text`` (cached per distinct string)."""
        prepared = self._prepared.get(text)
        if prepared is None:
            prepared = self.prepare_tokens(self.tokenizer.tokenize(text))
            self._prepared[text] = prepared
        return prepared

    def analyse(self, text: str) -> tuple[list[str], list[str]]:
        """Lower-cased tokens and their stems (what a worker process sends back)."""
        words = [t.lower() for t in self.tokenizer.tokenize(text)]
        return words, self._stem_all(words)

    def add_analysed(self, text: str, words: Sequence[str], stems: Sequence[str]) -> None:
        """Register the result of :meth:`analyse` computed elsewhere (e.g. in a worker)."""
        if text not in self._prepared:
            self._prepared[text] = PreparedText.build(words, stems)

    def is_prepared(self, text: str) -> bool:
        return text in self._prepared

    def score_prepared(self, hyp: PreparedText, ref: PreparedText) -> float:
        """METEOR of hypothesis ``hyp`` against reference ``ref``."""
        hl, rl = len(hyp.words), len(ref.words)
        if hl == 0 or rl == 0:
            return 0.0
        matches: list[tuple[int, int]] = []
        hs, rs = hyp.stems, ref.stems
        if hyp.stem_set.isdisjoint(ref.stem_set):
            # equal words have equal stems: nothing for the exact and stem stages
            hyp_rest: list[int] = list(range(hl))
            ref_rest: list[int] = list(range(rl))
        else:
            # 1. exact matches
            matched_h, matched_r = _pair_from_end(
                hyp.word_positions, ref.word_positions, matches  # type: ignore[arg-type]
            )
            # 2. stem matches among the leftovers
            hyp_left = [i for i in range(hl) if i not in matched_h]
            ref_left = [j for j in range(rl) if j not in matched_r]
            hyp_groups: dict[str, list[int]] = {}
            for i in hyp_left:
                hyp_groups.setdefault(hs[i], []).append(i)
            ref_groups: dict[str, list[int]] = {}
            for j in ref_left:
                ref_groups.setdefault(rs[j], []).append(j)
            sh, sr = _pair_from_end(hyp_groups, ref_groups, matches)
            hyp_rest = [i for i in hyp_left if i not in sh]
            ref_rest = [j for j in ref_left if j not in sr]
        if hyp_rest and ref_rest:
            # 3. WordNet synonyms of stemmed hypothesis words vs stemmed reference words
            ref_stems = ref.stem_set
            cache = self._synonym_cache
            for i in reversed(hyp_rest):
                syns = cache.get(hs[i])
                if syns is None:
                    syns = cache[hs[i]] = self.wordnet.synonyms(hs[i])
                if syns.isdisjoint(ref_stems):
                    continue
                for k in range(len(ref_rest) - 1, -1, -1):
                    j = ref_rest[k]
                    if rs[j] in syns:
                        matches.append((i, j))
                        del ref_rest[k]
                        break
                if not ref_rest:
                    break
        m = len(matches)
        if m == 0:
            return 0.0
        matches.sort(key=lambda pair: pair[0])
        chunks = 1
        for a in range(m - 1):
            if not (matches[a + 1][0] == matches[a][0] + 1 and matches[a + 1][1] == matches[a][1] + 1):
                chunks += 1
        precision = float(m) / hl
        recall = float(m) / rl
        fmean = (precision * recall) / (ALPHA * precision + (1 - ALPHA) * recall)
        frag_frac = float(chunks) / m
        penalty = GAMMA * frag_frac**BETA
        return (1 - penalty) * fmean

    def score(self, *, candidate: str, reference: str) -> float:
        """The official ``pairwise_meteor(candidate, reference)``: tokenise both, METEOR."""
        return self.score_prepared(self.prepare(candidate), self.prepare(reference))

    def single_meteor_score(self, reference: Sequence[str], hypothesis: Sequence[str]) -> float:
        """Drop-in for ``nltk.translate.meteor_score.single_meteor_score`` (default params)."""
        if isinstance(reference, str) or isinstance(hypothesis, str):
            raise TypeError("single_meteor_score expects pre-tokenized input (lists of str)")
        return self.score_prepared(self.prepare_tokens(hypothesis), self.prepare_tokens(reference))


@dataclass(frozen=True)
class Meteor:
    """METEOR of one candidate string against one reference string (NLTK 3.9.1 exact).

    Example:
        >>> METEOR.info.name
        'meteor'
    """

    info: MetricInfo
    alpha: float = ALPHA
    beta: float = BETA
    gamma: float = GAMMA

    def __call__(self, *, candidate: str, reference: str, engine: MeteorEngine | None = None) -> float:
        return (engine or default_engine()).score(candidate=candidate, reference=reference)


_DEFAULT_ENGINE: MeteorEngine | None = None


def default_engine() -> MeteorEngine:
    """A process-wide engine (downloads allowed, announced on stderr)."""
    global _DEFAULT_ENGINE
    if _DEFAULT_ENGINE is None:
        _DEFAULT_ENGINE = MeteorEngine()
    return _DEFAULT_ENGINE


METEOR = register_metric(
    Meteor(
        info=MetricInfo(
            name="meteor",
            higher_is_better=True,
            description="sentence METEOR (exact, Porter stem, WordNet synonym stages) as NLTK 3.9.1 computes it",
            params={"alpha": ALPHA, "beta": BETA, "gamma": GAMMA, "tokenizer": "nltk-3.9.1-word_tokenize"},
            citation="Lavie & Agarwal (2007); NLTK single_meteor_score",
        )
    )
)

__all__ = ["METEOR", "Meteor", "MeteorEngine", "PreparedText", "default_engine"]
