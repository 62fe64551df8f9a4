"""The AVeriTeC baseline end to end: store → BM25 sentences → questions → reranker →
verdict → justification, resumable, with per-stage timings and a run summary naming every
component and counting every fallback.

Interrupted runs continue with ``resume=True`` from ``OUT.partial.jsonl`` (one finished
claim per line, after a header that pins the configuration, variant, format and claims);
the output file appears only at the end, written atomically.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.data import ClaimItem, QAPair, gold_pairs
from averitec_tools.baselines.averitec.output import NO_EVIDENCE, ClaimResult, write_predictions
from averitec_tools.baselines.averitec.variants import Variant
from averitec_tools.errors import UserError

STAGES: tuple[str, ...] = ("store", "retrieval", "questions", "reranker", "verdict", "justification")


@dataclass
class RunSummary:
    """What a run did: counts, components, fallbacks, timings."""

    config: str
    variant: str
    output_format: str
    out: str
    n_claims: int = 0
    n_resumed: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    components: dict[str, str] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    build_seconds: dict[str, float] = field(default_factory=dict)
    missing_store_files: int = 0
    retrieval_recall_at_k: float | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        n = max(1, self.n_claims - self.n_resumed)
        d["seconds_per_claim"] = {k: round(v / n, 4) for k, v in self.seconds.items()}
        return d

    def timing_table(self) -> str:
        n = max(1, self.n_claims - self.n_resumed)
        rows = [f"{'stage':<14}{'seconds':>10}{'s/claim':>10}"]
        for k, v in self.seconds.items():
            rows.append(f"{k:<14}{v:>10.2f}{v / n:>10.4f}")
        return "\n".join(rows)


class AVeriTeCPipeline:
    """Runs one variant; the stage objects are built by :func:`build_pipeline`."""

    def __init__(self, *, config: AVeriTeCConfig, variant: Variant, store: Any, question_writer: Any,
                 reranker: Any, verdict: Any, justifier: Any, components: dict[str, str],
                 build_seconds: dict[str, float] | None = None) -> None:
        self.config = config
        self.variant = variant
        self.store = store
        self.question_writer = question_writer
        self.reranker = reranker
        self.verdict = verdict
        self.justifier = justifier
        self.components = components
        self.build_seconds = build_seconds or {}
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)

    def _timed(self, stage: str, t0: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] += now - t0
        return now

    def evidence_for(self, item: ClaimItem, fallbacks: list[str], extra: dict[str, Any]) -> list[QAPair]:
        from averitec_tools.baselines.averitec.reranker import rerank
        from averitec_tools.baselines.averitec.retrieval import gold_recall, retrieve_sentences

        if self.variant.evidence == "none":
            return []
        if self.variant.evidence == "gold":
            return gold_pairs(item.record)
        t = time.perf_counter()
        if not self.store.has(item.claim_id):
            fallbacks.append("no-store-file")
            self._timed("store", t)
            return []
        docs = list(self.store.documents(item.claim_id))
        t = self._timed("store", t)
        sentences = retrieve_sentences(claim=item.claim, documents=docs, k=self.config.retrieval.top_k)
        gold = [s for d in docs if d.type == "gold_answer" for s in d.url2text]
        recall = gold_recall(retrieved=sentences, gold=gold)
        if recall is not None:
            extra["gold_sentence_recall"] = round(recall, 4)
        t = self._timed("retrieval", t)
        generic_before = getattr(self.question_writer, "generic", 0)
        questions = self.question_writer.write([s.text for s in sentences])
        if getattr(self.question_writer, "component", "") == "retrieval-fallback":
            fallbacks.extend(["retrieval-fallback"] * len(questions))
            # no training answer shared a term with the sentence: the generic question
            fallbacks.extend(["generic-question"] * (self.question_writer.generic - generic_before))
        candidates = [QAPair(question=q, answer=s.text, url=s.url) for q, s in zip(questions, sentences, strict=True)]
        t = self._timed("questions", t)
        kept, _ = rerank(claim=item.claim, candidates=candidates, scorer=self.reranker,
                         keep=self.config.reranker.keep)
        self._timed("reranker", t)
        return kept

    def run_claim(self, item: ClaimItem) -> ClaimResult:
        from averitec_tools.baselines.averitec.verdict import decide

        fallbacks: list[str] = []
        extra: dict[str, Any] = {}
        evidence = self.evidence_for(item, fallbacks, extra)
        t = time.perf_counter()
        if evidence or self.variant.evidence == "none":
            # claim-only: the verdict model reads the claim with an empty evidence text.
            pairs = [(item.claim, p.text) for p in evidence] or [(item.claim, "")]
            probs = np.asarray(self.verdict.predict(pairs))
        else:
            probs = np.zeros((0, 4))  # no store file or nothing retrieved: the rule says NEE
        label, confidence, probabilities = decide(probs)
        t = self._timed("verdict", t)
        justification = self.justifier.justify([(item.claim, evidence, label)])[0]
        if getattr(self.justifier, "component", "") == "extractive-fallback":
            fallbacks.append("extractive-fallback")
        self._timed("justification", t)
        if not evidence:
            fallbacks.append("no-evidence-placeholder")
            evidence = [NO_EVIDENCE]
        return ClaimResult(claim_id=item.claim_id, claim=item.claim, label=label, confidence=confidence,
                           probabilities=probabilities, evidence=evidence, justification=justification,
                           components=dict(self.components), fallbacks=sorted(set(fallbacks)), extra=extra | {
                               "fallback_counts": dict(Counter(fallbacks))} if fallbacks else extra)

    def run(self, claims: Sequence[ClaimItem], *, out: str, output_format: str, resume: bool = False,
            progress: bool = False,
            run_many: Callable[[list[ClaimItem]], Iterable[ClaimResult]] | None = None) -> RunSummary:
        """Run every claim (``run_many``: claims still to do → results in order, e.g. on an
        engine, :mod:`averitec_tools.engines.claims`; default :meth:`run_claim` here)."""
        from tqdm.auto import tqdm

        summary = RunSummary(config=self.config.name, variant=self.variant.name, output_format=output_format, out=out,
                             components=dict(self.components), build_seconds=dict(self.build_seconds))
        partial = Path(f"{out}.partial.jsonl")
        header = {"config": self.config.fingerprint(), "variant": self.variant.name, "format": output_format,
                  "claim_ids": [str(c.claim_id) for c in claims]}
        done: dict[str, ClaimResult] = {}
        if resume and partial.is_file():
            done = _read_partial(partial, header)
        elif partial.exists():
            partial.unlink()
        summary.n_resumed = len(done)
        mode = "a" if done else "w"
        with partial.open(mode, encoding="utf-8") as fh:
            if not done:
                fh.write(json.dumps(header) + "\n")
            todo = [item for item in claims if str(item.claim_id) not in done]
            results_iter = map(self.run_claim, todo) if run_many is None else run_many(todo)
            for item, result in tqdm(zip(todo, results_iter, strict=True), total=len(todo),
                                     desc=f"averitec baseline ({self.variant.name})", unit="claim",
                                     disable=not progress):
                done[str(item.claim_id)] = result
                fh.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
                fh.flush()
        results = [done[str(c.claim_id)] for c in claims]
        write_predictions(results=results, out=out, fmt=output_format)
        partial.unlink()
        summary.n_claims = len(results)
        summary.labels = dict(Counter(r.label for r in results))
        counts: Counter[str] = Counter()
        for r in results:
            counts.update(r.extra.get("fallback_counts", {}))
        summary.fallbacks = dict(sorted(counts.items()))
        summary.missing_store_files = counts.get("no-store-file", 0)
        recalls = [r.extra["gold_sentence_recall"] for r in results if "gold_sentence_recall" in r.extra]
        if recalls:
            summary.retrieval_recall_at_k = round(float(np.mean(recalls)), 4)
        summary.seconds = {k: round(v, 3) for k, v in self.seconds.items()}
        return summary


def _read_partial(partial: Path, header: dict[str, Any]) -> dict[str, ClaimResult]:
    lines = partial.read_text(encoding="utf-8").splitlines()
    try:
        found = json.loads(lines[0]) if lines else {}
    except json.JSONDecodeError:
        found = {}
    if found != header:
        raise UserError(f"{partial}: was written by a different run (config, variant, format or claims differ)",
                        hint="delete it or drop --resume")
    done = {}
    for line in lines[1:]:
        try:
            r = ClaimResult.from_dict(json.loads(line))
        except (json.JSONDecodeError, KeyError, TypeError):
            break  # a line cut by the interruption: redo that claim
        done[str(r.claim_id)] = r
    # Rewrite without any cut line so appends start clean.
    with partial.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        for r in done.values():
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
    return done


class _NoReranker:
    component = "bm25-order (no-reranker variant)"


def build_pipeline(*, config: AVeriTeCConfig, variant: Variant, store: str | None,
                   claims: Sequence[ClaimItem], progress: bool = False) -> AVeriTeCPipeline:
    """Build every stage the variant needs (training what the config asks to train)."""
    from averitec_tools.baselines.averitec.checkpoints import obtain_checkpoint, training_claims
    from averitec_tools.baselines.averitec.justification import build_justifier
    from averitec_tools.baselines.averitec.questions import build_question_writer, training_examples
    from averitec_tools.baselines.averitec.store import KnowledgeStore
    from averitec_tools.baselines.averitec.training import PairClassifier

    build: dict[str, float] = {}
    components: dict[str, str] = {}
    exclude = [c.claim for c in claims]
    kstore = writer = rr = None
    t = time.perf_counter()
    if variant.needs_store:
        if not store:
            raise UserError(f"variant {variant.name!r} retrieves evidence: --store DIR is required",
                            hint="or download the split's store: averitec data download averitec-store --split dev")
        kstore = KnowledgeStore(store)
        components["store"] = str(Path(store))
        components["retrieval"] = f"bm25s top-{config.retrieval.top_k} sentences"
        train, _ = training_claims(config, exclude=exclude)
        writer = build_question_writer(config=config.questions, examples=training_examples(train))
        components["questions"] = writer.component
        build["questions"] = time.perf_counter() - t
        if variant.rerank:
            t = time.perf_counter()
            ckpt, _ = obtain_checkpoint(kind="reranker", cfg=config, exclude=exclude, progress=progress)
            rr = PairClassifier(checkpoint=ckpt, device=config.reranker.train.device,
                                batch_size=config.reranker.batch_size)
            components["reranker"] = rr.component
            build["reranker"] = time.perf_counter() - t
        else:
            components["reranker"] = _NoReranker.component
    else:
        skipped = f"skipped ({variant.name} variant)"
        components.update({"store": "gold QA pairs" if variant.evidence == "gold" else skipped,
                           "retrieval": skipped, "questions": skipped, "reranker": skipped})
    t = time.perf_counter()
    ckpt, _ = obtain_checkpoint(kind="verdict", cfg=config, exclude=exclude, progress=progress)
    vd = PairClassifier(checkpoint=ckpt, device=config.verdict.train.device, batch_size=config.verdict.batch_size)
    components["verdict"] = vd.component
    build["verdict"] = time.perf_counter() - t
    t = time.perf_counter()
    justifier = build_justifier(config=config.justification)
    components["justification"] = justifier.component
    build["justification"] = time.perf_counter() - t
    return AVeriTeCPipeline(config=config, variant=variant, store=kstore, question_writer=writer, reranker=rr,
                            verdict=vd, justifier=justifier, components=components,
                            build_seconds={k: round(v, 2) for k, v in build.items()})


__all__ = ["STAGES", "AVeriTeCPipeline", "RunSummary", "build_pipeline"]
