"""One command from data to table: train reranker → train verdict → train justification →
run every variant → score → table (``averitec baseline averitec reproduce``).

Every step writes into the output directory and is skipped when its result is already
there with the same key, so an interrupted reproduction continues where it stopped:

* ``checkpoints/<stage>-<key>/`` — the three trained models (a stage whose config names a
  ``checkpoint``, or the extractive justification fallback, is not trained); the key hashes
  the training data, the excluded claims and every training setting;
* ``config.yaml`` — the configuration that ran, with the checkpoints filled in;
* ``<variant>.pred.json``, ``<variant>.run.json`` (the run summary), ``<variant>.score.json``
  (the ``averitec2024`` profile's summary), ``gold.json`` (the gold items of the claims run);
* ``table.md`` and ``results.json`` — one row per variant.

Training never sees a scored claim: every training claim whose text equals a claim of the
run is removed first. The per-claim stage cache (:mod:`~averitec_tools.baselines.averitec.io.stage_cache`) makes the second and
later variants reuse retrieval and question generation.

Example:
    >>> from averitec_tools.baselines.averitec.config import builtin_config
    >>> [k for k in TRAINED_STAGES if _needs_training(builtin_config("paper"), k)]
    ['reranker', 'verdict', 'justification']
    >>> [k for k in TRAINED_STAGES if _needs_training(builtin_config("offline-minilm"), k)]
    ['reranker', 'verdict']
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.memory import release_memory
from averitec_tools.baselines.averitec.config import JUSTIFICATION_FALLBACK, AVeriTeCConfig
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer

#: Stages ``reproduce`` trains, in order.
TRAINED_STAGES: tuple[str, ...] = ("reranker", "verdict", "justification")


def _needs_training(cfg: AVeriTeCConfig, kind: str) -> bool:
    section = getattr(cfg, kind)
    if section.checkpoint:
        return False
    return not (kind == "justification" and section.model == JUSTIFICATION_FALLBACK)


def train_missing(*, config: AVeriTeCConfig, exclude: Sequence[str], out: Path,
                  progress: bool = False) -> tuple[AVeriTeCConfig, dict[str, Any]]:
    """Train (or find already trained under ``out/checkpoints``) every model the config does
    not name a checkpoint for; returns the config with the checkpoints set and a report."""
    from averitec_tools.baselines.averitec.training.checkpoints import (
        train_stage,
        training_claims,
        training_settings,
    )
    from averitec_tools.baselines.averitec.training.classifier import fingerprint

    claims, info = training_claims(config, exclude=exclude)
    report: dict[str, Any] = {}
    for kind in TRAINED_STAGES:
        section = getattr(config, kind)
        if not _needs_training(config, kind):
            report[kind] = {"checkpoint": section.checkpoint, "trained": False}
            continue
        target = out / "checkpoints" / f"{kind}-{fingerprint(kind, info, training_settings(kind, config))}"
        trained = not (target / "manifest.json").is_file()
        if trained:
            train_stage(kind=kind, cfg=config, claims=claims, data_info=info, out_dir=target, progress=progress)
            release_memory()  # the trained model and its optimizer go before the next stage loads its own
        manifest = json.loads((target / "manifest.json").read_text())
        report[kind] = {"checkpoint": str(target), "trained": trained, "seconds": manifest.get("seconds"),
                        "best_epoch": manifest.get("best_epoch"), "heldout_metric": manifest.get("heldout_metric"),
                        "heldout_per_epoch": manifest.get("heldout_per_epoch")}
        config = replace(config, **{kind: replace(section, checkpoint=str(target))})
    return config, report


def _calibration(preds: Path, gold: Path) -> dict[str, float]:
    from averitec_tools.metrics.brier import brier_score
    from averitec_tools.metrics.ece import expected_calibration_error

    p = json.loads(preds.read_text(encoding="utf-8"))
    g = json.loads(gold.read_text(encoding="utf-8"))
    conf = [float(r["confidence"]) for r in p]
    correct = [r.get("pred_label", r.get("label")) == ref.get("label") for r, ref in zip(p, g, strict=True)]
    return {"brier": brier_score(confidences=conf, correct=correct),
            "ece": expected_calibration_error(confidences=conf, correct=correct, n_bins=15)}


def _row(variant: str, score: dict[str, Any], cal: dict[str, float], run: dict[str, Any]) -> str:
    a, v = score["averitec_score"], score["veracity"]
    rec = run.get("retrieval_recall_at_k")
    return (f"| {run['config']} | {variant} | {score['n_claims']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} | "
            f"{score['questions_only']:.3f} | {score['questions_answers']:.3f} | {a['0.2']:.3f} | {a['0.25']:.3f} | "
            f"{a['0.3']:.3f} | {cal['brier']:.3f} | {cal['ece']:.3f} | {'–' if rec is None else f'{rec:.3f}'} | "
            f"{run['seconds_per_claim_total']:.3f} | {run['memory']['peak_rss_mb']:.0f} |")


TABLE_HEADER = ("| config | variant | n | label acc | macro-F1 | Q | Q+A | AVeriTeC @0.2 | @0.25 | @0.3 | Brier | ECE "
                "| recall@100 | s/claim | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def reproduce(*, config: AVeriTeCConfig, claims_path: str | os.PathLike[str], store: str | None,
              out: str | os.PathLike[str], variants: Sequence[str] = ("full",), limit: int | None = None,
              output_format: str = "2024", progress: bool = False) -> dict[str, Any]:
    """Train what is missing, run each variant, score it, and write the table (see module doc)."""
    import yaml

    from averitec_tools.baselines.averitec.build import build_pipeline
    from averitec_tools.baselines.averitec.corpus.store import KnowledgeStore
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.variants import get_variant
    from averitec_tools.jsonio import write_head
    from averitec_tools.scoring.profiles import get_profile

    chosen = [get_variant(v) for v in variants]
    if not chosen:
        raise UserError("reproduce: no variant to run")
    claims = read_claims(claims_path)
    if limit is not None:
        claims = claims[:limit]
    if any(v.needs_store for v in chosen):
        if not store:
            raise UserError(f"variant {next(v.name for v in chosen if v.needs_store)!r} retrieves evidence: "
                            "--store DIR is required")
        KnowledgeStore(store)
    root = Path(out)
    # Training is the first step that writes (under out/checkpoints), so bad input leaves nothing.
    config, trained = train_missing(config=config, exclude=[c.claim for c in claims], out=root, progress=progress)
    root.mkdir(parents=True, exist_ok=True)
    gold = root / "gold.json"
    write_head(claims_path, n=len(claims), out=gold)
    with atomic_writer(root / "config.yaml") as fh:
        yaml.safe_dump(config.to_dict(), fh, sort_keys=False)
    profile = get_profile("averitec2024")
    rows, results = [], {}
    for variant in chosen:
        preds = root / f"{variant.name}.pred.json"
        pipe = build_pipeline(config=config, variant=variant, store=store, claims=claims, progress=progress)
        run = pipe.run(claims, out=str(preds), output_format=output_format, resume=True, progress=progress).to_dict()
        score = dict(profile.score(predictions=str(preds), references=str(gold)).summary)
        cal = _calibration(preds, gold)
        for name, obj in (("run", run), ("score", score)):
            with atomic_writer(root / f"{variant.name}.{name}.json") as fh:
                json.dump(obj, fh, indent=1, default=str)
        rows.append(_row(variant.name, score, cal, run))
        results[variant.name] = {"run": run, "score": score, "calibration": cal}
        del pipe  # BLOOM, the classifiers and the justifier of this variant go before the next builds its own
        release_memory()
    components = results[chosen[0].name]["run"]["components"]
    table = "\n".join([TABLE_HEADER, *rows, "", "components: " + "; ".join(f"{k}: {v}" for k, v in components.items()),
                       f"score signature: {results[chosen[0].name]['score'].get('signature', '')}"])
    with atomic_writer(root / "table.md") as fh:
        fh.write(table + "\n")
    report = {"out": str(root), "claims": len(claims), "trained": trained, "variants": results, "table": table}
    with atomic_writer(root / "results.json") as fh:
        json.dump(report, fh, indent=1, default=str)
    return report


__all__ = ["TRAINED_STAGES", "reproduce", "train_missing"]
