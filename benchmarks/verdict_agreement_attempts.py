"""The verdict-agreement attempts of docs/meta_eval.md after ``nli-verdict``: every figure, one run.

Human verdict agreement (the annotators' label from the submitted evidence equals the
gold one) against, on the Ev2R study's 278 rated items, with claim-clustered 95 % CIs:

1. **The AVeriTeC baseline's offline 4-way verdict model** (``--averitec-verdict DIR``,
   default the newest ``verdict-*`` under the cache's ``averitec-baseline/``): P(gold label)
   of the submitted Q+A strings, each read as the pair (claim, string), aggregated by the
   upstream rule (``verdict.aggregate_probabilities``) and by the mean over strings.
2. **Other readings of the R2VC verifier** (``nli-verdict``'s model): P(gold class) as the
   mean over strings, the max over strings, and the whole side as one premise, beside the
   default (the normalised max-entailment / max-contradiction side verdict). These were
   looked at after the default's figure, so the honest figure for "pick the reading on the
   data" is **leave-one-team-out**: each team's items are scored by the reading that ranks
   best on the other 12 teams.
3. **A combiner fitted on the ratings**, leave-one-team-out only (13 folds; out-of-fold
   figures only): logistic regression (standardised features, C = 1) on the four readings,
   ``minilm-qa-f1`` and ``hu-meteor``. No feature is the gold label alone (a per-label
   constant cannot rank systems that answer the same claims).
4. **A claim-level reader** (``--reader DIR``, or ``--train-reader DIR`` to train it, 895 s
   on 2 cores): the R2VC verifier fine-tuned 2 more epochs (lr 3e-5, batch 16, 256 word
   pieces) on whole gold evidence sides of AVeriTeC *train* (all Q+A strings of a claim as
   one premise → Supported: entailment, Refuted: contradiction, the others: neutral) plus,
   for a third of the claims per epoch, another claim's side → neutral. Scored as P(gold
   class) of the whole submitted side; its dev sanity check (gold sides, and dev claims
   paired with another claim's side) is printed first. Its settings were fixed before its
   one run on the ratings.

Nothing here trains on dev or on a rated claim (the rated claims are 2024 test claims with
no twin in train).

    AVERITEC_DATA_DIR=../shared/data python benchmarks/verdict_agreement_attempts.py --reader DIR
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np

RESAMPLES = 1000


def _verifier(model_dir: Path, max_length: int) -> object:
    from averitec_tools.metrics.nli_verdict import MemoNLI
    from averitec_tools.nli import HFNLIBackend

    return MemoNLI(HFNLIBackend(model_id=str(model_dir), device="cpu", batch_size=32, max_length=max_length,
                                pair_order="evidence-claim"))


def _gold_sides(path: Path) -> list[tuple[str, str, str]]:
    """(claim, all gold Q+A strings joined, label) of every labelled claim with evidence."""
    from averitec_tools.records.averitec import AVeriTeCClaim
    from averitec_tools.scoring.evidence_strings import qa_strings

    rows = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, r in enumerate(rows):
        c = AVeriTeCClaim.from_dict(r, where=f"{path.name}[{i}]")
        strings = qa_strings(c.questions)
        if strings and c.label:
            out.append((c.claim, " ".join(strings), c.label))
    return out


def _with_negatives(sides: list[tuple[str, str, str]], *, share: float, seed: int) -> list[tuple[str, str, int]]:
    from averitec_tools.metrics.nli_verdict import GOLD_CLASS, NEUT

    r = random.Random(seed)
    out = [(c, e, GOLD_CLASS[lab]) for c, e, lab in sides]
    for i, (c, _, _) in enumerate(sides):
        if r.random() < share:
            j = (i + 1 + r.randrange(len(sides) - 1)) % len(sides)
            out.append((c, sides[j][1], NEUT))
    r.shuffle(out)
    return out


def train_reader(*, data: Path, init: Path, out: Path) -> Path:
    """Item 4's reader: ``init`` fine-tuned on whole train sides plus mismatched sides."""
    from averitec_tools.baselines.r2vc.offline import verifier

    sides = _gold_sides(data / "averitec" / "train.json")
    epochs = [_with_negatives(sides, share=1 / 3, seed=e) for e in range(2)]
    return verifier.train_verifier(epochs=epochs, out_dir=out, learning_rate=3e-5, batch_size=16, seed=0,
                                 max_length=256, progress=True, base=init,  # from the verifier, not bare MiniLM
                                 meta={"train_claims": len(sides), "pairs": len(epochs[0]),
                                       "pair_labels": "whole-side"})


def reader_dev_check(*, data: Path, backend: object) -> dict[str, float]:
    from sklearn.metrics import f1_score

    from averitec_tools.metrics.nli_verdict import GOLD_CLASS, NEUT

    dev = _gold_sides(data / "averitec" / "dev.json")
    gold = np.array([GOLD_CLASS[lab] for _, _, lab in dev])
    pred = backend.predict([(c, e) for c, e, _ in dev]).argmax(1)  # type: ignore[attr-defined]
    r = random.Random(1)
    other = [(c, dev[(i + 1 + r.randrange(len(dev) - 1)) % len(dev)][1]) for i, (c, _, _) in enumerate(dev)]
    mismatched = backend.predict(other).argmax(1)  # type: ignore[attr-defined]
    return {"dev_gold_side_accuracy": float((pred == gold).mean()),
            "dev_gold_side_macro_f1": float(f1_score(gold, pred, average="macro")),
            "dev_other_side_neutral": float((mismatched == NEUT).mean())}


def verifier_readings(items: list, backend: object) -> dict[str, np.ndarray]:
    from averitec_tools.metrics import nli_verdict as nv
    from averitec_tools.metrics.evidence_scorer import qa_strings

    claims = [it.claim for it in items]
    per_string = nv.pair_probabilities(backend=backend, claims=claims, groups=[qa_strings(it.predicted) for it in items])
    whole = nv.pair_probabilities(backend=backend, claims=claims,
                                  groups=[[" ".join(qa_strings(it.predicted))] for it in items])
    gold = [nv.GOLD_CLASS[it.gold] for it in items]
    empty = [float(g == nv.NEUT) for g in gold]  # no strings read as neutral, as the default does
    return {
        "default (side verdict)": np.array([nv.side_verdict(p)[g] for p, g in zip(per_string, gold, strict=True)]),
        "mean over strings": np.array([p[:, g].mean() if len(p) else e for p, g, e in zip(per_string, gold, empty, strict=True)]),
        "max over strings": np.array([p[:, g].max() if len(p) else e for p, g, e in zip(per_string, gold, empty, strict=True)]),
        "whole side": np.array([w[0][g] for w, g in zip(whole, gold, strict=True)]),
    }


def averitec_readings(items: list, model: Path) -> dict[str, np.ndarray]:
    import torch

    from averitec_tools.baselines.averitec.models import load_classifier
    from averitec_tools.baselines.averitec.stages.verdict import LABELS, aggregate_probabilities
    from averitec_tools.metrics.evidence_scorer import qa_strings

    clf, tok, _ = load_classifier(model=str(model), device="cpu")
    clf.eval()
    pairs = sorted({(it.claim, s) for it in items for s in qa_strings(it.predicted)})
    probs = []
    with torch.inference_mode():
        for i in range(0, len(pairs), 32):
            b = pairs[i:i + 32]
            enc = tok([c for c, _ in b], [s for _, s in b], truncation=True, max_length=256, padding=True,
                      return_tensors="pt")
            probs.append(torch.softmax(clf(**enc).logits, -1).numpy())
    row = dict(zip(pairs, np.concatenate(probs), strict=True))
    up, mean = [], []
    for it in items:
        g = LABELS.index(it.gold)
        p = np.array([row[(it.claim, s)] for s in qa_strings(it.predicted)]).reshape(-1, 4)
        up.append(aggregate_probabilities(p)[g])
        mean.append(p[:, g].mean() if len(p) else float(LABELS[g] == "Not Enough Evidence"))
    return {"upstream aggregation": np.array(up), "mean over strings": np.array(mean)}


def leave_one_team_out_pick(items: list, readings: dict[str, np.ndarray], y: np.ndarray) -> tuple[np.ndarray, list]:
    from averitec_tools.scoring.meta_eval.stats import spearman

    teams = np.array([it.team for it in items])
    out, picks = np.zeros(len(items)), []
    for team in sorted(set(teams)):
        held = teams == team
        best = max(readings, key=lambda k: spearman(x=readings[k][~held], y=y[~held]))
        out[held] = readings[best][held]
        picks.append(best)
    return out, picks


def leave_one_team_out_combiner(items: list, features: dict[str, np.ndarray], y: np.ndarray) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    teams = np.array([it.team for it in items])
    x = np.column_stack(list(features.values()))
    out = np.zeros(len(items))
    for team in sorted(set(teams)):
        held = teams == team
        model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0)).fit(x[~held], y[~held].astype(int))
        out[held] = model.predict_proba(x[held])[:, 1]
    return out


def _row(name: str, scores: np.ndarray, items: list) -> dict:
    from averitec_tools.scoring.meta_eval.report import correlate

    (r,) = correlate(spec=name, llm=False, scores=[float(s) for s in scores], items=items,
                     dimensions=("verdict_agreement",), resamples=RESAMPLES)
    lo, hi = r["ci"]["spearman"]["low"], r["ci"]["spearman"]["high"]
    print(f"{name:<58} Spearman {r['spearman']:+.3f} [{lo:+.3f}, {hi:+.3f}]", flush=True)
    return {"scorer": name, "spearman": r["spearman"], "ci": [lo, hi]}


def main() -> None:
    from averitec_tools.cache import cache_root
    from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer
    from averitec_tools.metrics.nli_verdict import default_model_dir
    from averitec_tools.scoring.meta_eval.ratings import load_rated_items

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--averitec-verdict", type=Path, help="AVeriTeC offline verdict model directory")
    ap.add_argument("--reader", type=Path, help="item 4's trained reader")
    ap.add_argument("--train-reader", type=Path, metavar="DIR", help="train item 4's reader into DIR first")
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args()
    data = Path(os.environ.get("AVERITEC_DATA_DIR", "../shared/data"))
    items = load_rated_items(data_dir=data / "meta_eval" / "fc-evidence-evaluation")
    y = np.array([it.ratings["verdict_agreement"] for it in items])
    rows = []
    verifier = default_model_dir()
    readings = verifier_readings(items, _verifier(verifier, 128))
    for name, s in readings.items():
        rows.append(_row(f"R2VC verifier, {name}", s, items))
    picked, picks = leave_one_team_out_pick(items, readings, y)
    rows.append(_row("R2VC verifier, reading picked leave-one-team-out", picked, items))
    print("   picks per held-out team:", picks)
    features = {**readings, **{spec: np.array(parse_evidence_scorer(spec).score(items=items), dtype=float)
                               for spec in ("minilm-qa-f1", "hu-meteor")}}
    rows.append(_row("combiner (logistic, leave-one-team-out)", leave_one_team_out_combiner(items, features, y), items))
    verdicts = sorted(cache_root("averitec-baseline").glob("verdict-*/config.json"), key=lambda p: p.stat().st_mtime)
    averitec = args.averitec_verdict or (verdicts[-1].parent if verdicts else None)
    if averitec is not None:
        for name, s in averitec_readings(items, averitec).items():
            rows.append(_row(f"AVeriTeC offline verdict model, {name}", s, items))
    reader = args.reader
    if args.train_reader:
        t0, c0 = time.perf_counter(), time.process_time()
        reader = train_reader(data=data, init=verifier, out=args.train_reader)
        print(f"reader trained in {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} CPU-s")
    if reader is not None:
        backend = _verifier(reader, 256)
        print("reader dev check:", {k: round(v, 3) for k, v in reader_dev_check(data=data, backend=backend).items()})
        from averitec_tools.metrics import nli_verdict as nv
        from averitec_tools.metrics.evidence_scorer import qa_strings

        whole = backend.predict([(it.claim, " ".join(qa_strings(it.predicted))) for it in items])  # type: ignore[attr-defined]
        rows.append(_row("claim-level reader, whole side",
                         np.array([whole[i][nv.GOLD_CLASS[it.gold]] for i, it in enumerate(items)]), items))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
