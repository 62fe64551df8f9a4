"""``averitec score --subset`` (issue 12): partial runs scored on the claims they cover."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _score_fixtures import make_files

from averitec_tools.cli.main import main


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def score_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(["score", *argv, "--json", "--jobs", "1"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return json.loads(out)


def rows(path: Path) -> list:
    text = path.read_text()
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines() if x.strip()]


def write_like(path: Path, items: list, like: Path) -> Path:
    if like.read_text().lstrip().startswith("["):
        path.write_text(json.dumps(items))
    else:
        path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


@pytest.mark.parametrize(("profile", "pred", "gold"), [
    ("averitec2024", "pred2024", "gold"), ("averitec2023", "pred2023", "gold"), ("evalai", "pred_evalai", "gold_evalai"),
])
def test_full_predictions_give_the_same_figures(files, capsys, profile, pred, gold) -> None:
    full = score_json(capsys, str(files[pred]), str(files[gold]), "--profile", profile)
    sub = score_json(capsys, str(files[pred]), str(files[gold]), "--profile", profile, "--subset")
    m = full["n_claims"]
    assert sub.pop("subset") == f"{m}/{m}"
    assert sub.pop("signature") == full.pop("signature") + f"|subset:{m}/{m}"
    assert sub == full


@pytest.mark.parametrize(("profile", "pred", "gold", "keep"), [
    ("averitec2024", "pred2024", "gold", [2, 0]),  # any claim_ids, any order
    ("averitec2023", "pred2023", "gold", [0, 1]),  # aligned by position: the first N
    ("evalai", "pred_evalai", "gold_evalai", [1]),
])
def test_partial_run_equals_scoring_the_gold_subset(files, tmp_path, capsys, profile, pred, gold, keep) -> None:
    preds, golds = rows(files[pred]), rows(files[gold])
    part = write_like(tmp_path / "part", [preds[i] for i in keep], files[pred])
    plain = score_json(capsys, str(part), str(files[gold]), "--profile", profile, "--subset",
                       "--per-claim", str(tmp_path / "pc.jsonl"))
    assert plain["subset"] == f"{len(keep)}/{len(golds)}" and plain["n_claims"] == len(keep)
    assert plain["signature"].endswith(f"|subset:{len(keep)}/{len(golds)}")
    # the same claims scored as a full run on a hand-made gold subset
    order = sorted(keep)
    sub_gold = write_like(tmp_path / "sub_gold", [golds[i] for i in order], files[gold])
    sub_pred_items = [preds[i] for i in order]
    if profile == "averitec2024":
        sub_pred_items = [{**p, "claim_id": n} for n, p in enumerate(sub_pred_items)]
    sub_pred = write_like(tmp_path / "sub_pred", sub_pred_items, files[pred])
    full = score_json(capsys, str(sub_pred), str(sub_gold), "--profile", profile)
    for key in full:
        if key not in ("signature", "n_claims"):
            assert plain[key] == full[key], key
    ids = [json.loads(line)["claim_id"] for line in (tmp_path / "pc.jsonl").read_text().splitlines()]
    if profile != "evalai":
        assert ids == order  # the user's claim ids, not the renumbered ones


def test_partial_run_without_subset_says_how(files, tmp_path, capsys) -> None:
    part = tmp_path / "part.json"
    part.write_text(json.dumps(rows(files["pred2024"])[:1]))
    assert main(["score", str(part), str(files["gold"])]) == 2
    err = capsys.readouterr().err
    assert "pass --subset" in err and len(err.strip().splitlines()) == 1


def test_table_header_says_subset(files, tmp_path, capsys) -> None:
    part = tmp_path / "part.json"
    part.write_text(json.dumps(rows(files["pred2024"])[:1]))
    assert main(["score", str(part), str(files["gold"]), "--subset", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    n = len(rows(files["gold"]))
    assert f"(1 claims, subset: 1/{n})" in out and f"|subset:1/{n}" in out


@pytest.mark.parametrize(("edit", "message"), [
    (lambda p: p.update(claim_id=99), "part.json[0]: claim_id 99 has no reference"),
    (lambda p: p.update(claim_id="x"), "claim_id 'x' has no reference"),
])
def test_subset_errors_name_the_users_file(files, tmp_path, capsys, edit, message) -> None:
    items = rows(files["pred2024"])[:1]
    edit(items[0])
    part = tmp_path / "part.json"
    part.write_text(json.dumps(items))
    assert main(["score", str(part), str(files["gold"]), "--subset"]) == 2
    err = capsys.readouterr().err
    assert message in err and "averitec-subset-" not in err


def test_subset_profile_errors_name_the_users_file(files, tmp_path, capsys) -> None:
    items = rows(files["pred2024"])[:2]
    items[1]["pred_label"] = "True"
    part = tmp_path / "part.json"
    part.write_text(json.dumps(items))
    assert main(["score", str(part), str(files["gold"]), "--subset"]) == 2
    err = capsys.readouterr().err
    assert str(part) in err and "averitec-subset-" not in err and "'True'" in err


def test_a_result_without_a_signature_keeps_none() -> None:
    # a judge profile's --dry-run plan has no signature: --subset must not make one "|subset:…"
    from averitec_tools.scoring.profiles.base import ProfileResult
    from averitec_tools.scoring.subset import SubsetFiles, mark_result

    subset = SubsetFiles(predictions=Path("p"), references=Path("r"), n=2, m=5, original_ids={})
    plan = ProfileResult(profile="fever8", signature="", n_claims=2, summary={"n_claims": 2})
    marked = mark_result(plan, subset)
    assert marked.signature == "" and dict(marked.summary) == {"n_claims": 2, "subset": "2/5"}
