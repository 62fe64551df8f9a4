"""The exact lexical tables: integrity, equality with NLTK 3.9.1, and words outside them."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from _score_fixtures import porter_391_class
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics.lexicon import Lexicon, default_lexicon, sorted_find, stem_is_identity
from averitec_tools.metrics.lexicon_build import (
    content_digest,
    fixed_width,
    stem_arrays,
    write_lexicon,
)
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.wordnet_synonyms import WordNetSynonyms
from averitec_tools.resources import find_resource

LEX = default_lexicon()


@pytest.fixture(scope="module")
def wordnet_files() -> WordNetSynonyms:
    """The independent WordNet reader (tested against NLTK's reader in test_meteor.py)."""
    reader = WordNetSynonyms(find_resource("wordnet", allow_download=False))
    reader.load()
    return reader


@pytest.fixture(scope="module")
def porter_391():  # type: ignore[no-untyped-def]
    return porter_391_class()()


def _all_keys(prefix: str) -> list[str]:
    return [bytes(k).decode() for band in LEX._bands(prefix) for k in band.tolist()]


def matchable(reader: WordNetSynonyms, word: str) -> set[str]:
    """What METEOR's WordNet stage can match for ``word``: single-word names, lower-case, not the word."""
    return {n for n in reader.synonyms(word) if "_" not in n and n != word and not re.search("[A-Z]", n)}


def test_shipped_tables_are_what_their_header_says(wordnet_files: WordNetSynonyms) -> None:
    arrays = {f.stem: np.load(f, allow_pickle=False) for f in LEX.folder.glob("*.npy")}
    assert content_digest(arrays) == LEX.meta["digest"]  # the signature's lex: names this content
    assert LEX.meta["nltk"] == "3.9.1" and LEX.version == "3.0"
    assert LEX.checksum == wordnet_files.checksum  # built from the very WordNet 3.0 files of NLTK's data
    assert LEX.n_names == LEX.meta["n_names"] and len(_all_keys("syn_keys")) == LEX.meta["n_synonym_keys"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="abcdefgy12.-'éß_ ", max_size=12))
def test_identity_rule_agrees_with_nltk_391(porter_391, word: str) -> None:  # type: ignore[no-untyped-def]
    """A word the rule leaves alone is left alone by NLTK 3.9.1's Porter stemmer."""
    word = word.lower()
    if stem_is_identity(word):
        assert porter_391.stem(word) == word


def test_table_stems_are_nltk_391_stems(porter_391) -> None:  # type: ignore[no-untyped-def]
    words = random.Random(0).sample(_all_keys("stem_words"), 3000)
    assert LEX.stems(words) == [porter_391.stem(w) for w in words]


def test_table_synonyms_are_the_wordnet_files(wordnet_files: WordNetSynonyms) -> None:
    keys = random.Random(1).sample(_all_keys("syn_keys"), 3000)
    for key in keys:
        assert LEX.synonym_names(key) == matchable(wordnet_files, key), key


def _near_misses(rng: random.Random, lemmas: list[str]) -> list[str]:
    """Strings next to WordNet forms: inflections the rules do or do not reach, cut, doubled, random."""
    out = []
    for lemma in rng.sample(lemmas, 2500):
        out += [lemma + rng.choice(["s", "es", "ed", "ing", "er", "est", "ly", "ness", "ies", "ss", "xes"]),
                lemma[:-1], lemma + lemma[-1], lemma.upper(), lemma.replace("_", "-")]
    out += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(1, 9))) for _ in range(2000)]
    return out


def test_a_word_outside_the_synonym_table_has_no_synonym(wordnet_files: WordNetSynonyms) -> None:
    """The keys are complete: whatever the table lacks, NLTK's reading of WordNet gives nothing METEOR can match."""
    rng = random.Random(2)
    lemmas = sorted({lemma for pos in "nvar" for lemma in wordnet_files._index[pos]})
    words = _near_misses(rng, lemmas)
    found = LEX.synonym_ids(words)
    outside = [w for w, ids in zip(words, found, strict=True) if not ids]
    assert len(outside) > 3000  # the sample does reach beyond the table
    for word in outside:
        assert not matchable(wordnet_files, word.lower()), word
    for word, ids in zip(words, found, strict=True):
        if ids:
            assert LEX.synonym_names(word) == matchable(wordnet_files, word.lower()), word


def test_words_outside_the_stem_table_fall_back_to_nltk_porter(porter_391) -> None:  # type: ignore[no-untyped-def]
    engine = MeteorEngine(allow_download=False)
    words = ["xqzzyrunning", "antidisestablishmentarianisms", "covfefeing", "a" * 60 + "ness", "1990s", "ünïcödeing"]
    assert LEX.stems(words[:3]) == [None, None, None]
    assert [engine.stem(w) for w in words] == [porter_391.stem(w) for w in words]


def test_sorted_find_routes_by_width() -> None:
    bands = fixed_width([b"a", b"abcdefgh", b"abcdefghi", b"x" * 30], widths=(8, 16))
    assert [b.dtype.itemsize for b in bands] == [8, 16, 30]
    queries = [b"a", b"abcdefgh", b"abcdefghi", b"x" * 30, b"x" * 31, b"abcdefghi\0", b"", b"b"]
    assert sorted_find(bands, queries).tolist() == [0, 1, 2, 3, -1, -1, -1, -1]


def test_build_and_load_round_trip(tmp_path: Path, porter_391) -> None:  # type: ignore[no-untyped-def]
    vocabulary = {"running", "claims", "happily", "x", "2020", "ran", "naïveness"}
    arrays = stem_arrays(vocabulary=vocabulary, stemmer=porter_391)
    arrays.update({"syn_keys_0": np.array([b"car"], dtype="S8"), "syn_keys_1": np.array([], dtype="S9"),
                   "syn_lengths": np.array([2], dtype=np.uint8), "syn_ids": np.array([0, 1], dtype=np.uint32),
                   "names_0": np.array([b"auto", b"machine"], dtype="S8"), "names_1": np.array([], dtype="S9")})
    digest = write_lexicon(tmp_path / "lex", arrays, {"nltk": "3.9.1", "wordnet_version": "3.0", "wordnet_checksum": "c"})
    lex = Lexicon(tmp_path / "lex")
    assert lex.digest == digest[:12] and lex.meta["bands"]["stem_words"] == 5
    words = sorted(vocabulary)
    assert lex.stems(words) == [None if stem_is_identity(w) else porter_391.stem(w) for w in words]
    assert lex.synonym_names("car") == {"auto", "machine"} and lex.synonym_ids(["cars"]) == [()]
    assert lex.name_ids(["machine", "car"]) == [1, -1]
