"""What a paper run really spent, counted as it happens: ``ledger.jsonl`` and ``paper_manifest.json``.

Every finished SFT or DPO training appends ``{"event": "train", "stage": ...}`` and every LM
decoding of one claim appends ``{"event": "decode", "set": "eval"|"slice", "recipe": ...,
"generator": ...}`` (a :class:`CountingGenerator` wraps the pipeline's LM generator; the
NLI-only generator decodes nothing and is not wrapped; a claim replayed from a candidate
store calls no generator). The file is appended across reruns, so a claim decoded, lost to
a kill and decoded again counts twice: the ledger measures the cost, not the intent.
Every model load of the run's :class:`~averitec_tools.baselines._run.memory.ResidentModels`
appends ``{"event": "load", "kind", "model", "recipe"}``, each retrieve stage
``{"event": "retrieve", ...}`` (its retriever and index), and every stage its wall time
(:func:`timed_stage`: ``{"event": "stage", "stage", "seconds", "ran"}``, with the CUDA peak
where there is a GPU). :func:`paper_manifest` turns it into the counts the issue asks for:
``generator_trainings`` (SFT+DPO runs), ``decodings_per_claim`` (eval decodings over every
Table 2 row and recipe divided by the evaluated claims), ``slice_decodings`` (slice decodings
divided by the slice size), ``generator_loads`` (recipe → generator → loads), ``dense_index``
(whether a retrieve stage searched a dense index), and per stage the measured hours
(:func:`measured_stages`) that the run sets beside the plan's.

Example:
    >>> import tempfile
    >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "ledger.jsonl")
    >>> ledger.add(event="train", stage="sft"); ledger.add(event="train", stage="dpo")
    >>> for claim in range(3):
    ...     ledger.add(event="decode", set="eval", recipe="a", generator="dpo")
    >>> ledger.add(event="decode", set="slice", recipe="a", generator="dpo")
    >>> m = paper_manifest(ledger, eval_claims={"a": 3}, slice_claims=1)
    >>> m["generator_trainings"], m["decodings_per_claim"], m["slice_decodings"]
    (1, 1.0, 1.0)
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class Ledger:
    """An append-only JSON-lines record of trainings and decodings (see the module docs)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def add(self, **event: Any) -> None:
        """Append one event (flushed at once: a kill keeps every finished event)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(event, sort_keys=True) + "\n")

    def events(self) -> list[dict[str, Any]]:
        """Every complete event (a torn last line from a kill is skipped)."""
        if not self.path.is_file():
            return []
        out = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out


class CountingGenerator:
    """Wraps an LM generator: each ``generate`` call (one claim's k candidates) is a ledger event."""

    def __init__(self, inner: Any, *, ledger: Ledger, set_name: str, recipe: str) -> None:
        self.inner, self.ledger, self.set_name, self.recipe = inner, ledger, set_name, recipe

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate(self, claim: str, evidence: Sequence[Any], *, k: int, seed: int) -> Any:
        result = self.inner.generate(claim, evidence, k=k, seed=seed)
        self._count(1)
        return result

    def generate_many(self, requests: Sequence[Any], **kwargs: Any) -> Any:
        """One event per claim of the batch (a claim decoded again on a rerun counts again)."""
        results = self.inner.generate_many(requests, **kwargs)
        self._count(len(requests))
        return results

    def _count(self, n: int) -> None:
        for _ in range(n):
            self.ledger.add(event="decode", set=self.set_name, recipe=self.recipe,
                            generator=str(getattr(self.inner, "name", "?")))


def count_decodings(pipe: Any, *, ledger: Ledger, set_name: str, recipe: str) -> None:
    """Wrap ``pipe``'s generator in a :class:`CountingGenerator` unless it is the NLI-only one."""
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator

    if not isinstance(pipe.generator, (NLIFallbackGenerator, CountingGenerator)):
        pipe.generator = CountingGenerator(pipe.generator, ledger=ledger, set_name=set_name, recipe=recipe)


@contextmanager
def timed_stage(ledger: Ledger, stage: str, *, ran: bool = True) -> Iterator[None]:
    """Append the block's wall time as ``{"event": "stage", "stage", "seconds", "ran"}`` (and the CUDA
    peak allocated during it, ``peak_gpu_gib``, where torch sees a GPU) once it finished.

    Example:
        >>> import tempfile
        >>> ledger = Ledger(Path(tempfile.mkdtemp()) / "ledger.jsonl")
        >>> with timed_stage(ledger, "generator sft"):
        ...     pass
        >>> [(e["stage"], e["ran"]) for e in ledger.events()]
        [('generator sft', True)]
    """
    torch: Any = sys.modules.get("torch")  # a run that never imported torch has no CUDA peak to read
    cuda = torch is not None and bool(torch.cuda.is_available())
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    yield
    event: dict[str, Any] = {"event": "stage", "stage": stage, "seconds": round(time.perf_counter() - start, 3),
                             "ran": ran}
    if cuda:
        event["peak_gpu_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    ledger.add(**event)


def measured_stages(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """Stage → measured wall hours summed over the runs that ran it (a stage resumed after a kill counts
    every attempt that finished), its runs, and its largest CUDA peak."""
    out: dict[str, dict[str, Any]] = {}
    for e in ledger.events():
        if e.get("event") != "stage" or not e.get("ran"):
            continue
        row = out.setdefault(e["stage"], {"measured_hours": 0.0, "runs": 0, "measured_peak_gpu_gib": None})
        row["measured_hours"] = round(row["measured_hours"] + e["seconds"] / 3600, 6)
        row["runs"] += 1
        if e.get("peak_gpu_gib") is not None:
            row["measured_peak_gpu_gib"] = max(row["measured_peak_gpu_gib"] or 0.0, e["peak_gpu_gib"])
    return out


def _loads(events: list[dict[str, Any]], kind: str) -> dict[str, dict[str, int]]:
    loads: dict[str, Counter[str]] = defaultdict(Counter)
    for e in events:
        if e.get("event") == "load" and e.get("kind") == kind:
            loads[str(e.get("recipe"))][Path(str(e.get("model"))).name] += 1
    return {recipe: dict(sorted(c.items())) for recipe, c in loads.items()}


def paper_manifest(ledger: Ledger, *, eval_claims: Mapping[str, int], slice_claims: int) -> dict[str, Any]:
    """The counts of a paper run from its ledger (see the module docs)."""
    events = ledger.events()
    trainings = Counter(e.get("stage") for e in events if e.get("event") == "train")
    decodes = Counter((e.get("set"), e.get("recipe")) for e in events if e.get("event") == "decode")
    n_eval = sum(eval_claims.values())
    eval_decodes = sum(n for (kind, _), n in decodes.items() if kind == "eval")
    slice_decodes = sum(n for (kind, _), n in decodes.items() if kind == "slice")
    return {
        "generator_trainings": max(trainings.get("sft", 0), trainings.get("dpo", 0)),
        "sft_trainings": trainings.get("sft", 0),
        "dpo_trainings": trainings.get("dpo", 0),
        "decodings_per_claim": round(eval_decodes / n_eval, 4) if n_eval else None,
        "decodings_per_claim_by_recipe": {r: round(decodes.get(("eval", r), 0) / n, 4) if n else None
                                          for r, n in eval_claims.items()},
        "slice_decodings": round(slice_decodes / slice_claims, 4) if slice_claims else None,
        "eval_claims": dict(eval_claims),
        "slice_claims": slice_claims,
        "eval_decodings": eval_decodes,
        "slice_claim_decodings": slice_decodes,
        "generator_loads": _loads(events, "generator"),
        "retriever_loads": _loads(events, "retriever"),
        "dense_index": any(e.get("event") == "retrieve" and e.get("dense_index_built") for e in events),
        "dense_indexes": {e["recipe"]: e.get("dense_index") for e in events if e.get("event") == "retrieve"},
        "measured_from": f"{ledger.path.name}: one line per finished SFT/DPO training, per LM decoding of one "
                         "claim (replays from a candidate store decode nothing), per model load and per stage",
    }


__all__ = ["Ledger", "count_decodings", "measured_stages", "paper_manifest", "timed_stage"]
