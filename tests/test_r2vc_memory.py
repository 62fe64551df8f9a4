"""The R2VC generator on an 80 GB H100: bf16 updates that survive rounding, the memory model at 8B scale
(sized on the ``meta`` device), and memory released by construction — all on CPU, tiny models."""

from __future__ import annotations

import gc
import math
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))


# ----------------------------------------------------------------------------- stochastic rounding


def test_stochastic_rounding_keeps_representable_values_and_is_unbiased_between_them() -> None:
    import torch

    from averitec_tools.baselines.r2vc.training.bf16_updates import stochastic_round

    gen = torch.Generator().manual_seed(0)
    exact = torch.tensor([1.0, -2.5, 0.0, 3.140625, -1e-3]).to(torch.bfloat16).float()
    assert torch.equal(stochastic_round(exact, generator=gen).float(), exact)  # bf16 values stay as they are
    for value in (1.0 + 3 * 2**-9, -(0.02 + 1e-6), 7.3e-5):  # between two bf16 neighbours, either sign
        x = torch.full((200_000,), value)
        r = stochastic_round(x, generator=gen).float()
        low, high = sorted(set(r.tolist()))
        assert low < value < high and len(set(r.tolist())) == 2
        # the share rounded up (in magnitude) is the remainder's share of the gap: the mean is the value
        assert abs(float(r.mean()) - value) < 3 * (high - low) / math.sqrt(len(x))


def _adamw(params: list[Any], lr: float) -> Any:
    import torch

    return torch.optim.AdamW(params, lr=lr, weight_decay=0.1)


def test_wrapper_steps_like_its_optimizer_and_keeps_the_update_in_bf16() -> None:
    """fp32 parameters: the wrapper's per-parameter steps equal AdamW's own, bit for bit. bf16 parameters:
    each lands on one of the two bf16 neighbours of the fp32 AdamW result, and over 65,536 weights the
    bf16 weights keep ≈ 100 % of the update's mass at lr 4e-6, where rounding to nearest keeps almost none."""
    import torch

    from averitec_tools.baselines.r2vc.training.bf16_updates import StochasticRoundingOptimizer

    torch.manual_seed(0)
    w = [torch.randn(256, 256) * 0.02, torch.randn(256) * 0.02]
    g = [torch.randn_like(x) for x in w]
    plain = [torch.nn.Parameter(x.clone()) for x in w]
    wrapped = [torch.nn.Parameter(x.clone()) for x in w]
    for p, q, grad in zip(plain, wrapped, g, strict=True):
        p.grad, q.grad = grad.clone(), grad.clone()
    _adamw(plain, 1e-3).step()
    StochasticRoundingOptimizer(_adamw(wrapped, 1e-3), seed=0).step()
    assert all(torch.equal(p, q) for p, q in zip(plain, wrapped, strict=True))

    ref = torch.nn.Parameter(w[0].to(torch.bfloat16).float())  # the fp32 step from the bf16 weights
    ref.grad = g[0].clone()
    _adamw([ref], 4e-6).step()
    sr, nearest = (torch.nn.Parameter(w[0].to(torch.bfloat16)) for _ in range(2))
    sr.grad, nearest.grad = g[0].to(torch.bfloat16), g[0].to(torch.bfloat16)
    opt = StochasticRoundingOptimizer(_adamw([sr], 4e-6), seed=0)
    opt.step()
    _adamw([nearest], 4e-6).step()
    old = w[0].to(torch.bfloat16).float()
    # a bf16 neighbour of the fp32 result: closer to it than bf16's spacing there (at most |x| · 2**-7)
    assert sr.dtype == torch.bfloat16
    assert torch.all((sr.detach().float() - ref.detach()).abs() <= ref.detach().abs() * 2**-7 + 1e-30)
    stats = opt.stats.to_dict()
    assert 0.9 < stats["update_kept"] < 1.1 and 0 < stats["moved_fraction"] < 0.5
    kept_nearest = float((nearest.detach().float() - old).abs().sum() / (ref.detach() - old).abs().sum())
    assert kept_nearest < 0.5 < stats["update_kept"]


def test_wrapper_is_the_inner_optimizer_for_schedulers_and_checkpoints() -> None:
    import torch

    from averitec_tools.baselines.r2vc.training.bf16_updates import StochasticRoundingOptimizer

    p = torch.nn.Parameter(torch.zeros(4, dtype=torch.bfloat16))
    inner = _adamw([p], 1e-3)
    opt = StochasticRoundingOptimizer(inner, seed=0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 0.5)
    assert inner.param_groups[0]["lr"] == 5e-4  # the scheduler drives the inner optimizer's rate
    p.grad = torch.ones(4, dtype=torch.bfloat16)
    opt.step()
    scheduler.step()
    assert p.grad is not None and opt.state_dict() == inner.state_dict()  # checkpoints are the inner optimizer's
    assert int(inner.state[p]["step"]) == 1
    fresh = StochasticRoundingOptimizer(_adamw([p], 1e-3), seed=0)
    fresh.load_state_dict(opt.state_dict())
    assert int(fresh.inner.state[p]["step"]) == 1


@pytest.mark.slow
def test_dpo_on_bf16_weights_trains_with_stochastic_rounding(tmp_path: Path) -> None:
    """Table G.1's recipe at DPO's lr 4e-6 on bf16 weights: the run keeps its updates (and says so)."""
    import torch
    from _r2vc_tiny import tiny_lm, tiny_tokenizer
    from test_r2vc_training import ROWS, _fast

    from averitec_tools.baselines.r2vc.training.config import DPOSettings
    from averitec_tools.baselines.r2vc.training.stages import train

    tok = tiny_tokenizer()
    model = tiny_lm(tok).to(torch.bfloat16)
    report, trained = train(stage="dpo", settings=_fast(DPOSettings, n_passages=1, max_steps=2), rows=ROWS,
                            output_dir=tmp_path / "dpo", model=model, tokenizer=tok)
    run = report.run
    assert (run["master_weights"], run["weights_dtype"], run["bf16_rounding"]) == ("bf16", "bfloat16", "stochastic")
    first, final = run["weights"]["after_first_step"]["rounding"], run["weights"]["final"]["rounding"]
    assert first["update_kept"] > 0.9 and final["update_kept"] > 0.9 and final["steps"] == 2
    assert 0 < run["weights"]["final"]["changed_fraction"] < 0.5  # one ulp at a time: few weights per step
    assert (tmp_path / "dpo" / "r2vc_training.json").is_file()


# ----------------------------------------------------------------------------- memory at 8B scale


def test_llama_8b_sized_on_the_meta_device_is_what_the_plan_charges() -> None:
    """Llama-3.1-8B built on ``meta`` (shapes, no storage): its parameters, the embedding the Trainer keeps in
    32-bit AdamW states and its largest tensor give the plan's figure for every stage and precision."""
    from averitec_tools.baselines.r2vc.training.memory import (
        LLAMA_31_8B,
        meta_model,
        plan_memory,
        size_model,
    )

    model = meta_model()
    assert sum(p.numel() for p in model.parameters()) == 8_030_261_248
    assert next(model.parameters()).device.type == "meta"
    for stage, tokens in (("sft", 2 * 672), ("dpo", 4 * 672)):
        for master in ("bf16", "fp32"):
            sized = size_model(model, stage=stage, tokens=tokens, master_weights=master)
            planned = plan_memory(LLAMA_31_8B, stage=stage, tokens=tokens, master_weights=master)
            assert sized.total == pytest.approx(planned.total, rel=1e-3), (stage, master)
    dpo = plan_memory(LLAMA_31_8B, stage="dpo", tokens=4 * 672)
    assert dpo.total_gib <= 76 < plan_memory(LLAMA_31_8B, stage="dpo", tokens=4 * 672, master_weights="fp32").total_gib
    parts = dpo.parts_gib()
    assert (parts["weights"], parts["reference"], parts["autocast"]) == (14.96, 14.96, 0.0)
    assert parts["optimizer"] == pytest.approx((2 * (8.03e9 - 128256 * 4096) * (1 + 4 / 256) + 8 * 128256 * 4096) / 2**30,
                                               abs=0.01)


def test_optimizer_state_formula_matches_adamw_on_a_tiny_model() -> None:
    """``adamw_torch``'s states after a step weigh what :func:`optimizer_bytes` says (8-bit: gpu-check)."""
    import torch
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    from averitec_tools.baselines.r2vc.training.memory import size_model

    model = tiny_lm(tiny_tokenizer())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()
    measured = sum(t.numel() * t.element_size() for s in opt.state.values() for k, t in s.items() if k != "step")
    assert measured == size_model(model, stage="sft", tokens=0, optim="adamw_torch").optimizer


# ----------------------------------------------------------------------------- memory freed by construction


def test_the_batcher_holds_its_pipeline_weakly() -> None:
    """A pipeline that owns a ClaimBatcher is freed by reference counting alone (no pipe <-> batcher cycle)."""
    import weakref

    from averitec_tools.baselines.r2vc.experiments.batching import ClaimBatcher, batch_claims
    from averitec_tools.baselines.r2vc.io.claims import ClaimInput

    class Pipe:
        def __init__(self) -> None:
            self.generator = SimpleNamespace(generate_many=lambda *a, **k: [])
            self.config = SimpleNamespace(generator=SimpleNamespace(seed=0))

        def evidence_for(self, claim: Any) -> list[str]:
            return [claim.claim]

    pipe = Pipe()
    batch_claims(pipe, claims=[ClaimInput(claim_id=i, claim=f"c{i}") for i in range(3)], size=2)
    assert isinstance(pipe.generator, ClaimBatcher)
    ref = weakref.ref(pipe)
    gc.disable()
    try:
        del pipe
        assert ref() is None
    finally:
        gc.enable()


def test_resident_models_release_what_they_drop() -> None:
    import weakref

    from averitec_tools.baselines._run.memory import ResidentModels

    class Model:
        pass

    loads: list[tuple[str, str]] = []
    models = ResidentModels(on_load=lambda kind, label: loads.append((kind, label)))
    first = models.get("generator", "dpo", Model, label="dpo")
    ref = weakref.ref(first)
    assert models.get("generator", "dpo", Model, label="dpo") is first
    del first
    models.get("generator", "sft", Model, label="sft")  # another generator: the first is released first
    assert ref() is None and loads == [("generator", "dpo"), ("generator", "sft")]
    models.close()
    assert models.resident() == {}
