"""Decoding configurations θ_i of the R2VC generator and the per-row logits warper.

The bank of 16 (temperature, top-p) settings (Table G.1) and
:class:`PerRowTemperatureTopP`, which applies a different temperature/top-p to each row
of one batched ``generate`` call. ``torch`` is imported lazily.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DecodingConfig:
    """One decoding configuration θ_i of the bank.

    Attributes:
        temperature: Softmax temperature (> 0).
        top_p: Nucleus-sampling mass in (0, 1].
    """

    temperature: float
    top_p: float


#: The fixed bank of 16 (temperature, top-p) configurations (Table G.1: "16 temperature
#: and top-p settings"; the paper does not list the values, these are ours). Ordered from
#: the most conservative, so that k < 16 (e.g. the single-candidate ablation) uses the
#: least random configurations first.
DECODING_BANK: tuple[DecodingConfig, ...] = tuple(
    DecodingConfig(temperature=t, top_p=p)
    for t in (0.3, 0.5, 0.7, 1.0)
    for p in (0.8, 0.9, 0.95, 1.0)
)

#: Table G.1 "Max new tokens".
MAX_NEW_TOKENS = 160


class ChosenTokenLogprobs:
    """Logits processor that records the log-probability of each sampled token under the raw logits.

    ``generate(output_logits=True)`` keeps every step's full logits (batch × steps × vocab:
    for 128 sequences × 160 steps × Llama-3's 128,256 tokens, 10 GiB in bf16, then stacked and
    copied to fp32 again); this keeps one number per sequence and step. Placed first in the
    processor list, it sees the step's raw logits: it keeps their log-softmax until the next
    call, when ``input_ids`` ends with the token sampled from them, and gathers that token's
    entry; :meth:`finish` gathers the last step's from the final sequences. At most one step's
    log-softmax (batch × vocab, fp32) is held.

    Example:
        >>> import torch
        >>> rec = ChosenTokenLogprobs()
        >>> ids = torch.tensor([[5], [5]])
        >>> _ = rec(ids, torch.tensor([[0.0, 0.0], [2.0, 0.0]]))            # step 1: raw logits
        >>> _ = rec(torch.tensor([[5, 1], [5, 0]]), torch.zeros(2, 2))      # step 2 sees what step 1 sampled
        >>> out = rec.finish(torch.tensor([[5, 1, 0], [5, 0, 1]]))
        >>> [round(v, 4) for v in out[:, 0].tolist()], [round(v, 4) for v in out[:, 1].tolist()]
        ([-0.6931, -0.1269], [-0.6931, -0.6931])
    """

    def __init__(self) -> None:
        self._pending: Any = None
        self._steps: list[Any] = []

    def _resolve(self, chosen: Any) -> None:
        if self._pending is not None:
            self._steps.append(self._pending.gather(-1, chosen[:, None].to(self._pending.device))[:, 0])
            self._pending = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._pending is not None:
            self._resolve(input_ids[:, -1])
        self._pending = scores.float().log_softmax(dim=-1)
        return scores

    def finish(self, sequences: Any) -> Any:
        """Per-step log-probabilities of the sampled tokens, shape ``(batch, steps)`` (fp32)."""
        import torch

        self._resolve(sequences[:, -1])
        if not self._steps:
            return torch.zeros((sequences.shape[0], 0))
        return torch.stack(self._steps, dim=1)


class PerRowTemperatureTopP:
    """Logits processor applying a different temperature and top-p to each batch row.

    Transformers' own warpers take one scalar per ``generate`` call; this one lets the
    k candidates of a claim, each with its own θ_i, share a single batched call. The
    top-p rule is the same as ``transformers.TopPLogitsWarper`` (keep the smallest set
    of tokens whose probability mass reaches ``top_p``, at least one token).

    Args:
        temperatures: One temperature per batch row (> 0).
        top_ps: One top-p per batch row, in (0, 1].

    Example:
        >>> import torch
        >>> proc = PerRowTemperatureTopP(temperatures=[1.0, 0.5], top_ps=[1.0, 0.5])
        >>> out = proc(None, torch.tensor([[2.0, 1.0, 0.0], [2.0, 1.0, 0.0]]))
        >>> out[0].tolist(), torch.isinf(out[1]).tolist()
        ([2.0, 1.0, 0.0], [False, True, True])
    """

    def __init__(self, *, temperatures: Sequence[float], top_ps: Sequence[float]) -> None:
        import torch

        if len(temperatures) != len(top_ps):
            raise ValueError("temperatures and top_ps must have the same length")
        if any(t <= 0 for t in temperatures):
            raise ValueError(f"temperatures must be > 0, got {list(temperatures)}")
        if any(not 0 < p <= 1 for p in top_ps):
            raise ValueError(f"top_ps must be in (0, 1], got {list(top_ps)}")
        self.temperatures = torch.tensor(list(temperatures), dtype=torch.float32)
        self.top_ps = torch.tensor(list(top_ps), dtype=torch.float32)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        temps = self.temperatures.to(device=scores.device, dtype=scores.dtype)
        top_ps = self.top_ps.to(device=scores.device, dtype=torch.float32)
        scores = scores / temps[:, None]
        sorted_logits, sorted_idx = torch.sort(scores, descending=False, dim=-1)
        cumulative = sorted_logits.float().softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cumulative <= (1 - top_ps)[:, None]
        remove_sorted[:, -1] = False
        remove = remove_sorted.scatter(1, sorted_idx, remove_sorted)
        return scores.masked_fill(remove, float("-inf"))


__all__ = ["DECODING_BANK", "MAX_NEW_TOKENS", "ChosenTokenLogprobs", "DecodingConfig", "PerRowTemperatureTopP"]
