"""Rank intervals and P(first) against an independent computation: plain numpy resampling
written here, one resample at a time, ranks counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import skip_or_fail

from averitec_tools.leaderboard.rank_intervals import min_ranks, rank_intervals
from averitec_tools.leaderboard.ranking import Entry, add_rank_intervals, shared_resamples
from averitec_tools.metrics.signature import parse_signature

REPO = Path(__file__).resolve().parents[1]


def reference(values: np.ndarray, *, n_resamples: int, seed: int) -> tuple[list[int], list[int], list[float], np.ndarray]:
    """Best and worst rank of the central 95 % (inverted CDF), P(first) with ties split, and
    the B × S resampled means, computed the slow, obvious way."""
    n_sys, n = values.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))  # the documented resamples
    ranks = np.zeros((n_resamples, n_sys), dtype=int)
    firsts = np.zeros(n_sys)
    means = np.zeros((n_resamples, n_sys))
    for b in range(n_resamples):
        m = [round(float(np.mean(values[s, idx[b]])), 12) for s in range(n_sys)]
        means[b] = [float(np.mean(values[s, idx[b]])) for s in range(n_sys)]
        for s in range(n_sys):
            ranks[b, s] = 1 + sum(1 for t in range(n_sys) if m[t] > m[s])  # min rank
        top = [s for s in range(n_sys) if ranks[b, s] == 1]
        for s in top:
            firsts[s] += 1 / len(top)
    lo_k = -(-n_resamples * 25 // 1000)  # ceil(0.025 B), in integers
    hi_k = -(-n_resamples * 975 // 1000)
    best = [int(sorted(ranks[:, s])[lo_k - 1]) for s in range(n_sys)]
    worst = [int(sorted(ranks[:, s])[hi_k - 1]) for s in range(n_sys)]
    return best, worst, list(firsts / n_resamples), means


def _fixed_systems() -> np.ndarray:
    rng = np.random.default_rng(7)
    base = (rng.random(60) < 0.55).astype(float)
    near = base.copy()
    near[:3] = 1 - near[:3]  # within noise of the best
    twin = base.copy()  # identical to base: every resample ties them
    far = (rng.random(60) < 0.25).astype(float)
    graded = np.clip(base * 0.8 + rng.random(60) * 0.3, 0, 1)  # non-binary values
    return np.stack([base, near, twin, far, graded])


@pytest.mark.parametrize("n_resamples", [1000, 37, 1])
def test_rank_intervals_equal_the_independent_computation(n_resamples: int) -> None:
    values = _fixed_systems()
    got = rank_intervals(values=values, n_resamples=n_resamples, seed=5)
    best, worst, p_first, _ = reference(values, n_resamples=n_resamples, seed=5)
    assert got.best.tolist() == best and got.worst.tolist() == worst
    assert got.p_first.tolist() == pytest.approx(p_first, abs=1e-12)
    assert float(got.p_first.sum()) == pytest.approx(1.0)


def test_ties_share_the_best_rank_and_split_p_first() -> None:
    values = _fixed_systems()
    got = rank_intervals(values=values, n_resamples=500, seed=0)
    # base and its twin tie on every resample: the same interval, the same P(first)
    assert (got.best[0], got.worst[0]) == (got.best[2], got.worst[2])
    assert got.p_first[0] == pytest.approx(got.p_first[2]) and got.p_first[0] > 0
    # hand-derived: all right vs all wrong, and two all-right systems tied for first
    clear = rank_intervals(values=[[1.0] * 5, [1.0] * 5, [0.0] * 5], n_resamples=50, seed=1)
    assert clear.best.tolist() == [1, 1, 3] and clear.worst.tolist() == [1, 1, 3]
    assert clear.p_first.tolist() == [0.5, 0.5, 0.0]
    assert min_ranks(np.array([[0.3, 0.3 + 1e-15, 0.1]])).tolist() == [[1, 1, 3]]  # equal to 12 digits: a tie
    assert rank_intervals(values=values, n_resamples=50, seed=0).p_first.tolist() != \
        rank_intervals(values=values, n_resamples=50, seed=1).p_first.tolist()  # the seed matters


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one claim"):
        rank_intervals(values=np.zeros((2, 0)), n_resamples=10, seed=0)
    with pytest.raises(ValueError, match="positive"):
        rank_intervals(values=[[1.0]], n_resamples=0, seed=0)


def test_a_system_on_other_claims_gets_no_interval() -> None:
    a = Entry(1, "a", "s", {"m": 1.0}, {}, {}, "sig", "1", 1, np.ones(4))
    b = Entry(2, "b", "s", {"m": 0.0}, {}, {}, "sig", "1", 2, np.zeros(3))
    add_rank_intervals([a, b], resampled=shared_resamples([a, b], n_resamples=10, seed=0), seed=0)
    assert (a.rank_interval, a.p_first, b.rank_interval, b.p_first) == ((1, 1), 1.0, None, None)


def _demo_board(tmp_path: Path):
    """The demo competition (examples/leaderboard/demo.yaml, its gold made absolute) with the
    shipped 2024 baseline and two perturbed submissions, scored."""
    pytest.importorskip("sqlalchemy")
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.leaderboard.store import Store
    from averitec_tools.leaderboard.worker import process_one
    from tests._leaderboard_helpers import DEMO_PREDS, variant

    text = (REPO / "examples" / "leaderboard" / "demo.yaml").read_text(encoding="utf-8")
    text = text.replace("gold: examples/demo_gold.json", f"gold: {REPO / 'examples' / 'demo_gold.json'}")
    url = f"sqlite:///{tmp_path / 'lb.db'}"
    store = Store(url)
    store.init(text, where="demo.yaml")
    for team, content in (("baseline", DEMO_PREDS.read_bytes()), ("worse", variant(1, n_wrong=4)), ("other", variant(2, n_wrong=2))):
        store.add_team(team)
        store.submit(team=team, system=f"{team}-system", phase="demo", content=content, file_name="p.json")
        process_one(store, Scorer(cache_dir=False, n_resamples=50))
    return store, url


def test_demo_board_equals_the_independent_computation(tmp_path: Path) -> None:
    try:
        from fastapi.testclient import TestClient
    except ImportError:
        skip_or_fail("fastapi not installed (pip install 'averitec-tools[leaderboard]')")
    from averitec_tools.leaderboard.export import export
    from averitec_tools.leaderboard.ranking import rank_board
    from averitec_tools.leaderboard.web.app import create_app

    store, url = _demo_board(tmp_path)
    comp = store.competition()
    phase = comp.phase("demo")
    client = TestClient(create_app(url), base_url="http://127.0.0.1")
    ranked = rank_board(store, "demo")
    board = json.loads(export(ranked.entries, competition=comp, phase=phase, fmt="json", floor=ranked.floor))
    rows = board["rows"]
    assert len(rows) == 3
    # the per-claim values anyone can download once the gold is shown (issue 39), resampled independently
    store.reveal("demo")
    values = np.array([[c["values"][phase.primary_metric] for c in client.get(f"/submission/{r['submission_id']}/scores.json").json()["per_claim"]]
                       for r in rows])
    best, worst, p_first, means = reference(values, n_resamples=comp.n_resamples, seed=comp.seed)
    point = [1 + sum(1 for t in values if round(t.mean(), 12) > round(v.mean(), 12)) for v in values]  # unresampled means
    assert [r["rank"] for r in rows] == point
    # the interval always holds the point rank (widened to it where the resamples' quantiles miss it)
    assert [r["rank_interval"] for r in rows] == [[min(b, p), max(w, p)] for b, w, p in zip(best, worst, point, strict=True)]
    assert [r["p_first"] for r in rows] == pytest.approx(p_first, abs=1e-12)
    assert sum(r["p_first"] for r in rows) == pytest.approx(1.0)
    for k, r in enumerate(rows):  # the CI comes from the same resamples
        assert r["ci"][phase.primary_metric] == pytest.approx(list(np.percentile(means[:, k], [2.5, 97.5])), abs=1e-12)
    sig = parse_signature(board["signature"])
    assert sig.head == "leaderboard" and (sig["B"], sig["seed"], sig["ties"]) == (str(comp.n_resamples), "0", "min+floor+interval")
    assert sig["floor"] == f"{board['resolution_floor']['value']:.4f}(variance)" and board["resolution_floor"]["n_claims"] == 50
    assert sig.render() == board["signature"]
    # the page shows the same numbers
    page = client.get("/phase/demo").text
    for r in rows:
        assert f"{r['rank_interval'][0]}–{r['rank_interval'][1]}" in page and f"{r['p_first']:.3f}" in page
    assert board["signature"] in page
    # sorting by P(first) puts the likeliest winner first
    by_p = client.get("/phase/demo?sort=p_first&order=desc").text
    top = max(rows, key=lambda r: r["p_first"])
    assert by_p.index(f"/submission/{top['submission_id']}\"") < min(
        by_p.index(f"/submission/{r['submission_id']}\"") for r in rows if r is not top)


def test_cli_json_rows_carry_rank_interval_and_p_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.cli.main import main

    _store, url = _demo_board(tmp_path)
    assert main(["leaderboard", "show", "--phase", "demo", "--json", "--db", url]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(len(r["rank_interval"]) == 2 and 0.0 <= r["p_first"] <= 1.0 for r in out["rows"])
    assert (out["n_resamples"], out["seed"]) == (1000, 0) and "B:1000|seed:0" in out["signature"]
    for fmt, needle in (("md", "P\\(first\\)"), ("html", "P(first)"), ("csv", "P(first)"), ("latex", "P(first)")):
        assert main(["leaderboard", "export", "--phase", "demo", "--format", fmt, "--db", url]) == 0
        text = capsys.readouterr().out
        assert needle in text and "Rank interval" in text, fmt


def test_interval_quantiles_are_exact_at_the_edges() -> None:
    """B = 40: the 2.5 % quantile is the 1st of the sorted ranks (0.025 · 40 = 1 exactly,
    although (1 − 0.95)/2 · 40 is 1.0000000000000009 in floating point), the 97.5 % the 39th."""
    from averitec_tools.leaderboard.rank_intervals import intervals_from_scores

    scores = np.tile([0.2, 0.5], (40, 1))
    scores[0] = [0.6, 0.5]  # system 0 first once, second 39 times; system 1 the other way round
    got = intervals_from_scores(scores, seed=0)
    assert got.best.tolist() == [1, 1] and got.worst.tolist() == [2, 1]
    assert got.p_first.tolist() == [pytest.approx(1 / 40), pytest.approx(39 / 40)]


def test_the_competition_seed_is_in_the_signature_and_checked() -> None:
    from averitec_tools.errors import UserError
    from averitec_tools.leaderboard.competition import parse_competition
    from averitec_tools.leaderboard.ranking import board_signature

    spec = {"name": "c", "n_resamples": 300, "seed": 3, "phases": [{"name": "dev", "gold": "g.json", "primary_metric": "averitec_score@0.25"}]}
    comp = parse_competition(spec, where="c.yaml")
    sig = parse_signature(board_signature(competition=comp, phase=comp.phases[0]))
    assert (sig["B"], sig["seed"]) == ("300", "3")
    with pytest.raises(UserError, match="seed"):
        parse_competition({**spec, "seed": "3"}, where="c.yaml")
