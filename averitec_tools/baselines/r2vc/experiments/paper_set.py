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

Before any work the set compares every stage's planned peak GPU memory (:mod:`~.plan`) with
the GPU it runs on and refuses, in one line naming what would fit, a run that would not fit
(:func:`~averitec_tools.baselines._run.gpus.check_fits`). Training stages free their model and
trainer when they end; the set's :class:`~averitec_tools.baselines._run.memory.ResidentModels`
lends each recipe's retriever, the NLI model and the generators to every stage and row, and
is closed at the end. ``paper_manifest.json`` sets each stage's measured hours (and CUDA peak)
beside the plan's, under the same stage names ``--plan`` prints.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.memory import ResidentModels, release_memory
from averitec_tools.baselines.r2vc.experiments.ledger import (
    Ledger,
    measured_stages,
    paper_manifest,
    timed_stage,
)
from averitec_tools.baselines.r2vc.experiments.paper import PaperRun, _need, eval_rows
from averitec_tools.baselines.r2vc.experiments.recipes import (
    Recipe,
    check_one_generator,
)
from averitec_tools.errors import UserError

#: The generator's stages, in the order they run (the plan lists them first, under these names).
GENERATOR_STEPS: tuple[str, ...] = ("data", "sft", "dpo")


class PaperSet:
    """Runs recipes on one shared generator in ``work`` (see the module docs).

    Example:
        >>> import tempfile
        >>> from averitec_tools.baselines._run.gpus import gpu_spec
        >>> from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe
        >>> s = PaperSet([load_recipe("paper-vitaminc")], work=tempfile.mkdtemp())
        >>> plan = s.plan(gpu=gpu_spec("h100-80gb"))  # nothing is written by a plan
        >>> [st["stage"] for st in plan["stages"]][:3], plan["total"]["fits_gpu"]
        (['generator data', 'generator sft', 'generator dpo'], True)
    """

    def __init__(self, recipes: Sequence[Recipe], *, work: str | os.PathLike[str], progress: bool = False,
                 gpu: str | None = None) -> None:
        check_one_generator(recipes)
        self.recipes, self.work, self.progress, self.gpu = list(recipes), Path(work), progress, gpu
        self.generator = self.work / "generator"
        self.ledger = Ledger(self.work / "ledger.jsonl")
        self._recipe = "generator"  # whose stage a model load serves (the ledger's "recipe")
        self.models = ResidentModels(on_load=lambda kind, model: self.ledger.add(
            event="load", kind=kind, model=model, recipe=self._recipe))

    def runs(self) -> list[PaperRun]:
        return [PaperRun(r, work=self.work / r.name, generator=self.generator, ledger=self.ledger,
                         progress=self.progress, models=self.models) for r in self.recipes]

    def plan(self, *, gpu: Any = None) -> dict[str, Any]:
        """The plan of this set (:func:`~.plan.plan_paper`) on ``gpu`` (default: the named GPU, else the
        detected one, else the paper's H100)."""
        from averitec_tools.baselines._run.gpus import detect_gpu, gpu_spec
        from averitec_tools.baselines.r2vc.experiments.plan import plan_paper

        spec = gpu or (gpu_spec(self.gpu) if self.gpu else detect_gpu()) or gpu_spec("h100-80gb")
        return plan_paper(self.recipes, gpu=spec)

    def check_gpu(self, *, torch_info: Any = None) -> dict[str, Any] | None:
        """Refuse a run whose planned peak (stages not finished yet) exceeds the GPU here; None without a GPU."""
        from averitec_tools.baselines._run.gpus import check_fits

        peaks = {s["stage"]: s["peak_gpu_gib"] for s in self.plan()["stages"]
                 if not (s["stage"].startswith("generator ") and self._done(s["stage"].split()[1]))}
        return check_fits(peaks, what=f"r2vc paper {', '.join(r.name for r in self.recipes)}", torch_info=torch_info,
                          plan_command="averitec baseline r2vc paper --plan")

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
        report, model = train(stage=stage, settings=settings, rows=read_training_rows(data),
                              output_dir=self.generator / stage, overwrite=True, manifest=manifest)
        del model  # nothing of the stage outlives it: the trainer's cycles go with the collection below
        release_memory()
        self.ledger.add(event="train", stage=stage, steps=report.global_steps)
        return report.to_json()

    def _done(self, step: str) -> bool:
        marker = {"data": "data.json", "sft": "sft/r2vc_training.json", "dpo": "dpo/r2vc_training.json"}.get(step, "-")
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

        Bad inputs, and a planned peak the GPU here cannot hold, are refused before anything is
        written; a stage that fails later leaves the finished stages for the rerun to reuse.
        """
        self.preflight()
        gpu_check = self.check_gpu()
        created = not self.work.exists()
        self.work.mkdir(parents=True, exist_ok=True)
        self._stamp()
        state: dict[str, Any] = {"generator": self._generator_stages(on_step, created=created), "recipes": {}}
        evals: dict[str, int] = {}
        try:
            for run in self.runs():
                self._recipe = run.recipe.name
                named = None if on_step is None else (lambda n, w, r=run.recipe.name: on_step(f"{r} {n}", w))
                state["recipes"][run.recipe.name] = run.run(on_step=named)
                evals[run.recipe.name] = _lines(run.work / "eval.jsonl")
        finally:
            self.models.close()
        manifest = {"recipes": [r.name for r in self.recipes],
                    **paper_manifest(self.ledger, eval_claims=evals, slice_claims=_lines(self.generator / "slice.jsonl")),
                    "gpu_check": gpu_check, **self._planned_vs_measured()}
        from averitec_tools.jsonio import atomic_writer

        with atomic_writer(self.work / "paper_manifest.json") as fh:
            json.dump(manifest, fh, indent=1)
            fh.write("\n")
        state["manifest"] = manifest
        return state

    def _generator_stages(self, on_step: Callable[[str, str], None] | None, *, created: bool) -> dict[str, Any]:
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "data": self.step_data, "sft": lambda: self.train("sft"), "dpo": lambda: self.train("dpo")}
        out: dict[str, Any] = {}
        for name in GENERATOR_STEPS:
            done = self._done(name)
            if on_step is not None:
                on_step(f"generator {name}", "reused" if done else "running")
            try:
                with timed_stage(self.ledger, f"generator {name}", ran=not done):
                    out[name] = {"reused": True} if done else steps[name]()
            except BaseException:
                if created and name == "data":  # nothing finished yet: leave nothing behind
                    shutil.rmtree(self.work, ignore_errors=True)
                raise
        return out

    def _planned_vs_measured(self) -> dict[str, Any]:
        """Each plan stage's planned GPU-hours and peak beside the ledger's measured hours and peak."""
        from averitec_tools.doctor import probe_torch

        plan, measured = self.plan(), measured_stages(self.ledger)
        gpus = probe_torch().get("gpus") or []
        rows = [{"stage": s["stage"], "planned_gpu_hours": s["gpu_hours"], "planned_peak_gpu_gib": s["peak_gpu_gib"],
                 **measured.get(s["stage"], {"measured_hours": 0.0, "runs": 0, "measured_peak_gpu_gib": None})}
                for s in plan["stages"]]
        return {"planned_on": plan["gpu"]["name"], "measured_on": gpus[0]["name"] if gpus else "cpu",
                "stages": rows, "planned_gpu_hours": plan["total"]["gpu_hours"],
                "measured_hours": round(sum(r["measured_hours"] for r in rows), 4)}


def _lines(path: Path) -> int:
    return sum(1 for line in path.open(encoding="utf-8") if line.strip())


__all__ = ["PaperSet"]
