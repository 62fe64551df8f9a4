"""R2VC external verifier (§3.4): an NLI cross-encoder plus citation checks.

For a candidate ``z`` the verifier scores every passage ``p ∈ z.passages`` against the
claim with an NLI model and derives (paper §3.4):

* ``s_ent = max_p p_ent(p)`` and ``s_contr = max_p p_contr(p)``;
* ``s_cov``: mean of the ``top_k_coverage`` (6) largest entailment probabilities
  (all of them when the candidate saw fewer passages);
* ``s_cit``: maximum over ``z.passages`` of a heuristic claim–passage similarity
  (:func:`~averitec_tools.baselines.r2vc.stages.verification.signals.citation_similarity`: token overlap, blended with numeric matching when the
  claim contains numbers);
* ``y_NLI`` from ``(s_ent, s_contr)`` with ``T_ent = T_contr = 0.60`` and margin
  ``δ = 0.10`` (:func:`~averitec_tools.baselines.r2vc.stages.verification.signals.nli_label`);
* ``s_cons ∈ {0, 0.5, 1}``: 1 when the generator's label equals ``y_NLI``, 0 when one
  says True and the other False, 0.5 otherwise (exactly one of them is Uncertain);
* ``s_align``: fraction of the candidate's cited passages that are among the
  ``top_k_coverage`` passages with the highest entailment (0 when nothing is cited);
* ``s_ver = 0.6 s_ent + 0.2 s_cov − 0.3 max(0, s_contr − s_ent) + 0.1 s_cons
  + 0.1 s_align − 0.1 (1 − s_cit)`` (``verifier.score: literal``).

Taken literally, this formula ignores the candidate's label: a refutation backed by
clean contradicting evidence gets ``s_ent ≈ 0`` and at most ``0.8·s_ent + 0.17`` when
y_NLI = False, so it can never pass τ_ver = 0.55. ``verifier.score: label-aware`` (the
default) reads the same formula with the evidence signals taken *for the candidate's
label* (:func:`label_signals`):

==============  ==========================  ===========================  ==========================
label           support (replaces s_ent)    coverage column (s_cov)      opposing (replaces s_contr)
==============  ==========================  ===========================  ==========================
True            max entailment              entailment                   max contradiction
False           max contradiction           contradiction                max entailment
Uncertain       1 − max(ent, contr)         neutral                      max(ent, contr)
==============  ==========================  ===========================  ==========================

and s_align counts cited passages among the ``top_k_coverage`` passages ranked by the
coverage column. For a True candidate both scores are identical. An Uncertain
candidate is supported when no passage is decisive either way.

NLI pair order: pairs are always handed to backends as (claim, passage); a backend
decides which side is the premise. :class:`~averitec_tools.nli.HFNLIBackend` uses ``pair_order``
(``evidence-claim``, the default: premise = passage, hypothesis = claim, as pretrained
NLI cross-encoders expect; or ``claim-evidence``).

The NLI model sits behind :class:`~averitec_tools.nli.NLIBackend`; :class:`~averitec_tools.nli.HFNLIBackend` wraps any
transformers sequence-classification checkpoint and reads its label order from
``model.config.id2label`` (never assumed). :class:`Verifier` batches the (claim,
passage) pairs of all candidates of a claim and caches their probabilities, so a
passage that appears in several evidence subsets is scored once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from averitec_tools.baselines.r2vc.config import VerifierConfig
from averitec_tools.baselines.r2vc.stages.verification.signals import (
    citation_similarity,
    label_consistency,
    nli_label,
)
from averitec_tools.baselines.r2vc.types import Candidate, Passage, VerifierScores
from averitec_tools.nli import (
    CONTR,
    ENT,
    NEUT,
    CachedNLI,
    NLIBackend,
)

#: The default verifier settings (§3.4 thresholds, ``label-aware`` score).
DEFAULT_VERIFIER = VerifierConfig()

#: ``verifier.score`` values.
SCORE_MODES: tuple[str, ...] = ("label-aware", "literal")


@dataclass(frozen=True)
class VerifierWeights:
    """Coefficients of s_ver (paper §3.4)."""

    ent: float = 0.6
    cov: float = 0.2
    excess_contr: float = 0.3
    cons: float = 0.1
    align: float = 0.1
    cit_penalty: float = 0.1


@dataclass(frozen=True)
class VerifiedCandidate:
    """A candidate, its verifier components and its per-passage NLI probabilities.

    ``passage_probs`` has shape ``(len(candidate.passages), 3)`` in :data:`~averitec_tools.nli.NLI_COLUMNS`
    order. ``distribution`` is the verifier's NLI label distribution for the candidate
    (p_ent, p_neu, p_con of the paper): the probabilities of the passage with the
    highest entailment.
    """

    candidate: Candidate
    scores: VerifierScores
    passage_probs: np.ndarray

    @property
    def distribution(self) -> tuple[float, float, float]:
        if len(self.passage_probs) == 0:
            return (0.0, 1.0, 0.0)
        row = self.passage_probs[int(np.argmax(self.passage_probs[:, ENT]))]
        return (float(row[ENT]), float(row[NEUT]), float(row[CONTR]))


def _checked_score(score: str) -> str:
    if score not in SCORE_MODES:
        raise ValueError(f"score must be one of {SCORE_MODES}, got {score!r}")
    return score


def label_signals(*, label: str, passage_probs: np.ndarray) -> tuple[np.ndarray, float, float]:
    """Per-passage support column, support and opposing signal for a candidate's label.

    Returns ``(column, support, opposing)``: ``column`` is the per-passage probability
    used for coverage and alignment, ``support`` replaces s_ent and ``opposing``
    replaces s_contr in the label-aware s_ver (see the module docs).

    Example:
        >>> probs = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1]])
        >>> col, sup, opp = label_signals(label="False", passage_probs=probs)
        >>> col.tolist(), sup, opp
        ([0.9, 0.1], 0.9, 0.1)
        >>> [round(x, 2) for x in label_signals(label="Uncertain", passage_probs=probs)[1:]]
        [0.1, 0.9]
    """
    probs = np.asarray(passage_probs, dtype=np.float64).reshape(-1, 3)
    if len(probs) == 0:
        return np.zeros(0), 0.0, 0.0
    s_ent, s_contr = float(probs[:, ENT].max()), float(probs[:, CONTR].max())
    if label == "True":
        return probs[:, ENT], s_ent, s_contr
    if label == "False":
        return probs[:, CONTR], s_contr, s_ent
    decisive = max(s_ent, s_contr)
    return probs[:, NEUT], 1.0 - decisive, decisive


def score_components(
    *,
    claim: str,
    candidate: Candidate,
    passage_probs: np.ndarray,
    config: VerifierConfig = DEFAULT_VERIFIER,
    weights: VerifierWeights = VerifierWeights(),
) -> VerifierScores:
    """Compute every §3.4 component of one candidate from its passages' NLI probabilities.

    ``config`` gives ``top_k_coverage``, the y_NLI thresholds (``t_ent``, ``t_contr``,
    ``delta``) and ``score``. A candidate without passages gets
    ``s_ent = s_contr = s_cov = s_cit = 0``. ``score="literal"`` is the paper's formula;
    ``"label-aware"`` takes support, coverage and alignment for the candidate's label (see
    the module docs). The reported ``s_ent``/``s_contr`` are always the raw maxima;
    ``s_cov`` and ``s_align`` follow ``score``.

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Candidate, Passage
        >>> p = Passage("d", "T", "u", "Paris is in France")
        >>> c = Candidate("True", "r", (0,), (p,), None, 0)
        >>> s = score_components(claim="Paris is in France", candidate=c,
        ...                      passage_probs=np.array([[0.0, 0.2, 0.8]]))
        >>> round(s.s_ver, 6)  # 0.6*.8 + 0.2*.8 + 0.1*1 + 0.1*1 - 0.1*0
        0.84
        >>> f = Candidate("False", "r", (0,), (p,), None, 0)
        >>> probs = np.array([[0.8, 0.2, 0.0]])
        >>> round(score_components(claim="Paris is in France", candidate=f, passage_probs=probs).s_ver, 6)
        0.84
        >>> round(score_components(claim="Paris is in France", candidate=f, passage_probs=probs,
        ...                        config=VerifierConfig(score="literal")).s_ver, 6)
        -0.04
    """
    _checked_score(config.score)
    evidence, support, opposing, top = _evidence_signals(claim=claim, candidate=candidate,
                                                         passage_probs=passage_probs, config=config)
    y = nli_label(s_ent=evidence["s_ent"], s_contr=evidence["s_contr"], t_ent=config.t_ent, t_contr=config.t_contr,
                  delta=config.delta)
    s_cons = label_consistency(generated=candidate.label, nli=y)
    cited = {i for i in candidate.citations if 0 <= i < len(candidate.passages)}
    s_align = len(cited & top) / len(cited) if cited else 0.0
    s_ver = (
        weights.ent * support
        + weights.cov * evidence["s_cov"]
        - weights.excess_contr * max(0.0, opposing - support)
        + weights.cons * s_cons
        + weights.align * s_align
        - weights.cit_penalty * (1.0 - evidence["s_cit"])
    )
    return VerifierScores(**evidence, y_nli=y, s_cons=s_cons, s_align=s_align, s_ver=float(s_ver))


def _evidence_signals(*, claim: str, candidate: Candidate, passage_probs: np.ndarray,
                      config: VerifierConfig) -> tuple[dict[str, float], float, float, set[int]]:
    """The evidence side of one candidate's score: ``({s_ent, s_contr, s_cov, s_cit}, support,
    opposing, the top_k_coverage passages)`` (all 0 and none for a candidate without passages)."""
    n = len(candidate.passages)
    probs = np.asarray(passage_probs, dtype=np.float64).reshape(n, 3)
    if n == 0:
        return dict.fromkeys(("s_ent", "s_contr", "s_cov", "s_cit"), 0.0), 0.0, 0.0, set()
    s_ent, s_contr = float(probs[:, ENT].max()), float(probs[:, CONTR].max())
    if config.score == "literal":
        column, support, opposing = probs[:, ENT], s_ent, s_contr
    else:
        column, support, opposing = label_signals(label=candidate.label, passage_probs=probs)
    # Stable sort so ties keep passage order (deterministic alignment sets).
    order = np.argsort(-column, kind="stable")[: config.top_k_coverage]
    s_cit = max(citation_similarity(claim=claim, passage=p.text) for p in candidate.passages)
    evidence = {"s_ent": s_ent, "s_contr": s_contr, "s_cov": float(column[order].mean()), "s_cit": s_cit}
    return evidence, support, opposing, {int(i) for i in order}


class Verifier:
    """Scores generator candidates with an NLI backend (§3.4), caching pair probabilities.

    Args:
        backend: Any :class:`~averitec_tools.nli.NLIBackend`
            (wrapped in a ``CachedNLI`` unless it is one).
        config: ``top_k_coverage`` (passages averaged in s_cov and used as the alignment
            set, 6), the y_NLI thresholds ``t_ent``, ``t_contr``, ``delta`` (0.60, 0.60,
            0.10) and ``score``: ``label-aware`` (default) or ``literal`` (the paper's
            formula as written).
        weights: s_ver coefficients.

    Example:
        >>> class Fake:
        ...     name = "fake"
        ...     def predict(self, pairs):
        ...         return np.array([[0.1, 0.1, 0.8]] * len(pairs))
        >>> from averitec_tools.baselines.r2vc.types import Candidate, Passage
        >>> p = Passage("d", "T", "u", "x")
        >>> v = Verifier(backend=Fake())
        >>> [r.scores.y_nli for r in v.verify(claim="x", candidates=[Candidate("True", "", (0,), (p,), None, 0)])]
        ['True']
    """

    def __init__(self, *, backend: NLIBackend, config: VerifierConfig = DEFAULT_VERIFIER,
                 weights: VerifierWeights = VerifierWeights()) -> None:
        _checked_score(config.score)
        self.nli = backend if isinstance(backend, CachedNLI) else CachedNLI(backend)
        self.config = config
        self.weights = weights

    @property
    def score(self) -> str:
        """The s_ver reading: ``label-aware`` or ``literal``."""
        return self.config.score

    def with_thresholds(self, *, t_ent: float, t_contr: float, delta: float) -> Verifier:
        """This verifier (same NLI cache and weights) with other y_NLI thresholds."""
        from dataclasses import replace

        return Verifier(backend=self.nli, config=replace(self.config, t_ent=t_ent, t_contr=t_contr, delta=delta),
                        weights=self.weights)

    def passage_probs(self, *, claim: str, passages: Sequence[Passage]) -> np.ndarray:
        """NLI probabilities of ``claim`` against each passage (cached)."""
        return self.nli.probs(claim, [p.text for p in passages])

    def verify(self, *, claim: str, candidates: Sequence[Candidate]) -> list[VerifiedCandidate]:
        """Score each candidate; all distinct passages are sent to the backend in one batch."""
        pool = list(dict.fromkeys(p.text for c in candidates for p in c.passages))
        self.nli.probs(claim, pool)  # one batched call fills the cache
        out = []
        for cand in candidates:
            probs = self.passage_probs(claim=claim, passages=cand.passages)
            scores = score_components(claim=claim, candidate=cand, passage_probs=probs, config=self.config,
                                      weights=self.weights)
            out.append(VerifiedCandidate(candidate=cand, scores=scores, passage_probs=probs))
        return out


def verifier_from_config(*, backend: NLIBackend, config: VerifierConfig) -> Verifier:
    """A :class:`Verifier` with a ``VerifierConfig``'s thresholds and score mode.

    Example:
        >>> class Fake:
        ...     name = "fake"
        ...     def predict(self, pairs):
        ...         return np.full((len(pairs), 3), 1 / 3)
        >>> verifier_from_config(backend=Fake(), config=VerifierConfig(score="literal")).score
        'literal'
    """
    return Verifier(backend=backend, config=config)


def safe_log(p: float) -> float:
    """log(p) clipped away from -inf, for log-probability features."""
    return math.log(max(p, 1e-12))


__all__ = ["VerifiedCandidate", "Verifier", "safe_log", "score_components", "verifier_from_config"]
