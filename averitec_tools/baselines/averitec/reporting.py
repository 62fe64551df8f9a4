"""What an AVeriTeC baseline run reports: its :class:`~averitec_tools.baselines._run.summary.RunSummary`.

:func:`run_summary` counts labels, fallbacks, missing store files and the gold answer
sentences retrieved, and lists the per-stage seconds (model loading moved to the build
seconds), the stage cache, peak memory, the departures from the upstream code and what
the leak guard removed; :func:`timing_table` prints the seconds per stage.

Example:
    >>> s = RunSummary(out="p.json", config="c", output_format="2024", n_claims=2, layout=SUMMARY_LAYOUT,
    ...                figures={"seconds": {"verdict": 1.0}, "stage_cache": {}, "memory": {}})
    >>> print(timing_table(s))
    stage            seconds   s/claim  cache
    verdict             1.00    0.5000
    total               1.00    0.5000
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.averitec.io.output import ClaimResult

#: The keys of an AVeriTeC baseline summary, in the order ``--json`` lists them (then ``extra``).
SUMMARY_LAYOUT: tuple[str, ...] = (
    "config", "variant", "output_format", "out", "n_claims", "n_resumed", "labels", "components", "departures",
    "fallbacks", "stage_cache", "seconds", "build_seconds", "memory", "missing_store_files", "retrieval_recall_at_k",
    "notes", "leak_guard", "seconds_per_claim", "seconds_per_claim_total", "cached_stages")


def peak_memory() -> dict[str, float | None]:
    """Peak resident memory of this process and, when CUDA was used, peak GPU memory (MiB).

    Example:
        >>> m = peak_memory()
        >>> m["peak_rss_mb"] > 0, "peak_gpu_mb" in m
        (True, True)
    """
    import resource

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_mb = rss / (1 << 20) if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux
    gpu = None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        gpu = round(sum(torch.cuda.max_memory_allocated(d) for d in range(torch.cuda.device_count())) / (1 << 20), 1)
    return {"peak_rss_mb": round(rss_mb, 1), "peak_gpu_mb": gpu}


def _result_counts(results: Sequence[ClaimResult]) -> dict[str, Any]:
    """Fallbacks, claims without a store file and the mean gold-sentence recall of ``results``."""
    counts: Counter[str] = Counter()
    for r in results:
        counts.update(r.extra.get("fallback_counts", {}))
    recalls = [r.extra["gold_sentence_recall"] for r in results if "gold_sentence_recall" in r.extra]
    return {"fallbacks": dict(sorted(counts.items())), "missing_store_files": counts.get("no-store-file", 0),
            "retrieval_recall_at_k": round(float(np.mean(recalls)), 4) if recalls else None}


def run_summary(pipe: Any, *, results: Sequence[ClaimResult], n_resumed: int, out: str, output_format: str,
                components: dict[str, Any], build_seconds: dict[str, float]) -> RunSummary:
    """The summary of a run of ``pipe`` (an :class:`~averitec_tools.baselines.averitec.pipeline.AVeriTeCPipeline`) that gave ``results``.

    ``components`` and ``build_seconds``: the pipeline's, as the run started. Models load on
    first use, inside a stage: that time is counted as build time, not per-claim time.
    """
    from averitec_tools.baselines.averitec.config import STRUCTURAL_DEPARTURES

    build_seconds = dict(build_seconds)
    loaded = {"questions": pipe.question_writer, "reranker": pipe.reranker, "verdict": pipe.verdict,
              "justification": pipe.justifier}
    for stage, part in loaded.items():
        load = float(getattr(part, "load_seconds", 0.0))
        if load:
            pipe.seconds[stage] = max(0.0, pipe.seconds[stage] - load)
            build_seconds[f"{stage} (load on first use)"] = round(load, 2)
    seconds = {k: round(v, 3) for k, v in pipe.seconds.items()}
    stage_cache = dict(pipe.cache.counts())
    n = max(1, len(results) - n_resumed)
    counts = _result_counts(results)
    figures = {
        "variant": pipe.variant.name, "departures": pipe.config.departures() + list(STRUCTURAL_DEPARTURES),
        "stage_cache": stage_cache, "seconds": seconds, "build_seconds": build_seconds, "memory": peak_memory(),
        "missing_store_files": counts["missing_store_files"], "retrieval_recall_at_k": counts["retrieval_recall_at_k"],
        "leak_guard": dict(pipe.leak_guard or {}),
        "seconds_per_claim": {k: round(v / n, 4) for k, v in seconds.items()},
        "seconds_per_claim_total": round(sum(seconds.values()) / n, 4),
        "cached_stages": [k for k, v in stage_cache.items() if v.get("cached") and not v.get("computed")],
    }
    return RunSummary(out=out, config=pipe.config.name, output_format=output_format, n_claims=len(results),
                      n_resumed=n_resumed, labels=dict(Counter(r.label for r in results)), components=components,
                      fallbacks=counts["fallbacks"], figures=figures, layout=SUMMARY_LAYOUT,
                      extra={**({"decision": dict(pipe.decision)} if pipe.decision else {}),
                             **({"verdict_training": dict(pipe.verdict_training)} if pipe.verdict_training else {})})


def timing_table(summary: RunSummary) -> str:
    """The seconds of each stage, in all and per claim run here, with its stage-cache counts and peak memory."""
    seconds, stage_cache, mem = summary.figures["seconds"], summary.figures["stage_cache"], summary.figures["memory"]
    n = max(1, summary.n_claims - summary.n_resumed)
    rows = [f"{'stage':<14}{'seconds':>10}{'s/claim':>10}  cache"]
    for k, v in seconds.items():
        c = stage_cache.get(k)
        cache = f"{c['cached']} cached, {c['computed']} computed" if c else ""
        rows.append(f"{k:<14}{v:>10.2f}{v / n:>10.4f}  {cache}".rstrip())
    rows.append(f"{'total':<14}{sum(seconds.values()):>10.2f}{sum(seconds.values()) / n:>10.4f}")
    if mem:
        gpu = f"; peak GPU memory {mem['peak_gpu_mb']:.0f} MiB" if mem.get("peak_gpu_mb") is not None else ""
        rows.append(f"peak process memory {mem['peak_rss_mb']:.0f} MiB{gpu}")
    return "\n".join(rows)


__all__ = ["SUMMARY_LAYOUT", "run_summary", "timing_table"]
