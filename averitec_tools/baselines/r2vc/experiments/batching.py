"""Candidates batched across claims: one ``generate`` call decodes a fixed chunk of claims.

The pipeline asks its generator for one claim's k candidates at a time; on a GPU a batch
of k = 16 sequences leaves the decode step memory-bound (every step reads the 8B weights
once whatever the batch). :class:`ClaimBatcher` wraps an LM generator that has
``generate_many`` (:class:`~averitec_tools.baselines.r2vc.stages.generation.generator.HFGenerator`):
when the pipeline asks for a claim not decoded yet, it decodes the claim's whole chunk —
claims ``[i·B, (i+1)·B)`` of the run's claim list, each with its own evidence (the
pipeline's :meth:`~averitec_tools.baselines.r2vc.pipeline.R2VCPipeline.evidence_for`) — in
one batch of ``B·k`` sequences and hands the other claims' candidates out as the pipeline
asks for them.

The batcher reaches the pipeline through a weak reference: the pipeline owns the batcher (its
``generator``), so a strong one back would make a ``pipe ↔ batcher`` cycle that keeps the
pipeline — and the 8B generator inside — alive until Python's cyclic collector runs.

Chunks are fixed by position in the claim list, not by what is left to do, so a rerun
after a kill decodes a chunk with the same members and the same batch seed (its first
claim's) and gets the same candidates (on a deterministic device); a chunk with a member
already stored is decoded whole again for that reason. Candidates depend on ``B``, so the
candidate-store key carries it (:func:`batch_settings`).

Example:
    >>> batch_settings(8)
    {'decode_batch': 8}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def batch_settings(size: int) -> dict[str, Any]:
    """What enters a candidate-store key for chunks of ``size`` claims."""
    return {"decode_batch": int(size)}


class ClaimBatcher:
    """Wraps an LM generator: a claim's ``generate`` call decodes its whole chunk (module docs)."""

    def __init__(self, inner: Any, *, pipe: Any, claims: Sequence[Any], size: int) -> None:
        import inspect
        import weakref

        self.inner, self.size = inner, max(1, int(size))
        evidence_for = pipe.evidence_for  # a bound method holds its pipeline: hold it weakly (module docs)
        self._evidence_for = (weakref.WeakMethod(evidence_for) if inspect.ismethod(evidence_for)
                              else lambda: evidence_for)
        self._base_seed = int(pipe.config.generator.seed)
        self.claims = list(claims)
        self._position = {self._seed(c): i for i, c in enumerate(self.claims)}
        self._ready: dict[int, Any] = {}
        self.n_batches = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _seed(self, claim: Any) -> int:
        from averitec_tools.baselines.r2vc.stages.generation.sampling import claim_seed

        return claim_seed(self._base_seed, claim.claim_id)

    def _pool(self, member: Any) -> list[Any]:
        evidence_for = self._evidence_for()
        if evidence_for is None:
            raise RuntimeError("ClaimBatcher: its pipeline is gone")
        return list(evidence_for(member))

    def generate(self, claim: str, evidence: Sequence[Any], *, k: int, seed: int) -> Any:
        if seed in self._ready:
            return self._ready.pop(seed)
        i = self._position.get(seed)
        if i is None or self.size == 1:
            return self.inner.generate(claim, evidence, k=k, seed=seed)
        start = i // self.size * self.size
        requests, seeds = [], []
        for member in self.claims[start:start + self.size]:
            s = self._seed(member)
            pool = list(evidence) if s == seed else self._pool(member)
            if pool:  # the pipeline decodes nothing for an empty pool
                requests.append((member.claim, pool, k))
                seeds.append(s)
        results = self.inner.generate_many(requests, seeds=seeds, batch_seed=seeds[0])
        self.n_batches += 1
        self._ready = {s: r for s, r in zip(seeds, results, strict=True) if s != seed}
        return results[seeds.index(seed)]


def batch_claims(pipe: Any, *, claims: Sequence[Any], size: int) -> None:
    """Wrap ``pipe``'s generator in a :class:`ClaimBatcher` when it can decode several claims at once."""
    if size > 1 and hasattr(pipe.generator, "generate_many"):
        pipe.generator = ClaimBatcher(pipe.generator, pipe=pipe, claims=claims, size=size)


__all__ = ["ClaimBatcher", "batch_claims", "batch_settings"]
