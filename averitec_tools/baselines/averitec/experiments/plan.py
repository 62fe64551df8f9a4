"""``averitec baseline averitec reproduce --plan``: every stage before anything runs.

For the configuration (``paper-bounded`` unless ``--config``), the claims and the store it
would read, :func:`reproduce_plan` lists each stage of ``reproduce`` — the three trainings
it would run (none where the config names a checkpoint), BM25 retrieval, BLOOM question
generation (the config's setting, with the other one — bounded or upstream — beside it),
reranking, verdict, justification — with its inputs (a missing one named with the command
that fetches or makes it), outputs, work units, estimated GPU-hours on the named (or
detected) GPU with the formula and every input of it, peak GPU memory, host RAM and disk.

The estimates come from stated assumptions (:data:`ASSUMPTIONS`) and the GPU registry's
datasheet figures (:mod:`averitec_tools.baselines._run.gpus`), never from a measurement on
a GPU (none was made): a decode step is the one decode-step model both baselines' plans use
(:func:`~averitec_tools.baselines._run.decode.decode_step`: weights and the key/value cache read
once per step at the bandwidth share Table G.1's measured 50.92 tokens/s of an 8B model on an
H100 implies, plus the step's FLOPs), prompts and encoders are compute-bound (``2·P`` FLOPs per token forward,
``6·P`` for training, at :data:`~averitec_tools.baselines._run.gpus.DEFAULT_MFU`), and every
decoding runs to its bound (the worst case). The one measured figure, new tokens per
question of a tiny random BLOOM (``benchmarks/bench_question_bound.py``), is shown next to
the bound it cannot replace.

Example:
    >>> from averitec_tools.baselines.averitec.config import builtin_config
    >>> p = reproduce_plan(config=builtin_config("paper-bounded"), claims=None, store=None, gpu="h200",
    ...                    data_roots=[])
    >>> [s["stage"] for s in p["stages"]][:4]
    ['train-reranker', 'train-verdict', 'train-justification', 'retrieval']
    >>> q = next(s for s in p["stages"] if s["stage"] == "questions")
    >>> q["work_units"]["questions"], q["setting"], q["alternative"]["setting"]
    (50000, 'bounded (questions.stop: question-end)', 'upstream (questions.stop: none)')
    >>> q["gpu_hours"] < q["alternative"]["gpu_hours"]
    True
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.decode import BART_LARGE, BLOOM_7B1, decode_step, prefill_seconds
from averitec_tools.baselines._run.gpus import (
    DEFAULT_MFU,
    GpuSpec,
    gpu_spec,
)
from averitec_tools.baselines.averitec.config import AVeriTeCConfig

GIB = 1024**3


@dataclass(frozen=True)
class ModelShape:
    """What the estimates need of a model: parameters, layers, hidden size, bytes per weight as run."""

    params: float
    layers: int
    hidden: int
    weight_bytes: int


#: The upstream models (hub configs: BLOOM-7b1 30 layers × 4096; BERT-base 12 × 768; BART-large 12+12 × 1024).
MODELS: dict[str, ModelShape] = {
    "bigscience/bloom-7b1": ModelShape(7.07e9, 30, 4096, 2),
    "bert-base-uncased": ModelShape(1.10e8, 12, 768, 4),
    "facebook/bart-large": ModelShape(4.06e8, 24, 1024, 4),
}

#: Stated assumptions (every estimate says which it uses).
ASSUMPTIONS: dict[str, Any] = {
    "dev_claims_when_file_missing": 500,
    "train_qa_pairs": 8479,  # AVeriTeC train.json: 3,068 claims, 7,985 questions, 8,479 answers (counted)
    "train_claims": 3068,
    "prompt_tokens": 800,  # upstream prompt: 10 QA examples + the sentence (docs/averitec_baseline.md)
    "bounded_new_tokens": 256,  # questions.stop: question-end stops at "?" or 256 new tokens
    "measured_new_tokens_per_question_tiny_bloom": 1,
    "measured_new_tokens_source": "benchmarks/bench_question_bound.py --n 3 --configs paper-bounded: a tiny random "
                                  "BLOOM (hidden 32, 1 layer) on CPU; says nothing of BLOOM-7b1's question length",
    "bm25_sentences_per_second": 7836,  # bench_averitec_bm25.py --n 50: 10,500 sentences in 1.34 s (2-core CPU)
    "bytes_per_store_sentence": 150,
    "dev_store_bytes_when_missing": 11537899362,  # the dev store archive (recorded size; unpacked is larger)
    "overhead_gib": 1.5,  # CUDA context, activations of inference, logits
    "mfu": DEFAULT_MFU,
    "decode_step": "baselines/_run/decode.py: bandwidth efficiency from R2VC Table G.1's 50.92 tokens/s (H100, 8B)",
    "reranker_sequences_per_positive": 10,  # 1 positive + 9 upstream negatives
    "host_ram_gib_training": 8.0,  # tokenised training set, data loader, the model's host copy
    "host_ram_gib_inference": 4.0,  # one claim's store file, the stage cache, a small model's host copy
}


def _input(name: str, path: str | os.PathLike[str] | None, fix: str, *, required: bool = True) -> dict[str, Any]:
    present = path is not None and Path(path).exists()
    return {"name": name, "path": None if path is None else str(path), "present": present,
            "required": required, "fix": None if present else fix}


def _model_input(model: str | None, checkpoint: str | None, *, stage: str) -> dict[str, Any]:
    if checkpoint:
        return _input(f"{stage} checkpoint", checkpoint,
                      f"averitec baseline averitec train {stage} --config CONFIG --out {checkpoint} "
                      "(or the upstream .ckpt: docs/averitec_baseline.md, the upstream route)")
    local = model is not None and model.startswith((".", "/", "~"))
    if local:
        return _input(f"{stage} model", model, f"a model directory at {model}")
    return {"name": f"{stage} model", "path": model, "present": None, "required": True,
            "fix": None, "note": "hub id: fetched by transformers at first use (needs the hub)"}


#: The decode shapes of the upstream generators (the one decode-step model: ``baselines/_run/decode.py``).
DECODE_SHAPES = {"bigscience/bloom-7b1": BLOOM_7B1, "facebook/bart-large": BART_LARGE}


def _decode_seconds(model: str, gpu: GpuSpec, *, prompt: int, new: int, beams: int, batch: int) -> dict[str, float]:
    """Per generated sequence: prefill (compute-bound) + ``new`` steps of ``beams · batch`` sequences shared by the
    batch, each step the decode-step model both baselines' plans use (:func:`~averitec_tools.baselines._run.decode.decode_step`:
    calibrated on Table G.1's measured 50.92 tokens/s)."""
    shape = DECODE_SHAPES.get(model, BLOOM_7B1)
    step = decode_step(shape, gpu, sequences=beams * batch, context=prompt + new / 2)
    prefill = prefill_seconds(shape, gpu, sequences=beams, prompt_tokens=prompt)
    return {"prefill_s": prefill, "step_s": step["step_s"], "per_sequence_s": prefill + new * step["step_s"] / batch,
            "kv_bytes_per_token": shape.kv_bytes_per_token, "bandwidth_efficiency": step["efficiency"]}


def _decode_memory(shape: ModelShape, *, ctx: int, beams: int, batch: int) -> float:
    kv = 2 * shape.layers * shape.hidden * 2 * ctx * beams * batch
    return (shape.params * shape.weight_bytes + kv) / GIB + ASSUMPTIONS["overhead_gib"]


def _train_memory(shape: ModelShape, *, micro_batch: int, seq: int, heads: int = 16) -> float:
    """fp32 AdamW (16 B/param) + activations (``s·b·h·(34 + 5·a·s/h)`` B per layer, no recomputation)."""
    acts = seq * micro_batch * shape.hidden * (34 + 5 * heads * seq / shape.hidden) * shape.layers
    return (16 * shape.params + acts) / GIB + ASSUMPTIONS["overhead_gib"]


def _shape(model: str) -> ModelShape:
    return MODELS.get(model, MODELS["bert-base-uncased"])


def _training_stage(kind: str, cfg: AVeriTeCConfig, gpu: GpuSpec, train: dict[str, Any]) -> dict[str, Any]:
    section = getattr(cfg, kind)
    model = getattr(section, "base", None) or section.model
    shape = _shape(model)
    t = section.train
    per_claim = {"reranker": ASSUMPTIONS["train_qa_pairs"] * ASSUMPTIONS["reranker_sequences_per_positive"],
                 "verdict": ASSUMPTIONS["train_qa_pairs"], "justification": ASSUMPTIONS["train_claims"]}[kind]
    seq = t.max_length + (section.max_new_tokens if kind == "justification" else 0)
    tokens = per_claim * t.epochs * seq
    seconds = 6 * shape.params * tokens / (gpu.bf16_tflops * 1e12 * DEFAULT_MFU)
    micro = t.micro_batch or t.batch_size
    return {
        "stage": f"train-{kind}", "runs_on": "gpu", "inputs": [train, _model_input(model, None, stage=kind)],
        "outputs": [f"OUT/checkpoints/{kind}-<key>/"],
        "work_units": {"sequences_per_epoch": per_claim, "epochs": t.epochs, "tokens": tokens},
        "gpu_hours": seconds / 3600,
        "formula": "6 · P · sequences · epochs · max_length / (bf16_peak · MFU)  (max_length: an upper bound)",
        "formula_inputs": {"P": shape.params, "sequences": per_claim, "epochs": t.epochs, "max_length": seq,
                           "bf16_peak_tflops": gpu.bf16_tflops, "MFU": DEFAULT_MFU},
        "peak_gpu_memory_gib": _train_memory(shape, micro_batch=micro, seq=t.max_length),
        "host_ram_gib": ASSUMPTIONS["host_ram_gib_training"], "disk_gib": shape.params * 4 / GIB,
    }


def _question_estimate(cfg: AVeriTeCConfig, gpu: GpuSpec, *, bounded: bool, questions: int) -> dict[str, Any]:
    q = cfg.questions
    shape = _shape(q.model)
    prompt = ASSUMPTIONS["prompt_tokens"]
    new = (q.max_new_tokens or ASSUMPTIONS["bounded_new_tokens"]) if bounded else (q.max_length or 5000) - prompt
    t = _decode_seconds(q.model, gpu, prompt=prompt, new=new, beams=q.num_beams, batch=q.batch_size)
    return {
        "setting": "bounded (questions.stop: question-end)" if bounded else "upstream (questions.stop: none)",
        "gpu_hours": questions * t["per_sequence_s"] / 3600,
        "formula": "questions · (prefill + new_tokens · step / batch); prefill = 2·P·prompt·beams / (bf16_peak·MFU); "
                   "step = (P·bytes + kv_per_token·beams·batch·(prompt + new/2)) / (bandwidth·efficiency) + "
                   "2·P·beams·batch / (bf16_peak·MFU), efficiency from Table G.1's measured step (_run/decode.py, "
                   "the R2VC plan's too)",
        "formula_inputs": {"questions": questions, "P": shape.params, "bytes": shape.weight_bytes, "prompt": prompt,
                           "new_tokens": new, "beams": q.num_beams, "batch": q.batch_size,
                           "kv_per_token_bytes": t["kv_bytes_per_token"], "bandwidth_tbs": gpu.bandwidth_tbs,
                           "efficiency": t["bandwidth_efficiency"], "bf16_peak_tflops": gpu.bf16_tflops, "MFU": DEFAULT_MFU,
                           "step_ms": round(1000 * t["step_s"], 3), "prefill_ms": round(1000 * t["prefill_s"], 3)},
        "peak_gpu_memory_gib": _decode_memory(shape, ctx=prompt + new, beams=q.num_beams, batch=q.batch_size),
        "new_tokens_per_question": {"estimate_uses": new, "bound": new if bounded else None,
                                    "measured_tiny_model": ASSUMPTIONS["measured_new_tokens_per_question_tiny_bloom"],
                                    "measured_source": ASSUMPTIONS["measured_new_tokens_source"]},
    }


def _encoder_seconds(model: str, gpu: GpuSpec, *, sequences: int, seq: int) -> float:
    return 2 * _shape(model).params * sequences * seq / (gpu.bf16_tflops * 1e12 * DEFAULT_MFU)


def _inference_stages(cfg: AVeriTeCConfig, gpu: GpuSpec, *, claims: int, store_bytes: int,
                      inputs: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    k, keep = cfg.retrieval.top_k, cfg.reranker.keep
    questions = claims * k
    sentences = store_bytes / ASSUMPTIONS["bytes_per_store_sentence"]
    bounded = cfg.questions.stop == "question-end"
    q = _question_estimate(cfg, gpu, bounded=bounded, questions=questions)
    alt = _question_estimate(cfg, gpu, bounded=not bounded, questions=questions)
    rerank_len = cfg.reranker.max_length or cfg.reranker.train.max_length
    just = _decode_seconds(cfg.justification.model, gpu, prompt=cfg.justification.max_length,
                           new=cfg.justification.max_new_tokens, beams=cfg.justification.num_beams, batch=1)
    models = {s: _model_input(getattr(getattr(cfg, s), "base", None) or getattr(getattr(cfg, s), "model", None),
                              getattr(cfg, s).checkpoint if s != "questions" else None, stage=s)
              for s in ("questions", "reranker", "verdict", "justification")}
    enc = "2 · P · sequences · max_length / (bf16_peak · MFU)"
    rows: list[dict[str, Any]] = [
        {"stage": "retrieval", "runs_on": "cpu", "inputs": [inputs["claims"], inputs["store"]],
         "outputs": ["stage cache: top-k sentences per claim"],
         "work_units": {"claims": claims, "store_sentences": int(sentences), "top_k": k},
         "gpu_hours": 0.0, "cpu_hours": sentences / ASSUMPTIONS["bm25_sentences_per_second"] / 3600,
         "formula": "store_bytes / bytes_per_sentence / bm25_sentences_per_second (one core)",
         "formula_inputs": {"store_bytes": store_bytes, "bytes_per_sentence": ASSUMPTIONS["bytes_per_store_sentence"],
                            "bm25_sentences_per_second": ASSUMPTIONS["bm25_sentences_per_second"]},
         "peak_gpu_memory_gib": 0.0, "host_ram_gib": ASSUMPTIONS["host_ram_gib_inference"], "disk_gib": 0.0},
        {"stage": "questions", "runs_on": "gpu", "inputs": [inputs["train"], models["questions"]],
         "outputs": ["stage cache: one question per retrieved sentence"],
         "work_units": {"claims": claims, "questions": questions, "beam_searches": questions},
         **{key: q[key] for key in ("setting", "gpu_hours", "formula", "formula_inputs", "peak_gpu_memory_gib",
                                    "new_tokens_per_question")},
         "alternative": {key: alt[key] for key in ("setting", "gpu_hours", "peak_gpu_memory_gib", "formula_inputs")},
         "host_ram_gib": _shape(cfg.questions.model).params * 2 / GIB + 4,
         "disk_gib": _shape(cfg.questions.model).params * 2 / GIB},
        {"stage": "rerank", "runs_on": "gpu", "inputs": [models["reranker"]], "outputs": [f"top {keep} QA per claim"],
         "work_units": {"pairs": questions},
         "gpu_hours": _encoder_seconds(cfg.reranker.base, gpu, sequences=questions, seq=rerank_len) / 3600,
         "formula": enc, "formula_inputs": {"P": _shape(cfg.reranker.base).params, "sequences": questions,
                                            "max_length": rerank_len},
         "peak_gpu_memory_gib": _shape(cfg.reranker.base).params * 4 / GIB + ASSUMPTIONS["overhead_gib"],
         "host_ram_gib": ASSUMPTIONS["host_ram_gib_inference"], "disk_gib": 0.5},
        {"stage": "verdict", "runs_on": "gpu", "inputs": [models["verdict"]], "outputs": ["pred_label per claim"],
         "work_units": {"pairs": claims * keep},
         "gpu_hours": _encoder_seconds(cfg.verdict.base, gpu, sequences=claims * keep,
                                       seq=cfg.verdict.max_length or 512) / 3600,
         "formula": enc, "formula_inputs": {"P": _shape(cfg.verdict.base).params, "sequences": claims * keep,
                                            "max_length": cfg.verdict.max_length},
         "peak_gpu_memory_gib": _shape(cfg.verdict.base).params * 4 / GIB + ASSUMPTIONS["overhead_gib"],
         "host_ram_gib": ASSUMPTIONS["host_ram_gib_inference"], "disk_gib": 0.5},
        {"stage": "justification", "runs_on": "gpu", "inputs": [models["justification"]],
         "outputs": ["OUT/<variant>.pred.json", "OUT/table.md", "OUT/results.json"],
         "work_units": {"generations": claims, "new_tokens": claims * cfg.justification.max_new_tokens},
         "gpu_hours": claims * just["per_sequence_s"] / 3600,
         "formula": "claims · (prefill + new_tokens · step) (as questions)",
         "formula_inputs": {"claims": claims, "P": _shape(cfg.justification.model).params,
                            "prompt": cfg.justification.max_length, "new_tokens": cfg.justification.max_new_tokens,
                            "beams": cfg.justification.num_beams, "step_ms": round(1000 * just["step_s"], 3)},
         "peak_gpu_memory_gib": _decode_memory(_shape(cfg.justification.model), beams=cfg.justification.num_beams,
                                               ctx=cfg.justification.max_length, batch=1),
         "host_ram_gib": ASSUMPTIONS["host_ram_gib_inference"], "disk_gib": _shape(cfg.justification.model).params * 4 / GIB},
    ]
    return rows


def plan_inputs(*, config: AVeriTeCConfig, claims: str | None, store: str | None,
                data_roots: Sequence[Path] | None = None) -> dict[str, dict[str, Any]]:
    """The claims, store and training files ``reproduce`` would read (found as it finds them)."""
    from averitec_tools.loaders import locate

    roots = list(locate.data_roots() if data_roots is None else data_roots)
    first = roots[0] if roots else Path(".")

    def found(rel: str) -> Path:
        return next((r / rel for r in roots if (r / rel).exists()), first / rel)

    claims_path = Path(claims) if claims else found("averitec/dev.json")
    split = claims_path.stem
    store_path = Path(store) if store else found(f"averitec/knowledge_store/{split}")
    train = Path(config.data.train) if config.data.train else found("averitec/train.json")
    return {
        "claims": _input("claims", claims_path, f"averitec data download averitec --split {split}"),
        "store": _input("knowledge store", store_path, f"averitec data download averitec-store --split {split}"),
        "train": _input("training claims", train, "averitec data download averitec --split train"),
    }


def _claims_count(path: dict[str, Any]) -> tuple[int, str]:
    if not path["present"]:
        return ASSUMPTIONS["dev_claims_when_file_missing"], "assumed (the file is missing: AVeriTeC dev's size)"
    from averitec_tools.baselines.averitec.io.data import read_claims

    return len(read_claims(path["path"])), "counted"


def _store_bytes(path: dict[str, Any]) -> tuple[int, str]:
    if not path["present"]:
        return ASSUMPTIONS["dev_store_bytes_when_missing"], "assumed (the dev store archive's recorded size)"
    root = Path(path["path"])
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()), "measured on disk"


def reproduce_plan(*, config: AVeriTeCConfig, claims: str | None, store: str | None, gpu: str | GpuSpec,
                   data_roots: Sequence[Path] | None = None) -> dict[str, Any]:
    """The plan of ``reproduce`` (see the module docs); nothing is read beyond sizes and the claims count."""
    from averitec_tools.baselines.averitec.experiments.reproduce import (
        TRAINED_STAGES,
        _needs_training,
    )

    spec = gpu if isinstance(gpu, GpuSpec) else gpu_spec(gpu)
    inputs = plan_inputs(config=config, claims=claims, store=store, data_roots=data_roots)
    n, n_how = _claims_count(inputs["claims"])
    size, size_how = _store_bytes(inputs["store"])
    stages = [_training_stage(k, config, spec, inputs["train"]) for k in TRAINED_STAGES if _needs_training(config, k)]
    stages += _inference_stages(config, spec, claims=n, store_bytes=size, inputs=inputs)
    for s in stages:
        s["fits_gpu"] = s["peak_gpu_memory_gib"] <= spec.usable_gib
        for row in (s, s.get("alternative", {})):
            for key in ("gpu_hours", "cpu_hours", "peak_gpu_memory_gib", "host_ram_gib", "disk_gib"):
                if key in row:
                    row[key] = round(float(row[key]), 3)
    missing = [i for s in stages for i in s["inputs"] if i["present"] is False and i["required"]]
    unique = list({i["path"]: i for i in missing}.values())
    gpu_hours = sum(s["gpu_hours"] for s in stages)
    return {
        "plan": "averitec baseline averitec reproduce", "config": config.name, "departures": config.departures(),
        "gpu": spec.to_dict(), "claims": {"n": n, "how": n_how}, "store_bytes": {"n": size, "how": size_how},
        "stages": stages, "missing": unique, "assumptions": dict(ASSUMPTIONS),
        "totals": {"gpu_hours": round(gpu_hours, 3), "cpu_hours": round(sum(s.get("cpu_hours", 0) for s in stages), 3),
                   "peak_gpu_memory_gib": max(s["peak_gpu_memory_gib"] for s in stages),
                   "host_ram_gib": max(s["host_ram_gib"] for s in stages),
                   "disk_gib": round(sum(s["disk_gib"] for s in stages) + size / GIB, 3),
                   "fits_gpu": all(s["fits_gpu"] for s in stages)},
        "measured_on_a_gpu": False,
    }


def check_inputs(plan: dict[str, Any]) -> None:
    """Refuse the first missing input of a plan: one line naming it and the command that fixes it.

    Raises:
        UserError: a missing claims file, store, training file or checkpoint.
    """
    from averitec_tools.errors import UserError

    for item in plan["missing"]:
        raise UserError(f"{item['path']}: {item['name']} not found", hint=item["fix"])


__all__ = ["ModelShape", "check_inputs", "plan_inputs", "reproduce_plan"]
