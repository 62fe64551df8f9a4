"""Regenerate ``tests/data/nltk391_reference.json``: what a real NLTK 3.9.1 produces.

The file pins, for every string the AVeriTeC profiles tokenise on the shared data, NLTK
3.9.1's ``word_tokenize`` output (one digest), the same for every text field of the
training split (``train_tokens_sha256``), the Porter stems and WordNet synonym sets
METEOR uses (digests; ``matchable_synonyms_sha256``: the names METEOR can match, as the
lexical tables keep them), the strings on which the installed NLTK (3.10.x) tokenises
differently (the 100 shortest), ``single_meteor_score`` of a fixed list
of (candidate, reference) pairs (taken from the existing file; ``--sample N`` draws N new
ones with a fixed seed instead), ``single_meteor_score`` of :data:`LONG_PAIRS`, long
and repetitive strings given as recipes (``tests/test_meteor.py`` rebuilds them), and the
full METEOR matrices of the first dev claims' predicted vs gold questions
(``hungarian_cases``: the independent reference for the Hungarian METEOR matrix and
assignment).

Run it under NLTK 3.9.1 (it refuses any other version); the installed NLTK is run in a
subprocess for the comparison::

    PYTHONPATH=.venv/nltk391:. python benchmarks/regen_nltk391_reference.py --data-dir ../shared/data
    git diff --stat tests/data/nltk391_reference.json   # no change expected
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "nltk391_reference.json"
N_DIFFERENCES = 100

#: Long and repetitive (candidate, reference) pairs, each string a recipe
#: ``[prefix, unit, n, suffix]``: prefix + unit (with ``{i}`` replaced by 0..n-1) n times + suffix.
LONG_PAIRS: list[tuple[list[Any], list[Any]]] = [
    (["", "rock ", 3000, "."], ["", "What is the moon made of? Rock and dust.", 1, ""]),
    (["", "car ", 2000, ""], ["auto ", "zzz ", 400, ""]),
    (["", "stone dust cheese ", 600, ""], ["The moon is made of rock, dust and ", "cheese? ", 40, "No."]),
    (["The site is run by Mr.", " ", 3000, "a satire site ."], ["It is run by a satire site.", "", 0, ""]),
    (["", "It was false. ", 800, ""], ["", "It was not false . ", 200, "Mr. Smith said so."]),
    (["", "running runs ran ", 600, ""], ["", "run race ", 300, ""]),
    (["", "item{i} and ", 1000, ""], ["", "item{i} or ", 1000, ""]),
]


def build_recipe(recipe: list[Any]) -> str:
    """The string a :data:`LONG_PAIRS` recipe stands for."""
    prefix, unit, n, suffix = recipe
    return prefix + "".join(unit.replace("{i}", str(i)) for i in range(n)) + suffix


def _corpus(data_dir: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from _score_corpus import corpus_strings

    return corpus_strings(data_dir)


def _train(data_dir: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    from _score_corpus import train_strings

    return train_strings(data_dir)


def _installed_tokens(strings: list[str]) -> list[list[str]]:
    """``word_tokenize`` of the NLTK installed in the environment (without the 3.9.1 path)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    code = "import json,sys,nltk; print(json.dumps([nltk.word_tokenize(s) for s in json.load(sys.stdin)]))"
    proc = subprocess.run([sys.executable, "-c", code], input=json.dumps(strings), capture_output=True, text=True,
                          env=env, check=True)
    tokens: list[list[str]] = json.loads(proc.stdout)
    return tokens


N_HUNGARIAN_CASES = 3


def _hungarian_cases(data_dir: Path, score: Any) -> list[dict[str, Any]]:
    """Predicted (baseline) vs gold questions of the first dev claims, with every pair scored."""
    base = data_dir / "averitec"
    gold = json.loads((base / "dev.json").read_text(encoding="utf-8"))
    preds = json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8"))
    cases = []
    for claim, pred in list(zip(gold, preds, strict=True))[:N_HUNGARIAN_CASES]:
        candidates = [e["question"] for e in pred["evidence"]][:10]
        references = [q["question"] for q in claim["questions"]]
        matrix = [[score(c, r) for r in references] for c in candidates]
        cases.append({"candidates": candidates, "references": references, "meteor": matrix})
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("AVERITEC_DATA_DIR", str(ROOT.parent / "shared" / "data")))
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--sample", type=int, default=None, metavar="N", help="draw N new METEOR pairs (seed 0)")
    args = parser.parse_args(argv)

    import nltk

    if nltk.__version__ != "3.9.1":
        print(f"regen_nltk391_reference.py: needs NLTK 3.9.1 first on PYTHONPATH, found {nltk.__version__}", file=sys.stderr)
        return 3
    from nltk.corpus import wordnet
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import single_meteor_score

    sys.path.insert(0, str(ROOT / "tests"))
    from _score_corpus import digest

    strings = _corpus(Path(args.data_dir))
    tokens = [nltk.word_tokenize(s) for s in strings]
    words = sorted({t.lower() for toks in tokens for t in toks})
    stemmer = PorterStemmer()
    stems = {w: stemmer.stem(w) for w in words}

    def synonyms(word: str) -> list[str]:
        names = {lemma.name() for synset in wordnet.synsets(word) for lemma in synset.lemmas() if "_" not in lemma.name()}
        return sorted(names | {word})

    def matchable(word: str) -> list[str]:
        """The synonyms METEOR's WordNet stage can match with a stemmed reference word: no capital
        letter (stems of lower-cased words have none), not the word itself."""
        return [n for n in synonyms(word) if n != word and n == n.lower()]

    train = _train(Path(args.data_dir))

    distinct_stems = sorted(set(stems.values()))
    installed = _installed_tokens(strings)
    differs = [{"text": s, "tokens": t} for s, t, u in zip(strings, tokens, installed, strict=True) if t != u]
    differs.sort(key=lambda case: len(case["text"]))  # stable: corpus order among equal lengths

    old: dict[str, Any] = json.loads(Path(args.out).read_text(encoding="utf-8")) if Path(args.out).exists() else {}
    if args.sample is not None or "meteor_pairs" not in old:
        rng = random.Random(0)
        pairs = [(rng.choice(strings), rng.choice(strings)) for _ in range(args.sample or 150)]
    else:
        pairs = [(p["candidate"], p["reference"]) for p in old["meteor_pairs"]]
    meteor_pairs = [
        {"candidate": c, "reference": r, "meteor": single_meteor_score(nltk.word_tokenize(r), nltk.word_tokenize(c))}
        for c, r in pairs
    ]
    long_pairs = [
        {"candidate": c, "reference": r,
         "meteor": single_meteor_score(nltk.word_tokenize(build_recipe(r)), nltk.word_tokenize(build_recipe(c)))}
        for c, r in LONG_PAIRS
    ]
    result = {
        "nltk_version": nltk.__version__,
        "n_strings": len(strings),
        "tokens_sha256": digest(tokens),
        "stems_sha256": digest(stems),
        "synonyms_sha256": digest({s: synonyms(s) for s in distinct_stems}),
        "matchable_synonyms_sha256": digest({s: matchable(s) for s in distinct_stems}),
        "n_train_strings": len(train),
        "train_tokens_sha256": digest([nltk.word_tokenize(s) for s in train]),
        "n_words": len(words),
        "n_stems": len(distinct_stems),
        "tokenizer_differs_from_3_10": differs[:N_DIFFERENCES],
        "meteor_pairs": meteor_pairs,
        "long_pairs": long_pairs,
        "hungarian_cases": _hungarian_cases(
            Path(args.data_dir), lambda c, r: single_meteor_score(nltk.word_tokenize(r), nltk.word_tokenize(c))
        ),
    }
    Path(args.out).write_text(json.dumps(result, indent=0, ensure_ascii=False), encoding="utf-8")
    print(f"{args.out}: {len(strings)} strings, {len(differs)} tokenised differently by the installed NLTK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
