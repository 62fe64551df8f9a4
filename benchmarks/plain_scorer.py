"""A plain implementation of the 2024 AVeriTeC scorer that computes each METEOR matrix once.

The speed baseline for ``averitec score``'s cold start: what someone would write after
reading the official script and removing its obvious waste -- per claim, each distinct
Hungarian METEOR matrix (questions, question-answer strings, answers) is computed once,
with ``nltk.word_tokenize`` + ``single_meteor_score`` for every pair and
``scipy.optimize.linear_sum_assignment``; the Q+A score is reused for the AVeriTeC score
and the per-type score instead of being recomputed as in the official script
(``reference_scorer.py`` keeps that recomputation). Like the reference it runs only under
NLTK 3.8.1/3.9.1 (``PYTHONPATH=.venv/nltk391``) and prints one JSON object with the keys
of ``averitec score --json`` (no signature).

Usage::

    PYTHONPATH=.venv/nltk391 python benchmarks/plain_scorer.py PREDICTIONS REFERENCES
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

LEVELS = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5]
VERDICTS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("predictions")
    parser.add_argument("references")
    args = parser.parse_args(argv)

    import nltk

    if nltk.__version__ not in ("3.8.1", "3.9.1"):
        print(f"plain_scorer.py: needs NLTK 3.8.1 or 3.9.1 first on PYTHONPATH, found {nltk.__version__}", file=sys.stderr)
        return 3
    import numpy as np
    import scipy.optimize
    import sklearn.metrics
    from nltk.translate.meteor_score import single_meteor_score

    def hungarian(src: list[str], tgt: list[str]) -> float:
        if not tgt:
            return 0.0
        scores = np.empty((len(src), len(tgt)))
        for i, s in enumerate(src):
            for j, t in enumerate(tgt):
                scores[i][j] = single_meteor_score(nltk.word_tokenize(t), nltk.word_tokenize(s))
        rows, cols = scipy.optimize.linear_sum_assignment(scores, maximize=True)
        utility = scores[rows, cols].sum()
        utility *= 1 / float(len(tgt))
        return float(utility)

    with open(args.references, encoding="utf-8") as fh:
        gold = json.load(fh)
    with open(args.predictions, encoding="utf-8") as fh:
        by_id = {p["claim_id"]: p for p in json.load(fh)}
    preds = [by_id[i] for i in range(len(gold))]

    q_scores, qa_scores, a_scores, a_ours = [], [], [], []
    for p, g in zip(preds, gold, strict=True):
        ev = p.get("evidence", [])
        qa_gold, a_gold = [], []
        for q in g["questions"]:
            for a in q["answers"]:
                extra = ". " + a["boolean_explanation"] if a.get("answer_type") == "Boolean" else ""
                qa_gold.append(q["question"] + " " + a["answer"] + extra)
                a_gold.append(a["answer"] + extra)
            if not q["answers"]:
                qa_gold.append(q["question"] + " No answer could be found.")
                a_gold.append("No answer could be found.")
        src_q = [e["question"] for e in ev[:10]] if "evidence" in p else p.get("string_evidence", [])[:10]
        src_a = [e["answer"] for e in ev[:10]] if "evidence" in p else p.get("string_evidence", [])[:10]
        src_qa = ([e["question"] + " " + e["answer"] for e in ev] + p.get("string_evidence", []))[:10]
        q_scores.append(hungarian(src_q, [q["question"] for q in g["questions"]]))
        qa_scores.append(hungarian(src_qa, qa_gold))
        a_scores.append(hungarian(src_a, [a["answer"] for q in g["questions"] for a in q["answers"]]))
        a_ours.append(hungarian(src_a, a_gold))

    pred_labels = [p["pred_label"] for p in preds]
    gold_labels = [g["label"] for g in gold]
    correct = [pl == gl for pl, gl in zip(pred_labels, gold_labels, strict=True)]
    f1 = sklearn.metrics.f1_score(gold_labels, pred_labels, labels=VERDICTS, average=None)
    types: dict[str, list[float]] = {}
    for s, g in zip(qa_scores, gold, strict=True):
        for t in g["claim_types"]:
            types.setdefault(t, []).append(s if s > 0.25 else 0)
    rows = [[c if s > lvl else 0.0 for lvl in LEVELS] for s, c in zip(qa_scores, correct, strict=True)]
    out: dict[str, Any] = {
        "profile": "averitec2024",
        "tokenizer": f"nltk-{nltk.__version__}",
        "n_claims": len(gold),
        "questions_only": float(np.mean(q_scores)),
        "answers_only": float(np.mean(a_scores)),
        "answers_only_averitec_tools": float(np.mean(a_ours)),
        "questions_answers": float(np.mean(qa_scores)),
        "veracity": {
            "accuracy": float(np.mean(correct)),
            "macro_f1": float(sklearn.metrics.f1_score(gold_labels, pred_labels, labels=VERDICTS, average="macro")),
            "f1": {v: float(x) for v, x in zip(VERDICTS, f1, strict=True)},
        },
        "averitec_score": {repr(lvl): float(v) for lvl, v in zip(LEVELS, np.mean(np.array(rows), axis=0), strict=True)},
        "by_claim_type": {"0.25": {t: float(np.mean(v)) for t, v in types.items()}},
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
