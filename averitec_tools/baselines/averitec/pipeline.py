"""The AVeriTeC baseline end to end: store → BM25 sentences → questions → reranker →
verdict → justification, resumable, with per-stage timings, peak memory, and a run summary
naming every component, every departure from the upstream settings and every fallback.

Each claim's stage results go to the stage cache (:mod:`~averitec_tools.baselines.averitec.io.stage_cache`) as they are
computed; a later run with the same inputs and settings for a stage reads them back and
says so (``stage_cache``, ``cached_stages`` in the summary). Runs go through the shared run
loop (:func:`averitec_tools.baselines._run.loop.run_claims`): an interrupted run continues
with ``resume=True`` from ``OUT.partial.jsonl`` (one finished claim per line, after a header
that pins the configuration, variant, format and claims), starts over with
``overwrite=True``, and is refused without either — never deleted silently; the output file
appears only at the end, written atomically.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.averitec.chunked import run_chunked
from averitec_tools.baselines.averitec.config import AVeriTeCConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem, QAPair, gold_pairs
from averitec_tools.baselines.averitec.io.output import NO_EVIDENCE, ClaimResult, write_predictions
from averitec_tools.baselines.averitec.io.stage_cache import StageCache, file_key, stage_key
from averitec_tools.baselines.averitec.stages.retrieval import Sentence
from averitec_tools.baselines.averitec.variants import Variant

STAGES: tuple[str, ...] = ("store", "retrieval", "questions", "reranker", "verdict", "justification")


class AVeriTeCPipeline:
    """Runs one variant; the stage objects are built by :func:`~averitec_tools.baselines.averitec.build.build_pipeline`.

    Example:
        The claim-only variant with a stand-in verdict model and justifier:

        >>> import numpy as np
        >>> from averitec_tools.baselines.averitec.config import builtin_config
        >>> from averitec_tools.baselines.averitec.variants import get_variant
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> class Verdict:
        ...     def predict(self, pairs):
        ...         return np.array([[0.1, 0.7, 0.1, 0.1]] * len(pairs))
        >>> class Justifier:
        ...     def justify(self, items):
        ...         return [f"{label}." for _, _, label in items]
        >>> pipe = AVeriTeCPipeline(config=builtin_config("offline-minilm"), variant=get_variant("claim-only"),
        ...                         store=None, question_writer=None, reranker=None, verdict=Verdict(),
        ...                         justifier=Justifier(), components={"verdict": "fake"})
        >>> r = pipe.run_claim(ClaimItem(0, AVeriTeCClaim(claim="The moon is made of cheese.")))
        >>> r.label, r.justification, r.fallbacks
        ('Refuted', 'Refuted.', ['no-evidence-placeholder'])
    """

    def __init__(self, *, config: AVeriTeCConfig, variant: Variant, store: Any, question_writer: Any,
                 reranker: Any, verdict: Any, justifier: Any, components: dict[str, str],
                 build_seconds: dict[str, float] | None = None, cache: StageCache | None = None,
                 stage_settings: dict[str, Any] | None = None, leak_guard: dict[str, Any] | None = None,
                 label_bias: list[float] | None = None, decision: dict[str, Any] | None = None,
                 head: Any = None, priors: dict[str, list[float]] | None = None,
                 verdict_training: dict[str, Any] | None = None) -> None:
        self.config = config
        self.variant = variant
        self.store = store
        self.question_writer = question_writer
        self.reranker = reranker
        self.verdict = verdict
        self.justifier = justifier
        self.components = components
        self.build_seconds = build_seconds or {}
        self.cache = cache or StageCache(None)
        self.stage_settings = stage_settings or {}
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        #: What the leak guard removed (training twins of scored claims, the store's own answers).
        self.leak_guard: dict[str, Any] = leak_guard or {}
        #: Per-label log offsets of the pair probabilities (``decision.label_bias``), or None.
        self.label_bias = label_bias
        #: What the decision slice chose (``decision``): listed in the run summary.
        self.decision: dict[str, Any] = decision or {}
        #: The claim head (``decision.head: claim-head``) and the scored claims' probe probabilities, by text.
        self.head = head
        self.priors: dict[str, list[float]] = priors or {}
        #: The verdict model's training set (its checkpoint manifest's ``data``): listed in the run summary.
        self.verdict_training: dict[str, Any] = verdict_training or {}

    def _timed(self, stage: str, t0: float) -> float:
        now = time.perf_counter()
        self.seconds[stage] += now - t0
        return now

    def _fetch(self, stage: str, parent: str, compute: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], str]:
        key = stage_key(stage, self.stage_settings.get(stage), parent)
        value, _ = self.cache.fetch(stage, key, compute)
        return value, key

    def evidence_for(self, item: ClaimItem, fallbacks: list[str], extra: dict[str, Any], *,
                     retrieved: Any = None, written: list[str] | None = None) -> tuple[list[QAPair], str]:
        """The claim's evidence QA pairs and the stage-cache key that determines them: none
        (claim-only), the gold pairs, or store → retrieval → questions → reranker (``retrieved``: its
        :meth:`retrieved`, done ahead; ``written``: its questions, from a pass over several claims)."""
        if self.variant.evidence == "none":
            return [], stage_key("claim-only", item.claim, "")
        if self.variant.evidence == "gold":
            pairs = gold_pairs(item.record)
            return pairs, stage_key("gold-evidence", [item.claim, [dataclasses.astuple(p) for p in pairs]], "")
        sentences, parent, more_fallbacks, more_extra = retrieved or self.retrieved(item)
        fallbacks.extend(more_fallbacks)
        extra.update(more_extra)
        if sentences is None:
            return [], parent
        t = time.perf_counter()
        candidates, parent = self._questioned(sentences, parent, fallbacks, written=written)
        t = self._timed("questions", t)
        evidence, parent = self._reranked(item, candidates, parent)
        self._timed("reranker", t)
        return evidence, parent

    def retrieved(self, item: ClaimItem) -> tuple[list[Sentence] | None, str, list[str], dict[str, Any]]:
        """Store and BM25 retrieval of one claim (through the stage cache): its sentences (None: no store
        file), the cache key they come from, and the fallbacks and extra fields they add
        (:mod:`~averitec_tools.baselines.averitec.chunked` runs it ahead, on a worker thread)."""
        t = time.perf_counter()
        if not self.store.has(item.claim_id):
            self._timed("store", t)
            return None, stage_key("no-store-file", item.claim, ""), ["no-store-file"], {}
        parent = stage_key("store", [item.claim, file_key(self.store.file(item.claim_id))], "")
        t = self._timed("store", t)
        extra: dict[str, Any] = {}
        sentences, parent = self._retrieved(item, parent, extra)
        self._timed("retrieval", t)
        return sentences, parent, [], extra

    def _retrieved(self, item: ClaimItem, parent: str, extra: dict[str, Any]) -> tuple[list[Sentence], str]:
        """The claim's top BM25 sentences (and, where the store holds gold answers, their recall)."""
        from averitec_tools.baselines.averitec.stages.retrieval import (
            gold_recall,
            retrieve_sentences,
        )

        def retrieve() -> dict[str, Any]:
            docs = list(self.store.documents(item.claim_id))
            sentences = retrieve_sentences(claim=item.claim, documents=docs, k=self.config.retrieval.top_k,
                                           bm25=self.config.retrieval.bm25)
            gold = [s for d in docs if d.type == "gold_answer" for s in d.url2text]
            recall = gold_recall(retrieved=sentences, gold=gold)
            return {"sentences": [[x.text, x.url, x.score] for x in sentences], "recall": recall}

        found, parent = self._fetch("retrieval", parent, retrieve)
        if found["recall"] is not None:
            extra["gold_sentence_recall"] = round(found["recall"], 4)
        return [Sentence(text=a, url=b, score=c) for a, b, c in found["sentences"]], parent

    def _questioned(self, sentences: list[Sentence], parent: str, fallbacks: list[str], *,
                    written: list[str] | None = None) -> tuple[list[QAPair], str]:
        """A question for each sentence (``written``: already written), the sentence its answer."""

        def ask() -> dict[str, Any]:
            generic_before = getattr(self.question_writer, "generic", 0)
            questions = written if written is not None else self.question_writer.write([x.text for x in sentences])
            return {"questions": questions, "generic": getattr(self.question_writer, "generic", 0) - generic_before}

        asked, parent = self._fetch("questions", parent, ask)
        questions = asked["questions"]
        if self.components.get("questions") == "retrieval-fallback":
            fallbacks.extend(["retrieval-fallback"] * len(questions))
            # no training answer shared a term with the sentence: the generic question
            fallbacks.extend(["generic-question"] * int(asked["generic"]))
        # upstream: the answer is the sentence with its newlines flattened
        answers = [x.text.replace("\n", " ") if self.config.questions.prompt == "upstream" else x.text
                   for x in sentences]
        return [QAPair(question=q, answer=a, url=x.url)
                for q, a, x in zip(questions, answers, sentences, strict=True)], parent

    def _reranked(self, item: ClaimItem, candidates: list[QAPair], parent: str) -> tuple[list[QAPair], str]:
        """The candidates the reranker keeps, best first (BM25 order without a reranker)."""
        from averitec_tools.baselines.averitec.stages.reranker import rerank_order, reranker_input

        style = self.config.reranker.input

        def rank() -> dict[str, Any]:
            order, scores = rerank_order(claim=item.claim, candidates=candidates, scorer=self.reranker,
                                         keep=self.config.reranker.keep,
                                         inputs=lambda c, p: reranker_input(claim=c, pair=p, style=style))
            return {"order": order, "scores": scores}

        ranked, parent = self._fetch("reranker", parent, rank)
        return [candidates[i] for i in ranked["order"]], parent

    def verdict_probs(self, item: ClaimItem, evidence: Sequence[QAPair], parent: str) -> tuple[np.ndarray, str]:
        """The verdict model's probabilities of each evidence pair (pairs x 4), through the stage cache."""
        from averitec_tools.baselines.averitec.stages.verdict import verdict_input

        style = self.config.verdict.input

        def judge() -> dict[str, Any]:
            if evidence or self.variant.evidence == "none":
                # claim-only: the verdict model reads the claim with an empty evidence text.
                pairs = [verdict_input(claim=item.claim, pair=p, style=style) for p in evidence] or [
                    verdict_input(claim=item.claim, pair=QAPair("", ""), style=style)]
                return {"probs": np.asarray(self.verdict.predict(pairs), dtype=float).tolist()}
            return {"probs": []}  # no store file or nothing retrieved: the rule says NEE

        judged, parent = self._fetch("verdict", parent, judge)
        return np.asarray(judged["probs"], dtype=float).reshape(-1, 4), parent

    def run_claim(self, item: ClaimItem, *, retrieved: Any = None, written: list[str] | None = None) -> ClaimResult:
        from averitec_tools.baselines.averitec.stages.decision import apply_bias
        from averitec_tools.baselines.averitec.stages.verdict import decide

        fallbacks: list[str] = []
        extra: dict[str, Any] = {}
        evidence, parent = self.evidence_for(item, fallbacks, extra, retrieved=retrieved, written=written)
        t = time.perf_counter()
        probs, parent = self.verdict_probs(item, evidence, parent)
        if self.label_bias is not None:  # fitted on the decision slice (decision_slice.py)
            probs = apply_bias(probs, self.label_bias)
        if self.head is not None:  # the claim head (stages/head.py); every scored claim has its prior
            from averitec_tools.baselines.averitec.stages.head import head_decision

            label, confidence, probabilities = head_decision(self.head, np.asarray(self.priors[item.claim]), probs,
                                                             rule=self.config.verdict.aggregation)
        else:
            label, confidence, probabilities = decide(probs, rule=self.config.verdict.aggregation)
        t = self._timed("verdict", t)
        justified, _ = self._fetch("justification", parent,
                                   lambda: {"text": self.justifier.justify([(item.claim, evidence, label)])[0]})
        justification = justified["text"]
        if self.components.get("justification") == "extractive-fallback":
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
            overwrite: bool = False, progress: bool = False,
            predict_many: Callable[[list[ClaimItem]], Iterable[ClaimResult]] | None = None) -> RunSummary:
        """Run every claim through the shared run loop (:func:`averitec_tools.baselines._run.loop.run_claims`).

        ``predict_many``: claims still to do → results in order (e.g. on an engine,
        :mod:`averitec_tools.baselines.averitec.claim_worker`; default here: chunks of claims with
        retrieval run ahead and one question pass per chunk,
        :func:`~averitec_tools.baselines.averitec.chunked.run_chunked`). An interrupted run's ``OUT.partial.jsonl`` is continued with ``resume``,
        discarded with ``overwrite``, and refused without either.
        """
        from averitec_tools.baselines._run.loop import run_claims
        from averitec_tools.baselines._run.sidecar import sidecar_key
        from averitec_tools.baselines.averitec.reporting import run_summary

        components, build_seconds = dict(self.components), dict(self.build_seconds)
        fresh: dict[Any, ClaimResult] = {}  # this run's results, written as computed (resumed ones: read back)

        def results_of(records: list[dict[str, Any]]) -> list[ClaimResult]:
            return [fresh.get(sidecar_key(c.claim_id)) or ClaimResult.from_dict(r)
                    for c, r in zip(claims, records, strict=True)]

        def keep(n: int, result: ClaimResult) -> None:
            fresh[sidecar_key(result.claim_id)] = result

        done = run_claims(
            claims=claims, claim_id=lambda c: c.claim_id, kind="averitec", config=self.config.fingerprint(),
            output_format=output_format, out=out, resume=resume, overwrite=overwrite, progress=progress,
            desc=f"averitec baseline ({self.variant.name})", header={"variant": self.variant.name},
            predict_many=predict_many or (lambda todo: run_chunked(self, todo, claims=claims)), encode=lambda r: r.to_dict(),
            on_result=keep,
            write_output=lambda records: write_predictions(results_of(records), out=out, output_format=output_format))
        return run_summary(self, results=results_of(done.records), n_resumed=done.n_resumed, out=out,
                           output_format=output_format, components=components, build_seconds=build_seconds)


class NoReranker:
    """What the ``no-reranker`` variant names in place of a reranker (BM25 order is kept)."""

    component = "bm25-order (no-reranker variant)"


__all__ = ["STAGES", "AVeriTeCPipeline", "NoReranker"]
