"""The optional C accelerator of METEOR's alignment against the pure-Python path and NLTK 3.9.1.

Both paths run in every environment that has the extension: the accelerated engine and an
engine built with ``accelerated=False`` score the same pairs, and must agree exactly (the
same floats, the same match and chunk counts) on every pair the scorer forms on the shared
files, on the tokenizer's adversarial set and on random batches. Without a C compiler the
extension is absent: those comparisons skip, every other METEOR test runs the pure path, and
the tests below check that the package falls back to it (and that the build does not fail).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from averitec_tools.metrics import meteor_accel
from averitec_tools.metrics.meteor import MeteorEngine, PreparedText
from averitec_tools.metrics.meteor_align import general_matches, meteor_formula

ROOT = Path(__file__).resolve().parent.parent
needs_native = pytest.mark.skipif(meteor_accel.native is None, reason=f"C accelerator {meteor_accel.missing}")
# stem classes spelt several ways, WordNet synonyms of each other (car/auto/automobile, big/large), repeats
VOCAB = ["run", "runs", "running", "ran", "race", "test", "tests", "trial", "big", "large", "the", "a", "car", "cars",
         "auto", "automobile", "machine", "dog", "canine", "house", "home", ",", ".", "is", "was"]
_SENTENCE = st.lists(st.sampled_from(VOCAB), max_size=14)


@pytest.fixture(scope="module")
def engines() -> tuple[MeteorEngine, MeteorEngine]:
    """(accelerated, pure-Python) engines; one tokenizer (its cache shared), as tokenising does not
    depend on the accelerator (``test_tokenize.py`` checks it against NLTK 3.9.1)."""
    fast = MeteorEngine(allow_download=False, accelerated=True)
    return fast, MeteorEngine(allow_download=False, accelerated=False, tokenizer=fast.tokenizer)


def pure_counts(hyp: PreparedText, ref: PreparedText, engine: MeteorEngine) -> tuple[int, int]:
    """NLTK's (matches, chunks) of a pair from the pure path's explicit alignment."""
    matches = sorted(general_matches(hyp, ref, engine._synonyms_of)) if hyp.sids and ref.sids else []
    chunks = sum(1 for k, (i, j) in enumerate(matches) if k == 0 or matches[k - 1] != (i - 1, j - 1))
    return len(matches), chunks


def assert_same(pairs: list[tuple[str, str]], engines: tuple[MeteorEngine, MeteorEngine]) -> None:
    """Both engines score and align each pair alike."""
    fast, pure = engines
    fast.prepare_many(s for p in pairs for s in p)
    pure.prepare_many(s for p in pairs for s in p)
    a = [(fast.prepare(h), fast.prepare(r)) for h, r in pairs]
    b = [(pure.prepare(h), pure.prepare(r)) for h, r in pairs]
    assert fast.score_many(a) == pure.score_many(b)
    got = meteor_accel.counts([h.packed for h, _ in a], [r.packed for _, r in a], fast._accel.ranges)  # type: ignore[misc, union-attr]
    assert got == [pure_counts(h, r, pure) for h, r in b]


class LexiconWordNet:
    """NLTK's WordNet reader interface over the lexical tables (``test_meteor.py`` checks them
    against WordNet), so NLTK's own alignment runs here without loading WordNet."""

    def __init__(self, engine: MeteorEngine) -> None:
        self.lexicon = engine.lexicon

    def synsets(self, word: str) -> list[types.SimpleNamespace]:
        lemmas = [types.SimpleNamespace(name=lambda n=n: n) for n in self.lexicon.synonym_names(word)]
        return [types.SimpleNamespace(lemmas=lambda: lemmas)]


@needs_native
@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_SENTENCE, _SENTENCE), min_size=1, max_size=12))
def test_random_batches_align_as_nltk(engines: tuple[MeteorEngine, MeteorEngine], pairs: list) -> None:  # type: ignore[type-arg]
    """Scores against the pure path; (matches, chunks) against NLTK's own ``_enum_align_words``."""
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import _count_chunks, _enum_align_words

    fast, pure = engines
    a = [(fast.prepare_tokens(h), fast.prepare_tokens(r)) for h, r in pairs]
    assert fast.score_many(a) == [pure.score_prepared(pure.prepare_tokens(h), pure.prepare_tokens(r)) for h, r in pairs]
    got = meteor_accel.counts([x.packed for x, _ in a], [y.packed for _, y in a], fast._accel.ranges)  # type: ignore[misc, union-attr]
    for (h, r), (m, c) in zip(pairs, got, strict=True):
        matches = sorted(_enum_align_words(list(enumerate(h)), list(enumerate(r)), PorterStemmer(), LexiconWordNet(fast))[0])
        assert (m, c) == (len(matches), _count_chunks(matches) if matches else 0)


@needs_native
@pytest.mark.shared_data
def test_every_shared_pair(shared_data: Path, engines: tuple[MeteorEngine, MeteorEngine]) -> None:
    """Every (prediction, gold) string pair of the dev baseline, and every shared string beside its neighbours."""
    from _score_corpus import corpus_strings

    base = shared_data / "averitec"
    gold = {c["claim"]: c for c in json.loads((base / "dev.json").read_text(encoding="utf-8"))}
    pairs = []
    for pred in json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8")):
        claim = gold[pred["claim"]]
        ref = [q["question"] for q in claim["questions"]]
        ref += [q["question"] + " " + a["answer"] for q in claim["questions"] for a in q["answers"]]
        hyp = [e["question"] for e in pred["evidence"]] + [e["question"] + " " + e["answer"] for e in pred["evidence"]]
        pairs += [(h, r) for h in hyp for r in ref]
    strings = corpus_strings(shared_data)
    pairs += [(s, strings[i - 1]) for i, s in enumerate(strings)]
    assert len(pairs) > 20_000
    assert_same(pairs, engines)


@needs_native
def test_adversarial_set(engines: tuple[MeteorEngine, MeteorEngine]) -> None:
    """The tokenizer's adversarial set (quotes, contractions, URLs, emoji, 100k-character tokens,
    empty strings): each string with itself and with its neighbours, both ways."""
    from _tokenizer_cases import adversarial_strings

    strings = adversarial_strings()
    pairs = [(s, s) for s in strings] + [(s, t) for s, t in zip(strings, strings[1:], strict=False)] + [(t, s) for s, t in zip(strings, strings[3:], strict=False)]
    assert_same(pairs, engines)


@needs_native
def test_long_repetitive_strings(engines: tuple[MeteorEngine, MeteorEngine]) -> None:
    """Tens of thousands of tokens, repeated words and competing synonyms (linear in C too)."""
    long = " ".join(["the big car runs", "a large auto running", "machine"] * 6000)
    other = " ".join(["car auto the running race"] * 2000)
    assert_same([(long, other), (other, long), (long, long), ("", long), (long, "")], engines)


def test_pure_python_without_the_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    """No extension (no C compiler at install) or ``AVERITEC_PURE_PYTHON=1``: the pure path, same scores."""
    monkeypatch.setattr(meteor_accel, "native", None)
    assert not meteor_accel.enabled() and meteor_accel.describe().startswith("pure Python")
    engine = MeteorEngine(allow_download=False)
    assert not engine.accelerated and engine.prepare("a car").packed is None
    assert round(engine.score(candidate="the cat sat", reference="a cat sat down"), 4) == 0.4808
    with pytest.raises(RuntimeError, match="not installed"):
        MeteorEngine(allow_download=False, accelerated=True)
    monkeypatch.setattr(meteor_accel, "native", types.SimpleNamespace(LAYOUT=meteor_accel.LAYOUT))
    monkeypatch.delenv(meteor_accel.PURE_PYTHON_ENV, raising=False)
    assert meteor_accel.enabled()
    monkeypatch.setenv(meteor_accel.PURE_PYTHON_ENV, "1")
    assert not meteor_accel.enabled() and not MeteorEngine(allow_download=False).accelerated


@needs_native
def test_scores_are_the_python_formula_bit_for_bit() -> None:
    """The C formula gives meteor_formula's floats exactly (``==``), over many distinct
    (matches, lengths, chunks) and past 16-bit lengths, and 0.0 without a match."""
    rng = np.random.default_rng(7)
    ranges = meteor_accel.SynonymRanges()
    ranges.add_many([1, 2], [(2,), (1,)])
    hyps, refs = [], []
    for _ in range(3000):
        h, r = rng.integers(0, 9, rng.integers(1, 60)), rng.integers(0, 9, rng.integers(1, 60))
        hyps.append(meteor_accel.pack(h.tolist(), (h % 5).tolist()))
        refs.append(meteor_accel.pack(r.tolist(), (r % 5).tolist()))
    long = rng.integers(0, 50, 70_000).tolist()
    hyps += [meteor_accel.pack(long, long), meteor_accel.pack([3], [3])]
    refs += [meteor_accel.pack(long[::-1], long[::-1]), meteor_accel.pack([4], [4])]
    expected = [meteor_formula(m, len(h) // 8, len(r) // 8, c) if m else 0.0
                for (m, c), h, r in zip(meteor_accel.counts(hyps, refs, ranges), hyps, refs, strict=True)]
    assert meteor_accel.scores(hyps, refs, ranges) == expected
    assert expected[-1] == 0.0 and len(set(expected)) > 1000


def test_a_stale_build_is_not_used() -> None:
    """A build of an older source (another packed layout) left in place is ignored."""
    assert not meteor_accel.usable(types.SimpleNamespace())
    assert not meteor_accel.usable(types.SimpleNamespace(LAYOUT=meteor_accel.LAYOUT - 1))
    assert meteor_accel.native is None or meteor_accel.usable(meteor_accel.native)


@needs_native
def test_malformed_input_is_refused() -> None:
    ranges = meteor_accel.SynonymRanges()
    good = meteor_accel.pack([1], [1])
    for hyps, refs, message in [([b"\0" * 12], [good], "not packed"), ([meteor_accel.pack([-1], [0])], [good], "negative"),
                                ([good], [good, good], "one length"), (["text"], [good], "not packed")]:
        with pytest.raises(ValueError, match=message):
            meteor_accel.native.counts(hyps, refs, ranges.lo, ranges.hi, ranges.values)
        with pytest.raises(ValueError, match=message):
            meteor_accel.native.scores(hyps, refs, ranges.lo, ranges.hi, ranges.values)
    ranges.add_many([0], [(5,)])
    ranges.hi[0] = 9  # past the values
    with pytest.raises(ValueError, match="out of bounds"):
        meteor_accel.counts([good], [good], ranges)


def test_build_without_a_compiler_installs_pure_python(tmp_path: Path) -> None:
    """setup.py's extension is optional: a failing compiler leaves a warning, not a failed build."""
    env = {**os.environ, "CC": "false"}
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(tmp_path / "lib"),
                           "--build-temp", str(tmp_path / "tmp")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "_meteor_c" in done.stderr and "_text_c" in done.stderr and not list(tmp_path.rglob("*.so"))
