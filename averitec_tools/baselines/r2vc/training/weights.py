"""Did training move the weights? A sampled before/after probe, checked early and at the end.

A run can take every optimizer step and still leave the model as it was: with bf16
weights, an AdamW update at DPO's lr 4e-6 is below half a bf16 ulp for most weights and
rounds away. :class:`WeightProbe` copies a seeded sample of up to ``per_tensor``
elements of every trainable tensor before training (a few MB for an 8B model) and
compares them after:

* ``changed_fraction`` — share of the sampled weights that changed, each tensor weighted
  by its size, over every trainable tensor except the input embeddings (whose rows move
  only for tokens seen in the batch);
* ``changed_fraction_bf16`` — the same share after rounding before and after to bf16:
  what a bf16 inference run would see;
* ``tensors_changed`` / ``tensors`` and ``max_abs_change``.

:func:`weight_check_callback` measures after the first optimizer step taken at half the
peak learning rate or more (stopping a run that does not train within minutes instead of
hours) and the trainers measure again at the end; below ``min_changed_fraction`` either raises :class:`WeightsDidNotMoveError`
and nothing is saved.

bf16 weights written back by stochastic rounding
(:mod:`~averitec_tools.baselines.r2vc.training.bf16_updates`) move by one ulp with a
probability equal to the update's share of it, so after a few low-rate steps only a few per
cent of them have changed although every update is kept in expectation. For those runs the
check reads the optimizer's own measurement instead: the share of the fp32 update's mass
the bf16 weights kept (``update_kept``, :func:`check_kept`).

Example:
    >>> import torch
    >>> model = torch.nn.Linear(4, 4)
    >>> probe = WeightProbe(model)
    >>> with torch.no_grad():
    ...     _ = model.weight.add_(1.0)
    >>> m = probe.measure(model)
    >>> m["changed_fraction"], m["tensors_changed"], m["tensors"]
    (0.8, 1, 2)
"""

from __future__ import annotations

from typing import Any

from averitec_tools.errors import UserError


class WeightsDidNotMoveError(UserError):
    """Training ran but (almost) no weight changed: the run is refused, nothing is saved."""


def _embedding_ids(model: Any) -> set[int]:
    get = getattr(model, "get_input_embeddings", None)
    emb = get() if callable(get) else None
    weight = getattr(emb, "weight", None)
    return {id(weight)} if weight is not None else set()


class WeightProbe:
    """A seeded sample of every trainable tensor, taken before training.

    Args:
        model: A ``torch.nn.Module``.
        per_tensor: Elements sampled per tensor (all of a smaller tensor).
        seed: Sampling seed.
    """

    def __init__(self, model: Any, *, per_tensor: int = 4096, seed: int = 0) -> None:
        import torch

        generator = torch.Generator().manual_seed(seed)
        skip = _embedding_ids(model)
        self._samples: list[tuple[str, Any, Any, int]] = []
        for name, param in model.named_parameters():
            if not param.requires_grad or id(param) in skip:
                continue
            n = param.numel()
            index = torch.randperm(n, generator=generator)[:per_tensor] if n > per_tensor else torch.arange(n)
            values = param.detach().reshape(-1)[index.to(param.device)].float().cpu()
            self._samples.append((name, index, values, n))

    def measure(self, model: Any) -> dict[str, Any]:
        """Compare the model's current weights with the sample."""
        import torch

        params = dict(model.named_parameters())
        total = changed = changed_bf16 = 0.0
        tensors_changed = 0
        max_abs = 0.0
        for name, index, before, n in self._samples:
            after = params[name].detach().reshape(-1)[index.to(params[name].device)].float().cpu()
            moved = after != before
            moved_bf16 = after.to(torch.bfloat16) != before.to(torch.bfloat16)
            weight = n / len(index)
            total += n
            changed += weight * float(moved.sum())
            changed_bf16 += weight * float(moved_bf16.sum())
            tensors_changed += bool(moved.any())
            if moved.any():
                max_abs = max(max_abs, float((after - before).abs().max()))
        return {
            "changed_fraction": changed / total if total else 0.0,
            "changed_fraction_bf16": changed_bf16 / total if total else 0.0,
            "tensors_changed": tensors_changed,
            "tensors": len(self._samples),
            "max_abs_change": max_abs,
        }


def check_moved(measurement: dict[str, Any], *, stage: str, when: str, min_changed_fraction: float,
                master_weights: str) -> None:
    """Raise :class:`WeightsDidNotMoveError` when too few sampled weights changed.

    Example:
        >>> check_moved({"changed_fraction": 0.07, "tensors_changed": 9, "tensors": 9}, stage="dpo",
        ...             when="after step 1", min_changed_fraction=0.5, master_weights="bf16")
        Traceback (most recent call last):
        ...
        averitec_tools.baselines.r2vc.training.weights.WeightsDidNotMoveError: dpo: only 7.0% of the sampled ...
    """
    if min_changed_fraction <= 0 or measurement["changed_fraction"] >= min_changed_fraction:
        return
    cause = ("bf16 weights rounded to nearest lose updates this small" if master_weights == "bf16"
             else "the learning rate or the gradients are zero")
    raise WeightsDidNotMoveError(
        f"{stage}: only {100 * measurement['changed_fraction']:.1f}% of the sampled weights changed {when} "
        f"({measurement['tensors_changed']}/{measurement['tensors']} tensors), below min_changed_fraction "
        f"{min_changed_fraction}: training did not train ({cause}); nothing was saved",
        hint="use bf16_rounding: stochastic (the default) or master_weights: fp32, check learning_rate, or set "
        "min_changed_fraction: 0 to skip the check")


def check_kept(stats: dict[str, Any], *, stage: str, when: str, min_changed_fraction: float) -> None:
    """Raise :class:`WeightsDidNotMoveError` when stochastically rounded bf16 weights kept less than
    ``min_changed_fraction`` of the optimizer's update (or there was no update at all).

    Example:
        >>> check_kept({"update_kept": 0.998, "update_l1": 2.5}, stage="dpo", when="at the end",
        ...            min_changed_fraction=0.5)
        >>> check_kept({"update_kept": 0.0, "update_l1": 0.0}, stage="dpo", when="at the end", min_changed_fraction=0.5)
        Traceback (most recent call last):
        ...
        averitec_tools.baselines.r2vc.training.weights.WeightsDidNotMoveError: dpo: the bf16 weights kept 0.0% ...
    """
    if min_changed_fraction <= 0 or (stats["update_l1"] > 0 and stats["update_kept"] >= min_changed_fraction):
        return
    cause = ("the optimizer's update was zero: the learning rate or the gradients are zero" if stats["update_l1"] <= 0
             else "stochastic rounding did not keep the update")
    raise WeightsDidNotMoveError(
        f"{stage}: the bf16 weights kept {100 * stats['update_kept']:.1f}% of the optimizer's update {when}, below "
        f"min_changed_fraction {min_changed_fraction}: training did not train ({cause}); nothing was saved",
        hint="check learning_rate, use master_weights: fp32, or set min_changed_fraction: 0 to skip the check")


def weight_check_callback(probe: WeightProbe, *, stage: str, min_changed_fraction: float,
                          master_weights: str, peak_lr: float, updates: Any = None) -> Any:
    """A ``TrainerCallback`` that measures after the first optimizer step taken at ≥ half the
    peak learning rate (warm-up steps start at lr 0) and stops a run that did not move.

    ``updates`` (a :class:`~averitec_tools.baselines.r2vc.training.bf16_updates.Bf16Updates`):
    where it rounds stochastically, that step is judged by :func:`check_kept` on its own
    measurement (the probe's share is still recorded)."""
    from transformers import TrainerCallback

    class WeightCheckCallback(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self.first_step: dict[str, Any] | None = None
            self.error: WeightsDidNotMoveError | None = None

        def on_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None,
                              optimizer: Any = None, **kwargs: Any) -> Any:
            if self.first_step is not None or model is None or optimizer is None:
                return control
            lr = float(optimizer.param_groups[0]["lr"])  # the rate of the step just taken
            if lr < 0.5 * peak_lr:
                return control
            step = int(state.global_step) + 1
            self.first_step = {"step": step, "learning_rate": lr, **probe.measure(model)}
            when = f"after optimizer step {step} (lr {lr:.2g})"
            rounded = getattr(updates, "optimizer", None)
            try:
                if rounded is not None:
                    self.first_step["rounding"] = rounded.stats.to_dict()
                    check_kept(self.first_step["rounding"], stage=stage, when=when,
                               min_changed_fraction=min_changed_fraction)
                else:
                    check_moved(self.first_step, stage=stage, when=when, min_changed_fraction=min_changed_fraction,
                                master_weights=master_weights)
            except WeightsDidNotMoveError as exc:
                self.error = exc
                control.should_training_stop = True
            return control

    return WeightCheckCallback()


__all__ = ["WeightProbe", "WeightsDidNotMoveError", "check_kept", "check_moved", "weight_check_callback"]
