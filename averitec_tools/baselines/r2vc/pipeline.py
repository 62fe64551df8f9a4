"""The R2VC pipeline: retrieve → generate → verify → calibrate → decide, per claim.

:class:`R2VCPipeline` wires the stages (any ``Retriever``, ``Generator``, a
:class:`~averitec_tools.baselines.r2vc.stages.verification.verifier.Verifier`, an optional calibrator) and
runs claims with:

* per-stage wall-clock timings (retrieval, generation, verification, calibration +
  decision, question writing), summed and per claim;
* a tqdm progress bar;
* crash-safe output through the baselines' shared run loop
  (:func:`averitec_tools.baselines._run.loop.run_claims`): each finished claim is
  appended (and fsynced) to a sidecar ``<out>.partial.jsonl``; ``resume=True`` skips the
  claims already there (a torn last line is repaired), ``overwrite=True`` starts over,
  neither refuses an existing one; the final file is written atomically, after which the
  sidecar is removed — an interrupted run never leaves a half-written output file;
* empty retrieval → abstain (Uncertain, confidence 0) instead of an error;
* nothing substituted silently: the summary names every component (``components``:
  stage → model id, or the named ablation/fallback) and counts every per-claim
  fallback (``fallbacks``: :data:`FALLBACK_KINDS`), and warns when the gates cannot be
  satisfied jointly on the calibration slice (:func:`gate_warning`);
* the offline preset's claim-level verdict head (``verdict_head``) decides AVeriTeC claims last.

:func:`averitec_tools.baselines.r2vc.build.build_pipeline` builds the stages from a configuration.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore, StoredClaim
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.io.formats import (
    FALLBACK_EVIDENCE,
    OUTPUT_FORMATS,
    VERDICT_FIELDS,
    ClaimPrediction,
    write_predictions,
)
from averitec_tools.baselines.r2vc.reporting import (
    RunTotals,
    describe_components,
    gate_warning,
    run_summary,
)
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import (
    Calibrator,
    ClaimCalibrator,
    candidate_features,
    monotone_confidence,
)
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import (
    CONFLICTING,
    ClaimRules,
    ConflictRule,
)
from averitec_tools.baselines.r2vc.stages.calibration.decision import decide
from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import VerdictHead
from averitec_tools.baselines.r2vc.stages.generation.parsing import malformed_flags
from averitec_tools.baselines.r2vc.stages.generation.sampling import claim_seed
from averitec_tools.baselines.r2vc.stages.questions import FallbackQuestionWriter, QuestionWriter
from averitec_tools.baselines.r2vc.stages.verification.regimes import RegimeThresholds
from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate, Verifier
from averitec_tools.baselines.r2vc.types import Generator, Passage, Retriever
from averitec_tools.errors import UserError

STAGES: tuple[str, ...] = ("retrieve", "generate", "verify", "calibrate", "questions")


class R2VCPipeline:
    """Runs claims through the R2VC stages.

    Args:
        retriever: Returns the fused evidence pool E(c) (``top_m`` passages).
        generator: Produces the k candidates (LM or NLI-only fallback).
        verifier: Scores candidates (§3.4).
        calibrator: A :class:`Calibrator`, an object with ``for_claim(claim)``, or None
            (π = s_ver clipped, the ``no_calibration`` ablation; that ablation drops a
            calibrator given here — the one place the rule is written).
        config: The effective configuration (thresholds, k, seeds, ablations).
        question_writer: Writes evidence questions (default: the fallback question).

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage
        >>> from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
        >>> class R:
        ...     name = "fixed"
        ...     def search(self, queries, *, k):
        ...         return [[ScoredPassage(Passage("a", "Paris", "http://p", "Paris is in France."), 1.0)]
        ...                 for _ in queries]
        >>> class N:
        ...     name = "fake"
        ...     def predict(self, pairs):
        ...         return np.array([[0.0, 0.05, 0.95]] * len(pairs))
        >>> pipe = R2VCPipeline(retriever=R(), generator=NLIFallbackGenerator(nli=N()),
        ...                     verifier=Verifier(backend=N()), calibrator=None, config=R2VCConfig())
        >>> pred = pipe.predict(ClaimInput(claim_id=0, claim="Paris is in France."))
        >>> pred.label, round(pred.confidence, 3)
        ('True', 0.96)
    """

    def __init__(
        self,
        *,
        retriever: Retriever | None,
        generator: Generator,
        verifier: Verifier,
        calibrator: Calibrator | ClaimCalibrator | None,
        config: R2VCConfig,
        question_writer: QuestionWriter | None = None,
        components: Mapping[str, Any] | None = None,
        candidate_store: CandidateStore | None = None,
        rules: ClaimRules | None = None,
        fitted: dict[str, Any] | None = None,
        leak_guard: dict[str, Any] | None = None,
        build_seconds: Mapping[str, float] | None = None,
        verdict_head: VerdictHead | None = None,
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.verifier = verifier
        #: No calibration → no calibrator: the ``no_calibration`` ablation drops any calibrator given.
        self.calibrator = None if config.ablation.no_calibration else calibrator
        self.config = config
        self.question_writer = question_writer or FallbackQuestionWriter()
        #: Stage → model id and revision, or the named ablation/fallback (default: read off the stages).
        self.components: dict[str, Any] = dict(components) if components is not None else describe_components(
            config, retriever=retriever, generator=generator, verifier=verifier, calibrator=calibrator,
            question_writer=question_writer)
        #: Stores every claim's candidates, or replays them (``--candidates``; io/candidates.py).
        self.candidate_store = candidate_store
        #: The claim-level rules fitted offline (y_NLI thresholds per regime, the Conflicting rule).
        self.rules = rules or ClaimRules()
        #: Settings fitted on held-out training claims, reported in the run summary (offline).
        self.fitted = fitted
        #: What the leak guard removed (offline configuration), for the run summary.
        self.leak_guard = leak_guard
        #: Seconds spent building each part (by builders that train or index).
        self.build_seconds: dict[str, float] = dict(build_seconds or {})
        #: The claim-level verdict head deciding AVeriTeC claims (``offline.verdict_head``; None: the candidates).
        self.verdict_head = verdict_head

    @property
    def regime_thresholds(self) -> RegimeThresholds | None:  # y_NLI thresholds per regime (None: the config's)
        return self.rules.regime_thresholds

    @property
    def conflict_rule(self) -> ConflictRule | None:  # the Conflicting rule (AVeriTeC claims only; None: off)
        return self.rules.conflict_rule

    # ------------------------------------------------------------------ stages
    def retrieve(self, claim: str) -> list[Passage]:
        if self.retriever is None:
            return []
        hits = self.retriever.search([claim], k=self.config.retrieval.top_m)
        return [h.passage for h in (hits[0] if hits else [])]

    def evidence_for(self, claim: ClaimInput) -> list[Passage]:
        """E(c): the claim's own evidence when it carries it (``--evidence given``), else retrieved."""
        if claim.evidence is not None:
            return list(claim.evidence)
        return self.retrieve(claim.claim)

    def candidates(self, claim: ClaimInput, evidence: Sequence[Passage], *, k: int | None = None,
                   timings: dict[str, float] | None = None) -> tuple[list[VerifiedCandidate], int]:
        """Generate and verify the candidates of one claim; returns them and the malformed count."""
        verified, malformed = self._generate_and_verify(claim, evidence, k=k, timings=timings)
        return verified, sum(malformed)

    def _generate_and_verify(self, claim: ClaimInput, evidence: Sequence[Passage], *, k: int | None,
                             timings: dict[str, float] | None) -> tuple[list[VerifiedCandidate], list[bool]]:
        timings = {} if timings is None else timings
        if not evidence:
            return [], []
        t0 = time.perf_counter()
        generator, verifier = self._stages_for(claim.claim, evidence)
        result = generator.generate(
            claim.claim, evidence, k=k or self.config.generator.k,
            seed=claim_seed(self.config.generator.seed, claim.claim_id),
        )
        t1 = time.perf_counter()
        # The whole pool in one batch, in pool order: the same NLI floats whether or not
        # the candidates are stored, and every passage an NLI-only replay may need.
        self.verifier.nli.probs(claim.claim, [p.text for p in evidence])
        verified = verifier.verify(claim=claim.claim, candidates=result.candidates)
        t2 = time.perf_counter()
        timings["generate"] = timings.get("generate", 0.0) + t1 - t0
        timings["verify"] = timings.get("verify", 0.0) + t2 - t1
        return verified, malformed_flags(result)

    def decode(self, claim: ClaimInput, *, k: int | None = None, timings: dict[str, float] | None = None
               ) -> tuple[list[Passage], list[VerifiedCandidate], int]:
        """Retrieve, generate and verify one claim, or replay it from :attr:`candidate_store`.

        With a store, a claim not yet in it is decoded with ``generator.k`` candidates
        and stored; the first ``k`` are returned.
        """
        timings = {} if timings is None else timings
        k = k or self.config.generator.k
        store = self.candidate_store
        stored = store.get(claim) if store is not None else None
        if stored is not None:
            return self._replay(claim, stored, k=k, timings=timings)
        if store is not None and store.replay_only:
            raise UserError(f"{store.path}: claim {claim.claim_id!r} is not in the candidate store",
                            hint="write it with `averitec baseline r2vc --candidates DIR` on the same claims")
        t0 = time.perf_counter()
        evidence = self.evidence_for(claim)
        timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - t0
        full = max(k, self.config.generator.k) if store is not None else k
        verified, malformed = self._generate_and_verify(claim, evidence, k=full, timings=timings)
        if store is not None:  # empty retrieval is stored too: a replay abstains the same way
            store.add(claim=claim, pool=evidence, probs=self.verifier.nli.probs(claim.claim, [p.text for p in evidence]),
                      candidates=[v.candidate for v in verified], malformed=malformed,
                      scores=[dataclasses.asdict(v.scores) for v in verified],
                      features=candidate_features(verified) if verified else None)
        return evidence, verified[:k], sum(malformed[:k])

    def _replay(self, claim: ClaimInput, stored: StoredClaim, *, k: int, timings: dict[str, float]
                ) -> tuple[list[Passage], list[VerifiedCandidate], int]:
        from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import (
            NLIFallbackGenerator,
        )

        assert self.candidate_store is not None
        self.candidate_store.n_replayed += 1
        evidence = list(stored.pool)
        if not evidence:
            return [], [], 0
        t0 = time.perf_counter()
        self.verifier.nli.prefill(claim.claim, [p.text for p in evidence], stored.probs)
        generator, verifier = self._stages_for(claim.claim, evidence)
        if isinstance(generator, NLIFallbackGenerator):
            # Re-derived with this configuration's thresholds (the store keeps the probabilities).
            cands = list(generator.generate(claim.claim, evidence, k=k,
                                            seed=claim_seed(self.config.generator.seed, claim.claim_id)).candidates)
            n_malformed = 0
        else:
            if len(stored.candidates) < k:
                raise UserError(f"{self.candidate_store.path}: claim {claim.claim_id!r} has "
                                f"{len(stored.candidates)} stored candidates, {k} are needed")
            cands = list(stored.candidates[:k])
            n_malformed = sum(stored.malformed[:k])
        t1 = time.perf_counter()
        verified = verifier.verify(claim=claim.claim, candidates=cands)
        timings["generate"] = timings.get("generate", 0.0) + t1 - t0
        timings["verify"] = timings.get("verify", 0.0) + time.perf_counter() - t1
        return evidence, verified, n_malformed

    def _stages_for(self, claim: str, evidence: Sequence[Passage]) -> tuple[Any, Verifier]:
        """The generator and verifier with the thresholds of the pool's evidence regime.

        Without :attr:`regime_thresholds` these are the pipeline's own; with them, copies
        carrying the regime's (T_ent, T_contr, δ) (an LM generator has none to change).
        """
        regimes = self.regime_thresholds
        if regimes is None or not evidence:
            return self.generator, self.verifier
        t_ent, t_contr, delta = regimes.for_probs(self.verifier.nli.probs(claim, [p.text for p in evidence]))
        with_thresholds = getattr(self.generator, "with_thresholds", None)
        generator = self.generator if with_thresholds is None else with_thresholds(t_ent=t_ent, t_contr=t_contr,
                                                                                   delta=delta)
        return generator, self.verifier.with_thresholds(t_ent=t_ent, t_contr=t_contr, delta=delta)

    def claim_rule_label(self, claim: ClaimInput, evidence: Sequence[Passage]) -> str | None:
        """The claim-level rule's AVeriTeC label (Conflicting), or None where it does not fire."""
        rule = self.conflict_rule
        if rule is None or claim.kind != "averitec" or not evidence:
            return None
        probs = self.verifier.nli.probs(claim.claim, [p.text for p in evidence])
        return CONFLICTING if rule.applies(probs) else None

    def confidences(self, claim: str, verified: Sequence[VerifiedCandidate]) -> np.ndarray:
        """π_i: the calibrator's probabilities, or s_ver clipped to [0, 1] without one."""
        if not verified:
            return np.zeros(0)
        cal = self.calibrator
        if cal is not None and hasattr(cal, "for_claim"):
            cal = cal.for_claim(claim)
        if cal is None:
            return monotone_confidence(np.array([v.scores.s_ver for v in verified]))
        return np.asarray(cal.predict(candidate_features(  # type: ignore[union-attr]
            verified, label_features=bool(getattr(cal, "label_features", False)))))

    def predict(self, claim: ClaimInput) -> ClaimPrediction:
        """Run every stage on one claim."""
        timings: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        evidence, verified, n_malformed = self.decode(claim, timings=timings)
        t0 = time.perf_counter()
        pi = self.confidences(claim.claim, verified)
        cal_cfg = self.config.calibration
        decision = decide(
            verified=verified, confidences=pi, tau_cal=cal_cfg.tau_cal, tau_ver=cal_cfg.tau_ver,
            verifier_selection=not self.config.ablation.no_verifier_selection, abstain=cal_cfg.abstain,
            on_abstain=cal_cfg.on_abstain, select_by=cal_cfg.select_by,
        )
        timings["calibrate"] = time.perf_counter() - t0
        cited: tuple[Passage, ...] = ()
        if decision.index is not None:
            cited = verified[decision.index].candidate.cited_passages
        fallbacks: Counter[str] = Counter()
        if not verified:
            fallbacks["no_candidates"] += 1
        if n_malformed:
            fallbacks["unparseable_output"] += n_malformed
        if not cited and evidence:
            cited = tuple(evidence[:FALLBACK_EVIDENCE])
            fallbacks["uncited_top_evidence"] += 1
        t0 = time.perf_counter()
        before = getattr(self.question_writer, "n_fallback", 0)
        questions: tuple[str, ...] = ()
        if claim.kind == "ternary":  # FEVER/VitaminC output has no questions: none are written
            fallbacks["questions_not_written"] += 1
        elif cited:
            questions = tuple(self.question_writer.write(claim=claim.claim, passages=cited))
        if getattr(self.question_writer, "n_fallback", 0) > before:
            fallbacks["template_question"] += self.question_writer.n_fallback - before  # type: ignore[attr-defined]
        timings["questions"] = time.perf_counter() - t0
        pred = ClaimPrediction(
            claim=claim,
            cited=cited,
            questions=questions,
            **{name: getattr(decision, name) for name in VERDICT_FIELDS},
            n_candidates=len(verified),
            n_malformed=n_malformed,
            timings=timings,
            candidate_label=None if decision.index is None else verified[decision.index].candidate.label,
            rule_label=self.claim_rule_label(claim, evidence) if verified else None,
            fallbacks=dict(fallbacks),
        )
        if self.verdict_head is None or claim.kind != "averitec":
            return pred
        probs = self.verifier.nli.probs(claim.claim, [p.text for p in evidence]) if evidence else np.zeros((0, 3))
        verdict = self.verdict_head.verdict(claim.claim, probs, gate=cal_cfg.abstain)
        return dataclasses.replace(pred, **verdict.fields(on_abstain=cal_cfg.on_abstain))

    # ------------------------------------------------------------------ runs
    def run(
        self,
        claims: Sequence[ClaimInput],
        *,
        out: str | os.PathLike[str],
        output_format: str,
        resume: bool = False,
        overwrite: bool = False,
        progress: bool = True,
        on_claim: Callable[[int], None] | None = None,
        predict_many: Callable[[list[ClaimInput]], Iterable[ClaimPrediction]] | None = None,
    ) -> RunSummary:
        """Predict every claim, writing ``out`` atomically at the end (see module docs).

        The run loop and its partial-run policy are
        :func:`averitec_tools.baselines._run.loop.run_claims`'s.

        Args:
            claims: Claims, in output order.
            out: The final prediction file.
            output_format: ``averitec2024`` (JSON array) or ``ternary`` (JSON lines).
            resume: Continue from ``<out>.partial.jsonl``.
            overwrite: Discard ``<out>.partial.jsonl`` and start over (else an existing one is refused).
            progress: Show a tqdm bar.
            on_claim: Called with the number of claims finished in this run (tests use it
                to simulate an interruption).
            predict_many: Predicts the claims still to do, yielding predictions in order
                (:func:`averitec_tools.engines.engine_predictor` runs them on an
                engine); default: :meth:`predict` one claim at a time in this process.
        """
        from averitec_tools.baselines._run.loop import run_claims

        if output_format not in OUTPUT_FORMATS:
            raise UserError(f"unknown output format {output_format!r} (use one of: {', '.join(OUTPUT_FORMATS)})")
        start, totals = time.perf_counter(), RunTotals(stages=STAGES)

        def count(n: int, pred: ClaimPrediction) -> None:
            totals.add(pred)
            if on_claim is not None:
                on_claim(n)

        warnings = [w for w in [gate_warning(self)] if w]
        done = run_claims(
            claims=claims, claim_id=lambda c: c.claim_id, kind="r2vc", config=self.config.fingerprint(),
            output_format=output_format, out=out, resume=resume, overwrite=overwrite, progress=progress,
            desc=f"R2VC {self.config.name}", predict_many=predict_many or (lambda todo: map(self.predict, todo)),
            encode=OUTPUT_FORMATS.get(output_format).format,
            write_output=lambda records: write_predictions(records, out=out, output_format=output_format),
            on_result=count)
        return run_summary(self, claims=claims, done=done, totals=totals, out=out, output_format=output_format,
                           wall_seconds=time.perf_counter() - start, warnings=warnings)


__all__ = ["STAGES", "R2VCPipeline"]
