"""Optimizer updates that survive bf16 weights: stochastic rounding around any optimizer.

Table G.1 trains "bf16 full weights" with ``paged_adamw_8bit``. An AdamW step moves a weight
by about the learning rate; at DPO's 4e-6 that is below half a bf16 ulp for almost every
weight, so rounding to nearest writes the old value back and the model does not train
(``docs/r2vc_training.md`` measures it). :class:`StochasticRoundingOptimizer` wraps the
trainer's optimizer (bitsandbytes' paged 8-bit AdamW on CUDA, ``torch.optim.AdamW`` on CPU)
and steps it **one parameter at a time**: the parameter and its gradient are lent to the
inner optimizer as fp32 copies, the inner optimizer computes its update in fp32 (its own
states unchanged: 8-bit stays 8-bit), and the result is written back to the bf16 weight by
**stochastic rounding** — up to the next bf16 value with probability equal to the distance
from the one below, so every update is kept in expectation. It needs no memory per
parameter beyond the bf16 weight (compensated summation would need a 2-byte buffer per
parameter: 15 GiB at 8B, which an 80 GB H100 does not have during DPO); the fp32 copies
exist for one tensor at a time (8 bytes × the largest tensor; :func:`transient_bytes`).

The rounding noise is seeded by (seed, the parameter's step count, its index), so a run
resumed from a checkpoint draws the same noise as an uninterrupted one.

Every step records how much of the fp32 update the bf16 weights kept
(:attr:`StochasticRoundingOptimizer.stats`): ``kept = Σ|w_bf16 − w_old| / Σ|Δ_fp32|``, which
is ≈ 1 under stochastic rounding and ≈ 0 when rounding swallows the updates; the training
run's weight check reads it (:mod:`~averitec_tools.baselines.r2vc.training.weights`).

Example:
    >>> import torch
    >>> x = torch.full((100_000,), 1.0 + 2**-10)  # 1/8 of the way from 1.0 to the next bf16 value, 1 + 2**-7
    >>> x.to(torch.bfloat16).unique().tolist()  # rounding to nearest writes 1.0 back
    [1.0]
    >>> up = stochastic_round(x, generator=torch.Generator().manual_seed(0))
    >>> up.unique().tolist(), abs(float(up.float().mean()) - (1.0 + 2**-10)) < 1e-4
    ([1.0, 1.0078125], True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Elements rounded (and measured) per chunk: bounds the temporaries to a few hundred MB.
CHUNK = 1 << 24
#: The training setting's values (``bf16_rounding``).
ROUNDINGS: tuple[str, ...] = ("stochastic", "nearest")


def stochastic_round(x: Any, *, generator: Any) -> Any:
    """``x`` (fp32) rounded to bf16 at random: up with probability equal to the remainder.

    The fp32 bit pattern gets a uniform 16-bit integer added and its low 16 bits cleared:
    bf16 is fp32's top 16 bits, and adding to the magnitude bits of a sign-magnitude
    number rounds the magnitude up exactly when the noise exceeds the remainder.
    """
    import torch

    bits = x.contiguous().view(torch.int32)
    noise = torch.randint(0, 1 << 16, bits.shape, dtype=torch.int32, device=bits.device, generator=generator)
    return ((bits + noise) & -65536).view(torch.float32).to(torch.bfloat16)


@dataclass
class UpdateStats:
    """What the bf16 weights kept of the fp32 updates (summed over the elements and steps seen)."""

    ideal: float = 0.0
    kept: float = 0.0
    moved: int = 0
    elements: int = 0
    steps: int = 0

    def add(self, other: UpdateStats) -> None:
        self.ideal += other.ideal
        self.kept += other.kept
        self.moved += other.moved
        self.elements += other.elements
        self.steps += other.steps

    def to_dict(self) -> dict[str, Any]:
        """``update_kept`` (Σ|kept| / Σ|ideal|, 0 when nothing was to move), ``moved_fraction`` (share of
        the weights that changed, per step), and the sums."""
        return {"update_kept": self.kept / self.ideal if self.ideal > 0 else 0.0,
                "moved_fraction": self.moved / self.elements if self.elements else 0.0,
                "update_l1": self.ideal, "kept_l1": self.kept, "steps": self.steps}


def _round_into(target: Any, new: Any, *, seed: int) -> UpdateStats:
    """Write ``new`` (fp32) into the bf16 ``target`` by stochastic rounding, chunk by chunk; measure."""
    import torch

    flat_t, flat_n = target.view(-1), new.view(-1)
    generator = torch.Generator(device=flat_n.device).manual_seed(seed)
    stats = UpdateStats(steps=0)
    for start in range(0, flat_n.numel(), CHUNK):
        old = flat_t[start:start + CHUNK].float()
        part = flat_n[start:start + CHUNK]
        rounded = stochastic_round(part, generator=generator)
        stats.ideal += float((part - old).abs().sum())
        stats.kept += float((rounded.float() - old).abs().sum())
        stats.moved += int((rounded != flat_t[start:start + CHUNK]).sum())
        stats.elements += part.numel()
        flat_t[start:start + CHUNK] = rounded
    return stats


def _optimizer_base() -> type:
    import torch

    return torch.optim.Optimizer


class StochasticRoundingOptimizer(_optimizer_base()):  # type: ignore[misc]
    """Steps ``inner`` parameter by parameter in fp32 and rounds bf16 weights stochastically (module docs).

    Parameters that are not bf16 are stepped as ``inner`` would. ``param_groups`` and ``state``
    are the inner optimizer's own (a learning-rate scheduler on this optimizer drives it);
    ``state_dict`` / ``load_state_dict`` are its too, so checkpoints are unchanged.

    Args:
        inner: The optimizer to wrap.
        seed: Seeds the rounding noise (with each parameter's step count and index).

    Attributes:
        stats: The last step's :class:`UpdateStats`.
        total: Every step's, summed.
    """

    def __init__(self, inner: Any, *, seed: int = 0) -> None:
        super().__init__(inner.param_groups, inner.defaults)
        self.param_groups = inner.param_groups  # the same dicts: the scheduler's lr reaches inner
        self.state = inner.state
        self.inner, self.seed = inner, int(seed)
        self.stats, self.total = UpdateStats(), UpdateStats()

    def state_dict(self) -> Any:
        return self.inner.state_dict()

    def load_state_dict(self, state_dict: Any) -> None:
        self.inner.load_state_dict(state_dict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        self.inner.zero_grad(set_to_none=set_to_none)

    def _step_count(self, p: Any) -> int:
        step = self.inner.state.get(p, {}).get("step", 0)
        return int(step.item() if hasattr(step, "item") else step)

    def _step_one(self, p: Any, grad: Any, index: int) -> UpdateStats:
        """One parameter through ``inner`` (only it has a gradient, so only it moves)."""
        import torch

        if p.dtype != torch.bfloat16:
            p.grad = grad
            self.inner.step()
            p.grad = None
            return UpdateStats()
        weights = p.data
        p.data, p.grad = weights.float(), grad.float()
        try:
            self.inner.step()
            p.grad = None
            new = p.data
        finally:
            p.data = weights
        seed = (self.seed * 1_000_003 + self._step_count(p) * 65_537 + index) % (1 << 62)
        return _round_into(weights, new, seed=seed)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Step every parameter that has a gradient (see the class docs)."""
        import torch

        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        params = [p for group in self.param_groups for p in group["params"] if p.grad is not None]
        grads = [p.grad for p in params]
        for p in params:
            p.grad = None
        step = UpdateStats(steps=1)
        try:
            with torch.no_grad():
                for index, (p, grad) in enumerate(zip(params, grads, strict=True)):
                    step.add(self._step_one(p, grad, index))
        finally:
            for p, grad in zip(params, grads, strict=True):
                p.grad = grad
        self.stats = step
        self.total.add(step)
        return loss


def transient_bytes(largest_tensor: int) -> int:
    """GPU bytes the wrapper lends at once: an fp32 copy of the largest tensor and of its gradient.

    Example:
        >>> transient_bytes(128256 * 4096) / 2**30  # Llama-3.1-8B's embedding or head
        3.9140625
    """
    return 8 * int(largest_tensor)


class Bf16Updates:
    """Installs :class:`StochasticRoundingOptimizer` on a trainer whose weights are bf16.

    ``rounding="nearest"`` (or weights that are not bf16) installs nothing: the optimizer
    writes its updates back as it always does. After training, :attr:`optimizer` is the
    wrapper (None when not installed).

    Example:
        >>> updates = Bf16Updates(trainer, rounding="stochastic", seed=0)  # doctest: +SKIP
        >>> trainer.train(); updates.optimizer.total.to_dict()["update_kept"]  # doctest: +SKIP
        1.0
    """

    def __init__(self, trainer: Any, *, rounding: str, seed: int) -> None:
        import torch

        if rounding not in ROUNDINGS:
            raise ValueError(f"bf16_rounding must be one of {ROUNDINGS}, got {rounding!r}")
        self.optimizer: StochasticRoundingOptimizer | None = None
        bf16 = any(p.dtype == torch.bfloat16 for p in trainer.model.parameters() if p.requires_grad)
        self.active = rounding == "stochastic" and bf16
        if not self.active:
            return
        create = trainer.create_optimizer

        def create_optimizer(*args: Any, **kwargs: Any) -> Any:
            inner = create(*args, **kwargs)
            if not isinstance(inner, StochasticRoundingOptimizer):
                trainer.optimizer = self.optimizer = StochasticRoundingOptimizer(inner, seed=seed)
            return trainer.optimizer

        trainer.create_optimizer = create_optimizer


__all__ = ["CHUNK", "ROUNDINGS", "Bf16Updates", "StochasticRoundingOptimizer", "UpdateStats", "stochastic_round",
           "transient_bytes"]
