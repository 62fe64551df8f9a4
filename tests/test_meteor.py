"""METEOR equals NLTK's single_meteor_score (3.9.1 reference values and the installed NLTK)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _score_corpus import corpus_strings, digest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics import METRICS
from averitec_tools.metrics.meteor import MeteorEngine

REFERENCE = json.loads((Path(__file__).parent / "data" / "nltk391_reference.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def engine() -> MeteorEngine:
    return MeteorEngine(allow_download=False)


@pytest.fixture(scope="module")
def nltk_meteor():
    from nltk.translate.meteor_score import single_meteor_score

    return single_meteor_score


def test_nltk_docstring_example(engine: MeteorEngine) -> None:
    hyp = ["It", "is", "a", "guide", "to", "action", "which", "ensures", "that", "the", "military", "always", "obeys", "the", "commands", "of", "the", "party"]
    ref = ["It", "is", "a", "guide", "to", "action", "that", "ensures", "that", "the", "military", "will", "forever", "heed", "Party", "commands"]
    assert round(engine.single_meteor_score(ref, hyp), 4) == 0.6944


def test_hand_derived_exact_match(engine: MeteorEngine) -> None:
    # 2 of 3 hypothesis words match 2 of 4 reference words in one chunk:
    # P = 2/3, R = 1/2, Fmean = PR / (0.9P + 0.1R), penalty = 0.5 * (1/2)^3.
    p, r = 2 / 3, 1 / 2
    expected = (1 - 0.5 * (1 / 2) ** 3) * (p * r) / (0.9 * p + 0.1 * r)
    assert engine.single_meteor_score(["a", "cat", "sat", "down"], ["the", "cat", "sat"]) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("ref", "hyp"),
    [([], ["a"]), (["a"], []), ([], []), (["dog"], ["table"])],
)
def test_zero_cases(engine: MeteorEngine, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == 0.0


def test_rejects_untokenized(engine: MeteorEngine) -> None:
    with pytest.raises(TypeError):
        engine.single_meteor_score("a b", ["a"])


def test_stem_and_synonym_stages(engine: MeteorEngine, nltk_meteor) -> None:
    ref = ["the", "dogs", "were", "running", "quickly"]
    hyp = ["a", "dog", "ran", "fast", "canine"]
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)
    assert engine.single_meteor_score(ref, hyp) > 0


def test_repeated_words_pair_from_the_end(engine: MeteorEngine, nltk_meteor) -> None:
    ref = ["a", "b", "a", "c", "a", "b"]
    hyp = ["b", "a", "a", "x", "b"]
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)


VOCAB = ["dog", "dogs", "canine", "cat", "run", "running", "ran", "fast", "quick", "quickly", "the", "a",
         "house", "home", "big", "large", "car", "automobile", "said", "say", "Dog", "."]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(VOCAB), max_size=12), st.lists(st.sampled_from(VOCAB), max_size=12))
def test_matches_installed_nltk_on_random_sentences(engine: MeteorEngine, nltk_meteor, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)


# Words that share Porter stems in different surface forms and WordNet synonyms of each
# other: every stem class holds several words, so the per-class exact-then-stem matching
# and the WordNet stage's "a stem never matches itself" shortcut are both exercised.
STEM_CLASS_VOCAB = ["run", "runs", "running", "ran", "race", "racing", "test", "tests", "trial", "big", "large", "the"]


@pytest.mark.parametrize(("ref", "hyp"), [
    (["running", "fast"], ["run", "runs", "fast"]),  # the class's leftovers pair from the end
    (["runs", "run", "running"], ["running", "run"]),
    (["big", "test", "trial"], ["large", "trials", "tests", "test"]),
])
def test_stem_class_cases(engine: MeteorEngine, nltk_meteor, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(STEM_CLASS_VOCAB), min_size=1, max_size=14),
       st.lists(st.sampled_from(STEM_CLASS_VOCAB), min_size=1, max_size=14))
def test_stem_classes_match_installed_nltk(engine: MeteorEngine, nltk_meteor, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)


def test_one_candidate_against_many_references(engine: MeteorEngine, nltk_meteor) -> None:
    """The candidate's synonym sets are kept between references; each pair is still exact."""
    hyp = ["large", "runners", "were", "racing", "the", "big", "race"]
    refs = [["big", "runner", "races"], ["the", "larger", "run"], ["going", "to", "run", "a", "trial"], ["x"], ["the"]]
    prepared = engine.prepare_tokens(hyp)
    for ref in refs:
        assert engine.score_prepared(prepared, engine.prepare_tokens(ref)) == nltk_meteor(ref, hyp)


@pytest.mark.parametrize("pair", REFERENCE["meteor_pairs"], ids=lambda p: p["candidate"][:25])
def test_recorded_nltk_391_scores(engine: MeteorEngine, pair: dict) -> None:
    """Bit-identical to single_meteor_score(word_tokenize(ref), word_tokenize(cand)) under 3.9.1."""
    assert engine.score(candidate=pair["candidate"], reference=pair["reference"]) == pair["meteor"]


def test_registered() -> None:
    assert METRICS.get("meteor").info.higher_is_better


def test_wordnet_synonyms_match_nltk_reader(engine: MeteorEngine) -> None:
    from nltk.corpus import wordnet

    for word in ["dog", "dogs", "ran", "running", "better", "geese", "quickli", "xyzzy", "united", "was"]:
        expected = {lemma.name() for s in wordnet.synsets(word) for lemma in s.lemmas() if "_" not in lemma.name()} | {word}
        assert engine.wordnet.synonyms(word) == expected, word


def test_wordnet_version_and_checksum(engine: MeteorEngine) -> None:
    assert engine.wordnet.version == "3.0"
    assert len(engine.wordnet.checksum) == 12


@pytest.mark.shared_data
def test_stems_and_synonyms_equal_nltk_391_corpus_wide(shared_data: Path, engine: MeteorEngine) -> None:
    words = sorted({t.lower() for s in corpus_strings(shared_data) for t in engine.tokenizer.tokenize(s)})
    assert len(words) == REFERENCE["n_words"]
    stems = {w: engine.stem(w) for w in words}
    assert digest(stems) == REFERENCE["stems_sha256"]
    synonyms = {s: sorted(engine.wordnet.synonyms(s)) for s in sorted(set(stems.values()))}
    assert digest(synonyms) == REFERENCE["synonyms_sha256"]
