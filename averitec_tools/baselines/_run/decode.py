"""The one decode-step model both baselines' plans use (R2VC's generator, AVeriTeC's BLOOM).

A decode step of a decoder-only LM reads every weight once (memory-bound at small batches),
reads the batch's KV cache, and does ``2·N`` FLOPs per sequence. The only measured anchor is
Table G.1's one-sequence generation speed, **50.92 tokens/s for Llama-3.1-Nemotron-8B on an
H100** (:data:`REFERENCE_STEP`): its step time with the paper's overheads, from which the
share of HBM bandwidth a step reached follows (``efficiency = 2·N_ref / bw_H100 / step_ref``,
0.244). For any model and GPU:

* ``weights_s = bytes·N / (bw · efficiency)`` — the same efficiency, this model's bytes (2 per
  parameter in bf16, 4 in fp32);
* ``kv_s = sequences · context · kv_bytes_per_token / (bw · efficiency)``;
* ``flops_s = 2·N · sequences / (bf16_tflops · 1e12 · mfu)``;
* ``step_s = weights_s + kv_s + flops_s`` (added, not overlapped: errs high).

Prefill is compute-bound: ``sequences · prompt_tokens · 2·N / (bf16_tflops · 1e12 · mfu)``.

Example:
    >>> from averitec_tools.baselines._run.gpus import gpu_spec
    >>> h100 = gpu_spec("h100-80gb")
    >>> s = decode_step(LLAMA_31_8B, h100, sequences=1, context=672)
    >>> round(s["step_s"] * 1000, 1), s["efficiency"]
    (19.8, 0.244)
    >>> round(decode_step(BLOOM_7B1, h100, sequences=1, context=512)["weights_s"] * 1000, 1)
    17.3
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines._run.gpus import DEFAULT_MFU, GpuSpec, gpu_spec


@dataclass(frozen=True)
class ModelShape:
    """What the decode and memory formulas need of a decoder-only LM.

    Attributes:
        params: Parameters.
        layers: Decoder layers.
        kv_heads: Key/value heads.
        head_dim: Size of one head.
        vocab: Vocabulary size.
        hidden: Hidden size.
        intermediate: MLP size.
        tied: Input embeddings and output head share one tensor.
        weight_bytes: Bytes per weight as it runs (bf16: 2).
    """

    params: float
    layers: int
    kv_heads: int
    head_dim: int
    vocab: int
    hidden: int = 4096
    intermediate: int = 14336
    tied: bool = False
    weight_bytes: int = 2

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of every layer in bf16."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * 2

    @property
    def embedding_params(self) -> int:
        """Parameters of the input embedding."""
        return self.vocab * self.hidden

    @property
    def largest_tensor(self) -> int:
        """Elements of the largest tensor (the embedding or the output head)."""
        return max(self.vocab * self.hidden, self.hidden * self.intermediate)


#: Llama-3.1-8B (the paper's Llama-3.1-Nemotron-Nano-8B): its config.json.
LLAMA_31_8B = ModelShape(params=8.03e9, layers=32, kv_heads=8, head_dim=128, vocab=128256, hidden=4096,
                         intermediate=14336)
#: bigscience/bloom-7b1: its config.json (30 layers, 32 heads of 128, no GQA, 250,880 tokens, tied).
BLOOM_7B1 = ModelShape(params=7.07e9, layers=30, kv_heads=32, head_dim=128, vocab=250880, hidden=4096,
                       intermediate=16384, tied=True)
#: facebook/bart-large's decoder as the AVeriTeC justification runs it (fp32; 12 decoder layers, 16 heads of 64).
BART_LARGE = ModelShape(params=4.06e8, layers=12, kv_heads=16, head_dim=64, vocab=50265, hidden=1024,
                        intermediate=4096, tied=True, weight_bytes=4)
#: Table G.1's measured one-sequence generation speed and the GPU and model it was measured on.
REFERENCE_STEP: dict[str, Any] = {"tokens_per_s": 50.92, "gpu": "h100-80gb", "params": LLAMA_31_8B.params,
                                  "source": "R2VC paper, Table G.1 (Generation tokens/sec, Llama-3.1-Nemotron-8B, H100)"}


def bandwidth_efficiency() -> float:
    """The share of HBM bandwidth Table G.1's decode step reached (module docs)."""
    ref = gpu_spec(REFERENCE_STEP["gpu"])
    return (2 * REFERENCE_STEP["params"] / (ref.bandwidth_tbs * 1e12)) * REFERENCE_STEP["tokens_per_s"]


def decode_step(shape: ModelShape, gpu: GpuSpec, *, sequences: int, context: float,
                mfu: float = DEFAULT_MFU) -> dict[str, Any]:
    """Seconds of one decode step of ``sequences`` sequences at ``context`` tokens each, by part."""
    eff = bandwidth_efficiency()
    bw = gpu.bandwidth_tbs * 1e12
    weights_s = shape.weight_bytes * shape.params / (bw * eff)
    kv_s = sequences * context * shape.kv_bytes_per_token / (bw * eff)
    flops_s = 2 * shape.params * sequences / (gpu.bf16_tflops * 1e12 * mfu)
    return {"step_s": weights_s + kv_s + flops_s, "weights_s": weights_s, "kv_s": kv_s, "flops_s": flops_s,
            "efficiency": round(eff, 3), "mfu": mfu}


def prefill_seconds(shape: ModelShape, gpu: GpuSpec, *, sequences: int, prompt_tokens: float,
                    mfu: float = DEFAULT_MFU) -> float:
    """Seconds to prefill ``sequences`` prompts of ``prompt_tokens`` tokens (compute-bound)."""
    return sequences * prompt_tokens * 2 * shape.params / (gpu.bf16_tflops * 1e12 * mfu)


def decode_memory_bytes(shape: ModelShape, *, sequences: int, context: float, prompt_tokens: float) -> dict[str, float]:
    """GPU bytes of decoding ``sequences`` sequences: bf16 weights, the KV cache, one step's logits
    (fp32, three copies: the logits, their warped copy and the chosen-token log-softmax) and the
    prefill's largest activations (the MLP's, in bf16, for every prompt token)."""
    return {"weights": float(shape.weight_bytes) * shape.params, "kv_cache": sequences * context * shape.kv_bytes_per_token,
            "step_logits": sequences * shape.vocab * 4.0 * 3,
            "prefill": sequences * prompt_tokens * (2 * shape.hidden + 2 * shape.intermediate) * 2.0}


__all__ = ["BART_LARGE", "BLOOM_7B1", "LLAMA_31_8B", "REFERENCE_STEP", "ModelShape", "bandwidth_efficiency", "decode_memory_bytes",
           "decode_step", "prefill_seconds"]
