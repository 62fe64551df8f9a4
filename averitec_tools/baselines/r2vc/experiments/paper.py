"""One command per paper configuration: data → SFT → DPO → calibrate → predict → score → table.

``averitec baseline r2vc paper --recipe paper-fever|paper-vitaminc|RECIPE.yaml --work DIR``
runs every stage of the R2VC paper's FEVER or VitaminC configuration (Tables 1–2), each
into ``DIR`` and skipped when its output is already there (a rerun continues):

1. **data** — the first ``eval_limit`` evaluation claims (``eval.jsonl``, also the gold
   file the run is scored against); the SLC calibration slice (``slice.jsonl``, §3.5,
   :mod:`~averitec_tools.baselines.r2vc.experiments.calibration_slice`) drawn from the training rows
   in whole VitaminC ``case_id`` groups, and the rest (``sft_rows.jsonl``) as generator
   training data — disjoint from the slice and from every evaluation claim;
2. **corpus** — FEVER's wiki-pages as sentence units (``wiki_pages``), a WikiExtractor
   dump as paragraphs (``wikipedia``) or a prebuilt store (``corpus``); none with given
   evidence;
3. **sft**, 4. **dpo** — the generator (``sft/``, ``dpo/``, Table G.1 settings plus the
   recipe's ``sft``/``dpo`` overrides), each checked to have moved its weights;
5. **calibrate** — the SLC calibrator on the slice (``calibrator.json``);
6. **predict** — one prediction file per table row (``pred-<row>.jsonl`` and its
   manifest): the full pipeline and the ablations named in ``rows``;
7. **score** / 8. **table** — accuracy, macro-F1, Brier, ECE as the paper prints them (and
   the strict FEVER score for FEVER), next to the paper's reported rows, in
   ``table.md`` / ``table.json``.

Built-in recipes name the paper's hub ids and read ``$AVERITEC_DATA_DIR/fever/...`` and
``$AVERITEC_DATA_DIR/vitaminc/...``; a YAML recipe overrides any key (``base:
paper-fever``), with paths relative to the YAML file. The CI runs the same command with
tiny random models and fixture data (``tests/test_r2vc_paper.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.experiments.recipes import (
    BUILTIN_RECIPES,
    ROWS,
    STEPS,
    Recipe,
    load_recipe,
)
from averitec_tools.errors import UserError


def _need(path: str | None, *, what: str) -> str:
    if path is None or not Path(path).exists():
        from averitec_tools.doctor import TARGETS

        command = next((cmd for rel, cmd in TARGETS.get("r2vc-paper").data.items()
                        if str(path).replace("\\", "/").endswith(rel)), None)
        raise UserError(f"{path}: {what} not found",
                        hint=f"download it: {command}" if command else
                        "download it first (averitec data download, or the upstream files) or set the recipe's path")
    return path


def row_config(recipe: Recipe, row: str, *, work: Path, corpus: str | None) -> Any:
    """The pipeline configuration of one table row (the recipe's ``pipeline`` + its models).

    Example:
        >>> import os
        >>> from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe
        >>> _ = os.environ.setdefault("AVERITEC_DATA_DIR", "/data")
        >>> cfg = row_config(load_recipe("paper-fever"), "nli_only", work=Path("/w"), corpus=None)
        >>> cfg.name, cfg.generator.model, cfg.calibration.path
        ('paper-fever:nli_only', '/w/dpo', '/w/calibrator.json')
    """
    from averitec_tools.baselines.r2vc.config import AblationConfig, config_from_mapping

    cfg = config_from_mapping(dict(recipe.pipeline), source=f"recipe {recipe.name}: pipeline")
    cfg = replace(
        cfg, name=f"{recipe.name}:{row}",
        retrieval=replace(cfg.retrieval, corpus=corpus, dense_model=recipe.dense),
        generator=replace(cfg.generator, model=str(work / "dpo"), sft_model=str(work / "sft"), seed=recipe.seed),
        verifier=replace(cfg.verifier, model=recipe.verifier),
        calibration=replace(cfg.calibration, path=str(work / "calibrator.json")),
        ablation=AblationConfig(**ROWS[row][1]),
    )
    return cfg


def _claims(path: Path, *, evidence: str, corpus: str | None) -> list[Any]:
    from averitec_tools.baselines.r2vc.io.claims import read_claims

    claims = read_claims(str(path))
    if evidence == "given":
        from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
        from averitec_tools.baselines.r2vc.io.given_evidence import with_given_evidence

        store = ParagraphStore.open(corpus) if corpus else None
        claims = with_given_evidence(path=str(path), claims=claims, store=store)
    return claims


class PaperRun:
    """Runs a :class:`Recipe`'s stages in ``work`` (see the module docs)."""

    def __init__(self, recipe: Recipe, *, work: str | os.PathLike[str], progress: bool = False) -> None:
        self.recipe, self.work, self.progress = recipe, Path(work), progress
        self.state: dict[str, Any] = {}

    @property
    def corpus(self) -> str | None:
        r = self.recipe
        if r.corpus:
            return _need(r.corpus, what="corpus store")
        if r.wiki_pages or r.wikipedia:
            return str(self.work / "corpus")
        return None

    def step_data(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.experiments.calibration_slice import (
            draw_calibration_slice,
            read_rows,
            write_rows,
        )

        r = self.recipe
        evals = read_rows(_need(r.eval_claims, what="evaluation claims"))[: r.eval_limit]
        eval_claims = {str(e["claim"]).strip() for e in evals}
        rows = read_rows(_need(r.train_rows, what="training rows"))[: r.train_limit]
        drawn = draw_calibration_slice(rows=rows, n=r.slice_size, seed=r.seed, exclude=eval_claims)
        rest = [row for row in drawn.rest if str(row["claim"]).strip() not in eval_claims]
        write_rows(self.work / "eval.jsonl", evals)
        write_rows(self.work / "slice.jsonl", drawn.slice)
        write_rows(self.work / "sft_rows.jsonl", rest)
        return {**drawn.info, "eval_claims": len(evals), "sft_rows": len(rest),
                "sft_rows_dropped_as_eval_claims": len(drawn.rest) - len(rest)}

    def step_corpus(self) -> dict[str, Any]:
        r = self.recipe
        if r.evidence == "given" and r.calibration_evidence == "given" and r.dataset != "FEVER":
            return {"corpus": None, "note": "given evidence: no corpus"}
        target = self.work / "corpus"
        if r.wiki_pages:
            from averitec_tools.baselines.r2vc.corpus.fever_wiki import build_corpus_from_fever_wiki

            store, stats = build_corpus_from_fever_wiki(path=_need(r.wiki_pages, what="FEVER wiki-pages"),
                                                        out_dir=target, min_chars=r.min_chars)
            return {"corpus": str(target), "units": "sentence", "num_units": len(store), **stats.to_dict()}
        if r.wikipedia:
            from averitec_tools.baselines.r2vc.corpus.wikipedia import build_corpus_from_wikipedia

            store = build_corpus_from_wikipedia(path=_need(r.wikipedia, what="Wikipedia dump"), out_dir=target,
                                                min_chars=r.min_chars)
            return {"corpus": str(target), "units": "paragraph", "num_units": len(store)}
        return {"corpus": self.corpus}

    def _train(self, stage: str) -> dict[str, Any]:
        from averitec_tools.baselines._run.manifest import run_manifest
        from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings
        from averitec_tools.baselines.r2vc.training.rows import read_training_rows

        r = self.recipe
        cls, overrides, model = ((SFTSettings, r.sft, r.generator) if stage == "sft"
                                 else (DPOSettings, r.dpo, str(self.work / "sft")))
        settings = cls.from_dict({**dict(overrides), "model": model}, where=f"recipe {r.name}: {stage}")
        rows = read_training_rows(self.work / "sft_rows.jsonl")
        manifest = run_manifest(data={"data": self.work / "sft_rows.jsonl"}, seeds={"seed": settings.seed})
        from averitec_tools.baselines.r2vc.training.stages import train

        report, _ = train(stage=stage, settings=settings, rows=rows, output_dir=self.work / stage, overwrite=True,
                          manifest=manifest)
        return report.to_json()

    def step_calibrate(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.build import build_pipeline
        from averitec_tools.baselines.r2vc.pipeline import fit_calibrator

        cfg = row_config(self.recipe, "full", work=self.work, corpus=self.corpus)
        cfg = replace(cfg, calibration=replace(cfg.calibration, path=None),
                      ablation=replace(cfg.ablation, no_calibration=True))
        ev = self.recipe.calibration_evidence
        claims = _claims(self.work / "slice.jsonl", evidence=ev, corpus=self.corpus if ev == "given" else None)
        pipe = build_pipeline(cfg, corpus=self.corpus, claims=claims, progress=self.progress, evidence=ev)
        cal = fit_calibrator(pipe, claims=claims, where=str(self.work / "slice.jsonl"), progress=self.progress)
        cal.save(self.work / "calibrator.json")
        return {"claims": len(claims), "evidence": ev, **{k: v for k, v in cal.fit_info.items()
                                                          if isinstance(v, (int, float, str))}}

    def step_predict(self) -> dict[str, Any]:
        from averitec_tools.baselines._run.manifest import (
            git_state,
            manifest_path,
            run_manifest,
            write_manifest,
        )
        from averitec_tools.baselines.r2vc.build import build_pipeline

        git = git_state()  # the code the step starts with
        r, out = self.recipe, {}
        claims = _claims(self.work / "eval.jsonl", evidence=r.evidence, corpus=self.corpus)
        for row in r.rows:
            pred = self.work / f"pred-{row}.jsonl"
            if pred.is_file():
                out[row] = {"reused": str(pred)}
                continue
            cfg = row_config(r, row, work=self.work, corpus=self.corpus)
            pipe = build_pipeline(cfg, corpus=self.corpus, claims=claims, progress=self.progress, evidence=r.evidence)
            summary = pipe.run(claims, out=pred, output_format="ternary", resume=True, progress=self.progress)
            write_manifest(manifest_path(pred), run_manifest(
                data={"claims": self.work / "eval.jsonl", "corpus": self.corpus, "calibrator": cfg.calibration.path},
                seeds={"generator": cfg.generator.seed}, config=cfg.effective(), extra={"evidence": r.evidence},
                git=git))
            d = summary.to_dict()
            out[row] = {k: d[k] for k in ("labels", "n_abstained", "n_malformed", "components", "fallbacks",
                                          "claims_per_second")}
        return out

    def step_score(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.experiments.tables import paper_row

        r, out = self.recipe, {}
        for row in r.rows:
            pred = str(self.work / f"pred-{row}.jsonl")
            result = paper_row(predictions=pred, gold=self.work / "eval.jsonl", name=ROWS[row][0],
                               dataset=r.dataset).to_dict()
            if r.dataset == "FEVER":
                from averitec_tools.scoring.profiles import get_profile

                fever = get_profile("fever").score(predictions=pred, references=str(self.work / "eval.jsonl"))
                result["fever_score"] = {k: fever.summary.get(k) for k in ("strict_score", "label_accuracy",
                                                                             "precision", "recall", "f1")}
                result["fever_signature"] = fever.signature
            out[row] = result
        return out

    def step_table(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.experiments.tables import (
            PAPER_TABLE2,
            PaperRow,
            markdown_table,
            signature,
        )
        from averitec_tools.jsonio import atomic_writer

        r = self.recipe
        scores = self.state["score"]
        rows = [PaperRow(**{k: v for k, v in scores[row].items() if k in {f.name for f in fields(PaperRow)}})
                for row in r.rows]
        reported = [PaperRow(name=f"{ROWS[row][0]} — paper, reported", dataset=r.dataset, n=0,
                             accuracy=vals[0] / 100, macro_f1=vals[1] / 100, brier=vals[2], ece=vals[3])
                    for row in r.rows if (vals := PAPER_TABLE2.get(row, {}).get(r.dataset)) is not None]
        lines = [f"R2VC {r.dataset} ({r.name}; {scores[r.rows[0]]['n']} claims; evidence {r.evidence}"
                 + ("; oracle documents" if r.evidence == "given" else "") + ")", "",
                 f"models: generator {r.generator} (SFT → DPO here), verifier {r.verifier}, dense {r.dense}; "
                 "rows marked 'paper, reported' are the paper's Table 2, not measured here", "",
                 markdown_table(rows + reported),
                 "", f"signature: {signature()}"]
        if r.dataset == "FEVER":
            lines += ["", "| row | FEVER score (strict) | label accuracy |", "|---|---|---|"]
            lines += [f"| {ROWS[row][0]} | {scores[row]['fever_score']['strict_score']:.4f} | "
                      f"{scores[row]['fever_score']['label_accuracy']:.4f} |" for row in r.rows]
            lines += ["", f"signature: {scores[r.rows[0]]['fever_signature']}"]
        with atomic_writer(self.work / "table.md") as fh:
            fh.write("\n".join(lines) + "\n")
        with atomic_writer(self.work / "table.json") as fh:
            json.dump({"recipe": asdict(r), "signature": signature(), "rows": [scores[row] for row in r.rows],
                       "paper_reported": [x.to_dict() for x in reported]}, fh, indent=1, default=str)
        return {"table": str(self.work / "table.md")}

    def _done(self, step: str) -> bool:
        marker = {"data": "sft_rows.jsonl", "corpus": "corpus/corpus.json", "sft": "sft/r2vc_training.json",
                  "dpo": "dpo/r2vc_training.json", "calibrate": "calibrator.json"}.get(step)
        if step == "corpus" and not (self.recipe.wiki_pages or self.recipe.wikipedia):
            return False
        return marker is not None and (self.work / marker).exists()

    def preflight(self) -> None:
        """Refuse missing inputs and local models before anything is written."""
        r = self.recipe
        _need(r.train_rows, what="training rows")
        _need(r.eval_claims, what="evaluation claims")
        for path, what in ((r.wiki_pages, "FEVER wiki-pages"), (r.wikipedia, "Wikipedia dump"), (r.corpus, "corpus")):
            if path is not None:
                _need(path, what=what)
        for model in (r.generator, r.verifier, r.dense):
            if model and model.startswith((".", "/", "~")) and not Path(model).expanduser().exists():
                raise UserError(f"recipe {r.name!r}: model {model!r} not found")

    def run(self, *, on_step: Callable[[str, str], None] | None = None) -> dict[str, Any]:
        """Run every stage not done yet; returns each stage's report (``reused`` for skipped ones).

        Bad inputs are refused before anything is written; a stage that fails later leaves
        the finished stages in ``work`` for the rerun to reuse.
        """
        self.preflight()
        created = not self.work.exists()
        self.work.mkdir(parents=True, exist_ok=True)
        stamp = self.work / "recipe.json"
        if stamp.is_file() and json.loads(stamp.read_text(encoding="utf-8")).get("fingerprint") != self.recipe.fingerprint():
            raise UserError(f"{self.work}: holds a run of another recipe", hint="use another --work directory")
        stamp.write_text(json.dumps({"fingerprint": self.recipe.fingerprint(), "recipe": asdict(self.recipe)},
                                    indent=1, default=str), encoding="utf-8")
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "data": self.step_data, "corpus": self.step_corpus, "sft": lambda: self._train("sft"),
            "dpo": lambda: self._train("dpo"), "calibrate": self.step_calibrate, "predict": self.step_predict,
            "score": self.step_score, "table": self.step_table,
        }
        for name in STEPS:
            if on_step is not None:
                on_step(name, "reused" if self._done(name) else "running")
            try:
                self.state[name] = {"reused": True} if self._done(name) else steps[name]()
            except BaseException:
                if created and name == "data":  # nothing finished yet: leave nothing behind
                    import shutil

                    shutil.rmtree(self.work, ignore_errors=True)
                raise
        return self.state


__all__ = ["BUILTIN_RECIPES", "ROWS", "STEPS", "PaperRun", "Recipe", "load_recipe", "row_config"]
