"""One training stage end to end: read the rows, keep the split-safe ones, train, report.

:func:`train_stage` is what ``averitec baseline r2vc train sft|dpo`` runs (the command only
parses arguments and prints the summary).

Split safety: the paper fine-tunes SFT on *all* VitaminC splits, which puts the VitaminC
dev/test claims — and any calibration slice drawn from them — into the generator's
training data. By default rows whose ``split`` field is not ``train`` are dropped
(counted as ``dropped_split``); ``all_splits=True`` keeps them (the paper's recipe) with a
warning on stderr. ``exclude_claims`` files drop rows whose claim appears in them (e.g.
the calibration slice), counted as ``dropped_excluded``.

Example:
    >>> import json, os, tempfile
    >>> from averitec_tools.baselines.r2vc.training.rows import read_training_rows
    >>> data = os.path.join(tempfile.mkdtemp(), "rows.jsonl")
    >>> with open(data, "w") as fh:
    ...     for i, split in enumerate(["train", "dev", "train"]):
    ...         _ = fh.write(json.dumps({"claim": f"c{i}", "evidence_text": "e", "label": "SUPPORTS",
    ...                                  "split": split}) + "\\n")
    >>> kept, dropped = split_safe_rows(read_training_rows(data), data=data, all_splits=False, exclude=[])
    >>> [row.claim for row in kept], dropped
    (['c0', 'c2'], {'dropped_split': 1, 'dropped_excluded': 0})
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError

#: The training stages, in the order they run.
STAGES: tuple[str, ...] = ("sft", "dpo")


def split_safe_rows(rows: list[Any], *, data: str, all_splits: bool, exclude: Sequence[str]) -> tuple[list[Any], dict[str, int]]:
    """Drop non-train rows (unless ``all_splits``) and rows whose claim is in ``exclude`` files.

    Returns the kept rows and ``{"dropped_split": n, "dropped_excluded": m}``.
    """
    from averitec_tools.jsonio import iter_records

    splits = [loc.value.get("split") if isinstance(loc.value, dict) else None
              for _, loc in zip(rows, iter_records(data), strict=False)]
    other = sorted({str(s) for s in splits if s is not None and str(s) != "train"})
    if other and all_splits:
        print(f"warning: {data}: training on splits {', '.join(other)} besides train (--all-splits, the "
              "paper's SFT recipe) contaminates VitaminC evaluation on those splits and any calibration "
              "slice drawn from them", file=sys.stderr)
    excluded: set[str] = set()
    for path in exclude:
        for loc in iter_records(path):
            if isinstance(loc.value, dict) and isinstance(loc.value.get("claim"), str):
                excluded.add(loc.value["claim"].strip())
    kept, n_split, n_excl = [], 0, 0
    for row, split in zip(rows, splits, strict=True):
        if not all_splits and split is not None and str(split) != "train":
            n_split += 1
        elif row.claim.strip() in excluded:
            n_excl += 1
        else:
            kept.append(row)
    return kept, {"dropped_split": n_split, "dropped_excluded": n_excl}


def train_stage(
    *,
    stage: str,
    settings: Any,
    data: str,
    out: str | os.PathLike[str],
    config: str | None = None,
    overwrite: bool = False,
    all_splits: bool = False,
    exclude_claims: Sequence[str] = (),
) -> dict[str, Any]:
    """Train ``stage`` (``sft`` or ``dpo``) on the split-safe rows of ``data`` into ``out``.

    Args:
        stage: ``"sft"`` or ``"dpo"``.
        settings: The stage's :class:`~averitec_tools.baselines.r2vc.training.config.SFTSettings`
            or ``DPOSettings``.
        data: JSONL/JSON rows ``{claim, evidence_text, label[, title, split]}``.
        out: Output directory of the trained model.
        config: The YAML file ``settings`` came from (recorded in the run manifest).
        overwrite: Replace an existing ``out``.
        all_splits: Keep rows of every split (the paper's SFT recipe).
        exclude_claims: Files whose claims are dropped from the training rows.

    Returns:
        The run report (:meth:`TrainingReport.to_json`) with the split filter's counts.

    Raises:
        UserError: ``out`` exists without ``overwrite``, bad rows, or no row left.
    """
    from averitec_tools.baselines._run.gpus import check_fits
    from averitec_tools.baselines._run.manifest import run_manifest
    from averitec_tools.baselines._run.memory import release_memory
    from averitec_tools.baselines.r2vc.training.memory import settings_memory
    from averitec_tools.baselines.r2vc.training.rows import read_training_rows

    target = Path(out)
    if target.exists() and not overwrite:
        raise UserError(f"{target}: output directory already exists", hint="pass --overwrite or another --out")
    check_fits({stage: settings_memory(settings, stage=stage).total_gib}, what=f"r2vc train {stage}",
               plan_command="averitec baseline r2vc paper --plan")  # before any work; no GPU: nothing to check
    rows = read_training_rows(data, limit=settings.limit)
    rows, dropped = split_safe_rows(rows, data=data, all_splits=all_splits, exclude=exclude_claims)
    if not rows:
        raise UserError(f"{data}: no training rows left after the split filter",
                        hint="pass --all-splits to keep every split")
    excludes = {f"exclude_claims[{i}]": path for i, path in enumerate(exclude_claims)}
    seeds = {"seed": settings.seed, **({"pair_seed": settings.pair_seed} if hasattr(settings, "pair_seed") else {})}
    manifest = run_manifest(data={"data": data, "config": config, **excludes}, seeds=seeds)
    # Trainers print their logs on stdout; keep stdout for the caller's report.
    with contextlib.redirect_stdout(sys.stderr):
        from averitec_tools.baselines.r2vc.training.stages import train

        report, model = train(stage=stage, settings=settings, rows=rows, output_dir=target, overwrite=overwrite,
                              manifest=manifest)
    del model  # the trained model and its trainer's cycles are freed now, not at the next collection
    release_memory()
    return report.to_json() | dropped


__all__ = ["STAGES", "split_safe_rows", "train_stage"]
