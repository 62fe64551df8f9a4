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


def _recipe(recipe: list) -> str:  # type: ignore[type-arg]
    """A string of ``long_pairs`` (see ``benchmarks/regen_nltk391_reference.py``)."""
    prefix, unit, n, suffix = recipe
    return prefix + "".join(unit.replace("{i}", str(i)) for i in range(n)) + suffix


@pytest.mark.parametrize("pair", REFERENCE["long_pairs"], ids=lambda p: p["candidate"][1][:12] + str(p["candidate"][2]))
def test_recorded_nltk_391_scores_of_long_repetitive_strings(engine: MeteorEngine, pair: dict) -> None:
    """Long and repetitive strings (one word 3,000 times, a period before 3,000 spaces,
    800 sentences, 1,000 distinct words): tokenizer and matcher bit-identical to 3.9.1."""
    assert engine.score(candidate=_recipe(pair["candidate"]), reference=_recipe(pair["reference"])) == pair["meteor"]


def test_registered() -> None:
    assert METRICS.get("meteor").info.higher_is_better


def test_wordnet_synonyms_match_nltk_reader(engine: MeteorEngine) -> None:
    """The lexical tables hold what NLTK's WordNet reader gives METEOR, less what no stem can equal."""
    from nltk.corpus import wordnet

    for word in ["dog", "dogs", "ran", "running", "better", "geese", "quickli", "xyzzy", "united", "was", "car", "us"]:
        names = {lemma.name() for s in wordnet.synsets(word) for lemma in s.lemmas() if "_" not in lemma.name()}
        assert engine.lexicon.synonym_names(word) == {n for n in names if n != word and n == n.lower()}, word


def test_wordnet_version_and_checksum(engine: MeteorEngine) -> None:
    assert engine.lexicon.version == "3.0"
    assert len(engine.lexicon.checksum) == 12 and len(engine.lexicon.digest) == 12


@pytest.mark.shared_data
def test_stems_and_synonyms_equal_nltk_391_corpus_wide(shared_data: Path, engine: MeteorEngine) -> None:
    words = sorted({t.lower() for s in corpus_strings(shared_data) for t in engine.tokenizer.tokenize(s)})
    assert len(words) == REFERENCE["n_words"]
    stems = {w: engine.stem(w) for w in words}
    assert digest(stems) == REFERENCE["stems_sha256"]
    synonyms = {s: sorted(engine.lexicon.synonym_names(s)) for s in sorted(set(stems.values()))}
    assert digest(synonyms) == REFERENCE["matchable_synonyms_sha256"]


# --- long and repetitive strings ------------------------------------------------------
# One answer repeating a word (or its synonym) thousands of times once made preparation and
# the WordNet stage quadratic; the scores must stay NLTK's on such strings too.

def _long_cases() -> list[tuple[str, list[str], list[str]]]:
    filler = [f"w{i}" for i in range(600)]
    return [
        ("one word repeated", ["a", "word", "here", "word"], ["word"] * 3000),
        ("repeats on both sides", ["word", "x"] * 400, ["word"] * 1500 + ["x"] * 700),
        ("a synonym once in the gold", ["auto"] + ["zzz"] * 400, ["car"] * 1500),
        ("synonyms competing", ["auto", "machine", "zzz", "motorcar"] * 150, ["car", "automobile", "cars"] * 500),
        ("stem classes repeated", ["ran", "runs", "running", "race"] * 200, ["run", "running", "runs", "racing"] * 400),
        ("long, non-repetitive", filler[::-1] + VOCAB, filler + VOCAB[::-1] + filler[:50]),
        ("many chunks", [w for i in range(400) for w in (f"w{i}", "gap")], [f"w{i}" for i in range(400)]),
    ]


@pytest.mark.parametrize(("ref", "hyp"), [c[1:] for c in _long_cases()], ids=[c[0] for c in _long_cases()])
def test_long_repetitive_strings_match_installed_nltk(engine: MeteorEngine, nltk_meteor, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)
    assert engine.single_meteor_score(hyp, ref) == nltk_meteor(hyp, ref)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(VOCAB + STEM_CLASS_VOCAB), min_size=1, max_size=120),
       st.lists(st.sampled_from(VOCAB + STEM_CLASS_VOCAB), min_size=1, max_size=120))
def test_longer_random_sentences_match_installed_nltk(engine: MeteorEngine, nltk_meteor, ref: list[str], hyp: list[str]) -> None:
    assert engine.single_meteor_score(ref, hyp) == nltk_meteor(ref, hyp)


def _opcodes(fn) -> int:  # type: ignore[no-untyped-def]
    """Python bytecode instructions executed by ``fn()`` (a deterministic work count)."""
    import sys

    count = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event == "call":
            frame.f_trace_opcodes = True
        elif event == "opcode":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize(("name", "make"), [
    ("one word repeated", lambda n: (["word"] * n, ["a", "word", "here"])),
    ("a synonym once in the gold", lambda n: (["car"] * n, ["auto"] + ["zzz"] * n)),
    ("synonyms competing", lambda n: (["car", "automobile"] * n, ["zzz", "auto", "machine"] * n)),
    ("stem classes", lambda n: (["run", "running", "x"] * n, ["runs", "ran", "running"] * n)),
    ("many chunks", lambda n: ([w for i in range(n) for w in (f"w{i}", "gap")], [f"w{i}" for i in range(n)])),
])
def test_preparing_and_matching_work_is_linear(engine: MeteorEngine, name: str, make) -> None:  # type: ignore[no-untyped-def]
    """Instructions executed to prepare and score a pair grow linearly with its length.

    Counted, not timed: 4x the words may cost at most ~4x the instructions (the quadratic
    WordNet stage this replaced executed 2,000x more at n=2000). Caches are warmed first,
    so only the per-pair work is counted.
    """
    def work(n: int) -> int:
        hyp, ref = make(n)
        engine.single_meteor_score(ref, hyp)  # stems and synonyms cached
        return _opcodes(lambda: engine.single_meteor_score(ref, hyp))

    small, large = work(500), work(2000)
    assert large <= 4.4 * small, (name, small, large)


# --- the Porter stemmer on every NLTK ------------------------------------------------

@pytest.fixture(scope="module")
def porter_391():  # type: ignore[no-untyped-def]
    """NLTK 3.9.1's own ``PorterStemmer`` class (recursive consonant test), loaded from its file."""
    from _score_fixtures import porter_391_class

    return porter_391_class()


def test_nltk_391_porter_recurses_on_a_run_of_y(porter_391) -> None:  # type: ignore[no-untyped-def]
    """Guards the fixture: 3.9.1's stemmer itself fails on a long run of y's."""
    with pytest.raises(RecursionError):
        porter_391().stem("y" * 5000)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aeiouyybcrstlngy", min_size=1, max_size=16) | st.builds(lambda k, s: "y" * k + s, st.integers(0, 900), st.sampled_from(["", "ing", "ed", "ies", "s", "ational", "fulness"])))
def test_linear_porter_equals_nltk_391_and_installed(porter_391, word: str) -> None:  # type: ignore[no-untyped-def]
    from nltk.stem.porter import PorterStemmer

    from averitec_tools.metrics.porter import linear_porter

    expected = porter_391().stem(word)
    assert linear_porter(porter_391)().stem(word) == expected
    assert linear_porter(PorterStemmer)().stem(word) == expected
    assert PorterStemmer().stem(word) == expected


def test_engine_stems_a_long_run_of_y(engine: MeteorEngine, porter_391) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.metrics.porter import linear_porter

    word = "y" * 20_000 + "ing"
    assert engine.stem(word) == linear_porter(porter_391)().stem(word)
    assert engine.score(candidate=word + " claims", reference="the claims") > 0


def test_trim_bounds_the_word_caches() -> None:
    """Many distinct words in a few strings (one hostile upload) trigger trim too; scores stay."""
    engine = MeteorEngine(allow_download=False)
    engine.max_prepared, engine.max_words = 10**9, 1000
    gold = "the cat sat on a mat"
    engine.pin([gold])
    junk = " ".join(f"w{i}" for i in range(1500)) + " cat"
    before = engine.score(candidate=junk, reference=gold)
    assert len(engine._stems) > 1000 and engine.trim()
    assert len(engine._stems) == 0 and not engine._synonyms and engine.is_prepared(gold)
    assert len(engine._sid) == len(set(engine.prepare(gold).stems))  # the pinned strings' stem ids stay
    assert not engine.is_prepared(junk) and engine.score(candidate=junk, reference=gold) == before
