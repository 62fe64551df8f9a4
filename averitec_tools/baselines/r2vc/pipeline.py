"""The R2VC pipeline: retrieve → generate → verify → calibrate → decide, per claim.

:class:`R2VCPipeline` wires the stages (any ``Retriever``, ``Generator``, a
:class:`~averitec_tools.baselines.r2vc.verifier.Verifier`, an optional calibrator) and
runs claims with:

* per-stage wall-clock timings (retrieval, generation, verification, calibration +
  decision, question writing), summed and per claim;
* a tqdm progress bar;
* crash-safe output: each finished claim is appended (and fsynced) to a sidecar
  ``<out>.partial.jsonl``; ``resume=True`` skips the claims already there (a torn last
  line is dropped), and the final file is written atomically, after which the sidecar
  is removed — an interrupted run never leaves a half-written output file;
* empty retrieval → abstain (Uncertain, confidence 0) instead of an error.

:func:`build_pipeline` builds the stages from an :class:`~averitec_tools.baselines.r2vc.config.R2VCConfig`.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from averitec_tools.baselines.r2vc.calibrator import (
    Calibrator,
    candidate_features,
    monotone_confidence,
)
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.decision import decide
from averitec_tools.baselines.r2vc.output import (
    FALLBACK_EVIDENCE,
    FORMATTERS,
    ClaimInput,
    ClaimPrediction,
    FallbackQuestionWriter,
    QuestionWriter,
)
from averitec_tools.baselines.r2vc.types import Generator, Passage, Retriever
from averitec_tools.baselines.r2vc.verifier import VerifiedCandidate, Verifier
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer

STAGES: tuple[str, ...] = ("retrieve", "generate", "verify", "calibrate", "questions")
_SIDECAR_VERSION = 1


class ClaimCalibrator(Protocol):
    """A calibrator chosen per claim (cross-fitted calibrators in the offline config)."""

    def for_claim(self, claim: str) -> Calibrator | None:
        ...


def sidecar_path(out: str | os.PathLike[str]) -> Path:
    """Where a run writes its finished claims before the final output exists."""
    p = Path(out)
    return p.with_name(p.name + ".partial.jsonl")


def claim_seed(base: int, claim_id: Any) -> int:
    """Per-claim generation seed: stable across runs and resumes."""
    return (base * 1_000_003 + zlib.crc32(json.dumps(claim_id).encode())) % (2**31)


@dataclass
class RunSummary:
    """What a run did: counts, label distribution and timings (seconds)."""

    out: str
    n_claims: int
    n_resumed: int
    labels: dict[str, int]
    n_abstained: int
    n_malformed: int
    n_candidates: int
    stage_seconds: dict[str, float]
    wall_seconds: float
    config: str
    format: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        processed = max(self.n_claims - self.n_resumed, 0)
        per_claim = {k: (v / processed if processed else 0.0) for k, v in self.stage_seconds.items()}
        per_candidate = {
            k: (self.stage_seconds[k] / self.n_candidates if self.n_candidates else 0.0)
            for k in ("generate", "verify")
        }
        return {
            "out": self.out,
            "config": self.config,
            "format": self.format,
            "n_claims": self.n_claims,
            "n_resumed": self.n_resumed,
            "n_processed": processed,
            "labels": self.labels,
            "n_abstained": self.n_abstained,
            "n_candidates": self.n_candidates,
            "n_malformed": self.n_malformed,
            "stage_seconds": self.stage_seconds,
            "seconds_per_claim": per_claim,
            "seconds_per_candidate": per_candidate,
            "wall_seconds": self.wall_seconds,
            "claims_per_second": processed / self.wall_seconds if self.wall_seconds > 0 else 0.0,
            **self.extra,
        }


class R2VCPipeline:
    """Runs claims through the R2VC stages.

    Args:
        retriever: Returns the fused evidence pool E(c) (``top_m`` passages).
        generator: Produces the k candidates (LM or NLI-only fallback).
        verifier: Scores candidates (§3.4).
        calibrator: A :class:`Calibrator`, an object with ``for_claim(claim)``, or None
            (π = s_ver clipped, the ``no_calibration`` ablation).
        config: The effective configuration (thresholds, k, seeds, ablations).
        question_writer: Writes evidence questions (default: the fallback question).

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage
        >>> from averitec_tools.baselines.r2vc.nli_fallback import NLIFallbackGenerator
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
    ) -> None:
        self.retriever = retriever
        self.generator = generator
        self.verifier = verifier
        self.calibrator = calibrator
        self.config = config
        self.question_writer = question_writer or FallbackQuestionWriter()
        #: Seconds spent building each part (filled by builders that train or index).
        self.build_seconds: dict[str, float] = {}

    # ------------------------------------------------------------------ stages
    def retrieve(self, claim: str) -> list[Passage]:
        if self.retriever is None:
            return []
        hits = self.retriever.search([claim], k=self.config.retrieval.top_m)
        return [h.passage for h in (hits[0] if hits else [])]

    def candidates(self, claim: ClaimInput, evidence: Sequence[Passage], *, k: int | None = None,
                   timings: dict[str, float] | None = None) -> tuple[list[VerifiedCandidate], int]:
        """Generate and verify the candidates of one claim; returns them and the malformed count."""
        timings = {} if timings is None else timings
        if not evidence:
            return [], 0
        t0 = time.perf_counter()
        result = self.generator.generate(
            claim.claim, evidence, k=k or self.config.generator.k,
            seed=claim_seed(self.config.generator.seed, claim.claim_id),
        )
        t1 = time.perf_counter()
        verified = self.verifier.verify(claim=claim.claim, candidates=result.candidates)
        t2 = time.perf_counter()
        timings["generate"] = timings.get("generate", 0.0) + t1 - t0
        timings["verify"] = timings.get("verify", 0.0) + t2 - t1
        return verified, result.n_malformed

    def confidences(self, claim: str, verified: Sequence[VerifiedCandidate]) -> np.ndarray:
        """π_i: the calibrator's probabilities, or s_ver clipped to [0, 1] without one."""
        if not verified:
            return np.zeros(0)
        cal = self.calibrator
        if cal is not None and hasattr(cal, "for_claim"):
            cal = cal.for_claim(claim)
        if cal is None:
            return monotone_confidence(np.array([v.scores.s_ver for v in verified]))
        return np.asarray(cal.predict(candidate_features(verified)))  # type: ignore[union-attr]

    def predict(self, claim: ClaimInput) -> ClaimPrediction:
        """Run every stage on one claim."""
        timings: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        t0 = time.perf_counter()
        evidence = self.retrieve(claim.claim)
        timings["retrieve"] = time.perf_counter() - t0
        verified, n_malformed = self.candidates(claim, evidence, timings=timings)
        t0 = time.perf_counter()
        pi = self.confidences(claim.claim, verified)
        cal_cfg = self.config.calibration
        decision = decide(
            verified=verified,
            confidences=pi,
            tau_cal=cal_cfg.tau_cal,
            tau_ver=cal_cfg.tau_ver,
            verifier_selection=not self.config.ablation.no_verifier_selection,
            abstain=cal_cfg.abstain,
        )
        timings["calibrate"] = time.perf_counter() - t0
        cited: tuple[Passage, ...] = ()
        if decision.index is not None:
            cited = verified[decision.index].candidate.cited_passages
        if not cited:
            cited = tuple(evidence[:FALLBACK_EVIDENCE])
        t0 = time.perf_counter()
        questions = tuple(self.question_writer.write(claim=claim.claim, passages=cited)) if cited else ()
        timings["questions"] = time.perf_counter() - t0
        return ClaimPrediction(
            claim=claim,
            label=decision.label,
            confidence=decision.confidence,
            rationale=decision.rationale,
            cited=cited,
            questions=questions,
            abstained=decision.abstained,
            reason=decision.reason,
            s_ver=decision.s_ver,
            n_candidates=len(verified),
            n_malformed=n_malformed,
            timings=timings,
            candidate_label=None if decision.index is None else verified[decision.index].candidate.label,
        )

    # ------------------------------------------------------------------ runs
    def run(
        self,
        claims: Sequence[ClaimInput],
        *,
        out: str | os.PathLike[str],
        output_format: str,
        resume: bool = False,
        progress: bool = True,
        on_claim: Callable[[int], None] | None = None,
    ) -> RunSummary:
        """Predict every claim, writing ``out`` atomically at the end (see module docs).

        Args:
            claims: Claims, in output order.
            out: The final prediction file.
            output_format: ``averitec2024`` (JSON array) or ``ternary`` (JSON lines).
            resume: Continue from ``<out>.partial.jsonl`` if present.
            progress: Show a tqdm bar.
            on_claim: Called with the number of claims finished in this run (tests use it
                to simulate an interruption).
        """
        from tqdm.auto import tqdm

        if output_format not in FORMATTERS:
            raise UserError(f"unknown output format {output_format!r} (use one of: {', '.join(FORMATTERS)})")
        formatter = FORMATTERS[output_format]
        side = sidecar_path(out)
        header = {
            "_r2vc_sidecar": _SIDECAR_VERSION,
            "config": self.config.fingerprint(),
            "format": output_format,
        }
        done = _read_sidecar(side, header) if resume and side.exists() else {}
        start = time.perf_counter()
        stage_seconds = dict.fromkeys(STAGES, 0.0)
        labels: Counter[str] = Counter()
        n_abstained = n_malformed = n_candidates = 0
        side.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if done else "w"
        todo = [c for c in claims if _key(c.claim_id) not in done]
        with side.open(mode, encoding="utf-8") as fh:
            if mode == "w":
                fh.write(json.dumps(header) + "\n")
                fh.flush()
            bar = tqdm(todo, desc=f"R2VC {self.config.name}", unit="claim", disable=not progress)
            for n, claim in enumerate(bar, start=1):
                pred = self.predict(claim)
                record = formatter(pred)
                fh.write(json.dumps({"key": _key(claim.claim_id), "record": record}) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
                done[_key(claim.claim_id)] = record
                for stage, sec in pred.timings.items():
                    stage_seconds[stage] += sec
                n_abstained += pred.abstained
                n_malformed += pred.n_malformed
                n_candidates += pred.n_candidates
                if on_claim is not None:
                    on_claim(n)
        records = [done[_key(c.claim_id)] for c in claims]
        for r in records:
            labels[r.get("pred_label", r.get("predicted_label"))] += 1
        with atomic_writer(out) as fh:
            if output_format == "averitec2024":
                json.dump(records, fh, ensure_ascii=False, indent=1)
                fh.write("\n")
            else:
                for r in records:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        side.unlink(missing_ok=True)
        return RunSummary(
            out=str(out),
            n_claims=len(claims),
            n_resumed=len(claims) - len(todo),
            labels=dict(sorted(labels.items())),
            n_abstained=n_abstained,
            n_malformed=n_malformed,
            n_candidates=n_candidates,
            stage_seconds=stage_seconds,
            wall_seconds=time.perf_counter() - start,
            config=self.config.name,
            format=output_format,
        )


def _key(claim_id: Any) -> str:
    return json.dumps(claim_id)


def _read_sidecar(path: Path, header: dict[str, Any]) -> dict[str, Any]:
    """Read a partial run; drops a torn last line (truncating the file to the last good one)."""
    done: dict[str, Any] = {}
    good_end = 0
    with path.open("rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    pos = 0
    for i, raw in enumerate(lines):
        end = pos + len(raw) + 1
        if not raw.strip():
            pos = end
            continue
        try:
            obj = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if i >= len(lines) - 2:  # torn last line from an interrupted write
                break
            raise UserError(f"{path}:{i + 1}: corrupt partial-run file", hint="delete it and rerun without --resume") from None
        if i == 0:
            if not isinstance(obj, dict) or obj.get("_r2vc_sidecar") != _SIDECAR_VERSION:
                raise UserError(f"{path}:1: not an R2VC partial-run file", hint="delete it or choose another --out")
            if obj.get("config") != header["config"] or obj.get("format") != header["format"]:
                raise UserError(
                    f"{path}: the partial run used a different configuration or output format",
                    hint="rerun without --resume to start over",
                )
        else:
            if not isinstance(obj, dict) or "key" not in obj or "record" not in obj:
                raise UserError(f"{path}:{i + 1}: corrupt partial-run file", hint="delete it and rerun without --resume")
            done[obj["key"]] = obj["record"]
        good_end = min(end, len(data))
        pos = end
    if good_end < len(data):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
            if good_end and not data[:good_end].endswith(b"\n"):
                fh.seek(good_end)
                fh.write(b"\n")
    if good_end == 0:
        raise UserError(f"{path}: partial-run file has no header", hint="delete it and rerun without --resume")
    return done


# ---------------------------------------------------------------------- building


def build_pipeline(
    config: R2VCConfig,
    *,
    corpus: str | None = None,
    claims: Sequence[ClaimInput] = (),
    rebuild_index: bool = False,
    progress: bool = True,
) -> R2VCPipeline:
    """Build the stages of ``config`` (after applying its ablation switches).

    The offline configuration is built by :func:`averitec_tools.baselines.r2vc.offline.build_offline_pipeline`.

    Raises:
        UserError / ResourceError: no corpus, a missing or corrupt index, a model that
            cannot be loaded (offline: at once, never waiting on the network).
    """
    cfg = config.effective()
    if cfg.offline.enabled:
        from averitec_tools.baselines.r2vc.offline import build_offline_pipeline

        return build_offline_pipeline(cfg, claims=claims, progress=progress)
    from averitec_tools.baselines.r2vc.calibrator import load_or_none
    from averitec_tools.baselines.r2vc.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.retrieval import build_retriever
    from averitec_tools.baselines.r2vc.verifier import HFNLIBackend

    corpus_dir = corpus or cfg.retrieval.corpus
    if corpus_dir is None:
        raise UserError(f"config {cfg.name!r}: no corpus given", hint="pass --corpus DIR or set retrieval.corpus")
    if not Path(corpus_dir).is_dir():
        raise UserError(f"{corpus_dir}: corpus directory not found")
    r = cfg.retrieval
    retriever = build_retriever(
        corpus=corpus_dir,
        sparse=r.sparse,
        dense_model=r.dense_model,
        index_dir=r.index_dir or str(Path(corpus_dir) / "indexes"),
        alpha=r.alpha,
        epsilon=r.epsilon,
        top_sparse=r.top_sparse,
        top_dense=r.top_dense,
        top_m=r.top_m,
        dense_index=r.dense_index,
        device=r.device,
        encode_batch_size=r.encode_batch_size,
        rebuild=rebuild_index,
        show_progress=progress,
    )
    calibrator = load_or_none(cfg.calibration.path)
    v = cfg.verifier
    backend = HFNLIBackend(model_id=v.model, device=v.device, batch_size=v.batch_size, max_length=v.max_length)
    verifier = Verifier(backend=backend, top_k_coverage=v.top_k_coverage, t_ent=v.t_ent,
                        t_contr=v.t_contr, delta=v.delta)
    question_writer: QuestionWriter | None = None
    generator: Generator
    g = cfg.generator
    if g.model is None:
        generator = NLIFallbackGenerator(nli=verifier.nli, subset_size=g.subset_size,
                                         t_ent=v.t_ent, t_contr=v.t_contr, delta=v.delta)
    else:
        from averitec_tools.baselines.r2vc.generator import HFGenerator
        from averitec_tools.baselines.r2vc.output import LMQuestionWriter

        hf = HFGenerator(g.model, device=g.device, dtype=g.dtype, max_new_tokens=g.max_new_tokens,
                         subset_size=g.subset_size)
        generator = hf
        question_writer = LMQuestionWriter(model=hf.model, tokenizer=hf.tokenizer)
    return R2VCPipeline(retriever=retriever, generator=generator, verifier=verifier,
                        calibrator=calibrator, config=cfg, question_writer=question_writer)


def fit_calibrator(
    pipe: R2VCPipeline, *, claims: Sequence[ClaimInput], where: str = "claims", progress: bool = False
) -> Calibrator:
    """Fit the SLC calibrator (§3.5) by simulating inference on labelled ``claims``.

    Each claim gets ``min(calibration.fit_candidates, generator.k)`` candidates (12 in
    the paper); the candidate with the highest s_ver is chosen and the target is whether
    its label equals the gold label; claims with empty retrieval are skipped.

    Raises:
        UserError: if a claim has no gold label.
    """
    from averitec_tools.baselines.r2vc.calibrator import fit_from_examples, simulate_examples

    unlabelled = [c.claim_id for c in claims if c.gold_label is None]
    if unlabelled:
        raise UserError(f"{where}: claim {unlabelled[0]!r} has no gold label; the calibrator needs labelled claims")
    cfg = pipe.config
    k = min(cfg.calibration.fit_candidates, cfg.generator.k)
    by_text = {c.claim: c for c in claims}

    def candidates_for(text: str) -> list[VerifiedCandidate]:
        claim = by_text[text]
        return pipe.candidates(claim, pipe.retrieve(text), k=k)[0]

    examples = simulate_examples(
        claims=[c.claim for c in claims],
        gold_labels=[str(c.gold_label) for c in claims],
        candidates_for=candidates_for,
        progress=progress,
    )
    return fit_from_examples(examples, max_iter=cfg.calibration.max_iter)


__all__ = [
    "STAGES",
    "R2VCPipeline",
    "RunSummary",
    "build_pipeline",
    "claim_seed",
    "fit_calibrator",
    "sidecar_path",
]
