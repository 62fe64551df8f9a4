"""The optional C extension of tokenising and interning (``_text_c``) against its pure-Python path.

Each function of :mod:`averitec_tools.metrics.text_accel` runs both ways and must give the same
values: table lookups on inline tables, Punkt's sentences and the Treebank chunk planner on
generated text (odd whitespace, quotes, closing brackets, contractions) and on every shared
string, checked further against NLTK's Punkt and the Treebank rules themselves. Without a C
compiler the extension is absent: the comparisons skip and the pure path is what runs.
"""

from __future__ import annotations

import importlib
import os
import random
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics import text_accel
from averitec_tools.metrics.meteor_accel import PURE_PYTHON_ENV
from averitec_tools.metrics.tokenize import WordTokenizer
from averitec_tools.metrics.treebank import (
    SPACE,
    ChunkTokenizer,
    is_inert,
    lower_all,
    tail_tokens,
    treebank_tokenize,
)

needs_native = pytest.mark.skipif(text_accel.native is None, reason="the _text_c extension is not built")
_PIECES = list("ab .?!,;:'\"()[]{}<>-*@`\n\t\u00a0\u2028”“’»«") + [
    "Mr.", "U.S.", "e.g.", "3.5", "No", "The", "J.", "Inc.", "--", "..", "can", "not", "gonna", "'s", "n't", "'t", "is",
    "  ", ") ", "\") ", "İ", "ſ", "ΟΔΟΣ", "Σ", "ǅ"]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


def both(fn: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
    """``fn(*args)`` with the extension (where built) and with ``AVERITEC_PURE_PYTHON=1``."""
    saved = os.environ.pop(PURE_PYTHON_ENV, None)
    fast = fn(*args)
    os.environ[PURE_PYTHON_ENV] = "1"
    try:
        return fast, fn(*args)
    finally:
        del os.environ[PURE_PYTHON_ENV]
        if saved is not None:
            os.environ[PURE_PYTHON_ENV] = saved


@needs_native
def test_table_lookups_equal_python() -> None:
    lists = [["the", "cat", "the"], [], ["sat"]]
    table = {"the": "the", "cat": "cat", "sat": "sit"}
    assert both(text_accel.lookup_many, lists, table) == ([["the", "cat", "the"], [], ["sit"]],) * 2
    codes = {"the": b"\1\0", "cat": b"\2", "sat": b""}
    assert both(text_accel.join_many, lists, codes) == ([b"\1\0\2\1\0", b"", b""],) * 2
    assert both(text_accel.concat_many, [["s1", "s2"], [], ["s2"]], {"s1": ("a", "b"), "s2": ("c",)}) == \
        ([["a", "b", "c"], [], ["c"]],) * 2
    assert both(text_accel.missing_many, lists, {"the": 1}) == ({"cat", "sat"},) * 2
    info = {"the": ("the", 4, b"x"), "cat": ("cat", 7, b"yz"), "sat": ("sit", 9, b"")}
    assert both(text_accel.analyse_many, lists, info) == \
        (([["the", "cat", "the"], [], ["sit"]], [[4, 7, 4], [], [9]], [b"xyzx", b"", b""]),) * 2
    for fn in (text_accel.lookup_many, text_accel.join_many, text_accel.analyse_many):
        with pytest.raises(KeyError):
            fn([["dog"]], {})


@needs_native
def test_inert_chunks_as_is_inert() -> None:
    chunks = ["claims", "claims,", "x--y", "x-y", "Gonna", "wanna", "CANNOT", "İstanbul", "naïve", "“q", "a'b", "", "ſ"]
    for chunk, inert in zip(chunks, text_accel.inert_many(chunks), strict=True):
        assert inert is None or inert == is_inert(chunk), chunk


@needs_native
@settings(max_examples=150, deadline=None)
@given(st.lists(_TEXT, max_size=4))
def test_sentences_equal_python_and_punkt(texts: list[str]) -> None:
    from _punkt_reference import nltk_punkt_391

    tokenizer = WordTokenizer(allow_download=False)
    fast, slow = both(tokenizer.sentences_many, texts)
    assert fast == slow == [nltk_punkt_391().tokenize(t) for t in texts]


@needs_native
@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXT, max_size=6))
def test_chunk_planner_equals_the_rules(sentences: list[str]) -> None:
    """Planned in C (remembered chunks, then the new ones learnt), twice: the Treebank rules' tokens;
    lower-cased (from the lower-cased chunks, learnt first or after): those tokens lower-cased."""
    chunks, first_lower = ChunkTokenizer(), ChunkTokenizer()
    expected = [treebank_tokenize(s) for s in sentences]
    assert first_lower.tokenize_many(sentences, lower=True) == [lower_all(t) for t in expected]
    assert chunks.tokenize_many(sentences) == expected
    assert chunks.tokenize_many(sentences) == expected  # everything remembered now
    assert chunks.tokenize_many(sentences, lower=True) == [lower_all(t) for t in expected]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZn't.,:;?!\"'()«»”’İſΣ0-", min_size=1, max_size=8))
def test_one_chunk_tails_as_the_whole_pipeline(tail: str) -> None:
    """A one-chunk tail (its shortcuts for inert ones included) tokenises as at the end of a sentence."""
    assert ["x", *tail_tokens(tail, SPACE, one_chunk=True)] == treebank_tokenize(f"x {tail}")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZn't\"'()«»”’İſΣ0-", min_size=1, max_size=8), st.sampled_from(",.:;?!"), st.sampled_from(" \n"))
def test_word_and_mark_chunks_as_the_whole_pipeline(word: str, mark: str, space: str) -> None:
    """A chunk of a word and one punctuation mark inside a sentence (its shortcut for inert words
    included) tokenises as the whole pipeline does."""
    sentence = f"x {word}{mark}{space}y z."
    assert ChunkTokenizer().tokenize_many([sentence]) == [treebank_tokenize(sentence)]


@needs_native
def test_holes_are_filled_once_learnt() -> None:
    """``holes``: a sentence with a piece missing comes back as its pieces -- the tokens before
    the first hole, then remembered tokens and holes (keys) -- and ``fill_plans`` fills them."""
    native = text_accel.native
    chunks = ChunkTokenizer()
    chunks.tokenize_many(["Known words here end.", "x y"])
    sentence = "Known words new-one here end!"
    plans, missing, tails = native.plan_sentences([sentence, "Known words here end."], chunks._chunks, chunks._tails, True)
    assert plans[1] == treebank_tokenize("Known words here end.")
    assert plans[0] == (["Known", "words"], (1, 1, "new-one"), ("here",), (1, "end!"))
    assert missing == {(1, 1, "new-one")} and tails == {(1, "end!", True)}
    assert native.plan_sentences([sentence], chunks._chunks, chunks._tails)[0] == [None]  # without holes: None
    with pytest.raises(KeyError):
        native.fill_plans([plans[0]], chunks._chunks, chunks._tails)
    chunks.tokenize_many([sentence])  # learns them
    assert native.fill_plans([plans[0]], chunks._chunks, chunks._tails) == [treebank_tokenize(sentence)]
    for bad in [((7, 1, "x"),), ((1, 1, "x", 0),), ["not a tuple"]]:
        with pytest.raises((ValueError, TypeError)):
            native.fill_plans([bad], chunks._chunks, chunks._tails)


def test_pure_path_tokenises_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """``AVERITEC_PURE_PYTHON=1``: no C at all, the same tokens (test_tokenize.py checks them against NLTK 3.9.1),
    lower-cased per sentence as per token."""
    rng = random.Random(7)
    texts = ["".join(rng.choice(_PIECES) for _ in range(rng.randrange(30))) for _ in range(300)]
    fast, slow = both(lambda: WordTokenizer(allow_download=False).tokenize_many(texts, lower=True))
    assert fast == slow
    monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    assert text_accel.active() is None
    assert [[t.lower() for t in tokens] for tokens in WordTokenizer(allow_download=False).tokenize_many(texts)] == fast


@pytest.mark.shared_data
@needs_native
def test_every_shared_string_alike_both_ways(shared_data: Path) -> None:
    """Token for token, the C path and the pure path on every string of the shared AVeriTeC files."""
    from _score_corpus import corpus_strings

    strings = corpus_strings(shared_data)
    fast, slow = both(lambda: WordTokenizer(allow_download=False).tokenize_many(strings))
    assert fast == slow
    fast_lower, slow_lower = both(lambda: WordTokenizer(allow_download=False).tokenize_many(strings, lower=True))
    assert fast_lower == slow_lower == [lower_all(tokens) for tokens in fast]


def test_cell_keys_as_pair_by_pair() -> None:
    from averitec_tools.metrics.hungarian_meteor import HungarianTask, _cell_keys

    rng = random.Random(1)
    words = [f"w{i}" for i in range(12)]
    for _ in range(50):
        tasks = [HungarianTask(tuple(rng.sample(words, rng.randrange(4))), tuple(rng.sample(words, rng.randrange(4))))
                 for _ in range(rng.randrange(1, 6))]
        number = {s: i for i, s in enumerate(dict.fromkeys(s for t in tasks for s in (*t.candidates, *t.references)))}
        expected = [len(number) * number[h] + number[r] for t in tasks for h in t.candidates for r in t.references]
        assert _cell_keys(tasks, number).tolist() == expected


def test_a_stale_build_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build of an older source (another API number) left in place is ignored: the pure path runs."""
    monkeypatch.setitem(sys.modules, "averitec_tools.metrics._text_c", types.SimpleNamespace(API=text_accel.API - 1))
    try:
        importlib.reload(text_accel)
        assert text_accel.native is None and text_accel.active() is None
        assert text_accel.lookup_many([["a"]], {"a": 1}) == [[1]]
    finally:
        monkeypatch.undo()
        importlib.reload(text_accel)
