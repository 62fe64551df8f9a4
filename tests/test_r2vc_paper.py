"""``averitec baseline r2vc paper``: the paper command end to end on CPU with tiny random models.

The same command ``make r2vc-paper`` runs with the paper's hub ids (``make r2vc-paper-ci``:
``benchmarks/r2vc_paper_ci.py``), here with a 2-layer random Llama, a 1-layer random NLI
model, bm25s only, and fixture data in the upstream layouts (FEVER wiki-pages and claims,
``tals/vitaminc`` rows): both recipes on one generator, data → SFT → DPO → calibrate →
predict → score → table, the counts of ``paper_manifest.json``, a rerun that reuses every
finished stage, and kill -9 in the middle of calibration and of prediction.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from averitec_tools.cli.main import main

sys.path.insert(0, str(Path(__file__).parent))

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))


class Alive:
    """Weak references to every model loaded and trainer built during the run, and which of them were
    still alive when each stage started (``at[stage]``)."""

    def __init__(self) -> None:
        self.refs: list[tuple[str, Any]] = []
        self.at: dict[str, list[str]] = {}

    def track(self, what: str, obj: Any) -> Any:
        import weakref

        self.refs.append((what, weakref.ref(obj)))
        return obj

    def alive(self) -> list[str]:
        return [what for what, ref in self.refs if ref() is not None]

    def mark(self, stage: str) -> None:
        """Note what is alive as ``stage`` starts (the first time it is named)."""
        self.at.setdefault(stage, self.alive())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path, dict, Alive]:
    """``make r2vc-paper-ci``'s run (benchmarks/r2vc_paper_ci.py): both tiny recipes, one work folder; every
    model loaded and trainer built is tracked by a weak reference, checked as each stage starts."""
    import contextlib
    import io

    from r2vc_paper_ci import paper_argv, write_inputs

    from averitec_tools.baselines.r2vc.experiments.paper_set import PaperSet
    from averitec_tools.baselines.r2vc.stages.generation import generator
    from averitec_tools.baselines.r2vc.training import stages

    root = tmp_path_factory.mktemp("paper")
    recipes, work = write_inputs(root / "inputs"), root / "work"
    alive, out = Alive(), io.StringIO()
    load, build, run = generator.load_causal_lm, stages.build_trainer, PaperSet.run
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(generator, "load_causal_lm", lambda *a, **k: (alive.track(f"model {a[0]}", (m := load(*a, **k))[0]),
                                                                 m[1]))
        mp.setattr(stages, "build_trainer", lambda **k: alive.track(f"trainer {k['stage']}", build(**k)))
        mp.setattr(PaperSet, "run", lambda self, on_step=None: run(
            self, on_step=lambda name, what: alive.mark(name)))
        with contextlib.redirect_stdout(out):
            assert main([*paper_argv(recipes, work), "--json"]) == 0
    alive.at["end"] = alive.alive()
    return recipes, work, json.loads(out.getvalue()), alive


@pytest.mark.slow
def test_paper_command_runs_every_stage_of_both_recipes_on_one_generator(
        reference: tuple[list[Path], Path, dict, Alive], capsys: pytest.CaptureFixture[str]) -> None:

    recipes, work, result, _ = reference
    gen, fever, vitc = work / "generator", work / "tiny-fever", work / "tiny-vitaminc"
    # data: the slice is 4 rows in whole case_id groups, disjoint from the SFT rows and from
    # both recipes' evaluation claims
    data = result["generator"]["data"]
    assert (data["slice_rows"], data["sft_rows"], data["group_key"]) == (4, 8, "case_id")
    assert data["eval_claims_excluded_from"] == ["tiny-fever", "tiny-vitaminc"]
    slice_cases = {json.loads(x)["case_id"] for x in (gen / "slice.jsonl").read_text().splitlines()}
    sft_rows = [json.loads(x) for x in (gen / "sft_rows.jsonl").read_text().splitlines()]
    assert slice_cases and not slice_cases & {r["case_id"] for r in sft_rows}
    evals = {json.loads(x)["claim"] for d in (fever, vitc) for x in (d / "eval.jsonl").read_text().splitlines()}
    assert len(evals) == 5 and not evals & {r["claim"] for r in sft_rows}  # VitaminC pairs share a claim
    steps = result["recipes"]["tiny-fever"]
    assert steps["corpus"]["num_units"] == 6 and steps["corpus"]["untitled_records"] == 1
    # the slice was decoded by the first recipe and replayed by the second
    cal = [result["recipes"][r]["calibrate"]["store"] for r in ("tiny-fever", "tiny-vitaminc")]
    assert (cal[0]["added"], cal[1]["added"], cal[1]["replayed"], cal[0]["path"]) == (4, 0, 4, cal[1]["path"])
    # one decoding per generator: full decodes, no_calibration replays, no_dpo decodes (SFT), nli_only no LM
    pred = steps["predict"]
    assert pred["full"]["store"]["path"] == pred["no_calibration"]["store"]["path"] != pred["no_dpo"]["store"]["path"]
    assert pred["no_calibration"]["store"]["added"] == 0 and pred["no_calibration"]["store"]["replayed"] == 3
    vpred = result["recipes"]["tiny-vitaminc"]["predict"]
    assert vpred["single_candidate"]["store"] == {**vpred["full"]["store"], "added": 0, "replayed": 4}
    # predictions cite FEVER evidence ids; the table scores every row and prints the paper's
    for line in (fever / "pred-full.jsonl").read_text().splitlines():
        for page, n in json.loads(line)["predicted_evidence"]:
            assert page in {"Zorbland", "Quuxia_-LRB-country-RRB-", "Plimf"} and isinstance(n, int)
    assert json.loads((fever / "pred-full.jsonl.manifest.json").read_text())["data"]["claims"]["sha256"]
    for row in ("full", "no_dpo", "nli_only"):
        score = steps["score"][row]
        assert score["n"] == 3 and 0.0 <= score["fever_score"]["strict_score"] <= score["accuracy"]
    table = (fever / "table.md").read_text()
    assert "| R2VC (SFT+DPO, verifier selection, SLC) — paper, reported | 84.71 | 85.68 | 0.083 | 0.0125 |" in table
    assert "FEVER score (strict)" in table and "signature: r2vc-paper-table" in table
    # every departure from the paper is in the table and its JSON, not only in the docs
    listed = json.loads((fever / "table.json").read_text())["departures"]
    assert any(d.startswith("retrieval: one batched pass over every claim") for d in listed)
    assert "departures from the paper:" in table and all(f"- {d}" in table for d in listed)
    # the manifest counts what ran (ledger.jsonl), both recipes together
    manifest = json.loads((work / "paper_manifest.json").read_text())
    assert manifest == result["manifest"]
    assert (manifest["generator_trainings"], manifest["sft_trainings"], manifest["dpo_trainings"]) == (1, 1, 1)
    assert manifest["eval_claims"] == {"tiny-fever": 3, "tiny-vitaminc": 4} and manifest["slice_claims"] == 4
    assert (manifest["slice_decodings"], manifest["decodings_per_claim"], manifest["eval_decodings"]) == (1.0, 2.0, 14)



@pytest.mark.slow
def test_a_rerun_reuses_every_finished_stage_and_decodes_nothing(
        reference: tuple[list[Path], Path, dict, Alive], capsys: pytest.CaptureFixture[str]) -> None:
    from r2vc_paper_ci import paper_argv

    recipes, work, result, _ = reference
    fever, steps, manifest = work / "tiny-fever", result["recipes"]["tiny-fever"], result["manifest"]
    assert main([*paper_argv(recipes, work), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert all(v == {"reused": True} for v in again["generator"].values())
    assert all(again["recipes"]["tiny-fever"][s] == {"reused": True} for s in ("data", "corpus", "calibrate"))
    assert again["recipes"]["tiny-fever"]["predict"] == {r: {"reused": str(fever / f"pred-{r}.jsonl")}
                                                          for r in ("full", "no_dpo", "no_calibration", "nli_only")}
    assert again["recipes"]["tiny-fever"]["score"] == steps["score"]
    timing = ("stages", "measured_hours")  # score and table run again (cheap): the ledger counts them twice
    assert {k: v for k, v in again["manifest"].items() if k not in timing} == {k: v for k, v in manifest.items()
                                                                                if k not in timing}
    twice = {row["stage"]: row["runs"] for row in again["manifest"]["stages"]}
    assert twice["tiny-fever score"] == 2 and twice["generator sft"] == twice["tiny-fever calibrate"] == 1


@pytest.mark.slow
def test_paper_manifest_counts_training_loads_the_dense_index_and_planned_against_measured(
        reference: tuple[list[Path], Path, dict, Alive]) -> None:
    recipes, work, result, _ = reference
    manifest = json.loads((work / "paper_manifest.json").read_text())
    # training moved the weights and says what ran
    for stage in ("sft", "dpo"):  # Table G.1's bf16 weights are a CUDA recipe: on CPU the weights stay fp32
        assert result["generator"][stage]["weights"]["final"]["changed_fraction"] == 1.0
        assert result["generator"][stage]["master_weights"] == "bf16"
        assert result["generator"][stage]["weights_dtype"] == "float32" and result["generator"][stage]["bf16_rounding"] is None
    # one load per generator and recipe, lent to every stage and row; one retriever; the dense path ran
    assert manifest["generator_loads"] == {r: {"dpo": 1, "sft": 1} for r in ("tiny-fever", "tiny-vitaminc")}
    assert manifest["retriever_loads"] == {"tiny-fever": {"corpus": 1}}
    assert manifest["dense_index"] is True and manifest["dense_indexes"] == {"tiny-fever": "ivfsq8"}
    fever_retrieve = result["recipes"]["tiny-fever"]["retrieve"]
    assert (fever_retrieve["queries"], fever_retrieve["dense"], fever_retrieve["encoder_dtype"]) == (3, "minilm", "float32")
    # the run's stages are the plan's, planned beside measured
    from averitec_tools.baselines.r2vc.experiments.paper_set import PaperSet
    from averitec_tools.baselines.r2vc.experiments.recipes import load_recipe

    plan = PaperSet([load_recipe(str(r)) for r in recipes], work=work).plan()
    assert [row["stage"] for row in manifest["stages"]] == [s["stage"] for s in plan["stages"]]
    assert (manifest["planned_on"], manifest["measured_on"]) == ("h100-80gb", "cpu")
    ran = {row["stage"]: row for row in manifest["stages"]}
    assert ran["generator sft"]["runs"] == 1 and ran["generator sft"]["measured_hours"] > 0
    assert ran["tiny-vitaminc retrieve"]["runs"] == 0  # given evidence: nothing to search


#: What an interrupted-then-resumed run must reproduce byte for byte.
_OUTPUTS = ("tiny-fever/calibrator.json", "tiny-vitaminc/calibrator.json", "tiny-fever/table.md",
            "tiny-vitaminc/table.md", *(f"tiny-fever/pred-{r}.jsonl" for r in ("full", "no_dpo", "no_calibration",
                                                                                  "nli_only")),
            *(f"tiny-vitaminc/pred-{r}.jsonl" for r in ("full", "no_dpo", "single_candidate")))


@pytest.mark.slow
@pytest.mark.parametrize(("stage", "decodings"), [("calibrate", 2), ("predict", 6)])
def test_paper_killed_mid_stage_resumes_to_the_same_outputs(
        stage: str, decodings: int, reference: tuple[list[Path], Path, dict, Alive], tmp_path: Path) -> None:
    """SIGKILL after ``decodings`` LM decodings (2: mid-slice; 6: the slice's 4, then 2 evaluation
    claims of the first row), rerun: every output equals the uninterrupted run's, and no claim is
    decoded twice (the stores kept what the killed run finished)."""
    import shutil

    from r2vc_paper_ci import paper_argv
    from test_r2vc_resume import _subprocess

    recipes, ref, _, _ = reference
    work = tmp_path / "work"
    shutil.copytree(ref / "generator", work / "generator",  # the trained generator; no slice decoding
                    ignore=shutil.ignore_patterns("slice-candidates"))
    shutil.copy(ref / "recipes.json", work / "recipes.json")
    killed = _subprocess("decode", str(decodings), "--", *paper_argv(recipes, work), "--json")
    assert killed.returncode == -9, killed.stderr[-2000:]
    assert not (work / "tiny-fever" / "calibrator.json").exists() or stage == "predict"
    assert (work / "tiny-fever" / ("calibrator.json" if stage == "predict" else "eval.jsonl")).is_file()
    assert main([*paper_argv(recipes, work), "--json"]) == 0
    for name in _OUTPUTS:
        assert (work / name).read_bytes() == (ref / name).read_bytes(), name
    manifest = json.loads((work / "paper_manifest.json").read_text())
    assert (manifest["slice_decodings"], manifest["decodings_per_claim"]) == (1.0, 2.0)


@pytest.mark.slow
def test_nothing_of_a_stage_outlives_it(reference: tuple[list[Path], Path, dict, Alive]) -> None:
    """Weak references to every model and trainer of the run (tracked as they were made): the SFT stage's
    are gone when DPO starts, DPO's when the first recipe starts — before any cyclic collection the test
    could have run — and nothing of the run is left at its end (the lent generators, NLI model and
    retriever are released when the set closes)."""
    _, _, _, alive = reference
    assert not alive.at["generator dpo"] and not alive.at["tiny-fever data"]
    trained = [w for w, _ in alive.refs if w.startswith("trainer ")]
    assert trained == ["trainer sft", "trainer dpo"]
    assert any(w.endswith("/dpo") for w, _ in alive.refs) and any(w.endswith("/sft") for w, _ in alive.refs)
    assert alive.at["end"] == []


def test_a_plan_that_does_not_fit_the_gpu_here_is_refused_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A faked GPU with less memory than the tiny recipes' planned peak (the dense encoding's 8 GiB batch
    allowance): one line naming the stage, its peak, the GPU and what would hold it; nothing written."""
    from r2vc_paper_ci import paper_argv, write_inputs

    from averitec_tools import doctor

    recipes = write_inputs(tmp_path / "inputs")
    capsys.readouterr()  # the fixture's own output (transformers' "Writing model shards" bar when no earlier test silenced it)
    monkeypatch.setattr(doctor, "probe_torch", lambda: {"installed": True, "cuda_available": True, "gpus": [
        {"index": 0, "name": "Fake GPU 4GB", "memory_gib": 4.0, "bf16": True}]})
    assert main(paper_argv(recipes, tmp_path / "w")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Fake GPU 4GB has 4 GiB, of which a plan may fill 3.8: nothing was run" in err
    assert "stage 'tiny-fever corpus' plans a peak of 8.6 GiB" in err and "it fits one rtx-4090" in err
    assert not (tmp_path / "w").exists()


def test_paper_recipe_errors_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: paper-fever\nslice_sise: 3\n")
    assert main(["baseline", "r2vc", "paper", "--recipe", str(bad), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown key 'slice_sise' (did you mean 'slice_size'?)" in err
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(tmp_path / "nowhere"))
    from averitec_tools import doctor

    monkeypatch.setattr(doctor, "cuda_available", lambda: False)
    assert main(["baseline", "r2vc", "paper", "--recipe", "paper-vitaminc", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err  # the 8B generator on a machine without CUDA: refused first
    assert err.count("\n") == 1 and "is paper scale and this machine has no CUDA GPU" in err
    assert main(["baseline", "r2vc", "paper", "--recipe", "paper-vitaminc", "--work", str(tmp_path / "w"),
                 "--allow-cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "vitaminc/train.jsonl: training rows not found" in err
    assert "averitec data download vitaminc" in err
    assert not (tmp_path / "w").exists()
    rows = tmp_path / "rows.yaml"
    rows.write_text(f"base: paper-vitaminc\ntrain_rows: {bad}\neval_claims: {bad}\nrows: [full, nope]\n")
    assert main(["baseline", "r2vc", "paper", "--recipe", str(rows), "--work", str(tmp_path / "w")]) == 2
    assert "unknown table row 'nope'" in capsys.readouterr().err


def test_departures_follow_the_recipe(tmp_path: Path) -> None:
    """ivfsq8 and the DPO cut are listed where the recipe has them, and not once a recipe restores the paper's."""
    from averitec_tools.baselines.r2vc.experiments.recipes import departures, load_recipe

    fever = departures(load_recipe("paper-fever"))
    assert fever[0].startswith("dense index: ivfsq8") and any(d.startswith("DPO: 125 steps") for d in fever)
    paperlike = tmp_path / "paperlike.yaml"
    paperlike.write_text("base: paper-fever\npipeline: {retrieval: {dense_index: hnsw}}\ndpo: {}\ndecode_batch: 1\n")
    heads = [d.split(":")[0] for d in departures(load_recipe(str(paperlike)))]
    assert heads == ["retrieval", "corpus", "SFT data", "generator", "Table 2 rows"]
