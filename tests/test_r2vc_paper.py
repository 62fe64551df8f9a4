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

import pytest

from averitec_tools.cli.main import main

sys.path.insert(0, str(Path(__file__).parent))

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path, dict]:
    """``make r2vc-paper-ci``'s run (benchmarks/r2vc_paper_ci.py): both tiny recipes, one work folder."""
    import contextlib
    import io

    from r2vc_paper_ci import paper_argv, write_inputs

    root = tmp_path_factory.mktemp("paper")
    recipes, work = write_inputs(root / "inputs"), root / "work"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*paper_argv(recipes, work), "--json"]) == 0
    return recipes, work, json.loads(out.getvalue())


@pytest.mark.slow
def test_paper_command_runs_every_stage_of_both_recipes_on_one_generator(
        reference: tuple[list[Path], Path, dict], capsys: pytest.CaptureFixture[str]) -> None:
    from r2vc_paper_ci import paper_argv

    recipes, work, result = reference
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
    # training moved the weights and says what ran
    for stage in ("sft", "dpo"):
        assert result["generator"][stage]["weights"]["final"]["changed_fraction"] == 1.0
        assert result["generator"][stage]["master_weights"] == "fp32"
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
    # a rerun reuses every finished stage and decodes nothing
    assert main([*paper_argv(recipes, work), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert all(v == {"reused": True} for v in again["generator"].values())
    assert all(again["recipes"]["tiny-fever"][s] == {"reused": True} for s in ("data", "corpus", "calibrate"))
    assert again["recipes"]["tiny-fever"]["predict"] == {r: {"reused": str(fever / f"pred-{r}.jsonl")}
                                                          for r in ("full", "no_dpo", "no_calibration", "nli_only")}
    assert again["recipes"]["tiny-fever"]["score"] == steps["score"] and again["manifest"] == manifest


#: What an interrupted-then-resumed run must reproduce byte for byte.
_OUTPUTS = ("tiny-fever/calibrator.json", "tiny-vitaminc/calibrator.json", "tiny-fever/table.md",
            "tiny-vitaminc/table.md", *(f"tiny-fever/pred-{r}.jsonl" for r in ("full", "no_dpo", "no_calibration",
                                                                                  "nli_only")),
            *(f"tiny-vitaminc/pred-{r}.jsonl" for r in ("full", "no_dpo", "single_candidate")))


@pytest.mark.slow
@pytest.mark.parametrize(("stage", "decodings"), [("calibrate", 2), ("predict", 6)])
def test_paper_killed_mid_stage_resumes_to_the_same_outputs(
        stage: str, decodings: int, reference: tuple[list[Path], Path, dict], tmp_path: Path) -> None:
    """SIGKILL after ``decodings`` LM decodings (2: mid-slice; 6: the slice's 4, then 2 evaluation
    claims of the first row), rerun: every output equals the uninterrupted run's, and no claim is
    decoded twice (the stores kept what the killed run finished)."""
    import shutil

    from r2vc_paper_ci import paper_argv
    from test_r2vc_resume import _subprocess

    recipes, ref, _ = reference
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
