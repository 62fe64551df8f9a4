"""One paper configuration's own stages: data → corpus → retrieve → calibrate → predict → score → table.

``averitec baseline r2vc paper --recipe paper-fever --recipe paper-vitaminc --work DIR``
runs a :class:`~averitec_tools.baselines.r2vc.experiments.paper_set.PaperSet`: the shared
generator's stages (slice, SFT rows, SFT, DPO in ``DIR/generator/``), then, for each recipe,
a :class:`PaperRun` into ``DIR/<recipe>/``, each stage skipped when its output is there:

1. **data** — the first ``eval_limit`` evaluation claims (``eval.jsonl``, also the gold
   file the run is scored against);
2. **corpus** — FEVER's wiki-pages as sentence units (``wiki_pages``), a WikiExtractor
   dump as paragraphs (``wikipedia``) or a prebuilt store (``corpus``); none with given
   evidence;
3. **retrieve** — every claim a later stage searches (the evaluation claims with retrieved
   evidence, the slice with retrieved calibration evidence), searched once in batches by the
   run's one retriever (:mod:`~averitec_tools.baselines.r2vc.experiments.pools`); the pools stay
   in memory and serve calibration and every row;
4. **calibrate** — the SLC calibrator on the generator's slice (``calibrator.json``),
   the slice decoded into ``DIR/generator/slice-candidates/`` once for every recipe with
   the same calibration configuration;
5. **predict** — one prediction file per table row (``pred-<row>.jsonl`` and its
   manifest), every row through the recipe's candidate store (``candidates/``): one
   decoding per generator (DPO; SFT for ``no_dpo``), candidates batched across claims
   (:mod:`~averitec_tools.baselines.r2vc.experiments.batching`), each decoding counted in
   the set's ledger (:mod:`~averitec_tools.baselines.r2vc.experiments.ledger`);
6. **score** / 7. **table** — accuracy, macro-F1, Brier, ECE as the paper prints them (and
   the strict FEVER score for FEVER), next to the paper's reported rows, in
   ``table.md`` / ``table.json``.

The retriever (with its index), the NLI model and the generator are lent to every stage and
row by the set's :class:`~averitec_tools.baselines._run.memory.ResidentModels`: rows run
grouped by generator (:func:`predict_order`), so each generator loads once per recipe, and
every row and stage releases what it built (``release_memory``) before the next.

Built-in recipes name the paper's hub ids and read ``$AVERITEC_DATA_DIR/fever/...`` and
``$AVERITEC_DATA_DIR/vitaminc/...``; a YAML recipe overrides any key (``base:
paper-fever``), with paths relative to the YAML file. The CI runs the same command with
tiny random models and fixture data (``tests/test_r2vc_paper.py``, ``make r2vc-paper-ci``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.memory import ResidentModels, release_memory
from averitec_tools.baselines.r2vc.experiments.ledger import count_decodings
from averitec_tools.baselines.r2vc.experiments.pools import prefetch_pools
from averitec_tools.baselines.r2vc.experiments.recipes import (
    BUILTIN_RECIPES,
    ROWS,
    STEPS,
    Recipe,
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
    """``rows`` grouped by the generator they decode with, so each is loaded once: the DPO
    generator's rows first (``single_candidate`` last of them, so the k-candidate decoding is
    stored before it replays candidate θ_0 from it), then ``no_dpo`` (the SFT generator), then
    ``nli_only`` (no LM).

    Example:
        >>> predict_order(("nli_only", "single_candidate", "no_dpo", "full", "no_calibration"))
        ['full', 'no_calibration', 'single_candidate', 'no_dpo', 'nli_only']
    """
    rank = {"no_dpo": 1, "nli_only": 2}
    return sorted(rows, key=lambda row: (rank.get(row, 0), row == "single_candidate"))


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
                 ledger: Any = None, progress: bool = False, models: ResidentModels | None = None) -> None:
        from averitec_tools.baselines.r2vc.experiments.ledger import Ledger

        self.recipe, self.work, self.progress = recipe, Path(work), progress
        self.generator = Path(generator) if generator is not None else self.work
        self.ledger = ledger if ledger is not None else Ledger(self.work / "ledger.jsonl")
        #: The retriever, NLI model and generator every stage and row of the run shares.
        self.models = models if models is not None else ResidentModels()
        #: Evidence pools searched by the retrieve stage (claim text → passages), for calibrate and predict.
        self.pools: dict[str, Any] | None = None
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
            return {"corpus": str(target), "units": "sentence", "num_units": len(store), **stats.to_dict(),
                    **self._build_indexes()}
        if r.wikipedia:
            from averitec_tools.baselines.r2vc.corpus.wikipedia import build_corpus_from_wikipedia

            store = build_corpus_from_wikipedia(path=_need(r.wikipedia, what="Wikipedia dump"), out_dir=target,
                                                min_chars=r.min_chars)
            return {"corpus": str(target), "units": "paragraph", "num_units": len(store), **self._build_indexes()}
        return {"corpus": self.corpus}

    def _build_indexes(self) -> dict[str, Any]:
        """The corpus's sparse and dense indexes, built here (the plan charges them to this stage) by the
        run's one retriever, which stays lent for the retrieve stage."""
        from averitec_tools.baselines.r2vc.standard import lent_retriever

        cfg = row_config(self.recipe, "full", work=self.work, corpus=self.corpus, generator=self.generator)
        lent_retriever(cfg, corpus=str(self.corpus), models=self.models, progress=self.progress)
        return {"indexes": sorted(p.name for p in (self.work / "corpus" / "indexes").iterdir()
                                  if p.is_dir() and not p.name.startswith("."))}

    def _queries(self) -> list[str]:
        """The claims a pending stage will search: the slice (retrieved calibration evidence, calibrate
        not done) and the evaluation claims (retrieved evidence, a row not predicted yet)."""
        r, out = self.recipe, []
        if r.calibration_evidence == "retrieved" and not self._done("calibrate"):
            out += [c.claim for c in _claims(self.generator / "slice.jsonl", evidence="retrieved", corpus=None)]
        if r.evidence == "retrieved" and not all((self.work / f"pred-{row}.jsonl").is_file() for row in r.rows):
            out += [c.claim for c in _claims(self.work / "eval.jsonl", evidence="retrieved", corpus=None)
                    if c.evidence is None]
        return out

    def step_retrieve(self) -> dict[str, Any]:
        """Every claim a later stage searches, searched once in batches (:mod:`.pools`) by the run's one
        retriever; the pools stay in memory for calibrate and predict."""
        from averitec_tools.baselines.r2vc.experiments.pools import search_pools
        from averitec_tools.baselines.r2vc.stages.retrieval.dense import META_FILE
        from averitec_tools.baselines.r2vc.standard import lent_retriever
        from averitec_tools.models import encoder_dtype

        queries, corpus = self._queries(), self.corpus
        cfg = row_config(self.recipe, "full", work=self.work, corpus=corpus, generator=self.generator)
        retriever = lent_retriever(cfg, corpus=str(corpus), models=self.models, progress=self.progress)
        self.pools = search_pools(retriever, queries, k=cfg.retrieval.top_m)
        rc = cfg.retrieval
        dense = Path(rc.index_dir or Path(str(corpus)) / "indexes") / "dense" / META_FILE
        encoder = getattr(getattr(retriever, "dense", retriever), "encoder", None)
        info = {"queries": len(queries), "searched": len(self.pools), "sparse": rc.sparse, "dense": rc.dense_model,
                "dense_index": rc.dense_index if rc.dense_model else None, "dense_index_built": dense.is_file(),
                "encoder_dtype": None if encoder is None else encoder_dtype(encoder)}
        self.ledger.add(event="retrieve", recipe=self.recipe.name, **info)
        return info

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
        pipe = build_pipeline(cfg, BuildRequest(corpus=corpus, claims=claims, progress=self.progress, evidence=ev,
                                                models=self.models))
        prefetch_pools(pipe, claims=claims, pools=self.pools)  # retrieved slice evidence: the retrieve stage's
        store = _decode_with(pipe, self.generator / "slice-candidates", claims=claims,  # once for all
                             recipe=self.recipe, ledger=self.ledger, set_name="slice", corpus=corpus)
        cal = fit_calibrator(pipe, claims=claims, where=str(self.generator / "slice.jsonl"), progress=self.progress)
        cal.save(self.work / "calibrator.json")
        out = {"claims": len(claims), "evidence": ev, "store": store.describe(),
               **{k: v for k, v in cal.fit_info.items() if isinstance(v, (int, float, str))}}
        del pipe, cal, store  # the lent models stay resident for predict; the rest goes now
        release_memory()
        return out

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
        r = self.recipe
        out: dict[str, dict[str, Any]] = {}
        claims = _claims(self.work / "eval.jsonl", evidence=r.evidence, corpus=self.corpus)
        for row in predict_order(r.rows):
            pred = self.work / f"pred-{row}.jsonl"
            if pred.is_file():
                out[row] = {"reused": str(pred)}
                continue
            cfg = row_config(r, row, work=self.work, corpus=self.corpus, generator=self.generator)
            pipe = build_pipeline(cfg, BuildRequest(corpus=self.corpus, claims=claims, progress=self.progress,
                                                    evidence=r.evidence, models=self.models))  # lent: one load each
            prefetch_pools(pipe, claims=claims, pools=self.pools)  # searched once (the retrieve stage), every row
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
            del pipe, summary, store  # nothing of a row outlives it but the lent models
            release_memory()
        return {row: out[row] for row in r.rows}

    def step_score(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.experiments.paper_report import score_rows

        return score_rows(self.recipe, work=self.work)

    def step_table(self) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.experiments.paper_report import write_table

        return write_table(self.recipe, work=self.work, scores=self.state["score"])

    def _done(self, step: str) -> bool:
        if step == "retrieve":  # nothing persisted: done when no later stage has a claim to search
            return (self.work / "eval.jsonl").is_file() and not self._queries()
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
        """Run every recipe stage not done yet (:data:`RECIPE_STEPS`), each timed in the ledger under the
        plan's stage name (``<recipe> <step>``); returns each stage's report (``reused`` for skipped ones).
        The :class:`~.paper_set.PaperSet` checks inputs first."""
        from averitec_tools.baselines.r2vc.experiments.ledger import timed_stage

        self.work.mkdir(parents=True, exist_ok=True)
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "data": self.step_data, "corpus": self.step_corpus, "retrieve": self.step_retrieve,
            "calibrate": self.step_calibrate, "predict": self.step_predict, "score": self.step_score,
            "table": self.step_table,
        }
        for name in RECIPE_STEPS:
            done = self._done(name)
            if on_step is not None:
                on_step(name, "reused" if done else "running")
            with timed_stage(self.ledger, f"{self.recipe.name} {name}", ran=not done):
                self.state[name] = {"reused": True} if done else steps[name]()
        self.pools = None
        return self.state


def eval_rows(recipe: Recipe) -> list[dict[str, Any]]:
    """The recipe's first ``eval_limit`` evaluation rows."""
    from averitec_tools.baselines.r2vc.experiments.calibration_slice import read_rows

    return read_rows(_need(recipe.eval_claims, what="evaluation claims"))[: recipe.eval_limit]


#: The stages of one recipe (the generator's — data, sft, dpo — are the set's: paper_set.py).
RECIPE_STEPS: tuple[str, ...] = ("data", "corpus", "retrieve", "calibrate", "predict", "score", "table")


__all__ = ["BUILTIN_RECIPES", "ROWS", "STEPS", "PaperRun", "Recipe", "eval_rows", "load_recipe", "row_config"]
