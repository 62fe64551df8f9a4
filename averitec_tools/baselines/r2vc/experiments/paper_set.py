"""Every paper recipe of one run on one generator: ``paper --recipe A --recipe B --work DIR``.

The recipes of a set must agree on what trains the generator (training rows, slice, seed,
base model, SFT/DPO settings); the set then trains it **once** for all of them:

``DIR/generator/``
    ``data.json``, ``slice.jsonl`` (the SLC slice, §3.5), ``sft_rows.jsonl`` (the rest,
    with every evaluation claim of *every* recipe removed), ``sft/``, ``dpo/`` (with
    ``sft.checkpoints/`` / ``dpo.checkpoints/`` while training: a rerun resumes there) and
    ``slice-candidates/``: the slice's candidate store, decoded once and replayed by every
    recipe whose calibration configuration is the same;
``DIR/<recipe>/``
    the recipe's stages (:class:`~.paper.PaperRun`): ``eval.jsonl``, ``corpus/``,
    ``calibrator.json``, ``candidates/`` (one decoding per generator serves every Table 2
    row: the DPO generator's for ``full``, ``no_verifier_selection``, ``single_candidate``,
    ``no_calibration``; the SFT generator's for ``no_dpo``; ``nli_only`` runs no LM),
    ``pred-<row>.jsonl``, ``table.md`` / ``table.json``;
``DIR/ledger.jsonl``, ``DIR/paper_manifest.json``
    what was spent, counted as it happened (:mod:`~.ledger`).

Every stage is skipped when its output is there, and the decoding stages resume claim by
claim (candidate stores and ``.partial.jsonl`` sidecars), so a rerun after a crash or a
kill continues where it stopped.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.experiments.ledger import Ledger, paper_manifest
from averitec_tools.baselines.r2vc.experiments.paper import PaperRun, _need, eval_rows
from averitec_tools.baselines.r2vc.experiments.recipes import Recipe
from averitec_tools.errors import UserError

#: The recipe keys that decide the generator: recipes of one set must agree on them.
GENERATOR_KEYS: tuple[str, ...] = ("train_rows", "train_limit", "slice_size", "seed", "generator", "sft", "dpo")
GENERATOR_STEPS: tuple[str, ...] = ("data", "sft", "dpo")


def generator_key(recipe: Recipe) -> dict[str, Any]:
    """What trains a recipe's generator (:data:`GENERATOR_KEYS`).

    Example:
        >>> import os
        >>> from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe
        >>> _ = os.environ.setdefault("AVERITEC_DATA_DIR", "/data")
        >>> generator_key(load_recipe("paper-fever")) == generator_key(load_recipe("paper-vitaminc"))
        True
    """
    return {k: (dict(v) if isinstance(v := getattr(recipe, k), dict) else v) for k in GENERATOR_KEYS}


class PaperSet:
    """Runs recipes on one shared generator in ``work`` (see the module docs)."""

    def __init__(self, recipes: Sequence[Recipe], *, work: str | os.PathLike[str], progress: bool = False) -> None:
        if not recipes:
            raise UserError("give at least one --recipe")
        names = [r.name for r in recipes]
        if len(set(names)) != len(names) or "generator" in names:
            raise UserError(f"recipe names must be distinct and not 'generator': {', '.join(names)}")
        first = generator_key(recipes[0])
        for r in recipes[1:]:
            diff = [k for k, v in generator_key(r).items() if v != first[k]]
            if diff:
                raise UserError(f"recipes {recipes[0].name!r} and {r.name!r} train different generators "
                                f"({', '.join(diff)} differ)", hint="run them with separate --work directories")
        self.recipes, self.work, self.progress = list(recipes), Path(work), progress
        self.generator = self.work / "generator"
        self.ledger = Ledger(self.work / "ledger.jsonl")

    def runs(self) -> list[PaperRun]:
        return [PaperRun(r, work=self.work / r.name, generator=self.generator, ledger=self.ledger,
                         progress=self.progress) for r in self.recipes]

    def preflight(self) -> None:
        """Refuse missing inputs and local models of every recipe before anything is written."""
        for run in self.runs():
            run.preflight()

    def step_data(self) -> dict[str, Any]:
        """The slice and the SFT rows, disjoint from each other and from every recipe's evaluation claims."""
        from averitec_tools.baselines.r2vc.experiments.calibration_slice import (
            draw_calibration_slice,
            read_rows,
            write_rows,
        )

        r = self.recipes[0]
        eval_claims = {str(e["claim"]).strip() for recipe in self.recipes for e in eval_rows(recipe)}
        rows = read_rows(_need(r.train_rows, what="training rows"))[: r.train_limit]
        drawn = draw_calibration_slice(rows=rows, n=r.slice_size, seed=r.seed, exclude=eval_claims)
        rest = [row for row in drawn.rest if str(row["claim"]).strip() not in eval_claims]
        write_rows(self.generator / "slice.jsonl", drawn.slice)
        write_rows(self.generator / "sft_rows.jsonl", rest)
        info = {**drawn.info, "eval_claims_excluded_from": [x.name for x in self.recipes],
                "sft_rows": len(rest), "sft_rows_dropped_as_eval_claims": len(drawn.rest) - len(rest)}
        (self.generator / "data.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
        return info

    def train(self, stage: str) -> dict[str, Any]:
        """SFT from the base model, or DPO from ``sft/``; recorded in the ledger once finished."""
        from averitec_tools.baselines._run.manifest import run_manifest
        from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings
        from averitec_tools.baselines.r2vc.training.rows import read_training_rows
        from averitec_tools.baselines.r2vc.training.stages import train

        r = self.recipes[0]
        cls, overrides, model = ((SFTSettings, r.sft, r.generator) if stage == "sft"
                                 else (DPOSettings, r.dpo, str(self.generator / "sft")))
        settings = cls.from_dict({**dict(overrides), "model": model}, where=f"recipe {r.name}: {stage}")
        data = self.generator / "sft_rows.jsonl"
        manifest = run_manifest(data={"data": data}, seeds={"seed": settings.seed})
        report, _ = train(stage=stage, settings=settings, rows=read_training_rows(data),
                          output_dir=self.generator / stage, overwrite=True, manifest=manifest)
        self.ledger.add(event="train", stage=stage, steps=report.global_steps)
        return report.to_json()

    def _done(self, step: str) -> bool:
        marker = {"data": "data.json", "sft": "sft/r2vc_training.json", "dpo": "dpo/r2vc_training.json"}[step]
        return (self.generator / marker).is_file()

    def _stamp(self) -> None:
        stamp = self.work / "recipes.json"
        prints = sorted(r.fingerprint() for r in self.recipes)
        if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")).get("fingerprints") != prints:
            raise UserError(f"{self.work}: holds a run of other recipes", hint="use another --work directory")
        stamp.write_text(json.dumps({"fingerprints": prints, "recipes": [asdict(r) for r in self.recipes]},
                                    indent=1, default=str), encoding="utf-8")

    def run(self, *, on_step: Callable[[str, str], None] | None = None) -> dict[str, Any]:
        """The generator's stages, then each recipe's; writes ``paper_manifest.json``.

        Bad inputs are refused before anything is written; a stage that fails later leaves
        the finished stages for the rerun to reuse.
        """
        self.preflight()
        created = not self.work.exists()
        self.work.mkdir(parents=True, exist_ok=True)
        self._stamp()
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "data": self.step_data, "sft": lambda: self.train("sft"), "dpo": lambda: self.train("dpo")}
        state: dict[str, Any] = {"generator": {}, "recipes": {}}
        for name in GENERATOR_STEPS:
            if on_step is not None:
                on_step(f"generator {name}", "reused" if self._done(name) else "running")
            try:
                state["generator"][name] = {"reused": True} if self._done(name) else steps[name]()
            except BaseException:
                if created and name == "data":  # nothing finished yet: leave nothing behind
                    shutil.rmtree(self.work, ignore_errors=True)
                raise
        evals: dict[str, int] = {}
        for run in self.runs():
            named = None if on_step is None else (lambda n, w, r=run.recipe.name: on_step(f"{r} {n}", w))
            state["recipes"][run.recipe.name] = run.run(on_step=named)
            evals[run.recipe.name] = sum(1 for line in (run.work / "eval.jsonl").open(encoding="utf-8") if line.strip())
        n_slice = sum(1 for line in (self.generator / "slice.jsonl").open(encoding="utf-8") if line.strip())
        manifest = {"recipes": [r.name for r in self.recipes],
                    **paper_manifest(self.ledger, eval_claims=evals, slice_claims=n_slice)}
        from averitec_tools.jsonio import atomic_writer

        with atomic_writer(self.work / "paper_manifest.json") as fh:
            json.dump(manifest, fh, indent=1)
            fh.write("\n")
        state["manifest"] = manifest
        return state


__all__ = ["PaperSet"]
