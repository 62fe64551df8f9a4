"""Choose the AVeriTeC offline baseline's verdict training and claim-level head on training claims.

Everything here reads training claims only (``train.json`` minus the pseudo-test and the
dev claims' normalised twins; dev is read for its texts alone, as the leak guard does):

1. the decision slice — the training claims both models hold out (``--heldout`` of them) —
   gets a store built as a scored split's is: distractors from the *other* training claims'
   answers, its own, its fact-checking article's and its sibling claims' answers excluded
   (``build_store(..., pool_claims=...)``); the full pipeline (BM25 → questions → reranker)
   gives each slice claim its 3 evidence pairs;
2. the verdict models compared: ``gold`` — the built-in one (upstream data: every gold QA pair
   of the non-Conflicting training claims, under the offline caps) — and ``gold+retrieved``,
   trained on those gold pairs *plus* each training claim's top evidence pair retrieved the
   way a scored claim's is (a store of the other training claims' answers, the claim's own,
   article's and siblings' excluded, the BM25 order; labelled with the claim's verdict), with
   ``--epochs`` / ``--freeze`` / ``--max-pairs`` as given (the caps lifted or not);
3. the claim-level head (``baselines._run.claim_head``) on the slice, by grouped 5-fold
   cross-validation (``--seeds``): features = the claim-only probe's out-of-fold
   log-probabilities, the verdict model's aggregated claim distribution (the upstream rule)
   and its mean pair probabilities, each alone and together, with the offsets objectives.

Prints one JSON line per row; ``gap`` is the covered accuracy at ``--coverage`` minus the
label-prior selector's, in points. Costs: the slice's reranker pass and the training pairs'
retrieval are cached (stage cache and store directories under the cache root).

Usage (AVERITEC_DATA_DIR set)::

    python benchmarks/averitec_head_cv.py --heldout 0.15 --epochs 2 --freeze 0 --max-pairs 0 --seeds 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from dataclasses import replace
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_head import OBJECTIVES, fit_head, macro_f1_index
from averitec_tools.baselines._run.claim_prior import claim_groups, fitted_prior, group_folds
from averitec_tools.baselines.averitec.config import builtin_config, cache_dir, train_path
from averitec_tools.baselines.averitec.io.data import QAPair, read_claims
from averitec_tools.baselines.averitec.stages.verdict import (
    LABELS,
    aggregate_probabilities,
    verdict_examples,
    verdict_input,
)
from averitec_tools.baselines.averitec.training.checkpoints import training_claims
from averitec_tools.baselines.averitec.training.decision_slice import decision_slice
from averitec_tools.loaders.locate import find_data_file

#: Head feature sets: the probe's log-probabilities and each verdict model's claim features.
FEATURE_SETS: dict[str, list[str]] = {"prior": ["prior"], "gold": ["gold"], "gold+retrieved": ["gold+retrieved"],
                                      "prior+gold": ["prior", "gold"],
                                      "prior+gold+retrieved": ["prior", "gold+retrieved"]}


def configure(args: argparse.Namespace) -> Any:
    cfg = builtin_config("offline-minilm")
    r, v = cfg.reranker, cfg.verdict
    # the prototype's own comparison: a gold-trained verdict model, the reranker, no head in the build
    # (offline-minilm itself now trains on gold+retrieved evidence and decides with the claim head)
    return replace(cfg, reranker=replace(r, train=replace(r.train, heldout=args.heldout)),
                   verdict=replace(v, train_evidence="gold", train=replace(v.train, heldout=args.heldout)),
                   decision=replace(cfg.decision, reranker="always", label_bias="none", head="none"))


def _store(cfg: Any, name: str, items: list[Any], pool: list[Any] | None) -> str:
    from averitec_tools.baselines.averitec.corpus.store import build_store
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    out = cache_dir(cfg) / f"exp-store-{name}-{fingerprint([c.claim_id for c in items], pool is None)}"
    if not (out / "leak_guard.info").is_file():
        build_store(claims=[c.record for c in items], claim_ids=[c.claim_id for c in items], out=out, distractors=200,
                    seed=0, exclude_own_evidence=True, pool_claims=None if pool is None else [c.record for c in pool])
    return str(out)


def slice_evidence(cfg: Any, train: list[Any], sl: list[Any], dev: list[Any]) -> tuple[Any, list[list[QAPair]]]:
    """The built pipeline (its verdict model: the built-in one) and each slice claim's evidence."""
    from averitec_tools.baselines.averitec.build import build_pipeline
    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.baselines.averitec.stages.questions import build_question_writer
    from averitec_tools.baselines.averitec.variants import VARIANTS

    ids = {c.claim_id for c in sl}
    store = _store(cfg, "slice", sl, [c for c in train if c.claim_id not in ids])
    pipe = build_pipeline(config=cfg, variant=VARIANTS["full"], store=store, claims=dev, progress=False)
    rest = [c for c in train if c.claim_id not in ids]
    pipe.question_writer = build_question_writer(config=cfg.questions, train=rest)  # the slice's own QA: never
    pipe.stage_settings["questions"] = {**pipe.stage_settings["questions"], "train": "minus-slice"}
    pipe.store = KnowledgeStore(store)
    return pipe, [pipe.evidence_for(c, [], {})[0] for c in sl]


def retrieved_pairs(cfg: Any, pipe: Any, rest: list[Any], top: int) -> list[tuple[str, str | None, int]]:
    """Each training claim's top ``top`` evidence pairs (BM25 order) from a store of the other
    training claims' answers, labelled with its verdict (Conflicting claims left out, as upstream)."""
    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.baselines.averitec.stages.retrieval import retrieve_sentences

    store = KnowledgeStore(_store(cfg, "verdict-train", rest, None))
    out = []
    for c in rest:
        if c.record.label not in LABELS or c.record.label == LABELS[3]:
            continue
        sents = retrieve_sentences(claim=c.claim, documents=store.documents(c.claim_id), k=top,
                                   bm25=cfg.retrieval.bm25)
        for q, s in zip(pipe.question_writer.write([s.text for s in sents]), sents, strict=True):
            pair = QAPair(question=q, answer=s.text.replace("\n", " "), url=s.url)
            out.append((*verdict_input(claim=c.claim, pair=pair, style=cfg.verdict.input),
                        LABELS.index(c.record.label)))
    return out


def train_retrieved_verdict(cfg: Any, args: argparse.Namespace, rest: list[Any],
                            extra: list[tuple[str, str | None, int]]) -> str:
    from averitec_tools.baselines.averitec.training.classifier import (
        cap_examples,
        fingerprint,
        train_classifier,
    )

    s = replace(cfg.verdict.train, epochs=args.epochs, freeze_layers=args.freeze,
                max_pairs=args.max_pairs or None, select="last")
    gold = verdict_examples(rest, style=cfg.verdict.input)
    examples = cap_examples(gold + extra, cap=s.max_pairs, seed=s.seed)
    out = cache_dir(cfg) / f"exp-verdict-{fingerprint([c.claim_id for c in rest], len(extra), repr(s))}"
    if not (out / "manifest.json").is_file():
        t0, c0 = time.perf_counter(), time.process_time()
        train_classifier(base=cfg.verdict.base, labels=LABELS, train=examples, heldout=[], settings=s, out_dir=out,
                         kind="verdict", data_info={"gold": len(gold), "retrieved": len(extra)}, progress=False)
        print(json.dumps({"trained": str(out), "examples": len(examples), "wall_s": round(time.perf_counter() - t0),
                          "cpu_s": round(time.process_time() - c0)}), flush=True)
    return str(out)


def verdict_features(cfg: Any, checkpoint: str, sl: list[Any], evidence: list[list[QAPair]]) -> np.ndarray:
    """Per slice claim: the upstream rule's claim distribution and the mean pair probabilities (8 numbers)."""
    from averitec_tools.baselines.averitec.training.classifier import PairClassifier

    model = PairClassifier(checkpoint=checkpoint, device="cpu", batch_size=64, max_length=cfg.verdict.max_length)
    rows = []
    for c, ev in zip(sl, evidence, strict=True):
        pairs = [verdict_input(claim=c.claim, pair=p, style=cfg.verdict.input) for p in ev]
        probs = model.predict(pairs) if pairs else np.zeros((0, 4))
        mean = probs.mean(axis=0) if len(probs) else np.full(4, 0.25)
        rows.append(np.concatenate([aggregate_probabilities(probs, rule=cfg.verdict.aggregation), mean]))
    return np.log(np.clip(np.stack(rows), 1e-6, None))


def evaluate(X: np.ndarray, gold: np.ndarray, groups: np.ndarray, *, objective: str, seed: int,
             coverage: float, probe: bool = False) -> dict[str, Any]:
    fold = group_folds(groups, folds=5, seed=seed)
    pred, conf = np.zeros(len(gold), dtype=int), np.zeros(len(gold))
    for f in np.unique(fold):
        fit, test = fold != f, fold == f
        if probe:
            p = np.exp(X[test])
            pred[test], conf[test] = p.argmax(1), p.max(1)
            continue
        head = fit_head(X[fit], gold[fit], names=tuple(map(str, range(X.shape[1]))), groups=groups[fit], c=1.0,
                        objective=objective, seed=seed)
        pred[test], conf[test] = head.decide(X[test])
    right = pred == gold
    n = int(round(coverage * len(gold)))
    covered = float(right[np.argsort(-conf, kind="stable")[:n]].mean())
    majority = np.bincount(pred, minlength=4).argmax()
    prior = float(right[np.lexsort((-conf, pred != majority))[:n]].mean())
    return {"acc": float(right.mean()), "macro_f1": macro_f1_index(gold, pred), "gap_points": 100 * (covered - prior),
            "predicted": np.bincount(pred, minlength=4).tolist()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heldout", type=float, default=0.15)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--freeze", type=int, default=0)
    ap.add_argument("--max-pairs", type=int, default=0, help="0: every pair")
    ap.add_argument("--top", type=int, default=1, help="retrieved pairs per training claim")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--coverage", type=float, default=0.7)
    args = ap.parse_args()
    cfg = configure(args)
    dev_path = find_data_file("averitec", "dev.json")
    dev = read_claims(dev_path)
    train, _ = training_claims(cfg, exclude=[c.claim for c in dev])
    ids = {c.claim_id for c in decision_slice(cfg, claims=train)}
    sl = [c for c in train if c.claim_id in ids and c.record.label in LABELS]
    rest = [c for c in train if c.claim_id not in ids]
    t0, c0 = time.perf_counter(), time.process_time()
    pipe, evidence = slice_evidence(cfg, train, sl, dev)
    print(json.dumps({"slice_claims": len(sl), "rest": len(rest), "slice_wall_s": round(time.perf_counter() - t0),
                      "slice_cpu_s": round(time.process_time() - c0)}), flush=True)
    t0, c0 = time.perf_counter(), time.process_time()
    extra = retrieved_pairs(cfg, pipe, rest, args.top)
    print(json.dumps({"retrieved_pairs": len(extra), "wall_s": round(time.perf_counter() - t0),
                      "cpu_s": round(time.process_time() - c0)}), flush=True)
    models = {"gold": pipe.verdict.checkpoint,
              "gold+retrieved": train_retrieved_verdict(cfg, args, rest, extra)}
    prior = fitted_prior(train_path=train_path(cfg), scored=[c.claim for c in dev], pseudo_test_claims=500)
    feats = {"prior": np.log(np.clip(prior.training_proba([c.claim_id for c in sl]), 1e-12, None))}
    feats |= {name: verdict_features(cfg, ck, sl, evidence) for name, ck in models.items()}
    gold = np.array([LABELS.index(c.record.label) for c in sl])
    groups = claim_groups([c.claim for c in sl], [c.record.fact_checking_article for c in sl])
    rows: list[tuple[str, bool, str]] = [("prior", True, "none")]
    rows += [(name, False, o) for name, o in itertools.product(FEATURE_SETS, OBJECTIVES)]
    for parts, probe, objective in rows:
        X = np.hstack([feats[k] for k in FEATURE_SETS[parts]])
        res = [evaluate(X, gold, groups, objective=objective, seed=s, coverage=args.coverage, probe=probe)
               for s in range(args.seeds)]
        mean = {k: round(float(np.mean([r[k] for r in res])), 4) for k in ("acc", "macro_f1", "gap_points")}
        print(json.dumps({"features": "probe alone" if probe else parts, "objective": objective, **mean,
                          "predicted_seed0": res[0]["predicted"]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
