"""GPU memory of a training stage: the plan's closed form, and the same sized on a model's tensors.

What one SFT or DPO step holds on the GPU (bytes), by part:

* ``weights`` — 2 bytes per parameter in bf16 (Table G.1's "bf16 full weights"), 4 in fp32;
* ``grads`` — the weights' dtype;
* ``optimizer`` — 8-bit AdamW (``paged_adamw_8bit``): two 1-byte states per parameter and one
  fp32 scale per 256-element block of each (bitsandbytes' blockwise quantisation), **except**
  ``nn.Embedding`` weights, which transformers' Trainer hands bitsandbytes to keep in 32-bit
  (two fp32 states: 8 bytes); ``adamw_torch``: two fp32 states;
* ``transient`` — stochastic rounding's fp32 copy of one tensor and of its gradient
  (:func:`~averitec_tools.baselines.r2vc.training.bf16_updates.transient_bytes` of the largest);
* ``autocast`` — with fp32 weights, autocast's bf16 copy of every weight (2 bytes per parameter);
* ``reference`` — DPO's frozen reference model in bf16;
* ``activations`` — with gradient checkpointing: each layer's bf16 input kept, one layer's
  intermediates recomputed, and the fp32 logits three times (logits, log-softmax, gradient),
  per token of the micro-batch (:func:`activation_bytes`).

:func:`plan_memory` computes it from a :class:`ModelShape` (the plans); :func:`size_model`
walks a model's own parameters — a model built on PyTorch's ``meta`` device has every
tensor's shape and dtype and no storage, so Llama-3.1-8B is sized on any machine in a second
(:func:`meta_model`). Both must agree (``tests/test_r2vc_memory.py``, ``make gpu-check``).

Example:
    >>> m = plan_memory(LLAMA_31_8B, stage="dpo", tokens=4 * 672)
    >>> round(m.total_gib, 1), round(m.parts_gib()["optimizer"], 1)
    (71.6, 18.1)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from averitec_tools.baselines._run.decode import LLAMA_31_8B, ModelShape
from averitec_tools.baselines.r2vc.training.bf16_updates import transient_bytes

GIB = float(1 << 30)
#: Elements per bitsandbytes quantisation block (one fp32 scale each, per state).
BNB_BLOCK = 256
#: Optimizers whose states are bitsandbytes' blockwise 8-bit ones.
EIGHT_BIT = ("paged_adamw_8bit", "adamw_8bit", "adamw_bnb_8bit")


#: Its config.json, for :func:`meta_model`.
LLAMA_31_8B_CONFIG: dict[str, Any] = {
    "model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 131072,
    "rope_theta": 500000.0, "tie_word_embeddings": False, "rms_norm_eps": 1e-5,
}


@dataclass(frozen=True)
class TrainingMemory:
    """Bytes of each part of one training step (module docs)."""

    weights: float
    grads: float
    optimizer: float
    transient: float
    autocast: float
    reference: float
    activations: float

    @property
    def total(self) -> float:
        return sum(asdict(self).values())

    @property
    def total_gib(self) -> float:
        return self.total / GIB

    def parts_gib(self) -> dict[str, float]:
        """Each part in GiB (rounded to 0.01)."""
        return {k: round(v / GIB, 2) for k, v in asdict(self).items()}

    def describe(self) -> str:
        """One line: every non-zero part in GiB."""
        return " + ".join(f"{k} {v:.1f}" for k, v in self.parts_gib().items() if v) + " GiB"


def optimizer_bytes(numel: float, *, optim: str, embedding: bool = False) -> float:
    """AdamW state bytes of one tensor of ``numel`` elements (module docs).

    Example:
        >>> optimizer_bytes(1024, optim="paged_adamw_8bit"), optimizer_bytes(1024, optim="paged_adamw_8bit", embedding=True)
        (2080.0, 8192.0)
    """
    if optim in EIGHT_BIT and not embedding:
        return 2.0 * numel + 2 * 4.0 * -(-numel // BNB_BLOCK)
    return 8.0 * numel


def activation_bytes(shape: ModelShape, *, tokens: float) -> float:
    """Activations of one checkpointed training micro-batch of ``tokens`` tokens (module docs)."""
    per_token = shape.layers * shape.hidden * 2 + (4 * shape.hidden + 2 * shape.intermediate) * 2 + shape.vocab * 4 * 3
    return float(tokens) * per_token


def _assemble(*, weights_params: float, optimizer: float, largest: int, master_weights: str, stage: str,
              activations: float) -> TrainingMemory:
    bf16 = master_weights == "bf16"
    width = 2 if bf16 else 4
    return TrainingMemory(
        weights=width * weights_params, grads=width * weights_params, optimizer=optimizer,
        transient=float(transient_bytes(largest)) if bf16 else 0.0,
        autocast=0.0 if bf16 else 2.0 * weights_params,
        reference=2.0 * weights_params if stage == "dpo" else 0.0, activations=activations)


def plan_memory(shape: ModelShape, *, stage: str, tokens: float, master_weights: str = "bf16",
                optim: str = "paged_adamw_8bit") -> TrainingMemory:
    """The plan's figure for one step of ``stage`` (``sft``/``dpo``) over ``tokens`` tokens per micro-batch.

    Example:
        >>> round(plan_memory(LLAMA_31_8B, stage="sft", tokens=2 * 672, master_weights="fp32").total_gib, 1)
        95.3
    """
    emb = 0 if optim not in EIGHT_BIT else shape.embedding_params
    opt = optimizer_bytes(shape.params - emb, optim=optim) + optimizer_bytes(emb, optim=optim, embedding=True)
    return _assemble(weights_params=shape.params, optimizer=opt, largest=shape.largest_tensor,
                     master_weights=master_weights, stage=stage, activations=activation_bytes(shape, tokens=tokens))


def size_model(model: Any, *, stage: str, tokens: float, master_weights: str = "bf16",
               optim: str = "paged_adamw_8bit") -> TrainingMemory:
    """:func:`plan_memory`'s parts sized on ``model``'s own parameters (their count, the embeddings
    the Trainer keeps in 32-bit, the largest tensor); activations from its config's shape."""
    import torch

    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    seen: set[int] = set()
    n = largest = 0
    opt = 0.0
    for p in model.parameters():
        if id(p) in seen or not p.requires_grad:
            continue
        seen.add(id(p))
        n += p.numel()
        largest = max(largest, p.numel())
        opt += optimizer_bytes(p.numel(), optim=optim, embedding=id(p) in embeddings)
    return _assemble(weights_params=n, optimizer=opt, largest=largest, master_weights=master_weights, stage=stage,
                     activations=activation_bytes(shape_of(model.config, params=n), tokens=tokens))


def shape_of(config: Any, *, params: float) -> ModelShape:
    """A transformers config's :class:`ModelShape`."""
    def get(key: str, default: int) -> int:
        value = config.get(key) if isinstance(config, dict) else getattr(config, key, None)
        return int(value) if value is not None else default

    heads, hidden = get("num_attention_heads", 1), get("hidden_size", 1)
    tied = config.get("tie_word_embeddings") if isinstance(config, dict) else getattr(config, "tie_word_embeddings",
                                                                                     False)
    return ModelShape(params=params, layers=get("num_hidden_layers", 1), kv_heads=get("num_key_value_heads", heads),
                      head_dim=hidden // heads, vocab=get("vocab_size", 1), hidden=hidden,
                      intermediate=get("intermediate_size", 4 * hidden), tied=bool(tied))


def meta_model(config: dict[str, Any] | None = None, *, dtype: Any = None) -> Any:
    """A causal LM of ``config`` (default Llama-3.1-8B's) on the ``meta`` device: shapes, no storage.

    Example:
        >>> model = meta_model()  # doctest: +SKIP
        >>> sum(p.numel() for p in model.parameters())  # doctest: +SKIP
        8030261248
    """
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    values = dict(config or LLAMA_31_8B_CONFIG)
    cfg = AutoConfig.for_model(values.pop("model_type"), **values)
    with torch.device("meta"):
        return AutoModelForCausalLM.from_config(cfg, dtype=dtype or torch.bfloat16)


def with_params(shape: ModelShape, params: float) -> ModelShape:
    return replace(shape, params=params)


#: Tokens of one training sequence the plans assume: Table G.1's average prompt (608.3) and generation (64).
TOKENS_PER_SEQUENCE = 608.3 + 64


def model_shape(model: str) -> ModelShape:
    """The shape of ``model``: a local directory's ``config.json``, else Llama-3.1-8B's with the
    hub id's parameter count (:data:`averitec_tools.doctor.KNOWN_PARAMS`, default 8.03e9)."""
    import json
    from pathlib import Path

    from averitec_tools.doctor import model_params

    config = Path(model) / "config.json"
    if not config.is_file():
        return with_params(LLAMA_31_8B, float(model_params(model) or LLAMA_31_8B.params))
    return shape_of(json.loads(config.read_text(encoding="utf-8")), params=float(model_params(model) or 8.03e9))


def settings_memory(settings: Any, *, stage: str) -> TrainingMemory:
    """:func:`plan_memory` of a training stage's settings on CUDA (its model, batch, master weights, optimizer).

    Example:
        >>> from averitec_tools.baselines.r2vc.training.config import DPOSettings
        >>> round(settings_memory(DPOSettings(model="nvidia/Llama-3.1-Nemotron-Nano-8B-v1"), stage="dpo").total_gib, 1)
        71.6
    """
    per_seq = 1 if stage == "sft" else 2  # DPO: chosen and rejected of every pair
    optim = "paged_adamw_8bit" if settings.optim == "auto" else settings.optim
    return plan_memory(model_shape(settings.model), stage=stage, master_weights=settings.master_weights, optim=optim,
                       tokens=settings.per_device_train_batch_size * per_seq * TOKENS_PER_SEQUENCE)


__all__ = ["BNB_BLOCK", "EIGHT_BIT", "LLAMA_31_8B", "LLAMA_31_8B_CONFIG", "TOKENS_PER_SEQUENCE", "ModelShape",
           "TrainingMemory", "activation_bytes", "meta_model", "model_shape", "optimizer_bytes", "plan_memory",
           "settings_memory", "shape_of", "size_model", "with_params"]
