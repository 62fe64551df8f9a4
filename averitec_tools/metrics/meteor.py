"""METEOR exactly as NLTK's ``single_meteor_score`` computes it (3.8.1/3.9.1), but fast.

The official AVeriTeC scorers call ``single_meteor_score(word_tokenize(reference),
word_tokenize(candidate))`` once per (prediction, gold) pair. :class:`MeteorEngine`
prepares every distinct string once -- tokenised by the reproduced NLTK 3.9.1
``word_tokenize`` (:mod:`~averitec_tools.metrics.tokenize`), lower-cased, stemmed from the
exact lexical tables (:mod:`~averitec_tools.metrics.lexicon`, NLTK's Porter stemmer for
words outside them), its stems interned as integers -- and scores pairs with the
interned alignment of :mod:`~averitec_tools.metrics.meteor_align` (NLTK's greedy order,
bit-identical results). Strings are prepared in batches (:meth:`MeteorEngine.prepare_many`):
all their new sentences go through the tokenizer, and all their new words through the
tables, at once.

Every step is linear in the two strings' lengths, however often a word repeats (NLTK's
own matcher is quadratic); ``benchmarks/bench_long_strings.py`` measures it.

Example:
    >>> engine = MeteorEngine()
    >>> round(engine.score(candidate="the cat sat", reference="a cat sat down"), 4)
    0.4808
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import filterfalse
from typing import Any, ClassVar

from averitec_tools.metrics import meteor_accel
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import PerItemScorer
from averitec_tools.metrics.lexicon import Lexicon, default_lexicon
from averitec_tools.metrics.meteor_align import ALPHA, BETA, GAMMA, PreparedText, score_pair
from averitec_tools.metrics.meteor_words import WordInterning
from averitec_tools.metrics.tokenize import WordTokenizer, lower_all
from averitec_tools.records.rated import RatedItem


class MeteorEngine(WordInterning):
    """Reference-exact, cached METEOR (NLTK ``single_meteor_score`` defaults).

    Args:
        tokenizer: Word tokenizer (default: NLTK 3.9.1 ``word_tokenize`` behaviour).
        allow_download: Whether missing NLTK data (``punkt_tab``) may be downloaded (announced on stderr).
        max_pairs: Remember up to this many (hypothesis, reference) pair scores (0: none).
            A long-lived scorer sets it: teams often resubmit the same evidence with other
            labels, and those pairs are then looked up instead of scored again. Keys are
            the prepared texts themselves (value equality), so a remembered score is
            exactly the score computed; the memo is cleared when full and by :meth:`trim`.
        lexicon: The lexical tables (default: the ones shipped with the package).
        accelerated: Align with the C accelerator (:mod:`~averitec_tools.metrics.meteor_accel`);
            ``None``: when it is installed and not turned off (``AVERITEC_PURE_PYTHON=1``).
            Scores are the same either way.

    Raises:
        RuntimeError: ``accelerated=True`` where the accelerator is not installed.
    """

    def __init__(self, *, tokenizer: WordTokenizer | None = None, allow_download: bool = True, max_pairs: int = 0,
                 lexicon: Lexicon | None = None, accelerated: bool | None = None) -> None:
        if accelerated and meteor_accel.native is None:
            raise RuntimeError("the C accelerator (averitec_tools.metrics._meteor_c) is not installed")
        #: whether pairs are aligned in C (:mod:`~averitec_tools.metrics.meteor_accel`)
        self.accelerated = meteor_accel.enabled() if accelerated is None else accelerated
        self._accel = meteor_accel.Interned() if self.accelerated else None
        self.allow_download = allow_download
        self.max_pairs = max_pairs
        self.tokenizer = tokenizer or WordTokenizer(allow_download=allow_download)
        self.lexicon = lexicon or default_lexicon()
        self._pair_scores: dict[tuple[PreparedText, PreparedText], float] = {}
        self._batch_scores: dict[tuple[int, int], float] | None = None
        self._prepared: dict[str, PreparedText] = {}
        self._stems: dict[str, str] = {}
        #: stem -> id; a synonym name's id is its id in the tables, other stems count on from there
        self._sid: dict[str, int] = {}
        self._next_id: int | None = None
        #: name ids interned as stems, and a counter bumped whenever that set grows: a hypothesis'
        #: synonyms are kept filtered to it (no other name can equal a prepared stem)
        self._present: set[int] = set()
        self._epoch = 0
        self._raw_synonyms: dict[int, tuple[int, ...]] = {}
        self._synonyms: dict[int, frozenset[int]] = {}
        self._synonyms_epoch = 0
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

    def load(self) -> None:
        """Resolve ``punkt_tab`` and open the lexical tables now (otherwise on first use)."""
        self.tokenizer.load()
        self.lexicon.load()

    def _build(self, words: Sequence[str], stems: Sequence[str]) -> PreparedText:
        self._learn_stems(stems)
        sids = list(map(self._sid.__getitem__, stems))
        if self._accel is None:
            return PreparedText.build(words, stems, sids)
        self._accel.add_words(words, self._stems, self._sid)
        return PreparedText.build(words, stems, sids, packed=self._accel.pack(words))

    def prepare_tokens(self, tokens: Sequence[str]) -> PreparedText:
        """Prepare already-tokenised text (lower-casing and stemming it)."""
        words = lower_all(tokens)
        self._learn_words(words)
        return self._build(words, list(map(self._stems.__getitem__, words)))

    def prepare_many(self, texts: Iterable[str]) -> int:
        """Tokenise, lower-case and stem every new string of ``texts`` in one batch; returns how many were new."""
        new = [t for t in dict.fromkeys(texts) if t not in self._prepared]
        if not new:
            return 0
        lowered = self.tokenizer.tokenize_many(new, lower=True)
        self.add_analysed_many(new, lowered)
        return len(new)

    def prepare(self, text: str) -> PreparedText:
        """Tokenise, lower-case and stem ``text`` (cached per distinct string)."""
        prepared = self._prepared.get(text)
        if prepared is None:
            self.prepare_many([text])
            prepared = self._prepared[text]
        return prepared

    def analyse(self, text: str) -> tuple[list[str], list[str]]:
        """Lower-cased tokens and their stems (what a worker process sends back)."""
        words = lower_all(self.tokenizer.tokenize(text))
        self._learn_words(words)
        return words, list(map(self._stems.__getitem__, words))

    def add_analysed(self, text: str, words: Sequence[str], stems: Sequence[str]) -> None:
        """Register the result of :meth:`analyse` computed elsewhere (e.g. in a worker or a cache file)."""
        if text not in self._prepared:
            self._stems.update(zip(words, stems, strict=True))  # such a word needs no stemming here either
            self._prepared[text] = self._build(words, stems)

    def add_analysed_many(self, texts: Sequence[str], words: Sequence[Sequence[str]],
                          stems: Sequence[Sequence[str]] | None = None) -> None:
        """:meth:`add_analysed` for many strings (``stems`` ``None``: stem ``words`` here, in one batch)."""
        stems, sids, packed = self._intern_batch(words, stems)
        prepared = self._prepared
        for text, ws, ss, ids, p in zip(texts, words, stems, sids, packed, strict=True):
            if text not in prepared:
                prepared[text] = PreparedText.build(ws, ss, ids, packed=p)

    def is_prepared(self, text: str) -> bool:
        return text in self._prepared

    def unprepared(self, texts: Iterable[str]) -> list[str]:
        """The strings of ``texts`` not prepared yet (in order, repeats kept)."""
        return list(filterfalse(self._prepared.__contains__, texts))

    def prepared_many(self, texts: Iterable[str]) -> list[PreparedText]:
        return list(map(self._prepared.__getitem__, texts))  # every one prepared before

    # --- synonyms ------------------------------------------------------------------------
    def _synonyms_of(self, hyp: PreparedText) -> tuple[list[tuple[int, frozenset[int]]], frozenset[int]]:
        """A hypothesis' stems with WordNet synonyms among the prepared stems, and their union."""
        cached = hyp.synonym_cache
        if cached is not None and cached[0] == self._epoch:
            return cached[1]  # type: ignore[no-any-return]
        if self._synonyms_epoch != self._epoch:  # new names were interned: filter again
            self._synonyms.clear()
            self._synonyms_epoch = self._epoch
        filtered, raw, present = self._synonyms, self._raw_synonyms, self._present
        for s in hyp.stem_set.difference(filtered):
            filtered[s] = frozenset(present.intersection(raw[s])) if raw[s] else frozenset()
        items = [(s, filtered[s]) for s in hyp.stem_set if filtered[s]]
        value = (items, frozenset().union(*(syn for _, syn in items)))
        hyp.synonym_cache = (self._epoch, value)
        return value

    # --- memory ----------------------------------------------------------------------------
    def pin(self, texts: Iterable[str]) -> int:
        """Keep ``texts`` (e.g. a gold side) prepared through :meth:`trim`; returns how many
        strings are pinned in all."""
        self._pinned = self._pinned | frozenset(texts)
        return len(self._pinned)

    def trim(self) -> bool:
        """Forget strings prepared since :meth:`pin`, and the caches built from them, once
        more than ``max_prepared`` strings (or ``max_words`` stemmed words) are held;
        whether it did.

        Scores never depend on it: a forgotten string is simply prepared again (pinned
        strings keep their stems and stem ids, so the word caches can go).
        """
        if self.max_prepared is None:
            return False
        too_many_words = len(self._stems) > self.max_words or len(self._sid) > self.max_words
        if len(self._prepared) <= self.max_prepared and not too_many_words:
            return False
        self._prepared = {text: p for text, p in self._prepared.items() if text in self._pinned}
        self._pair_scores.clear()  # its keys hold the forgotten strings
        if self._batch_scores is not None:
            self._batch_scores.clear()
        self.tokenizer.clear_cache()
        if too_many_words:
            self._stems.clear()
            kept = {s: i for p in self._prepared.values() for s, i in zip(p.stems, p.sids, strict=True)}
            self._sid = kept  # ids never change: new stems go on counting from _next_id
            self._present = {i for i in kept.values() if i < self.lexicon.n_names}
            self._raw_synonyms = {i: self._raw_synonyms[i] for i in kept.values()}
            if self._accel is not None:
                self._accel.keep(self._prepared.values())
            self._synonyms.clear()
            self._epoch += 1
        return True

    # --- scores ------------------------------------------------------------------------------
    def _score_pair(self, hyp: PreparedText, ref: PreparedText) -> float:
        if self._accel is not None:
            return self._accel.score_pairs([(hyp, ref)], self._synonyms_of)[0]
        return score_pair(hyp, ref, synonyms=self._synonyms_of)

    def _score_batch(self, pairs: Sequence[tuple[PreparedText, PreparedText]]) -> list[float]:
        if self._accel is not None:
            return self._accel.score_pairs(pairs, self._synonyms_of)
        from averitec_tools.metrics.meteor_batch import score_pairs

        return score_pairs(pairs, synonyms=self._synonyms_of)

    def score_prepared(self, hyp: PreparedText, ref: PreparedText) -> float:
        """METEOR of hypothesis ``hyp`` against reference ``ref`` (remembered if ``max_pairs``,
        or inside :meth:`remembering`)."""
        if self.max_pairs:
            key = (hyp, ref)  # by value: a string tokenised the same way meets its pairs again
            value = self._pair_scores.get(key)
            if value is None:
                value = self._score_pair(hyp, ref)
                if len(self._pair_scores) >= self.max_pairs:
                    self._pair_scores.clear()
                self._pair_scores[key] = value
            return value
        batch = self._batch_scores
        if batch is None:
            return self._score_pair(hyp, ref)
        pair = (id(hyp), id(ref))  # the batch holds both texts prepared: their ids stay theirs
        value = batch.get(pair)
        if value is None:
            value = batch[pair] = self._score_pair(hyp, ref)
        return value

    def score_many(self, pairs: Sequence[tuple[PreparedText, PreparedText]]) -> list[float]:
        """:meth:`score_prepared` of many pairs at once (in C, :mod:`~averitec_tools.metrics.meteor_accel`,
        or :mod:`~averitec_tools.metrics.meteor_batch`: the common case vectorised); scores already
        remembered are looked up, new ones remembered."""
        if self.max_pairs:
            memo: dict[Any, float] | None = self._pair_scores
            keys: list[Any] = list(pairs)
        else:
            memo = self._batch_scores
            keys = [(id(h), id(r)) for h, r in pairs]
        if memo is None:
            return self._score_batch(pairs)
        todo = {key: pair for key, pair in zip(keys, pairs, strict=True) if key not in memo}
        if todo:
            if self.max_pairs and len(memo) + len(todo) > self.max_pairs:
                memo.clear()
            memo.update(zip(todo, self._score_batch(list(todo.values())), strict=True))
        return [memo[key] for key in keys]

    def score_distinct(self, pairs: Sequence[tuple[PreparedText, PreparedText]]) -> list[float]:
        """:meth:`score_many` of pairs none of which repeats (no one-batch memo: it would only cost)."""
        return self.score_many(pairs) if self.max_pairs else self._score_batch(pairs)

    @contextmanager
    def remembering(self) -> Iterator[None]:
        """Remember pair scores until the block ends (a batch scores many pairs more than once:
        the 2024 profile's two answer scores share most of theirs)."""
        outer, self._batch_scores = self._batch_scores, ({} if self._batch_scores is None else self._batch_scores)
        try:
            yield
        finally:
            self._batch_scores = outer

    def score(self, *, candidate: str, reference: str) -> float:
        """The official ``pairwise_meteor(candidate, reference)``: tokenise both, METEOR."""
        if candidate not in self._prepared or reference not in self._prepared:
            self.prepare_many([candidate, reference])
        return self.score_prepared(self._prepared[candidate], self._prepared[reference])

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

__all__ = ["METEOR", "Meteor", "MeteorEngine", "MeteorEngineScorer", "PreparedText", "default_engine", "lower_all"]
