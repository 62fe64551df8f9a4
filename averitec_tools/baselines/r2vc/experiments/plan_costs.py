"""The cost formulas of ``paper --plan``, from stated throughput assumptions (no measurement here).

Every figure is a formula over named inputs, returned with both (:class:`Cost`), so a plan
shows how it got each number:

* **decoding** (:func:`decode_cost`): one generator batch holds ``B`` claims × ``k``
  candidates; each step costs the one decode-step model both baselines' plans share
  (:func:`~averitec_tools.baselines._run.decode.decode_step`: weights and KV cache read at
  the bandwidth share Table G.1's measured 50.92 tokens/s implies, plus the step's FLOPs at
  :data:`~averitec_tools.baselines._run.gpus.DEFAULT_MFU`, added). Steps per batch:
  ``max_new_tokens`` (the batch runs until its longest candidate stops; 160 bounds it).
  Prefill: every prompt's tokens × 2·N FLOPs. Verification: Table G.1's measured verifier
  latency per candidate, scaled by bf16 FLOPs;
* **training** (:func:`train_cost`): 8·N FLOPs per token (forward + backward 6·N and the
  forward recomputed by gradient checkpointing 2·N) at the MFU; DPO adds the frozen
  reference's forward (2·N per token) and runs each pair's chosen and rejected sequence;
* **memory**: training's parts (bf16 weights and gradients, 8-bit AdamW with 32-bit states
  for the embeddings, stochastic rounding's one-tensor fp32 copy, DPO's bf16 reference,
  checkpointed activations; or, with fp32 master weights, fp32 weights and gradients and
  autocast's bf16 copies) from :func:`~averitec_tools.baselines.r2vc.training.memory.plan_memory`;
  decoding's from :func:`~averitec_tools.baselines._run.decode.decode_memory_bytes` (bf16
  weights, KV cache, one step's fp32 logits — only the sampled tokens' log-probabilities
  are kept — and the prefill's activations).

Example:
    >>> from averitec_tools.baselines._run.gpus import gpu_spec
    >>> c = train_cost(gpu=gpu_spec("h200"), shape=LLAMA_31_8B, stage="sft", tokens=1e8, micro_batch_tokens=1344)
    >>> round(c.gpu_hours, 2), c.formula, round(c.peak_gpu_gib, 1)
    (5.16, 'per_token_flops · params · tokens / (bf16_tflops · 1e12 · mfu) / 3600', 54.3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines._run.decode import (
    LLAMA_31_8B,
    ModelShape,
    decode_memory_bytes,
    decode_step,
    prefill_seconds,
)
from averitec_tools.baselines._run.gpus import DEFAULT_MFU, GpuSpec, gpu_spec

GIB = float(1 << 30)

#: Table G.1's "Runtime" rows (the paper's FEVER run of Llama-3.1-Nemotron-8B on an H100).
TABLE_G1_RUNTIME: dict[str, Any] = {
    "gpu": "h100-80gb", "avg_prompt_tokens": 608.3, "avg_generated_tokens": 64, "generation_tokens_per_s": 50.92,
    "retrieval_s_per_claim": 0.0316, "generation_s_per_candidate": 1.2567, "verifier_s_per_candidate": 0.0251,
    "k_sample_s_per_claim": 20.8248,
}


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


def train_cost(*, gpu: GpuSpec, shape: ModelShape, stage: str, tokens: float, micro_batch_tokens: float,
               master_weights: str = "bf16", optim: str = "paged_adamw_8bit", mfu: float = DEFAULT_MFU) -> Cost:
    """Training FLOPs over the GPU's bf16 peak at ``mfu``; memory of one step
    (:func:`~averitec_tools.baselines.r2vc.training.memory.plan_memory`).

    ``tokens``: every token the stage trains on (DPO: chosen and rejected); 8·N FLOPs each,
    DPO 10·N (the reference's forward)."""
    from averitec_tools.baselines.r2vc.training.memory import plan_memory

    per_token_flops = 8 if stage == "sft" else 10
    seconds = per_token_flops * shape.params * tokens / (gpu.bf16_tflops * 1e12 * mfu)
    memory = plan_memory(shape, stage=stage, tokens=micro_batch_tokens, master_weights=master_weights, optim=optim)
    return Cost(seconds / 3600, "per_token_flops · params · tokens / (bf16_tflops · 1e12 · mfu) / 3600",
                {"per_token_flops": per_token_flops, "params": shape.params, "tokens": round(tokens),
                 "bf16_tflops": gpu.bf16_tflops, "mfu": mfu},
                memory.total_gib, f"{master_weights} weights, {optim}: {memory.describe()} (one micro-batch of "
                f"{micro_batch_tokens:g} tokens, gradient checkpointing)", {"memory_gib": memory.parts_gib()})


def decode_cost(*, gpu: GpuSpec, shape: ModelShape, claims: float, k: int, batch_claims: int,
                max_new_tokens: int, verifier_params: float, mfu: float = DEFAULT_MFU,
                retrieval: bool = True) -> Cost:
    """GPU-hours to decode ``claims`` claims (k candidates each, ``batch_claims`` per batch) and verify them."""
    g1, ref = TABLE_G1_RUNTIME, gpu_spec(TABLE_G1_RUNTIME["gpu"])
    seqs = batch_claims * k
    context = g1["avg_prompt_tokens"] + max_new_tokens
    step = decode_step(shape, gpu, sequences=seqs, context=context, mfu=mfu)
    batch_s = max_new_tokens * step["step_s"]
    prefill_s = prefill_seconds(shape, gpu, sequences=seqs, prompt_tokens=g1["avg_prompt_tokens"], mfu=mfu)
    verify_s = k * g1["verifier_s_per_candidate"] * ref.bf16_tflops / gpu.bf16_tflops
    per_claim = (batch_s + prefill_s) / batch_claims + verify_s + (g1["retrieval_s_per_claim"] if retrieval else 0)
    mem = decode_memory_bytes(shape, sequences=seqs, context=context, prompt_tokens=g1["avg_prompt_tokens"])
    peak = (sum(mem.values()) + 2 * verifier_params) / GIB + 2.0
    parts = ", ".join(f"{k} {v / GIB:.1f}" for k, v in mem.items())
    return Cost(
        claims * per_claim / 3600,
        "claims · ((max_new_tokens · (step_weights + step_kv + step_flops) + prefill) / B + k · verifier_s · "
        "h100_tflops / gpu_tflops + retrieval_s) / 3600; the step: _run/decode.py (one model for both baselines), "
        "prefill = B·k · prompt_tokens · 2·N / (gpu_tflops · mfu)",
        {"claims": round(claims), "k": k, "B": batch_claims, "max_new_tokens": max_new_tokens,
         "step_s": round(step["step_s"], 5), "bandwidth_efficiency": step["efficiency"],
         "context_tokens": context, "kv_bytes_per_token": shape.kv_bytes_per_token, "N": shape.params,
         "gpu_bw_tbs": gpu.bandwidth_tbs, "gpu_tflops": gpu.bf16_tflops, "mfu": mfu,
         "verifier_s_per_candidate": g1["verifier_s_per_candidate"], "retrieval_s": g1["retrieval_s_per_claim"]
         if retrieval else 0, "seconds_per_claim": round(per_claim, 3)},
        peak, f"{parts} (GiB; sampled tokens' log-probabilities only) + NLI model + 2 GiB workspace")


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
                "fp16 encoder (the dense encoder's dtype on CUDA; fp16 and bf16 have the same tensor FLOPs) + "
                "batch activations (encode_batch_size 1024)")


__all__ = ["DEFAULT_HOST_THREADS", "GIB", "LLAMA_31_8B", "TABLE_G1_RUNTIME", "Cost", "ModelShape", "decode_cost", "encode_cost", "retrieval_cost", "train_cost",
           "verify_cost"]
