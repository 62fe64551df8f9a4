"""What a paper run really spent, counted as it happens: ``ledger.jsonl`` and ``paper_manifest.json``.

Every finished SFT or DPO training appends ``{"event": "train", "stage": ...}`` and every LM
decoding of one claim appends ``{"event": "decode", "set": "eval"|"slice", "recipe": ...,
"generator": ...}`` (a :class:`CountingGenerator` wraps the pipeline's LM generator; the
NLI-only generator decodes nothing and is not wrapped; a claim replayed from a candidate
store calls no generator). The file is appended across reruns, so a claim decoded, lost to
a kill and decoded again counts twice: the ledger measures the cost, not the intent.
:func:`paper_manifest` turns it into the counts the issue asks for: ``generator_trainings``
(SFT+DPO runs), ``decodings_per_claim`` (eval decodings over every Table 2 row and recipe
divided by the evaluated claims) and ``slice_decodings`` (slice decodings divided by the
slice size).

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
from collections import Counter
from collections.abc import Mapping, Sequence
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
        "measured_from": f"{ledger.path.name}: one line per finished SFT/DPO training and per LM decoding "
                         "of one claim (replays from a candidate store decode nothing)",
    }


__all__ = ["Ledger", "count_decodings", "paper_manifest"]
