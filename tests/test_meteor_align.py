"""The interned alignment: the batch (vectorised) path, the per-pair path and NLTK agree exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.meteor_align import general_matches, score_matches, score_pair
from averitec_tools.metrics.meteor_batch import score_pairs

# stem classes spelt several ways (run/runs/running, test/tests), WordNet synonyms of each other
# (big/large, car/auto/automobile, trial/test), repeats, punctuation
VOCAB = ["run", "runs", "running", "ran", "race", "racing", "test", "tests", "trial", "big", "large", "the", "a",
         "car", "cars", "auto", "automobile", "machine", "dog", "dogs", "canine", "house", "home", ",", ".", "is", "was"]
_SENTENCE = st.lists(st.sampled_from(VOCAB), max_size=14)


@pytest.fixture(scope="module")
def engine() -> MeteorEngine:
    return MeteorEngine(allow_download=False)


@pytest.fixture(scope="module")
def nltk_meteor():  # type: ignore[no-untyped-def]
    from nltk.translate.meteor_score import single_meteor_score

    return single_meteor_score


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_SENTENCE, _SENTENCE), min_size=1, max_size=12))
def test_batch_equals_pairs_alone_and_nltk(engine: MeteorEngine, nltk_meteor, pairs: list) -> None:  # type: ignore[no-untyped-def]
    prepared = [(engine.prepare_tokens(h), engine.prepare_tokens(r)) for h, r in pairs]
    batch = score_pairs(prepared, synonyms=engine._synonyms_of)
    alone = [score_pair(h, r, synonyms=engine._synonyms_of) for h, r in prepared]
    assert batch == alone == [nltk_meteor(r, h) for h, r in pairs]


@settings(max_examples=80, deadline=None)
@given(_SENTENCE, _SENTENCE)
def test_explicit_path_equals_the_key_path(engine: MeteorEngine, hyp: list, ref: list) -> None:  # type: ignore[no-untyped-def]
    """The general path (every match explicit) and the key-set path agree on every pair."""
    h, r = engine.prepare_tokens(hyp), engine.prepare_tokens(ref)
    explicit = score_matches(general_matches(h, r, engine._synonyms_of), len(h.sids), len(r.sids)) if h.sids and r.sids else 0.0
    assert explicit == score_pair(h, r, synonyms=engine._synonyms_of)


def test_a_string_past_the_packed_codes_goes_alone(engine: MeteorEngine) -> None:
    """A string of 65,536 tokens or more takes the per-pair path (itself checked against NLTK
    above and, on long strings, in test_meteor.py); the rest of the batch is unchanged."""
    long_hyp = engine.prepare_tokens(["the", "big", "car", "runs"] * 17_000)  # 68,000 tokens
    ref, other = engine.prepare_tokens(["a", "large", "auto", "running", "the"]), engine.prepare_tokens(["the", "car"])
    pairs = [(long_hyp, ref), (other, ref), (ref, long_hyp)]
    assert score_pairs(pairs, synonyms=engine._synonyms_of) == [score_pair(h, r, synonyms=engine._synonyms_of) for h, r in pairs]


def test_empty_strings_in_a_batch(engine: MeteorEngine) -> None:
    empty, some = engine.prepare_tokens([]), engine.prepare_tokens(["a", "car"])
    assert score_pairs([(empty, some), (some, empty), (empty, empty), (some, some)], synonyms=None)[:3] == [0.0, 0.0, 0.0]


def test_synonyms_seen_after_new_names_arrive(nltk_meteor) -> None:  # type: ignore[no-untyped-def]
    """A hypothesis prepared before the reference that holds its synonym still finds it (the
    filtered synonym sets are rebuilt when new names are interned)."""
    engine = MeteorEngine(allow_download=False)
    hyp = engine.prepare_tokens(["my", "car"])
    assert engine.score_prepared(hyp, engine.prepare_tokens(["my", "house"])) == nltk_meteor(["my", "house"], ["my", "car"])
    ref = engine.prepare_tokens(["my", "auto"])
    assert engine.score_prepared(hyp, ref) == nltk_meteor(["my", "auto"], ["my", "car"]) > 0.9
    with engine.remembering():
        assert engine.score_many([(hyp, ref), (ref, hyp)]) == [nltk_meteor(["my", "auto"], ["my", "car"]),
                                                                 nltk_meteor(["my", "car"], ["my", "auto"])]


def test_a_string_with_itself(engine: MeteorEngine, nltk_meteor) -> None:  # type: ignore[no-untyped-def]
    """The same prepared string on both sides (a gold file scored against itself): NLTK's score."""
    tokens = ["the", "run", "running", "the", "runs", ".", "the"]
    text = engine.prepare_tokens(tokens)
    other = engine.prepare_tokens(["a", "run"])
    assert score_pair(text, text, synonyms=engine._synonyms_of) == nltk_meteor(tokens, tokens)
    assert score_pairs([(text, text), (other, text), (text, text)], synonyms=engine._synonyms_of) == [
        nltk_meteor(tokens, tokens), nltk_meteor(tokens, ["a", "run"]), nltk_meteor(tokens, tokens)]
