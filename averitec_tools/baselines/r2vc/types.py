"""Records and interfaces shared by the R2VC stages.

Stages talk only through these types, so each backend (bm25s, pyserini, FAISS; HF
generators; NLI cross-encoders) can be swapped without touching the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Passage:
    """One retrieval unit of the corpus: a paragraph with its page title and URL."""

    doc_id: str
    title: str
    url: str
    text: str


@dataclass(frozen=True)
class ScoredPassage:
    """A passage with a retriever's (or the fused) score for one query."""

    passage: Passage
    score: float
    #: Which retriever produced the score ("bm25s", "pyserini", "dense", "hybrid").
    source: str = ""


@runtime_checkable
class Retriever(Protocol):
    """Anything that maps a batch of queries to ranked, scored passages."""

    name: str

    def search(self, queries: Sequence[str], *, k: int) -> list[list[ScoredPassage]]:
        """Return, for each query, up to ``k`` passages, best first."""
        ...


#: R2VC's ternary verdicts, as the generator writes them.
R2VC_LABELS: tuple[str, ...] = ("True", "False", "Uncertain")


@dataclass(frozen=True)
class Candidate:
    """One structured verdict candidate from the generator (or the NLI-only fallback).

    Attributes:
        label: One of :data:`R2VC_LABELS`.
        rationale: The generated rationale text.
        citations: 0-based indices into ``passages`` that the candidate cites.
        passages: The evidence subset S_i the candidate was generated from.
        mean_logprob: Mean token log-probability of the generated text (None if unknown).
        config_index: Index of the decoding configuration in the bank (θ_i).
        raw_text: The unparsed generator output.
    """

    label: str
    rationale: str
    citations: tuple[int, ...]
    passages: tuple[Passage, ...]
    mean_logprob: float | None
    config_index: int
    raw_text: str = ""

    @property
    def cited_passages(self) -> tuple[Passage, ...]:
        return tuple(self.passages[i] for i in self.citations if 0 <= i < len(self.passages))


@dataclass(frozen=True)
class GenerationResult:
    """Candidates for one claim, plus how many outputs were unparseable (kept as Uncertain)."""

    candidates: tuple[Candidate, ...]
    n_malformed: int = 0


@runtime_checkable
class Generator(Protocol):
    """Produces k structured candidates for a claim from an evidence pool."""

    name: str

    def generate(
        self, claim: str, evidence: Sequence[Passage], *, k: int, seed: int
    ) -> GenerationResult:
        ...


@dataclass(frozen=True)
class VerifierScores:
    """Every component of the §3.4 verifier for one candidate (kept for analysis)."""

    s_ent: float
    s_contr: float
    s_cov: float
    s_cit: float
    y_nli: str
    s_cons: float
    s_align: float
    s_ver: float


__all__ = [
    "R2VC_LABELS",
    "Candidate",
    "GenerationResult",
    "Generator",
    "Passage",
    "Retriever",
    "ScoredPassage",
    "VerifierScores",
]
