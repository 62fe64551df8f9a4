"""One paper configuration's own stages: data → corpus → calibrate → predict → score → table.

``averitec baseline r2vc paper --recipe paper-fever --recipe paper-vitaminc --work DIR``
runs a :class:`~averitec_tools.baselines.r2vc.experiments.paper_set.PaperSet`: the shared
generator's stages (slice, SFT rows, SFT, DPO in ``DIR/generator/``), then, for each recipe,
a :class:`PaperRun` into ``DIR/<recipe>/``, each stage skipped when its output is there:

1. **data** — the first ``eval_limit`` evaluation claims (``eval.jsonl``, also the gold
   file the run is scored against);
2. **corpus** — FEVER's wiki-pages as sentence units (``wiki_pages``), a WikiExtractor
   dump as paragraphs (``wikipedia``) or a prebuilt store (``corpus``); none with given
   evidence;
3. **calibrate** — the SLC calibrator on the generator's slice (``calibrator.json``),
   the slice decoded into ``DIR/generator/slice-candidates/`` once for every recipe with
   the same calibration configuration;
4. **predict** — one prediction file per table row (``pred-<row>.jsonl`` and its
   manifest), every row through the recipe's candidate store (``candidates/``): one
   decoding per generator (DPO; SFT for ``no_dpo``), candidates batched across claims
   (:mod:`~averitec_tools.baselines.r2vc.experiments.batching`), each decoding counted in
   the set's ledger (:mod:`~averitec_tools.baselines.r2vc.experiments.ledger`); with retrieved
   evidence every claim's pool is searched once, in one batched pass before the first row
   decodes (:mod:`~averitec_tools.baselines.r2vc.experiments.pools`), and serves every row;
5. **score** / 6. **table** — accuracy, macro-F1, Brier, ECE as the paper prints them (and
   the strict FEVER score for FEVER), next to the paper's reported rows, in
   ``table.md`` / ``table.json``.

Built-in recipes name the paper's hub ids and read ``$AVERITEC_DATA_DIR/fever/...`` and
``$AVERITEC_DATA_DIR/vitaminc/...``; a YAML recipe overrides any key (``base:
paper-fever``), with paths relative to the YAML file. The CI runs the same command with
tiny random models and fixture data (``tests/test_r2vc_paper.py``, ``make r2vc-paper-ci``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.experiments.ledger import count_decodings
from averitec_tools.baselines.r2vc.experiments.pools import prefetch_pools
from averitec_tools.baselines.r2vc.experiments.recipes import (
    BUILTIN_RECIPES,
    ROWS,
    STEPS,
    Recipe,
    departures,
    load_recipe,
)
from averitec_tools.baselines.r2vc.io.candidates import CandidateStore
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


def row_config(recipe: Recipe, row: str, *, work: Path, corpus: str | None, generator: Path | None = None) -> Any:
    """The pipeline configuration of one table row (the recipe's ``pipeline`` + its models;
    the SFT and DPO generators under ``generator``, default ``work``).

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
        generator=replace(cfg.generator, model=str((generator or work) / "dpo"),
                          sft_model=str((generator or work) / "sft"), seed=recipe.seed),
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


def _decode_with(pipe: Any, directory: Path, *, claims: list[Any], recipe: Recipe, ledger: Any, set_name: str,
                 corpus: str | None, config: Any = None) -> CandidateStore:
    """Give ``pipe`` the candidate store of ``config`` (default: its own) under ``directory`` —
    rows that share a decoding (every row but ``no_dpo`` and ``nli_only``) replay it — a
    ledger count of its LM decodings, and decoding batched across ``recipe.decode_batch`` claims."""
    from averitec_tools.baselines.r2vc.experiments.batching import batch_claims, batch_settings
    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.presets import preset_for

    config = pipe.config if config is None else config
    settings, described = preset_for(config).store_settings(config, pipe.components)
    pipe.candidate_store = open_store(directory, config=config, components=pipe.components, described=described,
                                      settings={**(settings or {}), **batch_settings(recipe.decode_batch)},
                                      corpus=corpus)
    count_decodings(pipe, ledger=ledger, set_name=set_name, recipe=recipe.name)
    batch_claims(pipe, claims=claims, size=recipe.decode_batch)
    return pipe.candidate_store  # type: ignore[no-any-return]


#: Rows that decode with the DPO generator's k candidates (single_candidate replays their θ_0).
_DPO_DECODING_ROWS = ("full", "no_verifier_selection", "no_calibration")


def predict_order(rows: tuple[str, ...]) -> list[str]:
    """``rows`` with ``single_candidate`` last, so the k-candidate decoding is stored before it
    replays candidate θ_0 from it.

    Example:
        >>> predict_order(("single_candidate", "full", "no_dpo"))
        ['full', 'no_dpo', 'single_candidate']
    """
    return sorted(rows, key=lambda row: row == "single_candidate")


def _store_config(cfg: Any, rows: tuple[str, ...]) -> Any:
    """The configuration whose store a row uses: ``single_candidate`` replays the k-candidate
    store when another row of the recipe writes it (else it decodes its own k = 1)."""
    from averitec_tools.baselines.r2vc.config import AblationConfig

    if cfg.ablation.single_candidate and any(r in rows for r in _DPO_DECODING_ROWS):
        return replace(cfg, ablation=AblationConfig()).effective()
    return cfg.effective()


class PaperRun:
    """Runs a :class:`Recipe`'s own stages in ``work`` (see the module docs); the generator
    (``sft/``, ``dpo/``), the slice and its candidate store are in ``generator``, shared by
    every recipe of a :class:`~.paper_set.PaperSet`."""

    def __init__(self, recipe: Recipe, *, work: str | os.PathLike[str], generator: str | os.PathLike[str] | None = None,
                 ledger: Any = None, progress: bool = False) -> None:
        from averitec_tools.baselines.r2vc.experiments.ledger import Ledger

        self.recipe, self.work, self.progress = recipe, Path(work), progress
        self.generator = Path(generator) if generator is not None else self.work
        self.ledger = ledger if ledger is not None else Ledger(self.work / "ledger.jsonl")
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
        from averitec_tools.baselines.r2vc.experiments.calibration_slice import write_rows

        evals = eval_rows(self.recipe)
        write_rows(self.work / "eval.jsonl", evals)
        return {"eval_claims": len(evals)}

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

    def step_calibrate(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.build import build_pipeline
        from averitec_tools.baselines.r2vc.calibration_fit import fit_calibrator
        from averitec_tools.baselines.r2vc.config import RetrievalConfig
        from averitec_tools.baselines.r2vc.request import BuildRequest

        cfg = row_config(self.recipe, "full", work=self.work, corpus=self.corpus, generator=self.generator)
        cfg = replace(cfg, calibration=replace(cfg.calibration, path=None),
                      ablation=replace(cfg.ablation, no_calibration=True))
        ev = self.recipe.calibration_evidence
        corpus = None if ev == "given" else self.corpus  # given evidence: no retrieval, no corpus in the key
        if ev == "given":  # no retrieval runs: neither its corpus nor its index type enters the store's key
            cfg = replace(cfg, retrieval=replace(cfg.retrieval, corpus=None, dense_index=RetrievalConfig.dense_index))
        claims = _claims(self.generator / "slice.jsonl", evidence=ev,
                         corpus=self.corpus if ev == "given" else None)
        pipe = build_pipeline(cfg, BuildRequest(corpus=corpus, claims=claims, progress=self.progress, evidence=ev))
        prefetch_pools(pipe, claims=claims)  # retrieved slice evidence: one batched search pass (pools.py)
        store = _decode_with(pipe, self.generator / "slice-candidates", claims=claims,  # once for all
                             recipe=self.recipe, ledger=self.ledger, set_name="slice", corpus=corpus)
        cal = fit_calibrator(pipe, claims=claims, where=str(self.generator / "slice.jsonl"), progress=self.progress)
        cal.save(self.work / "calibrator.json")
        return {"claims": len(claims), "evidence": ev, "store": store.describe(),
                **{k: v for k, v in cal.fit_info.items()
                                                          if isinstance(v, (int, float, str))}}

    def step_predict(self) -> dict[str, Any]:
        from averitec_tools.baselines._run.manifest import (
            git_state,
            manifest_path,
            run_manifest,
            write_manifest,
        )
        from averitec_tools.baselines.r2vc.build import build_pipeline
        from averitec_tools.baselines.r2vc.request import BuildRequest

        git = git_state()  # the code the step starts with
        r, pools = self.recipe, None
        out: dict[str, dict[str, Any]] = {}
        claims = _claims(self.work / "eval.jsonl", evidence=r.evidence, corpus=self.corpus)
        for row in predict_order(r.rows):
            pred = self.work / f"pred-{row}.jsonl"
            if pred.is_file():
                out[row] = {"reused": str(pred)}
                continue
            cfg = row_config(r, row, work=self.work, corpus=self.corpus, generator=self.generator)
            pipe = build_pipeline(cfg, BuildRequest(corpus=self.corpus, claims=claims, progress=self.progress,
                                                    evidence=r.evidence))
            pools = prefetch_pools(pipe, claims=claims, pools=pools)  # searched once, batched, for every row
            store = _decode_with(pipe, self.work / "candidates", claims=claims, recipe=r, ledger=self.ledger,  # one
                                 set_name="eval", corpus=self.corpus, config=_store_config(cfg, r.rows))  # per generator
            summary = pipe.run(claims, out=pred, output_format="ternary", resume=True, progress=self.progress)
            write_manifest(manifest_path(pred), run_manifest(
                data={"claims": self.work / "eval.jsonl", "corpus": self.corpus, "calibrator": cfg.calibration.path},
                seeds={"generator": cfg.generator.seed}, config=cfg.effective(), extra={"evidence": r.evidence},
                git=git))
            d = summary.to_dict()
            out[row] = {**{k: d[k] for k in ("labels", "n_abstained", "n_malformed", "components", "fallbacks",
                                             "claims_per_second")}, "store": store.describe()}
        return {row: out[row] for row in r.rows}

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
                 "", "departures from the paper:", *(f"- {d}" for d in departures(r)),
                 "", f"signature: {signature()}"]
        if r.dataset == "FEVER":
            lines += ["", "| row | FEVER score (strict) | label accuracy |", "|---|---|---|"]
            lines += [f"| {ROWS[row][0]} | {scores[row]['fever_score']['strict_score']:.4f} | "
                      f"{scores[row]['fever_score']['label_accuracy']:.4f} |" for row in r.rows]
            lines += ["", f"signature: {scores[r.rows[0]]['fever_signature']}"]
        with atomic_writer(self.work / "table.md") as fh:
            fh.write("\n".join(lines) + "\n")
        with atomic_writer(self.work / "table.json") as fh:
            json.dump({"recipe": asdict(r), "departures": departures(r), "signature": signature(),
                       "rows": [scores[row] for row in r.rows],
                       "paper_reported": [x.to_dict() for x in reported]}, fh, indent=1, default=str)
        return {"table": str(self.work / "table.md")}

    def _done(self, step: str) -> bool:
        marker = {"data": "eval.jsonl", "corpus": "corpus/corpus.json", "calibrate": "calibrator.json"}.get(step)
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
        """Run every recipe stage not done yet (:data:`RECIPE_STEPS`); returns each stage's report
        (``reused`` for skipped ones). The :class:`~.paper_set.PaperSet` checks inputs first."""
        self.work.mkdir(parents=True, exist_ok=True)
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "data": self.step_data, "corpus": self.step_corpus, "calibrate": self.step_calibrate,
            "predict": self.step_predict, "score": self.step_score, "table": self.step_table,
        }
        for name in RECIPE_STEPS:
            if on_step is not None:
                on_step(name, "reused" if self._done(name) else "running")
            self.state[name] = {"reused": True} if self._done(name) else steps[name]()
        return self.state


def eval_rows(recipe: Recipe) -> list[dict[str, Any]]:
    """The recipe's first ``eval_limit`` evaluation rows."""
    from averitec_tools.baselines.r2vc.experiments.calibration_slice import read_rows

    return read_rows(_need(recipe.eval_claims, what="evaluation claims"))[: recipe.eval_limit]


#: The stages of one recipe (the generator's — data, sft, dpo — are the set's: paper_set.py).
RECIPE_STEPS: tuple[str, ...] = ("data", "corpus", "calibrate", "predict", "score", "table")


__all__ = ["BUILTIN_RECIPES", "ROWS", "STEPS", "PaperRun", "Recipe", "eval_rows", "load_recipe", "row_config"]
