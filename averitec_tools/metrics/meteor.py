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
  as in NLTK, because different words compete for the same reference word, with the free
  reference words indexed by stem;
* chunks are counted from the matches without sorting them, and the score formula uses
  NLTK's operations in NLTK's order, so results are bit-identical.

Every step is linear in the two strings' lengths, however often a word repeats (NLTK's
own matcher is quadratic); ``benchmarks/bench_long_strings.py`` measures it.

Example:
    >>> engine = MeteorEngine()
    >>> round(engine.score(candidate="the cat sat", reference="a cat sat down"), 4)
    0.4808
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import PerItemScorer
from averitec_tools.metrics.meteor_matching import PreparedText, match_stem_class, match_synonyms
from averitec_tools.metrics.tokenize import WordTokenizer
from averitec_tools.records.rated import RatedItem

ALPHA = 0.9
BETA = 3.0
GAMMA = 0.5


class MeteorEngine:
    """Reference-exact, cached METEOR (NLTK ``single_meteor_score`` defaults).

    Args:
        tokenizer: Word tokenizer (default: NLTK 3.9.1 ``word_tokenize`` behaviour).
        allow_download: Whether missing NLTK data may be downloaded (announced on stderr).
        max_pairs: Remember up to this many (hypothesis, reference) pair scores (0: none).
            A long-lived scorer sets it: teams often resubmit the same evidence with other
            labels, and those pairs are then looked up instead of scored again. Keys are
            the prepared texts themselves (value equality), so a remembered score is
            exactly the score computed; the memo is cleared when full and by :meth:`trim`.
    """

    def __init__(self, *, tokenizer: WordTokenizer | None = None, allow_download: bool = True, max_pairs: int = 0) -> None:
        self.allow_download = allow_download
        self.max_pairs = max_pairs
        self._pair_scores: dict[tuple[PreparedText, PreparedText], float] = {}
        self.tokenizer = tokenizer or WordTokenizer(allow_download=allow_download)
        self._prepared: dict[str, PreparedText] = {}
        self._stems: dict[str, str] = {}
        self._other_synonyms: dict[str, frozenset[str]] = {}
        #: Warm helper processes (:class:`~averitec_tools.metrics.warm_pool.WarmPool`) that
        #: Hungarian METEOR spreads large task lists over; ``None``: this process alone.
        self.pool: Any | None = None
        #: :meth:`trim` forgets unpinned strings once more than this many are prepared
        #: (``None``: never; a long-lived scorer sets it so memory stays bounded).
        self.max_prepared: int | None = None
        #: ... or once more than this many distinct words are stemmed (one upload of a
        #: million distinct tokens is a few strings but hundreds of MB of word caches)
        self.max_words: int = 500_000
        self._pinned: frozenset[str] = frozenset()
        self._hyp_synonyms: dict[int, tuple[PreparedText, list[frozenset[str]]]] = {}

    @cached_property
    def _stemmer(self) -> Any:
        from averitec_tools.metrics._lean import import_lean
        from averitec_tools.metrics.porter import linear_porter

        # NLTK's rules, its consonant test in one pass (NLTK <= 3.9.1 recurses: see porter.py);
        # imported without NLTK's package __init__
        return linear_porter(import_lean("nltk.stem.porter").PorterStemmer)()

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

    def pin(self, texts: Iterable[str]) -> int:
        """Keep ``texts`` (e.g. a gold side) prepared through :meth:`trim`; returns how
        many strings are pinned in all."""
        self._pinned = self._pinned | frozenset(texts)
        return len(self._pinned)

    def trim(self) -> bool:
        """Forget strings prepared since :meth:`pin`, and the caches built from them, once
        more than ``max_prepared`` strings (or ``max_words`` stemmed words) are held;
        whether it did.

        Scores never depend on it: a forgotten string is simply prepared again (pinned
        strings keep their stems, so the word caches can go whole).
        """
        if self.max_prepared is None:
            return False
        too_many_words = len(self._stems) > self.max_words
        if len(self._prepared) <= self.max_prepared and not too_many_words:
            return False
        self._prepared = {text: p for text, p in self._prepared.items() if text in self._pinned}
        self._hyp_synonyms.clear()
        self._pair_scores.clear()  # its keys hold the forgotten strings
        self.tokenizer.clear_cache()
        if too_many_words:
            self._stems.clear()
            self._other_synonyms.clear()
            if "wordnet" in self.__dict__:  # loaded (a cached_property)
                self.wordnet.clear_cache()
        return True

    def score_prepared(self, hyp: PreparedText, ref: PreparedText) -> float:
        """METEOR of hypothesis ``hyp`` against reference ``ref`` (remembered if ``max_pairs``)."""
        if not self.max_pairs:
            return self._score_pair(hyp, ref)
        key = (hyp, ref)
        value = self._pair_scores.get(key)
        if value is None:
            value = self._score_pair(hyp, ref)
            if len(self._pair_scores) >= self.max_pairs:
                self._pair_scores.clear()
            self._pair_scores[key] = value
        return value

    def _score_pair(self, hyp: PreparedText, ref: PreparedText) -> float:
        hl, rl = len(hyp.words), len(ref.words)
        if hl == 0 or rl == 0:
            return 0.0
        matches: list[tuple[int, int]] = []
        shared = hyp.stem_set & ref.stem_set
        if shared:
            # 1.+2. exact and stem matches, one stem class at a time
            hsp, rsp = hyp.stem_positions, ref.stem_positions
            hmixed, rmixed = hyp.mixed_stems, ref.mixed_stems
            for stem in shared:
                hp, rp = hsp[stem], rsp[stem]
                if len(hp) == 1 and len(rp) == 1:
                    matches.append((hp[0], rp[0]))
                elif stem in hmixed or stem in rmixed:
                    match_stem_class(hp, rp, hyp.words, ref.words, matches)
                else:
                    # one word form per side: whether the exact or the stem stage pairs
                    # them, the last k occurrences pair up in order
                    k = min(len(hp), len(rp))
                    matches.extend(zip(hp[len(hp) - k :], rp[len(rp) - k :], strict=True))
        m = len(matches)
        if m < hl and m < rl:
            # 3. WordNet synonyms of stemmed hypothesis words vs stemmed reference words
            syn_sets = self._synonym_sets(hyp)
            if not syn_sets[-1].isdisjoint(ref.stem_set):  # [-1]: the union of all of them
                match_synonyms(syn_sets, ref.stems, matches)
                m = len(matches)
        if m == 0:
            return 0.0
        # NLTK sorts the matches by hypothesis position and counts the breaks between
        # neighbours; match (h, r) continues a chunk exactly when (h - 1, r - 1) is a match
        # (hypothesis positions are matched at most once): no sort needed
        reference_of = dict(matches)
        chunks = sum(1 for h, r in matches if reference_of.get(h - 1) != r - 1)
        precision = float(m) / hl
        recall = float(m) / rl
        fmean = (precision * recall) / (ALPHA * precision + (1 - ALPHA) * recall)
        frag_frac = float(chunks) / m
        penalty = GAMMA * frag_frac**BETA
        return (1 - penalty) * fmean

    def _synonym_sets(self, hyp: PreparedText) -> list[frozenset[str]]:
        """WordNet synonyms of each hypothesis stem other than the stem itself, plus their
        union as the last item.

        After the exact and stem stages, a stem left over on the hypothesis side has no
        leftover on the reference side, so a stem never matches itself in the WordNet
        stage and dropping it changes nothing. Kept per prepared text (a candidate is
        scored against every gold string of its claim); the union lets a pair with no
        possible synonym match skip the stage.
        """
        key = id(hyp)
        entry = self._hyp_synonyms.get(key)
        if entry is not None and entry[0] is hyp:
            return entry[1]
        cache = self._other_synonyms
        by_stem: dict[str, frozenset[str]] = {}
        for stem in hyp.stem_positions:  # each distinct stem once: a repeated word costs nothing more
            syns = cache.get(stem)
            if syns is None:
                syns = cache[stem] = self.wordnet.synonyms(stem) - {stem}
            by_stem[stem] = syns
        sets = [by_stem[stem] for stem in hyp.stems]
        sets.append(frozenset().union(*by_stem.values()))
        if len(self._hyp_synonyms) >= 50_000:
            self._hyp_synonyms.clear()
        self._hyp_synonyms[key] = (hyp, sets)
        return sets

    def score(self, *, candidate: str, reference: str) -> float:
        """The official ``pairwise_meteor(candidate, reference)``: tokenise both, METEOR."""
        return self.score_prepared(self.prepare(candidate), self.prepare(reference))

    def single_meteor_score(self, reference: Sequence[str], hypothesis: Sequence[str]) -> float:
        """Drop-in for ``nltk.translate.meteor_score.single_meteor_score`` (default params)."""
        if isinstance(reference, str) or isinstance(hypothesis, str):
            raise TypeError("single_meteor_score expects pre-tokenized input (lists of str)")
        return self.score_prepared(self.prepare_tokens(hypothesis), self.prepare_tokens(reference))


class MeteorEngineScorer(PerItemScorer):
    """An evidence scorer that scores with one METEOR engine per run (offline: no NLTK download)."""

    def setup(self) -> MeteorEngine:
        return MeteorEngine(allow_download=False)


@register_metric
class Meteor(
    MeteorEngineScorer, name="meteor", higher_is_better=True,
    description="sentence METEOR (exact, Porter stem, WordNet synonym stages) as NLTK 3.9.1 computes it, "
    "tokenised as nltk-3.9.1-word_tokenize",
    citation="Lavie & Agarwal (2007); NLTK single_meteor_score",
):
    """METEOR of one candidate string against one reference string (NLTK 3.9.1 exact).

    Its parameters are NLTK's defaults, the only ones the engine computes (another value is
    refused, never silently ignored). As an evidence scorer it scores an item's two whole
    evidence texts.

    Example:
        >>> METEOR.info.name, METEOR.params
        ('meteor', {'alpha': 0.9, 'beta': 3.0, 'gamma': 0.5})
    """

    alpha: float = ALPHA
    beta: float = BETA
    gamma: float = GAMMA
    choices: ClassVar[Mapping[str, tuple[Any, ...]]] = {"alpha": (ALPHA,), "beta": (BETA,), "gamma": (GAMMA,)}

    def __call__(self, *, candidate: str, reference: str, engine: MeteorEngine | None = None) -> float:
        return (engine or default_engine()).score(candidate=candidate, reference=reference)

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return self(candidate=item.predicted, reference=item.reference, engine=ctx)


_DEFAULT_ENGINE: MeteorEngine | None = None


def default_engine() -> MeteorEngine:
    """A process-wide engine (downloads allowed, announced on stderr)."""
    global _DEFAULT_ENGINE
    if _DEFAULT_ENGINE is None:
        _DEFAULT_ENGINE = MeteorEngine()
    return _DEFAULT_ENGINE


METEOR = Meteor()

__all__ = ["METEOR", "Meteor", "MeteorEngine", "MeteorEngineScorer", "PreparedText", "default_engine"]
