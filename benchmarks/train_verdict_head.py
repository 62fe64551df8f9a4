"""Rebuild ``averitec_tools/data/minilm_verdict_head.npz``, the head of ``minilm-verdict``.

Trains on AVeriTeC ``train.json`` only: every training claim whose normalised text
(``leakage.duplicates.normalise_claim``) equals a dev claim's or a rated claim's (the
Ev2R study's 2024 test claims) is dropped first (:func:`verdict_head.training_examples`).
Prints the twins dropped, the examples, the seconds and CPU seconds, the head's sha256
and its accuracy and macro-F1 on the dev claims with their gold evidence and with the
official baseline's evidence (``baseline_dev_predictions.json``); nothing is fitted on
dev or on the ratings. ``--reuse FILE.npz`` (``texts``, ``vectors``) skips strings
already embedded with the same encoder; ``--save-vectors FILE.npz`` writes them.

    AVERITEC_DATA_DIR=../shared/data python benchmarks/train_verdict_head.py --out averitec_tools/data/minilm_verdict_head.npz
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np


def _claims(path: Path) -> list[tuple[str, str, list[str]]]:
    from averitec_tools.records.averitec import AVeriTeCClaim
    from averitec_tools.scoring.evidence_strings import qa_strings

    rows = json.loads(path.read_text(encoding="utf-8"))
    recs = [AVeriTeCClaim.from_dict(r, where=f"{path.name}[{i}]") for i, r in enumerate(rows)]
    return [(c.claim, c.label or "", qa_strings(c.questions)) for c in recs]


def _vectors(texts: list[str], reuse: Path | None) -> dict[str, np.ndarray]:
    from averitec_tools.metrics.minilm_qa_f1 import embed

    vec: dict[str, np.ndarray] = {}
    if reuse is not None:
        with np.load(reuse) as z:
            vec = dict(zip(z["texts"].tolist(), z["vectors"], strict=True))
    vec.update(embed([t for t in set(texts) if t not in vec]))
    return vec


def _evaluate(head: dict, rows: list[tuple[str, str, list[str]]], evidence: list[list[str]],
              vec: dict[str, np.ndarray]) -> str:
    from sklearn.metrics import accuracy_score, f1_score

    from averitec_tools.metrics.minilm_verdict import verdict_probabilities
    from averitec_tools.metrics.verdict_head import LABELS

    probs = verdict_probabilities(claims=[r[0] for r in rows], evidence=evidence, vectors=vec, head=head)
    pred, gold = probs.argmax(axis=1), [LABELS.index(r[1]) for r in rows]
    return f"accuracy {accuracy_score(gold, pred):.3f}, macro-F1 {f1_score(gold, pred, average='macro'):.3f}"


def main() -> None:
    from averitec_tools.hashing import file_sha256
    from averitec_tools.metrics import verdict_head
    from averitec_tools.metrics.minilm_verdict import feature_rows
    from averitec_tools.scoring.meta_eval.ratings import load_rated_items

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=verdict_head.HEAD_FILE)
    ap.add_argument("--c", type=float, default=1.0, help="inverse L2 strength (default 1.0)")
    ap.add_argument("--reuse", type=Path)
    ap.add_argument("--save-vectors", type=Path)
    args = ap.parse_args()
    data = Path(os.environ["AVERITEC_DATA_DIR"])
    t0, c0 = time.perf_counter(), time.process_time()
    train, dev = _claims(data / "averitec" / "train.json"), _claims(data / "averitec" / "dev.json")
    rated = load_rated_items(data_dir=data / "meta_eval" / "fc-evidence-evaluation")
    base = json.loads((data / "averitec" / "baseline_dev_predictions.json").read_text(encoding="utf-8"))
    by_id = {p["claim_id"]: [f"{e['question']} {e['answer']}" for e in p["evidence"]] for p in base}
    base_ev = [by_id.get(i, []) for i in range(len(dev))]
    examples, labels, dropped = verdict_head.training_examples(
        train=train, exclude=[*(c for c, _, _ in dev), *(it.claim for it in rated)])
    texts = [s for c, _, ev in (*train, *dev) for s in (c, *ev)] + [s for ev in base_ev for s in ev]
    vec = _vectors(texts, args.reuse)
    if args.save_vectors:
        keys = sorted(vec)
        np.savez(args.save_vectors, texts=np.array(keys), vectors=np.stack([vec[k] for k in keys]))
    x = feature_rows(claims=[c for c, _ in examples], evidence=[ev for _, ev in examples], vectors=vec)
    head = verdict_head.fit_head(x=x, y=labels, c=args.c)
    meta = {"trained": f"averitec-train-{len(train) - dropped}-claims", "features": verdict_head.FEATURES_VERSION,
            "c": args.c, "examples": len(examples), "dropped_twins": dropped,
            "train_sha256": file_sha256(data / "averitec" / "train.json")}
    verdict_head.save_head(head, args.out, meta=meta)
    print(f"training claims {len(train)}, twins of dev/rated claims dropped {dropped}, examples {len(examples)}")
    print(f"{time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} CPU-s; "
          f"head {args.out} sha256 {file_sha256(args.out)}")
    print("dev, gold evidence:", _evaluate(head, dev, [ev for _, _, ev in dev], vec))
    print("dev, baseline evidence:", _evaluate(head, dev, base_ev, vec))


if __name__ == "__main__":
    main()
