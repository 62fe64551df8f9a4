"""Evidence subsets S_i of the R2VC generator (§3.3; Table G.1).

Shared by the LM generator and the NLI-only fallback, so both see the same subsets
for the same seed.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

#: Passages per candidate subset (Table G.1 "Passages sampled per candidate").
SUBSET_SIZE = 16
#: Candidates per claim (Table G.1 "Rejection-sampling candidates k").
DEFAULT_K = 16


def sample_evidence_subsets(
    *, n_passages: int, k: int, seed: int, subset_size: int = SUBSET_SIZE
) -> list[tuple[int, ...]]:
    """Draw the k random evidence subsets S_i (indices into E(c)), each of size min(s, |E|).

    Each subset is an independent draw without replacement, in random order (the order
    the prompt numbers the passages in), so even when |E| ≤ s the candidates see
    different evidence orders.

    Args:
        n_passages: |E(c)|, the size of the fused evidence pool.
        k: Number of candidates.
        seed: Seed of the draw; the same seed gives the same subsets.
        subset_size: s, passages per candidate (16 in the paper).

    Returns:
        ``k`` tuples of distinct indices in ``range(n_passages)``.

    Example:
        >>> subsets = sample_evidence_subsets(n_passages=24, k=3, seed=0)
        >>> [len(s) for s in subsets]
        [16, 16, 16]
        >>> sample_evidence_subsets(n_passages=2, k=2, seed=0, subset_size=16) in (
        ...     [(0, 1), (0, 1)], [(0, 1), (1, 0)], [(1, 0), (0, 1)], [(1, 0), (1, 0)])
        True
    """
    import numpy as np

    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if subset_size < 1:
        raise ValueError(f"subset_size must be >= 1, got {subset_size}")
    rng = np.random.default_rng(seed)
    size = min(subset_size, n_passages)
    return [
        tuple(int(i) for i in rng.choice(n_passages, size=size, replace=False)) for _ in range(k)
    ]


def claim_seed(base: int, claim_id: Any) -> int:
    """Per-claim generation seed: stable across runs, resumes, engines and batches.

    Example:
        >>> claim_seed(0, 7) == claim_seed(0, 7), claim_seed(0, 7) == claim_seed(0, "7")
        (True, False)
    """
    return (base * 1_000_003 + zlib.crc32(json.dumps(claim_id).encode())) % (2**31)


__all__ = ["DEFAULT_K", "SUBSET_SIZE", "claim_seed", "sample_evidence_subsets"]
