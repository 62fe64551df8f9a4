"""Competition YAML, Holm correction, CIs and tiers, exports and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.competition import (
    load_competition,
    load_competition_text,
    parse_competition,
)
from averitec_tools.leaderboard.ranking import Entry, assign_tiers, claim_mask, holm
from tests._leaderboard_helpers import DEMO_GOLD, competition_yaml, variant

REPO_YAML = "examples/leaderboard/averitec-dev.yaml"
RECORDED_REFERENCE = json.loads((Path(__file__).parent / "data" / "reference_scores.json").read_text(encoding="utf-8"))


def test_holm_hand_example() -> None:
    # p = (0.01, 0.04, 0.03, 0.005), m = 4: sorted 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1 -> 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == [0.03, 0.06, 0.06, 0.02]
    assert holm([]) == []
    assert holm([0.6, 0.9]) == [1.0, 1.0]


def test_example_yaml_expands_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", "/data")
    comp = load_competition(REPO_YAML)
    phase = comp.phase("dev")
    assert phase.gold == "/data/averitec/dev.json"
    assert (phase.profile, phase.primary_metric) == ("averitec2024", "averitec_score@0.25")
    monkeypatch.delenv("AVERITEC_DATA_DIR")
    with pytest.raises(UserError, match=r"AVERITEC_DATA_DIR\} is not set"):
        load_competition(REPO_YAML)
    stored = load_competition_text(Path(REPO_YAML).read_text(), where="db", env="optional")  # a stored competition
    assert stored.phase("dev").gold == "${AVERITEC_DATA_DIR}/averitec/dev.json"


@pytest.mark.parametrize(
    ("phase", "message"),
    [
        ({"profiles": ["averitec2042"]}, "averitec202"),
        ({"visibility": "secret"}, "visibility"),
        ({"limits": {"per_day": 0}}, "positive integer"),
        ({"split": {"public_fraction": 1.5}}, r"\(0, 1\)"),
        ({"limit": {"per_day": 1}}, r"c.yaml: phases\[0\]: unknown key 'limit' \(did you mean: limits\b"),
        ({"limits": {"per_day": "5"}}, r"c.yaml: phases\[0\].limits.per_day: expected int or null, found str '5'"),
        ({"split": {"public_fraction": 0.5, "seed": True}}, r"split.seed: expected int, found bool True"),
    ],
)
def test_bad_competition_is_a_user_error(phase: dict, message: str) -> None:
    base = {"name": "dev", "gold": "g.json", "primary_metric": "label_accuracy"}
    with pytest.raises(UserError, match=message):
        parse_competition({"name": "c", "phases": [{**base, **phase}]}, where="c.yaml")


def test_split_is_seeded_and_private_until_revealed() -> None:
    comp = parse_competition(
        {"name": "c", "phases": [{"name": "test", "gold": "g", "primary_metric": "label_accuracy", "visibility": "private",
                                  "split": {"public_fraction": 0.3, "seed": 7}}]},
        where="c.yaml",
    )
    phase = comp.phase("test")
    public = claim_mask(phase, 100, revealed=False)
    private = claim_mask(phase, 100, revealed=True)
    assert public.sum() == 30 and private.sum() == 70 and not (public & private).any()
    assert (claim_mask(phase, 100, revealed=False) == public).all()
    hidden = parse_competition({"name": "c", "phases": [{"name": "t", "gold": "g", "primary_metric": "label_accuracy", "visibility": "hidden"}]}, where="c")
    assert claim_mask(hidden.phase("t"), 10, revealed=False) is None


def _entry(i: int, values: np.ndarray) -> Entry:
    return Entry(i, f"team{i}", "sys", {"m": float(values.mean())}, {}, {}, "sig", "v", f"2026-01-0{i}", values)


def test_tiers_group_systems_not_significantly_different() -> None:
    rng = np.random.default_rng(0)
    base = (rng.random(400) < 0.6).astype(float)
    near = base.copy()
    near[:4] = 1 - near[:4]  # within noise of the best
    far = (rng.random(400) < 0.3).astype(float)
    entries = assign_tiers([_entry(3, far), _entry(2, near), _entry(1, base)], primary="m", alpha=0.05, test="bootstrap", n_resamples=500)
    assert [e.team for e in entries][2] == "team3"
    assert [e.tier for e in entries] == [1, 1, 2]
    assert entries[1].p_vs_tier_best is not None and entries[1].p_vs_tier_best >= 0.05
    # the comparisons behind the tiers: raw and Holm p-values of each round, with its m
    near_e, far_e = entries[1], entries[2]
    assert [(c.tier, c.head, c.m, c.joined) for c in near_e.comparisons] == [(1, 1, 2, True)]
    assert [(c.tier, c.m, c.joined) for c in far_e.comparisons] == [(1, 2, False)]
    assert holm([near_e.comparisons[0].p_raw, far_e.comparisons[0].p_raw]) == [near_e.comparisons[0].p_holm, far_e.comparisons[0].p_holm]
    # identical systems: the same rank and tier; the earlier submission is listed first
    tied = assign_tiers([_entry(3, far), _entry(2, base), _entry(1, base.copy())], primary="m", alpha=0.05, test="randomization", n_resamples=200)
    assert [(e.team, e.rank, e.tier) for e in tied] == [("team1", 1, 1), ("team2", 1, 1), ("team3", 3, 2)]


def test_new_systems_of_one_team_can_move_another_and_the_comparisons_show_why() -> None:
    """The documented property of Holm tiers: team 3 adds four near-copies of the best
    system, so team 2's test becomes the round's smallest p of m = 5 and is multiplied by
    5: team 2 moves from tier 2 into tier 1 with the same raw p. The comparisons (raw p,
    Holm p, m), which the board page shows, carry the reason."""
    rng = np.random.default_rng(1)
    best = (rng.random(300) < 0.6).astype(float)
    right = np.flatnonzero(best == 1)
    second = best.copy()
    second[right[:6]] = 0.0  # six claims fewer than the best: significant alone (p = 0.022)
    copies = []
    for k in range(4):
        c = best.copy()
        c[right[100 + k]] = 0.0
        copies.append(c)
    kwargs = {"primary": "m", "alpha": 0.05, "test": "bootstrap", "n_resamples": 2000}
    alone = assign_tiers([_entry(1, best), _entry(2, second)], **kwargs)
    crowded = assign_tiers([_entry(1, best), _entry(2, second), *(_entry(3 + k, c) for k, c in enumerate(copies))], **kwargs)
    before = next(e for e in alone if e.submission_id == 2)
    after = next(e for e in crowded if e.submission_id == 2)
    assert (before.tier, after.tier) == (2, 1)
    (was,), (now,) = before.comparisons[:1], after.comparisons[:1]
    assert now.p_raw == pytest.approx(was.p_raw) and (was.m, now.m) == (1, 5)
    assert was.p_holm < 0.05 <= now.p_holm == pytest.approx(5 * now.p_raw)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_cli_end_to_end(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", f"sqlite:///{tmp_path / 'lb.db'}", "--json"]
    yaml_path = tmp_path / "c.yaml"
    yaml_path.write_text(competition_yaml(DEMO_GOLD))
    assert _run(["leaderboard", "init", str(yaml_path), *db], capsys)["admin_token"]
    assert _run(["leaderboard", "team", "add", "blue", *db], capsys)["token"]
    _run(["leaderboard", "team", "add", "<script>alert(1)</script>", *db], capsys)
    files = []
    for seed, wrong in ((0, 0), (1, 20)):
        f = tmp_path / f"p{seed}.json"
        f.write_bytes(variant(seed, n_wrong=wrong))
        files.append(f)
    first = _run(["leaderboard", "submit", str(files[0]), "--team", "blue", "--system", "base", "--phase", "dev", "--meta", "model=bloom", *db], capsys)
    # 0.16 (8 of the 50 demo claims): benchmarks/reference_scorer.py under NLTK 3.9.1 on the demo files.
    demo_reference = RECORDED_REFERENCE["demo_averitec2024"]["averitec_score"]["0.25"]
    assert first["state"] == "finished" and first["metrics"]["averitec_score"]["0.25"] == pytest.approx(demo_reference, abs=1e-9)
    again = _run(["leaderboard", "submit", str(files[0]), "--team", "blue", "--system", "base", "--phase", "dev", *db], capsys)
    assert again == {**again, "id": first["id"], "created": False}
    _run(["leaderboard", "submit", str(files[1]), "--team", "<script>alert(1)</script>", "--system", "worse", "--phase", "dev", *db], capsys)
    status = _run(["leaderboard", "status", *db], capsys)
    assert [s["state"] for s in status["submissions"]] == ["finished", "finished"]
    board = _run(["leaderboard", "export", "--phase", "dev", "--format", "json", *db[:2]], capsys)
    rows = board["rows"]
    assert [r["rank"] for r in rows] == [1, 2] and rows[0]["team"] == "blue"
    assert rows[0]["disclosure"]["model"] == "bloom"
    lo, hi = rows[0]["ci"]["averitec_score@0.25"]
    assert lo <= rows[0]["metrics"]["averitec_score@0.25"] <= hi
    for fmt in ("md", "html", "csv", "latex"):
        out = tmp_path / f"board.{fmt}"
        _run(["leaderboard", "export", "--phase", "dev", "--format", fmt, "--out", str(out), *db], capsys)
        text = out.read_text()
        assert "blue" in text
        if fmt == "html":
            assert "<script>" not in text and "&lt;script&gt;" in text
    # rescore keeps the result of the same version once (replaced), old versions stay
    assert _run(["leaderboard", "rescore", *db], capsys) == {"queued": 2, "scored": 2}
    assert _run(["leaderboard", "reveal", "--phase", "dev", *db], capsys)["revealed"]


def test_cli_user_errors(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--db", f"sqlite:///{tmp_path / 'lb.db'}"]
    assert main(["leaderboard", "status", *db]) == 2
    assert "no leaderboard database here" in capsys.readouterr().err
    assert not (tmp_path / "lb.db").exists()  # no empty database left behind
    assert main(["leaderboard", "init", str(tmp_path / "missing.yaml"), *db]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "typo.yaml"
    bad.write_text("name: c\ntitel: C\nphases: [{name: dev, gold: g.json, primary_metric: label_accuracy}]\n")
    assert main(["leaderboard", "init", str(bad), *db]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{bad}: unknown key 'titel' (did you mean: title?)" in err
    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes("name: caf\xe9\n".encode("latin-1"))
    assert main(["leaderboard", "init", str(latin1), *db]) == 2
    assert capsys.readouterr().err.strip().endswith(f"{latin1}: the competition file is not valid UTF-8")
    assert main(["leaderboard", "status", "--db", f"sqlite:///{tmp_path}/nope/lb.db"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_private_split_is_revealed_at_the_end(tmp_path) -> None:
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.leaderboard.ranking import rank_store
    from averitec_tools.leaderboard.store import Store
    from averitec_tools.leaderboard.worker import process_one

    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.init(competition_yaml(visibility="private", split={"public_fraction": 0.4, "seed": 3}), where="c.yaml")
    store.add_team("blue")
    sid = store.submit(team="blue", system="s", phase="dev", content=variant(0, n_wrong=10), file_name="p.json").id
    process_one(store, Scorer(cache_dir=False, n_resamples=100))
    per_claim = store.results()[sid][0]["per_claim"]
    public = claim_mask(store.competition().phase("dev"), 50, revealed=False)
    correct = np.array([c["values"]["label_accuracy"] for c in per_claim])
    (before,) = rank_store(store, "dev")
    assert len(before.values) == 20 and before.metrics["label_accuracy"] == pytest.approx(correct[public].mean())
    store.reveal("dev")
    (after,) = rank_store(store, "dev")
    assert len(after.values) == 30 and after.metrics["label_accuracy"] == pytest.approx(correct[~public].mean())
