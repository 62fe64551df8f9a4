"""The cost formulas of ``paper --plan``, from stated throughput assumptions (no measurement here).

Every figure is a formula over named inputs, returned with both (:class:`Cost`), so a plan
shows how it got each number:

* **decoding** (:func:`decode_cost`): one generator batch holds ``B`` claims × ``k``
  candidates. A decode step reads the weights once (memory-bound): Table G.1's measured
  one-sequence generation speed (50.92 tokens/s on an H100, i.e. the paper's step time
  with its overheads) scaled by the GPU's bandwidth; plus reading the batch's KV cache at
  the same bandwidth efficiency, plus the step's FLOPs (2·N per sequence) at
  :data:`~averitec_tools.baselines._run.gpus.DEFAULT_MFU` — added, not overlapped, so the
  estimate errs high. Steps per batch: ``max_new_tokens`` (the batch runs until its
  longest candidate stops; 160 bounds it). Prefill: every prompt's tokens × 2·N FLOPs.
  Verification: Table G.1's measured verifier latency per candidate, scaled by bf16 FLOPs;
* **training** (:func:`train_cost`): 8·N FLOPs per token (forward + backward 6·N and the
  forward recomputed by gradient checkpointing 2·N) at the MFU; DPO adds the frozen
  reference's forward (2·N per token) and runs each pair's chosen and rejected sequence;
* **memory**: fp32 master weights + fp32 gradients + 8-bit AdamW states (4 + 4 + 2 bytes
  per parameter) plus checkpointed activations for training; bf16 weights, the KV cache and
  the per-step logits (kept for the candidates' log-probabilities) for decoding.

Example:
    >>> from averitec_tools.baselines._run.gpus import gpu_spec
    >>> c = train_cost(gpu=gpu_spec("h200"), params=8.03e9, tokens=1e8, per_token_flops=8)
    >>> round(c.gpu_hours, 2), c.formula
    (5.16, 'per_token_flops · params · tokens / (bf16_tflops · 1e12 · mfu) / 3600')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines._run.gpus import DEFAULT_MFU, GpuSpec, gpu_spec

GIB = float(1 << 30)

#: Table G.1's "Runtime" rows (the paper's FEVER run of Llama-3.1-Nemotron-8B on an H100).
TABLE_G1_RUNTIME: dict[str, Any] = {
    "gpu": "h100-80gb", "avg_prompt_tokens": 608.3, "avg_generated_tokens": 64, "generation_tokens_per_s": 50.92,
    "retrieval_s_per_claim": 0.0316, "generation_s_per_candidate": 1.2567, "verifier_s_per_candidate": 0.0251,
    "k_sample_s_per_claim": 20.8248,
}


@dataclass(frozen=True)
class ModelShape:
    """What the decode formulas need of the generator: parameters, layers, KV heads, head size, vocabulary."""

    params: float
    layers: int
    kv_heads: int
    head_dim: int
    vocab: int

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of every layer in bf16."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * 2


#: Llama-3.1-8B (the paper's Llama-3.1-Nemotron-Nano-8B): its config.json.
LLAMA_31_8B = ModelShape(params=8.03e9, layers=32, kv_heads=8, head_dim=128, vocab=128256)


@dataclass(frozen=True)
class Cost:
    """One estimate: GPU-hours, the formula and its inputs, peak GPU memory (GiB)."""

    gpu_hours: float
    formula: str
    inputs: dict[str, Any]
    peak_gpu_gib: float = 0.0
    memory: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"gpu_hours": round(self.gpu_hours, 3), "formula": self.formula, "formula_inputs": self.inputs,
                "peak_gpu_gib": round(self.peak_gpu_gib, 1), "peak_gpu_memory": self.memory, **self.extra}


def train_cost(*, gpu: GpuSpec, params: float, tokens: float, per_token_flops: float,
               mfu: float = DEFAULT_MFU, extra_params: float = 0.0, activation_gib: float = 8.0) -> Cost:
    """Training FLOPs over the GPU's bf16 peak at ``mfu``; memory 10 bytes/param + activations
    (+ a bf16 reference of ``extra_params``)."""
    seconds = per_token_flops * params * tokens / (gpu.bf16_tflops * 1e12 * mfu)
    peak = (10 * params + 2 * extra_params) / GIB + activation_gib
    return Cost(seconds / 3600, "per_token_flops · params · tokens / (bf16_tflops · 1e12 · mfu) / 3600",
                {"per_token_flops": per_token_flops, "params": params, "tokens": round(tokens),
                 "bf16_tflops": gpu.bf16_tflops, "mfu": mfu},
                peak, "fp32 master weights 4 + fp32 grads 4 + 8-bit AdamW 2 bytes/param"
                + (" + bf16 reference 2 bytes/param" if extra_params else "") + f" + {activation_gib:g} GiB activations "
                "(gradient checkpointing)")


def decode_cost(*, gpu: GpuSpec, shape: ModelShape, claims: float, k: int, batch_claims: int,
                max_new_tokens: int, verifier_params: float, mfu: float = DEFAULT_MFU,
                retrieval: bool = True) -> Cost:
    """GPU-hours to decode ``claims`` claims (k candidates each, ``batch_claims`` per batch) and verify them."""
    g1, ref = TABLE_G1_RUNTIME, gpu_spec(TABLE_G1_RUNTIME["gpu"])
    bw = gpu.bandwidth_tbs * 1e12
    step_ref = 1.0 / g1["generation_tokens_per_s"]  # the paper's measured one-sequence step
    efficiency = (2 * shape.params / (ref.bandwidth_tbs * 1e12)) / step_ref  # bandwidth share it reached
    seqs = batch_claims * k
    context = g1["avg_prompt_tokens"] + max_new_tokens
    weights_s = step_ref * ref.bandwidth_tbs / gpu.bandwidth_tbs
    kv_s = seqs * context * shape.kv_bytes_per_token / (bw * efficiency)
    flops_s = 2 * shape.params * seqs / (gpu.bf16_tflops * 1e12 * mfu)
    batch_s = max_new_tokens * (weights_s + kv_s + flops_s)
    prefill_s = seqs * g1["avg_prompt_tokens"] * 2 * shape.params / (gpu.bf16_tflops * 1e12 * mfu)
    verify_s = k * g1["verifier_s_per_candidate"] * ref.bf16_tflops / gpu.bf16_tflops
    per_claim = (batch_s + prefill_s) / batch_claims + verify_s + (g1["retrieval_s_per_claim"] if retrieval else 0)
    kv_gib = seqs * context * shape.kv_bytes_per_token / GIB
    logits_gib = seqs * max_new_tokens * shape.vocab * (2 + 4) / GIB
    peak = 2 * shape.params / GIB + kv_gib + logits_gib + 2 * verifier_params / GIB + 2.0
    return Cost(
        claims * per_claim / 3600,
        "claims · ((max_new_tokens · (step_weights + step_kv + step_flops) + prefill) / B + k · verifier_s · "
        "h100_tflops / gpu_tflops + retrieval_s) / 3600; step_weights = step_ref · h100_bw / gpu_bw, step_kv = B·k · "
        "context · kv_bytes / (gpu_bw · efficiency), step_flops = 2·N·B·k / (gpu_tflops · mfu), prefill = B·k · "
        "prompt_tokens · 2·N / (gpu_tflops · mfu)",
        {"claims": round(claims), "k": k, "B": batch_claims, "max_new_tokens": max_new_tokens,
         "step_ref_s": round(step_ref, 5), "bandwidth_efficiency": round(efficiency, 3),
         "context_tokens": context, "kv_bytes_per_token": shape.kv_bytes_per_token, "N": shape.params,
         "gpu_bw_tbs": gpu.bandwidth_tbs, "gpu_tflops": gpu.bf16_tflops, "mfu": mfu,
         "verifier_s_per_candidate": g1["verifier_s_per_candidate"], "retrieval_s": g1["retrieval_s_per_claim"]
         if retrieval else 0, "seconds_per_claim": round(per_claim, 3)},
        peak, f"bf16 weights {2 * shape.params / GIB:.1f} + KV cache {kv_gib:.1f} + step logits {logits_gib:.1f} "
        "(bf16 kept + fp32 copy) + NLI model + 2 GiB workspace")


def verify_cost(*, gpu: GpuSpec, claims: float, k: int, retrieval: bool = True) -> Cost:
    """The NLI-only row: no LM, the verifier's pass over each claim (Table G.1's latency, scaled)."""
    g1, ref = TABLE_G1_RUNTIME, gpu_spec(TABLE_G1_RUNTIME["gpu"])
    retrieval_s = g1["retrieval_s_per_claim"] if retrieval else 0
    per_claim = k * g1["verifier_s_per_candidate"] * ref.bf16_tflops / gpu.bf16_tflops + retrieval_s
    return Cost(claims * per_claim / 3600, "claims · (k · verifier_s · h100_tflops / gpu_tflops + retrieval_s) / 3600",
                {"claims": round(claims), "k": k, "verifier_s": g1["verifier_s_per_candidate"],
                 "retrieval_s": retrieval_s}, 4.0, "NLI model + dense encoder + workspace")


#: Host CPU threads the plans assume for CPU work on the GPU box (``--cpu-threads`` overrides):
#: one H200's share of a typical 8-GPU node, and the 16 cores of this project's H200 machines.
DEFAULT_HOST_THREADS = 16


def retrieval_cost(*, claims: float, dense_cpu_s_per_query: float, host_threads: int, dense: str) -> Cost:
    """One batched retrieval pass over ``claims`` before decoding (experiments/pools.py), on the host CPUs.

    Each claim is searched once; the dense index's CPU-seconds per query spread over
    ``host_threads`` (FAISS parallelises a batch over its OpenMP threads), plus Table G.1's
    whole retrieval time per claim for BM25 and the query encoding (it includes the paper's
    HNSW search too, so the sum errs high). The GPU is held, idle, for the pass's wall time:
    that is its GPU-hours.

    Example:
        >>> c = retrieval_cost(claims=3600, dense_cpu_s_per_query=1.6, host_threads=16, dense="ivfsq8")
        >>> round(c.gpu_hours, 4), c.extra["cpu_hours"], c.extra["host_threads"]
        (0.1316, 1.6, 16)
    """
    g1 = TABLE_G1_RUNTIME["retrieval_s_per_claim"]
    wall_s = claims * (g1 + dense_cpu_s_per_query / host_threads)
    return Cost(wall_s / 3600, "claims · (retrieval_s + dense_cpu_s / host_threads) / 3600 (wall hours on the box; "
                "the GPU idles); CPU-hours = claims · dense_cpu_s / 3600",
                {"claims": round(claims), "retrieval_s": g1, "dense_index": dense,
                 "dense_cpu_s": round(dense_cpu_s_per_query, 4), "host_threads": host_threads}, 0.0,
                "none (CPU: FAISS on the host; the query encoder's batches are negligible)",
                {"cpu_hours": round(claims * dense_cpu_s_per_query / 3600, 2), "host_threads": host_threads})


def encode_cost(*, gpu: GpuSpec, units: float, tokens_per_unit: float, params: float,
                mfu: float = DEFAULT_MFU) -> Cost:
    """Dense-encoding a corpus: 2·N FLOPs per token."""
    seconds = units * tokens_per_unit * 2 * params / (gpu.bf16_tflops * 1e12 * mfu)
    return Cost(seconds / 3600, "units · tokens_per_unit · 2 · params / (bf16_tflops · 1e12 · mfu) / 3600",
                {"units": round(units), "tokens_per_unit": tokens_per_unit, "params": params,
                 "bf16_tflops": gpu.bf16_tflops, "mfu": mfu}, 2 * params / GIB + 8.0,
                "bf16 encoder + batch activations (encode_batch_size 1024)")


__all__ = ["DEFAULT_HOST_THREADS", "GIB", "LLAMA_31_8B", "TABLE_G1_RUNTIME", "Cost", "ModelShape", "decode_cost", "encode_cost", "retrieval_cost", "train_cost",
           "verify_cost"]
