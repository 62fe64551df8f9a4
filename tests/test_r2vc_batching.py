"""Candidates batched across claims (experiments/batching.py): fixed chunks, every claim gets its own result."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from averitec_tools.baselines.r2vc.experiments.batching import ClaimBatcher, batch_claims
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.stages.generation.sampling import claim_seed


class FakeLM:
    """Answers each request with (claim, k, batch seed, batch members); records every batch."""

    name = "fake"

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def generate(self, claim: str, evidence: Any, *, k: int, seed: int) -> Any:
        return ("alone", claim, k, seed)

    def generate_many(self, requests: Any, *, seeds: Any, batch_seed: int) -> list[Any]:
        members = [claim for claim, _, _ in requests]
        self.batches.append(members)
        return [(claim, k, batch_seed, tuple(members)) for claim, _, k in requests]


def _setup(n: int, size: int, *, empty: tuple[int, ...] = ()) -> tuple[Any, list[ClaimInput], FakeLM]:
    claims = [ClaimInput(claim_id=i, claim=f"claim {i}") for i in range(n)]
    lm = FakeLM()
    pipe = SimpleNamespace(generator=lm, config=SimpleNamespace(generator=SimpleNamespace(seed=7)),
                           evidence_for=lambda c: [] if c.claim_id in empty else [f"passage of {c.claim}"])
    batch_claims(pipe, claims=claims, size=size)
    return pipe, claims, lm


def _ask(pipe: Any, claim: ClaimInput) -> Any:
    return pipe.generator.generate(claim.claim, [f"passage of {claim.claim}"], k=4, seed=claim_seed(7, claim.claim_id))


def test_each_claim_is_decoded_once_in_its_fixed_chunk() -> None:
    pipe, claims, lm = _setup(5, 2)
    assert isinstance(pipe.generator, ClaimBatcher)
    got = [_ask(pipe, c) for c in claims]
    assert lm.batches == [["claim 0", "claim 1"], ["claim 2", "claim 3"], ["claim 4"]]
    assert [g[0] for g in got] == [c.claim for c in claims] and all(g[1] == 4 for g in got)
    assert got[2][2] == got[3][2] == claim_seed(7, 2)  # the batch seed is its first claim's


def test_a_resumed_run_decodes_the_same_chunk_as_an_uninterrupted_one() -> None:
    """Claim 2 was stored before a kill: the rerun asks for claim 3 only, and its batch is still [2, 3]."""
    first, claims, _ = _setup(4, 2)
    uninterrupted = [_ask(first, c) for c in claims]
    resumed, claims, lm = _setup(4, 2)
    assert _ask(resumed, claims[3]) == uninterrupted[3]
    assert lm.batches == [["claim 2", "claim 3"]]


def test_claims_with_no_evidence_are_left_out_and_size_one_is_not_batched() -> None:
    pipe, claims, lm = _setup(3, 3, empty=(1,))
    assert _ask(pipe, claims[0])[3] == ("claim 0", "claim 2")
    single, claims, lm = _setup(2, 1)
    assert isinstance(single.generator, FakeLM) and _ask(single, claims[0])[0] == "alone"
