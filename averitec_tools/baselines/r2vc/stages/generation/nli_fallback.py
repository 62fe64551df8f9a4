"""NLI-only candidate generator: the fallback when no causal LM is configured.

It implements the :class:`~averitec_tools.baselines.r2vc.types.Generator` protocol so
the rest of the pipeline (verifier, calibrator, decision) runs unchanged. It is also the
paper's "NLI-only" ablation row. For candidate ``i`` (of ``k``):

1. Evidence subset ``S_i``: a random subset of size ``min(subset_size, |E|)`` drawn by
   :func:`~averitec_tools.baselines.r2vc.stages.generation.sampling.sample_evidence_subsets` — exactly the
   subsets the LM generator would see with the same seed.
2. Label: the verifier's rule ``y_NLI`` (:func:`~averitec_tools.baselines.r2vc.stages.verification.signals.nli_label`)
   applied to the max entailment / contradiction probabilities over ``S_i``.
3. Citations — the passages that carry the label, so the calibrator's ``n_passages``
   (passages the candidate uses) and the label-aware ``s_align`` mean something: for
   True (False) the passages of ``S_i`` whose own entailment (contradiction) reaches
   T_ent (T_contr), strongest first; for Uncertain the passages that decide nothing
   (neither threshold reached), most neutral first — the column the label-aware
   verifier ranks by. At least one passage (the strongest for the label), at most
   ``max_citations``.
4. Rationale: a templated sentence naming the cited passages and their NLI probability.
5. ``mean_logprob``: ``log p`` of the chosen label — ``s_ent`` for True, ``s_contr`` for
   False, ``1 − max(s_ent, s_contr)`` for Uncertain — standing in for the LM's mean token
   log-probability in the calibrator's features.

The NLI probabilities come from a shared :class:`~averitec_tools.nli.CachedNLI`,
so the verifier re-uses them at no cost.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from averitec_tools.baselines.r2vc.stages.generation.sampling import sample_evidence_subsets
from averitec_tools.baselines.r2vc.stages.verification.signals import nli_label
from averitec_tools.baselines.r2vc.stages.verification.verifier import safe_log
from averitec_tools.baselines.r2vc.types import Candidate, GenerationResult, Passage
from averitec_tools.nli import (
    CONTR,
    ENT,
    NEUT,
    CachedNLI,
    NLIBackend,
)


class NLIFallbackGenerator:
    """Candidates from NLI verdicts over random evidence subsets (no language model).

    Args:
        nli: The NLI backend (shared with the verifier; wrapped in a cache if needed).
        subset_size: Passages per candidate (paper: 16).
        max_citations: At most this many passages are cited per candidate.
        t_ent, t_contr, delta: Thresholds of the verdict rule (paper §3.4).

    Example:
        >>> class Fake:
        ...     name = "fake"
        ...     def predict(self, pairs):
        ...         return np.array([[0.05, 0.15, 0.8] if "Paris" in p else [0.1, 0.8, 0.1]
        ...                          for _, p in pairs])
        >>> ev = [Passage("a", "Paris", "u1", "Paris is in France"), Passage("b", "X", "u2", "Other")]
        >>> res = NLIFallbackGenerator(nli=Fake()).generate("Paris is in France", ev, k=2, seed=0)
        >>> [(c.label, c.cited_passages[0].doc_id) for c in res.candidates]
        [('True', 'a'), ('True', 'a')]
    """

    def __init__(
        self,
        *,
        nli: NLIBackend,
        subset_size: int = 16,
        max_citations: int = 3,
        t_ent: float = 0.60,
        t_contr: float = 0.60,
        delta: float = 0.10,
    ) -> None:
        self.nli = nli if isinstance(nli, CachedNLI) else CachedNLI(nli)
        self.name = f"nli-fallback:{self.nli.name}"
        self.subset_size = subset_size
        self.max_citations = max_citations
        self.t_ent = t_ent
        self.t_contr = t_contr
        self.delta = delta

    def with_thresholds(self, *, t_ent: float, t_contr: float, delta: float) -> NLIFallbackGenerator:
        """This generator (same NLI cache) with other y_NLI thresholds (per evidence regime)."""
        return NLIFallbackGenerator(nli=self.nli, subset_size=self.subset_size, max_citations=self.max_citations,
                                    t_ent=t_ent, t_contr=t_contr, delta=delta)

    def generate(
        self, claim: str, evidence: Sequence[Passage], *, k: int, seed: int
    ) -> GenerationResult:
        """Return ``k`` candidates (none when ``evidence`` is empty)."""
        if not evidence or k <= 0:
            return GenerationResult(candidates=())
        probs_all = self.nli.probs(claim, [p.text for p in evidence])
        subsets = sample_evidence_subsets(
            n_passages=len(evidence), k=k, seed=seed, subset_size=self.subset_size
        )
        out = []
        for i, subset in enumerate(subsets):
            idx = list(subset)
            probs = probs_all[idx]
            s_ent = float(probs[:, ENT].max())
            s_contr = float(probs[:, CONTR].max())
            label = nli_label(
                s_ent=s_ent, s_contr=s_contr, t_ent=self.t_ent, t_contr=self.t_contr, delta=self.delta
            )
            if label == "True":
                key, p_label, verb = probs[:, ENT], s_ent, "supports"
                carries = probs[:, ENT] >= self.t_ent
            elif label == "False":
                key, p_label, verb = probs[:, CONTR], s_contr, "contradicts"
                carries = probs[:, CONTR] >= self.t_contr
            else:
                key = probs[:, NEUT]
                p_label, verb = 1.0 - max(s_ent, s_contr), "is inconclusive about"
                carries = (probs[:, ENT] < self.t_ent) & (probs[:, CONTR] < self.t_contr)
            ranked = [int(j) for j in np.argsort(-key, kind="stable")]
            cited = tuple(([j for j in ranked if carries[j]] or ranked[:1])[: self.max_citations])
            passages = tuple(evidence[j] for j in idx)
            names = ", ".join(f"[{passages[j].title or passages[j].doc_id}]" for j in cited)
            rationale = (
                f"The evidence {names} {verb} the claim "
                f"(max entailment {s_ent:.2f}, max contradiction {s_contr:.2f})."
            )
            out.append(
                Candidate(
                    label=label,
                    rationale=rationale,
                    citations=cited,
                    passages=passages,
                    mean_logprob=safe_log(p_label),
                    config_index=i,
                    raw_text=f"{label}. {rationale}",
                )
            )
        return GenerationResult(candidates=tuple(out))


__all__ = ["NLIFallbackGenerator"]
