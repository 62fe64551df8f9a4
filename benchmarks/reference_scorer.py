"""A straightforward reference implementation of the official AVeriTeC scorers.

It follows the official scripts' structure on purpose -- ``nltk.word_tokenize`` and
``nltk.translate.meteor_score.single_meteor_score`` for every (prediction, gold) pair,
``scipy.optimize.linear_sum_assignment`` per claim, and the 2024 script's recomputation of
the Q+A matrix for the AVeriTeC score and for the per-type score -- so that it is both a
correctness oracle for ``averitec score`` and a fair speed baseline.

Tokenizer behaviour: the official numbers were produced with NLTK 3.8.1/3.9.1, so this
script runs only under one of those (put it first on the path: ``PYTHONPATH=DIR`` or
``--nltk-path DIR``, where DIR comes from ``pip install --target DIR nltk==3.9.1``; ``make
test`` and ``make bench`` install it into ``.venv/nltk391``). Under any other NLTK it
exits with status 3 instead of falling back to another tokenizer: a reference that used
this package's tokenizer could not catch an error in it.

Usage::

    python benchmarks/reference_scorer.py --profile averitec2024 PREDICTIONS REFERENCES
    # prints one JSON object with the same keys as ``averitec score --json`` (no signature)
    python benchmarks/reference_scorer.py --serve
    # one job per stdin line (a JSON list of the arguments above), one JSON line out per job:
    # the tests start one such process instead of paying NLTK's and WordNet's start-up per file
    python benchmarks/reference_scorer.py --tokenize STRINGS.json
    # {"tokenizer": ..., "tokens": [nltk.word_tokenize(s) for s in the file's JSON list]}
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from typing import Any

REFERENCE_NLTK = ("3.8.1", "3.9.1")
LEVELS_2024 = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5]
VERDICTS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def setup_nltk(nltk_path: str | None) -> tuple[Any, str]:
    if nltk_path:
        sys.path.insert(0, nltk_path)
    import nltk

    if nltk.__version__ not in REFERENCE_NLTK:
        print(
            f"reference_scorer.py: NLTK {nltk.__version__} found at {nltk.__file__}; the reference runs only under "
            f"NLTK {' or '.join(REFERENCE_NLTK)} (put one first on PYTHONPATH or pass --nltk-path)",
            file=sys.stderr,
        )
        raise SystemExit(3)
    return nltk.word_tokenize, f"nltk-{nltk.__version__}"


def tokenize_file(path: str) -> int:
    """Print the reference tokens of every string of a JSON list (the tokenizer parity tests' oracle)."""
    word_tokenize, tokenizer = setup_nltk(None)
    with open(path, encoding="utf-8") as fh:
        strings = json.load(fh)
    print(json.dumps({"tokenizer": tokenizer, "tokens": [word_tokenize(s) for s in strings]}))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--tokenize":
        return tokenize_file(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("references")
    parser.add_argument("--profile", default="averitec2024", choices=["averitec2024", "averitec2023", "evalai"])
    parser.add_argument("--nltk-path", default=None, help="folder with a reference NLTK (3.8.1/3.9.1)")
    args = parser.parse_args(argv)

    word_tokenize, tok_mode = setup_nltk(args.nltk_path)
    import numpy as np
    import scipy.optimize
    import sklearn.metrics
    from nltk.translate.meteor_score import single_meteor_score

    def pairwise_meteor(candidate: str, reference: str) -> float:
        return single_meteor_score(word_tokenize(reference), word_tokenize(candidate))

    def matrix(src: list[str], tgt: list[str]) -> np.ndarray:
        scores = np.empty((len(src), len(tgt)))
        for i, s in enumerate(src):
            for j, t in enumerate(tgt):
                scores[i][j] = pairwise_meteor(s, t)
        return scores

    def hungarian(src: list[str], tgt: list[str], norm: int) -> float:
        scores = matrix(src, tgt)
        rows, cols = scipy.optimize.linear_sum_assignment(scores, maximize=True)
        utility = scores[rows, cols].sum()
        utility *= 1 / float(norm)
        return float(utility)

    def gold_strings(example: dict[str, Any]) -> list[str]:
        out = []
        for q in example.get("questions", []):
            answers = q["answers"] if isinstance(q["answers"], list) else [q["answers"]]
            for a in answers:
                out.append(q["question"] + " " + a["answer"])
                if a.get("answer_type") == "Boolean":
                    out[-1] += ". " + a["boolean_explanation"]
            if len(answers) == 0:
                out.append(q["question"] + " No answer could be found.")
        out.extend(example.get("string_evidence", []))
        return out

    def gold_answers(example: dict[str, Any]) -> list[str]:
        out = []
        for q in example["questions"]:
            for a in q["answers"]:
                out.append(a["answer"] + (". " + a["boolean_explanation"] if a.get("answer_type") == "Boolean" else ""))
            if not q["answers"]:
                out.append("No answer could be found.")
        return out

    def veracity(src_labels: list[str], tgt_labels: list[str]) -> dict[str, Any]:
        f1 = sklearn.metrics.f1_score(tgt_labels, src_labels, labels=VERDICTS, average=None)
        return {
            "accuracy": float(np.mean([s == t for s, t in zip(src_labels, tgt_labels, strict=False)])),
            "macro_f1": float(sklearn.metrics.f1_score(tgt_labels, src_labels, labels=VERDICTS, average="macro")),
            "f1": {v: float(x) for v, x in zip(VERDICTS, f1, strict=False)},
        }

    def by_type(srcs: list[Any], tgts: list[Any], qa_fn: Any, threshold: float) -> dict[str, float]:
        types: dict[str, list[float]] = {}
        for src, tgt in zip(srcs, tgts, strict=False):
            score = qa_fn(src, tgt)
            if score <= threshold:
                score = 0
            for t in tgt["claim_types"]:
                types.setdefault(t, []).append(score)
        return {t: float(np.mean(v)) for t, v in types.items()}

    out: dict[str, Any] = {"profile": args.profile, "tokenizer": tok_mode}
    if args.profile == "averitec2024":
        with open(args.references, encoding="utf-8") as fh:
            tgts = json.load(fh)
        with open(args.predictions, encoding="utf-8") as fh:
            preds = {p["claim_id"]: p for p in json.load(fh)}
        srcs = [preds[i] for i in range(len(tgts))]

        def src_qa(src: dict[str, Any]) -> list[str]:
            strings = [e["question"] + " " + e["answer"] for e in src.get("evidence", [])]
            return (strings + src.get("string_evidence", []))[:10]

        def qa(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            g = gold_strings(tgt)
            return hungarian(src_qa(src), g, len(g))

        def q_only(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            s = [e["question"] for e in src["evidence"][:10]] if "evidence" in src else src.get("string_evidence", [])[:10]
            g = [q["question"] for q in tgt["questions"]]
            return hungarian(s, g, len(g))

        def a_only_raw(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            # the public fork's evaluate_answers_only: raw answer fields on both sides
            s = [e["answer"] for e in src["evidence"][:10]] if "evidence" in src else src.get("string_evidence", [])[:10]
            g = [a["answer"] for q in tgt["questions"] for a in q["answers"]]
            return hungarian(s, g, len(g)) if g else 0.0

        def a_only(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            s = [e["answer"] for e in src["evidence"][:10]] if "evidence" in src else src.get("string_evidence", [])[:10]
            g = gold_answers(tgt)
            return hungarian(s, g, len(g))

        out["n_claims"] = len(tgts)
        out["questions_only"] = float(np.mean([q_only(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["answers_only"] = float(np.mean([a_only_raw(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["answers_only_averitec_tools"] = float(np.mean([a_only(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["questions_answers"] = float(np.mean([qa(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["veracity"] = veracity([s["pred_label"] for s in srcs], [t["label"] for t in tgts])
        rows = []
        for s, t in zip(srcs, tgts, strict=False):
            score = qa(s, t)
            rows.append([(s["pred_label"] == t["label"]) if score > lvl else 0.0 for lvl in LEVELS_2024])
        out["averitec_score"] = {repr(lvl): float(v) for lvl, v in zip(LEVELS_2024, np.mean(np.array(rows), axis=0), strict=False)}
        out["by_claim_type"] = {"0.25": by_type(srcs, tgts, qa, 0.25)}
    elif args.profile == "averitec2023":
        with open(args.references, encoding="utf-8") as fh:
            tgts = json.load(fh)
        with open(args.predictions, encoding="utf-8") as fh:
            srcs = json.load(fh)

        def qa23(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            g = gold_strings(tgt)
            return hungarian(gold_strings(src)[:10], g, len(g))

        def q23(src: dict[str, Any], tgt: dict[str, Any]) -> float:
            s = gold_strings(src)[:10] if "questions" not in src else [q["question"] for q in src["questions"][:10]]
            g = [q["question"] for q in tgt["questions"]]
            return hungarian(s, g, len(g))

        def justification(src: dict[str, Any]) -> str:
            return src["justification"] if src.get("justification") is not None else " ".join(gold_strings(src)[:10])

        out["n_claims"] = len(tgts)
        out["questions_only"] = float(np.mean([q23(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["questions_answers"] = float(np.mean([qa23(s, t) for s, t in zip(srcs, tgts, strict=False)]))
        out["veracity"] = veracity([s["label"] for s in srcs], [t["label"] for t in tgts])
        out["justification"] = float(np.mean([pairwise_meteor(justification(s), t["justification"]) for s, t in zip(srcs, tgts, strict=False)]))
        rows, jrows = [], []
        for s, t in zip(srcs, tgts, strict=False):
            score = qa23(s, t)
            j = pairwise_meteor(justification(s), t["justification"])
            rows.append([(s["label"] == t["label"]) if score > lvl else 0.0 for lvl in LEVELS_2024])
            jrows.append([j if score > lvl else 0.0 for lvl in LEVELS_2024])
        out["averitec_score"] = {repr(lvl): float(v) for lvl, v in zip(LEVELS_2024, np.mean(np.array(rows), axis=0), strict=False)}
        out["justification_score"] = {repr(lvl): float(v) for lvl, v in zip(LEVELS_2024, np.mean(np.array(jrows), axis=0), strict=False)}
        out["by_claim_type"] = {repr(t): by_type(srcs, tgts, qa23, t) for t in (0.2, 0.3)}
    else:
        with open(args.references, encoding="utf-8") as fh:
            gold = [json.loads(line) for line in fh if line.strip()]
        with open(args.predictions, encoding="utf-8") as fh:
            pred = [json.loads(line) for line in fh if line.strip()]
        assert len(gold) == len(pred)
        levels = [0.2, 0.25, 0.3]
        label_hits = [0, 0, 0]
        evid = [0.0, 0.0, 0.0]
        for g, p in zip(gold, pred, strict=False):
            if len(p["evidence"]) == 0:
                continue  # the EvalAI scorer skips a claim without predicted evidence (it scores 0)
            utility = hungarian(p["evidence"], g["evidence"], len(p["evidence"]))
            for k, lvl in enumerate(levels):
                if utility >= lvl:
                    if g["label"] == p["label"]:
                        label_hits[k] += 1
                    evid[k] += utility
        out["n_claims"] = len(gold)
        out["label_accuracy"] = {repr(lvl): label_hits[k] / len(pred) for k, lvl in enumerate(levels)}
        out["evidence_meteor"] = {repr(lvl): evid[k] / len(pred) for k, lvl in enumerate(levels)}
    print(json.dumps(out))
    return 0


def serve() -> int:
    """Run :func:`main` once per stdin line; write ``{"code", "stdout"}`` as one JSON line each."""
    for line in sys.stdin:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            try:
                code = main(json.loads(line))
            except SystemExit as exc:  # argparse errors and the NLTK version check
                code = exc.code if isinstance(exc.code, int) else 2
        sys.stdout.write(json.dumps({"code": code, "stdout": buffer.getvalue()}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1:] == ["--serve"] else main())
