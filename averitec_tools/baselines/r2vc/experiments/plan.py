"""``averitec baseline r2vc paper --recipe ... --plan [--gpu NAME] [--json]``: the cost before spending.

:func:`plan_paper` lists every stage of a :class:`~.paper_set.PaperSet` — the shared
generator's data, SFT and DPO, then each recipe's corpus, calibration slice, predictions
and table — with its inputs (each missing file with the ``averitec data download`` command
that fetches it), outputs, work units (claims, candidates, tokens, training steps),
estimated GPU-hours on the named or detected GPU (:mod:`~averitec_tools.baselines._run.gpus`)
with the formula and its inputs (:mod:`~.plan_costs`), peak GPU memory, host RAM and disk.

The work units follow the code, not the paper's prose: one generator for every recipe,
one slice decoding for recipes whose calibration configuration agrees, one decoding per
generator (DPO for every row but ``no_dpo``; SFT for ``no_dpo``; none for ``nli_only``,
which still runs the verifier), candidates batched ``decode_batch`` claims at a time. Row
counts are counted from the files when they are there, else taken from
:data:`DATASET_ROWS` (the published split sizes), and say which.

Example:
    >>> import os
    >>> from averitec_tools.baselines._run.gpus import gpu_spec
    >>> from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe
    >>> _ = os.environ.setdefault("AVERITEC_DATA_DIR", "/nowhere")
    >>> plan = plan_paper([load_recipe("paper-fever"), load_recipe("paper-vitaminc")], gpu=gpu_spec("h200"))
    >>> [s["stage"] for s in plan["stages"]][:4]
    ['generator data', 'generator sft', 'generator dpo', 'paper-fever data']
    >>> plan["total"]["gpu_hours"] <= 120, plan["decodings_per_claim"]
    (True, 2)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.gpus import GpuSpec
from averitec_tools.baselines.r2vc.experiments.plan_costs import (
    GIB,
    LLAMA_31_8B,
    Cost,
    ModelShape,
    decode_cost,
    encode_cost,
    retrieval_cost,
    train_cost,
    verify_cost,
)
from averitec_tools.baselines.r2vc.experiments.recipes import Recipe
from averitec_tools.baselines.r2vc.stages.retrieval.compact import (
    IVFSQ,
    bytes_per_unit,
    full_corpus_estimate,
)

#: Published row counts used when a file is not here (path suffix → rows, source).
DATASET_ROWS: dict[str, tuple[int, str]] = {
    "vitaminc/train.jsonl": (370653, "tals/vitaminc train split (dataset card)"),
    "vitaminc/test.jsonl": (55197, "tals/vitaminc test split (dataset card)"),
    "fever/paper_dev.jsonl": (9999, "FEVER paper_dev (fever.ai: half of the shared-task dev set)"),
    "fever/wiki-pages": (25_000_000, "FEVER wiki-pages, ~25 M sentence units (issue 25's figure)"),
}
#: Parameters of the hub models the recipes name (model cards), beyond doctor.KNOWN_PARAMS.
PARAMS: dict[str, float] = {"cross-encoder/nli-deberta-v3-large": 435e6, "BAAI/bge-large-en-v1.5": 335e6}
#: Tokens per FEVER sentence unit for dense encoding (title + sentence; an assumption).
TOKENS_PER_UNIT = 48
#: HNSW host bytes per unit: fp32 1024-d vector + M = 64 links × 2 (levels) × 4 bytes.
HNSW_BYTES_PER_UNIT = 1024 * 4 + 64 * 2 * 4
#: Issue 25's goal for ``make r2vc-paper`` (both recipes), in GPU-hours of the planned GPU.
GPU_HOURS_BUDGET = 120.0
#: Rows decoded by the DPO generator (one shared decoding; single_candidate replays its θ_0).
LM_ROWS = ("full", "no_verifier_selection", "single_candidate", "no_calibration")


def _rows(path: str | None, *, limit: int | None = None) -> dict[str, Any]:
    """An input's row count: counted when the file is here, else :data:`DATASET_ROWS`; with its download command."""
    from averitec_tools.doctor import TARGETS

    norm = str(path).replace("\\", "/")
    command = next((cmd for rel, cmd in TARGETS.get("r2vc-paper").data.items() if norm.endswith(rel)), None)
    known = next(((n, src) for rel, (n, src) in DATASET_ROWS.items() if norm.endswith(rel)), None)
    p = Path(str(path))
    out: dict[str, Any] = {"path": str(path), "exists": p.exists()}
    if p.is_file():
        with p.open("rb") as fh:
            out["rows"], out["rows_source"] = sum(1 for line in fh if line.strip()), "counted"
    elif known is not None:
        out["rows"], out["rows_source"] = known[0], f"assumed: {known[1]}"
    if limit is not None and "rows" in out:
        out["rows"] = min(out["rows"], limit)
    if not out["exists"]:
        out["download"] = command or "not downloadable by averitec data download: set the recipe's path"
    return out


def _params(model: str | None, default: float) -> float:
    from averitec_tools.doctor import model_params

    if model is None:
        return 0.0
    return float(model_params(model) or PARAMS.get(model) or default)


def _shape(model: str) -> ModelShape:
    """The generator's shape from a local ``config.json``, else Llama-3.1-8B's."""
    import json
    from dataclasses import replace

    from averitec_tools.baselines.r2vc.training.memory import shape_of

    config = Path(model) / "config.json"
    if not config.is_file():
        return replace(LLAMA_31_8B, params=_params(model, LLAMA_31_8B.params))
    return shape_of(json.loads(config.read_text(encoding="utf-8")), params=_params(model, 8.03e9))


def _stage(name: str, *, inputs: list[dict[str, Any]], outputs: list[str], work: dict[str, Any],
           cost: Cost | None, gpu: GpuSpec, host_ram_gib: float, disk_gib: float) -> dict[str, Any]:
    out: dict[str, Any] = {"stage": name, "inputs": inputs, "outputs": outputs, "work": work}
    out.update(cost.to_dict() if cost else {"gpu_hours": 0.0, "formula": "CPU only", "peak_gpu_gib": 0.0})
    out["fits_gpu"] = out["peak_gpu_gib"] <= gpu.usable_gib
    out["host_ram_gib"], out["disk_gib"] = round(host_ram_gib, 1), round(disk_gib, 1)
    return out


def _training(recipes: Sequence[Recipe], gpu: GpuSpec, *, train_rows: int, slice_rows: int) -> list[dict[str, Any]]:
    from averitec_tools.baselines.r2vc.experiments.plan_costs import TABLE_G1_RUNTIME as G1
    from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings
    from averitec_tools.baselines.r2vc.training.dpo import pairs_needed

    r = recipes[0]
    shape = _shape(r.generator)
    tokens_per_example = G1["avg_prompt_tokens"] + G1["avg_generated_tokens"]
    rows = max(train_rows - slice_rows, 0)  # evaluation claims found in it are dropped too (not counted here)
    stages = []
    for stage, cls, overrides in (("sft", SFTSettings, r.sft), ("dpo", DPOSettings, r.dpo)):
        s = cls.from_dict({**dict(overrides), "model": r.generator}, where=f"recipe {r.name}: {stage}")
        batch = s.per_device_train_batch_size * s.gradient_accumulation_steps
        # SFT: one example per row; DPO: one preference pair per row, built only for the rows its steps use
        needed = pairs_needed(s) if stage == "dpo" else None  # type: ignore[arg-type]
        examples = rows if needed is None else min(rows, needed)
        steps = s.max_steps if s.max_steps > 0 else math.ceil(examples * s.num_train_epochs / batch)
        per_seq = 1 if stage == "sft" else 2  # DPO: chosen + rejected
        seqs = steps * batch * per_seq
        optim = "paged_adamw_8bit" if s.optim == "auto" else s.optim
        cost = train_cost(gpu=gpu, shape=shape, stage=stage, tokens=seqs * tokens_per_example,
                          micro_batch_tokens=s.per_device_train_batch_size * per_seq * tokens_per_example,
                          master_weights=s.master_weights, optim=optim)
        checkpoint_gib = (2 + 2) * shape.params / GIB if s.master_weights == "bf16" else 6 * shape.params / GIB
        stages.append(_stage(
            f"generator {stage}", gpu=gpu, cost=cost,
            inputs=[{"path": "generator/sft_rows.jsonl", "rows": rows, "rows_source": "training rows − slice"}],
            outputs=[f"generator/{stage}/", f"generator/{stage}.checkpoints/ (every {s.save_steps} steps; "
                     "deleted when done)"],
            work={"examples": examples, "steps": steps, "batch": batch, "sequences": seqs,
                  "tokens_per_sequence": tokens_per_example, "save_steps": s.save_steps,
                  "master_weights": s.master_weights, "bf16_rounding": s.bf16_rounding, "optim": optim,
                  "length": "max_steps" if s.max_steps > 0 else f"{s.num_train_epochs:g} epoch(s)"},
            host_ram_gib=4 * shape.params / GIB + 8, disk_gib=checkpoint_gib * s.save_total_limit + 2 * shape.params / GIB))
    return stages


def _corpus_stage(recipe: Recipe, gpu: GpuSpec, cfg: Any, *, host_threads: int) -> tuple[dict[str, Any], int, float]:
    """Building the corpus and its indexes: the dense encoding on the GPU, then the FAISS build on the
    host's threads (``ivfsq8`` and flat: every thread, byte-identical files; HNSW: one thread) while
    the GPU waits; returns the stage, the corpus units and the index's host RAM (GiB)."""
    from averitec_tools.baselines.r2vc.stages.retrieval.faiss_threads import build_threads_for

    if not (recipe.wiki_pages or recipe.wikipedia):
        note = "given evidence: no corpus" if recipe.corpus is None else "a prebuilt corpus store"
        return _stage(f"{recipe.name} corpus", gpu=gpu, cost=None, inputs=[], outputs=[], work={"note": note},
                      host_ram_gib=1, disk_gib=0), 0, 0.0
    src = _rows(recipe.wiki_pages or recipe.wikipedia)
    units, index = src.get("rows", 0), cfg.retrieval.dense_index
    per_unit = bytes_per_unit(index_type=index, dim=1024, num_vectors=max(1, units))
    estimate = full_corpus_estimate(num_vectors=max(1, units)) if index == IVFSQ else None
    threads = build_threads_for(index, requested=host_threads)
    build_h = (estimate["build_cpu_hours"] if estimate else 0.0) / threads
    cost = None
    if recipe.dense:
        enc = encode_cost(gpu=gpu, units=units, tokens_per_unit=TOKENS_PER_UNIT, params=_params(recipe.dense, 335e6))
        cost = Cost(enc.gpu_hours + build_h, f"[{enc.formula}] + index build_cpu_hours / build_threads (the GPU "
                    "waits)", {**enc.inputs, "build_cpu_hours": estimate["build_cpu_hours"] if estimate else None,
                               "build_threads": threads}, enc.peak_gpu_gib, enc.memory)
    stage = _stage(f"{recipe.name} corpus", gpu=gpu, cost=cost, inputs=[src],
                   outputs=[f"{recipe.name}/corpus/ (units, BM25, dense index)"],
                   work={"units": units, "index": index, "index_bytes_per_unit": round(per_unit, 1),
                         "build_threads": threads, "index_estimate": estimate},
                   host_ram_gib=units * per_unit / GIB + 8, disk_gib=units * (per_unit + 300) / GIB)
    return stage, units, units * per_unit / GIB


def _retrieve_stage(recipe: Recipe, gpu: GpuSpec, *, index: str, units: int, claims: int, host_threads: int,
                    corpus_ram: float) -> dict[str, Any]:
    """The batched retrieval pass (experiments/pools.py): every retrieved claim searched once, on the host CPUs."""
    from averitec_tools.baselines.r2vc.experiments.plan_costs import TABLE_G1_RUNTIME

    if not claims:
        return _stage(f"{recipe.name} retrieve", gpu=gpu, cost=None, inputs=[], outputs=[],
                      work={"queries": 0, "note": "given evidence: nothing to search"}, host_ram_gib=1, disk_gib=0)
    if index == IVFSQ:
        dense_s = full_corpus_estimate(num_vectors=max(1, units))["search_cpu_seconds_per_query"]
    else:  # no measurement of our own: Table G.1's retrieval time per claim covers it
        dense_s = 0.0
    cost = retrieval_cost(claims=claims, dense_cpu_s_per_query=dense_s, host_threads=host_threads, dense=index)
    return _stage(f"{recipe.name} retrieve", gpu=gpu, cost=cost,
                  inputs=[{"path": f"{recipe.name}/corpus/", "rows": units, "rows_source": "corpus units"}],
                  outputs=["(in memory: one evidence pool per claim, served to every row and stored with its "
                           "candidates)"],
                  work={"queries": claims, "index": index, "search_batch": 256, "host_threads": host_threads,
                        "cpu_hours": cost.extra["cpu_hours"], "table_g1_retrieval_s": TABLE_G1_RUNTIME[
                            "retrieval_s_per_claim"]},
                  host_ram_gib=corpus_ram + 8, disk_gib=0)


def _predict_stage(recipe: Recipe, gpu: GpuSpec, *, decode: dict[str, Any], evals: dict[str, Any], k: int,
                   max_new_tokens: int, corpus_ram: float) -> dict[str, Any]:
    n_eval = evals.get("rows", 0)
    lm = [gen for gen, rows in (("dpo", LM_ROWS), ("sft", ("no_dpo",))) if any(r in recipe.rows for r in rows)]
    costs = [decode_cost(claims=n_eval * len(lm), retrieval=False, **decode)]  # retrieval: the retrieve stage
    if "nli_only" in recipe.rows:
        costs.append(verify_cost(gpu=gpu, claims=n_eval, k=k, retrieval=False))
    pred = Cost(sum(c.gpu_hours for c in costs), " + ".join(f"[{c.formula.split(';')[0]}]" for c in costs),
                costs[0].inputs | ({"nli_only": costs[1].inputs} if len(costs) > 1 else {}),
                max(c.peak_gpu_gib for c in costs), costs[0].memory)
    return _stage(
        f"{recipe.name} predict", gpu=gpu, cost=pred, inputs=[evals],
        outputs=[f"{recipe.name}/candidates/", *(f"{recipe.name}/pred-{r}.jsonl" for r in recipe.rows)],
        work={"claims": n_eval, "rows": list(recipe.rows), "decodings_per_claim": len(lm), "generators": lm,
              "generator_loads": len(lm), "candidates": n_eval * len(lm) * k,
              "generated_tokens_bound": n_eval * len(lm) * k * max_new_tokens},
        host_ram_gib=corpus_ram + 8, disk_gib=n_eval * len(lm) * k * 2048 / GIB)


def _recipe_stages(recipe: Recipe, gpu: GpuSpec, *, slice_decoded: bool, slice_rows: int,
                   host_threads: int) -> list[dict[str, Any]]:
    """The run's recipe stages (paper.py's ``RECIPE_STEPS``), under the names the run's ledger uses."""
    from averitec_tools.baselines.r2vc.config import config_from_mapping

    cfg = config_from_mapping(dict(recipe.pipeline), source=f"recipe {recipe.name}: pipeline")
    g = cfg.generator
    evals = _rows(recipe.eval_claims, limit=recipe.eval_limit)
    n_eval = evals.get("rows", 0)
    data = _stage(f"{recipe.name} data", gpu=gpu, cost=None, inputs=[evals], outputs=[f"{recipe.name}/eval.jsonl"],
                  work={"eval_claims": n_eval}, host_ram_gib=1, disk_gib=0)
    corpus, units, corpus_ram = _corpus_stage(recipe, gpu, cfg, host_threads=host_threads)
    decode: dict[str, Any] = dict(gpu=gpu, shape=_shape(recipe.generator), k=g.k, batch_claims=recipe.decode_batch,
                  max_new_tokens=g.max_new_tokens, verifier_params=_params(recipe.verifier, 435e6))
    searched = (n_eval if recipe.evidence == "retrieved" else 0) + (
        slice_rows if recipe.calibration_evidence == "retrieved" else 0)
    retrieve = _retrieve_stage(recipe, gpu, index=cfg.retrieval.dense_index, units=units, claims=searched,
                               host_threads=host_threads, corpus_ram=corpus_ram)
    cal = _stage(
        f"{recipe.name} calibrate", gpu=gpu, cost=decode_cost(claims=slice_rows if slice_decoded else 0,
                                                              retrieval=False, **decode),
        inputs=[{"path": "generator/slice.jsonl", "rows": slice_rows, "rows_source": "slice_size"}],
        outputs=[f"{recipe.name}/calibrator.json", "generator/slice-candidates/"],
        work={"claims": slice_rows, "candidates": slice_rows * g.k, "decoded_here": slice_decoded,
              "note": "decoded once; replayed from the store" if not slice_decoded else "the slice's one decoding"},
        host_ram_gib=8, disk_gib=slice_rows * g.k * 2048 / GIB)
    pred = _predict_stage(recipe, gpu, decode=decode, evals=evals, k=g.k, max_new_tokens=g.max_new_tokens,
                          corpus_ram=corpus_ram)
    tail = [_stage(f"{recipe.name} {name}", gpu=gpu, cost=None, inputs=[evals], outputs=[f"{recipe.name}/{out}"],
                   work={"rows": len(recipe.rows)}, host_ram_gib=1, disk_gib=0)
            for name, out in (("score", "(in memory)"), ("table", "table.md, table.json"))]
    return [data, corpus, retrieve, cal, pred, *tail]


def _calibration_key(recipe: Recipe) -> str:
    import json

    pipeline = dict(recipe.pipeline)
    if recipe.calibration_evidence == "given":  # no retrieval runs on the slice (paper.py's step_calibrate)
        pipeline.pop("retrieval", None)
    return json.dumps([recipe.calibration_evidence, pipeline, recipe.decode_batch], sort_keys=True, default=str)


def _total(stages: list[dict[str, Any]], *, hub_gib: float) -> dict[str, Any]:
    """GPU-hours, host CPU-hours and disk add up over the stages (plus the hub models); memory is the peak."""
    gpu_hours = round(sum(s["gpu_hours"] for s in stages), 1)
    return {"gpu_hours": gpu_hours, "cpu_hours": round(sum(s.get("cpu_hours", 0.0) for s in stages), 2),
            "budget_gpu_hours": GPU_HOURS_BUDGET, "within_budget": gpu_hours <= GPU_HOURS_BUDGET,
            "peak_gpu_gib": max(s["peak_gpu_gib"] for s in stages),
            "host_ram_gib": max(s["host_ram_gib"] for s in stages),
            "disk_gib": round(sum(s["disk_gib"] for s in stages) + hub_gib, 1),
            "fits_gpu": all(s["fits_gpu"] for s in stages)}


def plan_paper(recipes: Sequence[Recipe], *, gpu: GpuSpec, host_threads: int | None = None) -> dict[str, Any]:
    """The plan of ``paper --recipe R1 --recipe R2 ...`` on ``gpu`` (see the module docs); CPU work
    (the batched retrieval pass) on ``host_threads`` (default :data:`~.plan_costs.DEFAULT_HOST_THREADS`)."""
    from averitec_tools.baselines._run.gpus import DEFAULT_MFU
    from averitec_tools.baselines.r2vc.experiments.plan_costs import (
        DEFAULT_HOST_THREADS,
        TABLE_G1_RUNTIME,
    )
    from averitec_tools.baselines.r2vc.experiments.recipes import check_one_generator

    threads = int(host_threads or DEFAULT_HOST_THREADS)
    check_one_generator(recipes)  # the same refusals as a run (one generator for every recipe)
    r = recipes[0]
    train = _rows(r.train_rows, limit=r.train_limit)
    slice_rows = min(r.slice_size, train.get("rows", r.slice_size))
    stages = [_stage("generator data", gpu=gpu, cost=None, inputs=[train, *(_rows(x.eval_claims) for x in recipes)],
                     outputs=["generator/slice.jsonl", "generator/sft_rows.jsonl", "generator/data.json"],
                     work={"training_rows": train.get("rows"), "slice_rows": slice_rows}, host_ram_gib=4,
                     disk_gib=2)]
    stages += _training(recipes, gpu, train_rows=train.get("rows", 0), slice_rows=slice_rows)
    decoded: set[str] = set()
    for recipe in recipes:
        key = _calibration_key(recipe)
        stages += _recipe_stages(recipe, gpu, slice_decoded=key not in decoded, slice_rows=slice_rows,
                                  host_threads=threads)
        decoded.add(key)
    hub = sum(2 * _params(m, 0) for m in {r.generator, r.verifier, *(x.dense for x in recipes)} if m) / GIB
    evals = {s["stage"].rsplit(" ", 1)[0]: s["work"] for s in stages if s["stage"].endswith(" predict")}
    n_eval = sum(w["claims"] for w in evals.values())
    missing = [{"path": i["path"], "download": i["download"]} for s in stages for i in s["inputs"] if "download" in i]
    return {
        "plan": "averitec baseline r2vc paper", "recipes": [x.name for x in recipes], "gpu": gpu.to_dict(),
        "assumptions": {"table_g1_runtime": TABLE_G1_RUNTIME, "mfu": DEFAULT_MFU, "dataset_rows": {
            k: {"rows": n, "source": src} for k, (n, src) in DATASET_ROWS.items()},
            "tokens_per_unit": TOKENS_PER_UNIT, "host_threads": threads,
            "host_threads_source": "--cpu-threads" if host_threads else "assumed: DEFAULT_HOST_THREADS (plan_costs.py)", "hnsw_bytes_per_unit": HNSW_BYTES_PER_UNIT,
            "note": "estimates from stated throughput assumptions, not measured on a GPU"},
        "generator_trainings": 1, "slice_decodings": len(decoded),
        "decodings_per_claim": max((w["decodings_per_claim"] for w in evals.values()), default=0),
        "eval_claims": n_eval, "stages": stages, "total": _total(stages, hub_gib=hub),
        "missing": list({m["path"]: m for m in missing}.values()),
    }


def format_plan(plan: dict[str, Any]) -> str:
    """The plan as text: one block per stage, then the total and what is missing."""
    gpu = plan["gpu"]
    lines = [f"plan: {plan['plan']} {' '.join('--recipe ' + r for r in plan['recipes'])} on {gpu['label']} "
             f"({gpu['memory_gib']:g} GiB, {gpu['bandwidth_tbs']:g} TB/s, {gpu['bf16_tflops']:g} bf16 TFLOP/s)",
             f"generator trainings {plan['generator_trainings']}, decodings per evaluated claim "
             f"{plan['decodings_per_claim']}, slice decodings {plan['slice_decodings']}", ""]
    for s in plan["stages"]:
        fits = "" if s["fits_gpu"] else f"  DOES NOT FIT {gpu['usable_gib']:g} GiB"
        cpu = f" ({s['cpu_hours']:g} CPU-h on {s['host_threads']} host threads)" if "cpu_hours" in s else ""
        lines.append(f"{s['stage']}: {s['gpu_hours']:.2f} GPU-h{cpu}, peak GPU {s['peak_gpu_gib']:.1f} GiB{fits}, "
                     f"host RAM {s['host_ram_gib']:.1f} GiB, disk {s['disk_gib']:.1f} GiB")
        for i in s["inputs"]:
            rows = f" ({i['rows']:,} rows, {i.get('rows_source', '')})" if i.get("rows") is not None else ""
            lines.append(f"  in:  {i['path']}{rows}" + (f"  MISSING: {i['download']}" if "download" in i else ""))
        lines += [f"  out: {o}" for o in s["outputs"]]
        lines.append("  work: " + ", ".join(f"{k} {v}" for k, v in s["work"].items()))
        if s["formula"] != "CPU only":
            lines.append(f"  formula: {s['formula']}")
            lines.append("  inputs: " + ", ".join(f"{k}={v}" for k, v in s["formula_inputs"].items()))
            lines.append(f"  GPU memory: {s['peak_gpu_memory']}")
    t = plan["total"]
    budget = "within" if t["within_budget"] else "OVER"
    lines += ["", f"total: {t['gpu_hours']:.1f} GPU-hours on one {gpu['name']} ({budget} the {t['budget_gpu_hours']:g} "
              f"GPU-hour budget; {t['cpu_hours']:g} host CPU-hours on "
              f"{plan['assumptions']['host_threads']} threads inside it), peak GPU {t['peak_gpu_gib']:.1f} GiB"
              + ("" if t["fits_gpu"] else " (a stage does not fit)") + f", host RAM {t['host_ram_gib']:.1f} GiB, "
              f"disk {t['disk_gib']:.1f} GiB (with the hub models)",
              "estimates from stated throughput assumptions (Table G.1 runtime rows, datasheet bandwidth and FLOPs); "
              "nothing here was measured on a GPU"]
    if plan["missing"]:
        lines += ["", "missing inputs:"] + [f"  {m['path']}: {m['download']}" for m in plan["missing"]]
    return "\n".join(lines) + "\n"


__all__ = ["format_plan", "plan_paper"]
