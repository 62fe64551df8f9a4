"""``averitec judge-agreement``: two real local judge processes with deterministic but
different behaviour, repeat runs at a temperature, bootstrap intervals, the cache.

Each judge server answers every prompt with counts derived from its salt, the claim and
(at a temperature above 0) the request's seed (``tests/_judge_server.py``,
:func:`derived_counts`). Expected values are computed here from those counts with
scikit-learn, SciPy and :mod:`statistics`, independently of the code under test.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _judge_server import derived_counts, requests_sent, running
from _score_fixtures import write_json
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from averitec_tools.cli.main import main
from averitec_tools.metrics.agreement import (
    cohen_kappa,
    confusion,
    correlations,
    flips,
    repeat_spread,
)

LABELS = ("Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking")
N = 16
GOLD = [{"claim": f"Claim number {i} about the budget.", "label": LABELS[i % 4],
         "questions": [{"question": f"What does source {i} say?", "answers": [{"answer": f"Figure {i}.",
                                                                              "answer_type": "Extractive"}]}]}
        for i in range(N)]
PRED = [{"claim_id": i, "claim": g["claim"], "pred_label": g["label"] if i % 3 else LABELS[(i + 1) % 4],
         "evidence": [{"question": f"What did source {i} report?", "answer": f"About figure {i}."}]}
        for i, g in enumerate(GOLD)]


def expected(salt: str, *, seed: int | None = None, temperature: float = 0.0) -> tuple[list[float], list[bool], list[float]]:
    """Per-claim Q+A recall, evidence pass (> 0.5) and new AVeriTeC score under a derived judge."""
    recall = []
    for g in GOLD:
        c = derived_counts(salt, g["claim"], seed=seed, temperature=temperature)
        recall.append(c["sup_ref"] / c["ref"])
    passed = [r > 0.5 for r in recall]
    score = [float(ok and p["pred_label"] == g["label"]) for ok, p, g in zip(passed, PRED, GOLD, strict=True)]
    return recall, passed, score


@pytest.fixture()
def judges(tmp_path: Path) -> Iterator[tuple[str, Path, str, Path]]:
    with running({"default": {"derive": "judge-A"}}, tmp_path, "a") as (url_a, log_a), \
            running({"default": {"derive": "judge-B"}}, tmp_path, "b") as (url_b, log_b):
        yield url_a, log_a, url_b, log_b


def test_two_judges_and_repeats_against_independent_references(
    tmp_path: Path, judges: tuple[str, Path, str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url_a, log_a, url_b, log_b = judges
    pred, gold = write_json(tmp_path / "pred.json", PRED), write_json(tmp_path / "gold.json", GOLD)
    base = ["judge-agreement", str(pred), str(gold), "--judge-url", url_a, "--judge-model", "judge-a",
            "--second-judge-url", url_b, "--second-judge-model", "judge-b", "--judge-cache", str(tmp_path / "cache"),
            "--bootstrap-resamples", "300", "--json"]
    argv = [*base, "--repeats", "3", "--judge-temperature", "0.7", "--judge-seed", "5",
            "--per-claim", str(tmp_path / "claims.jsonl")]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_claims"] == N and report["sampling"] == {"repeats": 3, "temperature": 0.7, "seed": 5}
    for judge, salt in zip(report["judges"], ("judge-A", "judge-B"), strict=True):
        runs = [expected(salt, seed=5 + r, temperature=0.7) for r in range(3)]
        headlines = [sum(s) / N for _, _, s in runs]
        assert [r["new_averitec_score"] for r in judge["runs"]] == pytest.approx(headlines)
        assert [r["seed"] for r in judge["runs"]] == [5, 6, 7]
        rep = judge["repeats"]
        assert rep["new_averitec_score"]["std"] == pytest.approx(statistics.stdev(headlines))
        per_claim_std = [statistics.stdev([run[0][i] for run in runs]) for i in range(N)]
        assert rep["qa_recall"]["claim_std_mean"] == pytest.approx(statistics.mean(per_claim_std))
        assert rep["qa_recall"]["claim_std_max"] == pytest.approx(max(per_claim_std))
        assert rep["verdict_flips"] == [i for i in range(N) if len({run[2][i] for run in runs}) > 1]
        assert rep["n_verdict_flips"] > 0  # the seeds make a difference at this temperature
        mean_score = np.mean([run[2] for run in runs], axis=0)
        ci = judge["new_averitec_score_ci"]
        assert ci["estimate"] == pytest.approx(float(mean_score.mean())) and ci["low"] <= ci["estimate"] <= ci["high"]
        assert ci["n_resamples"] == 300 and ci["confidence_level"] == 0.95
    # Agreement of run 0 of each judge, against scikit-learn and SciPy.
    ra, pa, sa = expected("judge-A", seed=5, temperature=0.7)
    rb, pb, sb = expected("judge-B", seed=5, temperature=0.7)
    agree = report["agreement"]
    assert agree["cohen_kappa"] == pytest.approx(cohen_kappa_score(pa, pb))
    assert agree["confusion"] == {"both_pass": sum(a and b for a, b in zip(pa, pb, strict=True)),
                                  "only_a": sum(a and not b for a, b in zip(pa, pb, strict=True)),
                                  "only_b": sum(b and not a for a, b in zip(pa, pb, strict=True)),
                                  "both_fail": sum(not a and not b for a, b in zip(pa, pb, strict=True))}
    corr = agree["qa_recall_correlation"]
    assert corr["pearson"] == pytest.approx(stats.pearsonr(ra, rb).statistic)
    assert corr["spearman"] == pytest.approx(stats.spearmanr(ra, rb).statistic)
    assert agree["verdict_flips"] == [i for i in range(N) if sa[i] != sb[i]]
    assert agree["new_averitec_score_difference"] == pytest.approx((sum(sa) - sum(sb)) / N)
    lines = (tmp_path / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * 3 * N and json.loads(lines[0])["judge"] == "openai:judge-a"
    assert report["signature"].startswith("report:judge-agreement|metric:ev2r-qa|judges:openai:judge-a,openai:judge-b")
    # Every request carried the run's seed and temperature; nothing was sent twice.
    sent = requests_sent(log_a)
    assert len(sent) == 3 * N and sorted({e["request"]["seed"] for e in sent}) == [5, 6, 7]
    assert {e["request"]["temperature"] for e in sent} == {0.7}
    # From the cache alone: the same report, not one request more.
    assert main([*argv[:-2], "--cache-only"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["judges"][0]["runs"][0]["from_cache"] == N and again["judges"][0]["runs"][0]["sent"] == 0
    assert again["agreement"] == report["agreement"] and len(requests_sent(log_a)) == 3 * N
    # Temperature 0 (the organisers' setting): deterministic judges give zero spread.
    assert main([*base, "--repeats", "2", "--judge-cache", str(tmp_path / "cache0")]) == 0
    zero = json.loads(capsys.readouterr().out)["judges"][0]["repeats"]
    assert zero["new_averitec_score"]["std"] == 0 and zero["qa_recall"]["claim_std_max"] == 0 and zero["verdict_flips"] == []
    # The text report names the figures.
    assert main([*base[:-1], "--cache-only", "--judge-cache", str(tmp_path / "cache0")]) == 0
    text = capsys.readouterr().out
    assert "Cohen's kappa" in text and "confusion: both pass" in text and "signature: report:judge-agreement" in text


def test_bad_input_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred, gold = write_json(tmp_path / "pred.json", PRED), write_json(tmp_path / "gold.json", GOLD)
    base = ["judge-agreement", str(pred), str(gold), "--judge-cache", str(tmp_path / "c")]
    for extra, message in [
        (["--second-judge-url", "http://x/v1"], "--second-judge-model is required"),
        (["--judge-model", "m", "--second-judge-model", "m"], "both judges are named 'm'"),
        (["--cache-only"], "--cache-only: 16 judgement(s)"),
        (["--ev2r-preset", "nope"], "unknown Ev2R threshold preset 'nope'"),
        ([], "needs a judge: --judge-url"),
    ]:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (extra, err)
    for extra in (["--repeats", "0"], ["--confidence-level", "1.5"]):  # refused when parsed (issue 39)
        with pytest.raises(SystemExit) as info:
            main([*base, *extra])
        assert info.value.code == 2 and "expected a" in capsys.readouterr().err


@pytest.mark.parametrize("seed", range(6))
def test_agreement_statistics_against_scikit_learn_and_scipy(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(3, 40)
    a = [rng.random() < 0.6 for _ in range(n)]
    b = [x if rng.random() < 0.7 else not x for x in a]
    kappa = cohen_kappa(a, b)
    if len(set(a)) == 1 and len(set(b)) == 1 and a == b:
        assert kappa is None
    else:
        assert kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    t = confusion(a, b)
    assert t.n == n and t.observed_agreement == pytest.approx(np.mean(np.array(a) == np.array(b)))
    x = [rng.random() for _ in range(n)]
    y = [v + rng.gauss(0, 0.3) for v in x]
    c = correlations(x, y)
    assert c["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert c["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert c["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue)


def test_degenerate_statistics_are_none_not_nan() -> None:
    assert cohen_kappa([True] * 4, [True] * 4) is None and cohen_kappa([], []) is None
    assert cohen_kappa([True] * 4, [False] * 4) == 0.0  # sklearn: 0.0 as well
    assert correlations([0.5, 0.5, 0.5], [0.1, 0.2, 0.3])["pearson"] is None
    assert correlations([0.1, 0.2], [0.1, 0.2]) == {"pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}
    spread = repeat_spread([[1.0, 0.0]])
    assert (spread.k, spread.headline_std, spread.item_std_max) == (1, 0.0, 0.0)
    assert flips([0, 1], [[True, False]]) == []
    runs: list[list[Any]] = [[0.2, 0.9], [0.4, 0.9], [0.9, 0.9]]
    s = repeat_spread(runs)
    assert s.item_std_max == pytest.approx(statistics.stdev([0.2, 0.4, 0.9]))
    assert s.headline_std == pytest.approx(statistics.stdev([0.55, 0.65, 0.9]))
