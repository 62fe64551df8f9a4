"""The paper's benchmarks (issue 17 §3): given evidence, FEVER's wiki-pages corpus, the
calibration slice, and the paper's table columns — on fixtures in the upstream layouts."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from averitec_tools.cli.main import main
from tests._r2vc_helpers import save_tiny_nli_model

sys.path.insert(0, str(Path(__file__).parent))

from _r2vc_paper_fixture import (  # noqa: E402
    fever_claims,
    vitaminc_rows,
    write_jsonl,
    write_wiki_pages,
)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """FEVER wiki-pages + its store, FEVER and VitaminC claims, a tiny NLI model and an NLI-only config."""
    from averitec_tools.baselines.r2vc.corpus.fever_wiki import build_corpus_from_fever_wiki

    root = tmp_path_factory.mktemp("r2vc-bench")
    wiki = write_wiki_pages(root)
    store = root / "fever-store"
    build_corpus_from_fever_wiki(path=wiki, out_dir=store)
    nli = save_tiny_nli_model(root / "nli")
    cfg = root / "nli-only.yaml"
    cfg.write_text(f"retrieval:\n  sparse: bm25s\n  dense_model: null\n  top_m: 3\nverifier:\n  model: {nli}\n"
                   "  device: cpu\ngenerator:\n  k: 2\nablation:\n  nli_only: true\n  no_calibration: true\n"
                   "calibration:\n  tau_cal: 0.0\n  tau_ver: -1.0\n")
    return {"root": root, "wiki": wiki, "store": store, "config": cfg,
            "fever": write_jsonl(root / "paper_dev.jsonl", fever_claims()),
            "vitaminc": write_jsonl(root / "vitaminc_dev.jsonl", vitaminc_rows(2))}


# ----------------------------------------------------------------------------- FEVER wiki-pages corpus


def test_fever_wiki_pages_become_sentence_units_with_page_line_ids(env, tmp_path, capsys) -> None:
    from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore

    out = tmp_path / "store"
    code, stdout, err = run(["index", "corpus", "--fever-wiki", str(env["wiki"]), "--out", str(out), "--json"], capsys)
    assert code == 0, err
    info = json.loads(stdout)
    assert info["num_paragraphs"] == 6 and info["doc_id"] == "<page>#<line>"
    assert info["fever_wiki"] == {"files": 2, "pages": 3, "sentences": 6, "empty_sentences": 1,
                                  "short_sentences": 0, "untitled_records": 1}
    store = ParagraphStore.open(out)
    q = store.get("Quuxia_-LRB-country-RRB-#0")
    assert (q.title, q.text) == ("Quuxia (country)", "Quuxia (a country) trades quux .")
    assert q.url == "https://en.wikipedia.org/wiki/Quuxia_(country)"
    assert "Zorbland#2" not in store and store.get("Zorbland#3").text == "The zorb cup is held every year ."
    # the minimum-length filter: "Zorbland is a small country ." has 29 characters
    code, stdout, _ = run(["index", "corpus", "--fever-wiki", str(env["wiki"]), "--out", str(tmp_path / "s30"),
                           "--min-chars", "30", "--json"], capsys)
    assert code == 0 and json.loads(stdout)["fever_wiki"]["short_sentences"] == 1
    assert json.loads(stdout)["num_paragraphs"] == 5


@pytest.mark.parametrize(("content", "message"), [
    ('{"id": "A", "lines": 3}\n', "wiki-001.jsonl:1: wiki-pages 'id' and 'lines' must be strings"),
    ('{"id": "A"}\n', "wiki-001.jsonl:1: expected a FEVER wiki-pages object with 'id' and 'lines'"),
    ('{"id": "A", "lines": "0\\tx"\n', "wiki-001.jsonl:1:"),
])
def test_bad_wiki_pages_exit_2_and_leave_nothing(tmp_path, capsys, content, message) -> None:
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "wiki-001.jsonl").write_text(content)
    code, _, err = run(["index", "corpus", "--fever-wiki", str(tmp_path / "wiki"), "--out", str(tmp_path / "s")], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err
    assert not (tmp_path / "s").exists()


# ----------------------------------------------------------------------------- --evidence given


def _r2vc(env, claims: Path, out: Path, *extra: str) -> list[str]:
    return ["baseline", "r2vc", "--config", str(env["config"]), "--claims", str(claims), "--out", str(out),
            "--no-progress", *extra]


def test_tals_vitaminc_rows_run_with_given_evidence(env, tmp_path, capsys) -> None:
    out = tmp_path / "pred.jsonl"
    code, stdout, err = run([*_r2vc(env, env["vitaminc"], out, "--evidence", "given", "--json")], capsys)
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["evidence"] == "given" and summary["format"] == "ternary"
    assert summary["components"]["retrieval"]["retriever"].startswith("none: given evidence (oracle-document")
    assert summary["fallbacks"]["questions_not_written"] == 4
    preds = [json.loads(x) for x in out.read_text().splitlines()]
    rows = vitaminc_rows(2)
    assert [p["id"] for p in preds] == [r["unique_id"] for r in rows]
    # contrastive rows share a claim text but each is verified on its own evidence
    assert rows[0]["claim"] == rows[1]["claim"]
    assert [[c["doc_id"] for c in p["citations"]] for p in preds] == [[r["unique_id"]] for r in rows]
    assert all(p["predicted_evidence"] == [[r["page"], 0]] for p, r in zip(preds, rows, strict=True))
    manifest = json.loads(Path(summary["manifest"]).read_text())
    assert manifest["data"]["claims"]["sha256"] == hashlib.sha256(env["vitaminc"].read_bytes()).hexdigest()
    assert manifest["git"]["commit"] and manifest["versions"]["torch"] and manifest["seeds"] == {
        "generator": 0, "calibrator_heldout": 0}
    # without --evidence given the rows are still VitaminC claims (no "unknown averitec label 'SUPPORTS'")
    code, _, err = run(_r2vc(env, env["vitaminc"], tmp_path / "p2.jsonl"), capsys)
    assert code == 2 and "no corpus given" in err


def test_fever_rows_take_their_sentences_from_the_wiki_store_and_score_exactly(env, tmp_path, capsys) -> None:
    out = tmp_path / "pred.jsonl"
    code, _, err = run(_r2vc(env, env["fever"], out, "--evidence", "given", "--corpus", str(env["store"])), capsys)
    assert code == 0, err
    preds = [json.loads(x) for x in out.read_text().splitlines()]
    # every distinct gold (page, line) over all evidence sets, as FEVER evidence ids; NEI has none
    assert sorted(map(tuple, preds[0]["predicted_evidence"])) == [("Zorbland", 1), ("Zorbland", 3)]
    assert preds[1]["predicted_evidence"] == [["Quuxia_-LRB-country-RRB-", 1]]
    assert (preds[2]["predicted_evidence"], preds[2]["predicted_label"]) == ([], "NOT ENOUGH INFO")
    code, stdout, err = run(["score", str(out), str(env["fever"]), "--profile", "fever", "--json"], capsys)
    assert code == 0, err
    score = json.loads(stdout)
    # hand-derived: the predicted sentences are exactly the gold ones
    assert (score["precision"], score["recall"]) == (1.0, 1.0)
    assert score["strict_score"] == score["label_accuracy"]
    # without the store the sentences are unknown: one clear line
    code, _, err = run(_r2vc(env, env["fever"], tmp_path / "p2.jsonl", "--evidence", "given"), capsys)
    assert code == 2 and err.count("\n") == 1
    assert "claim 101: FEVER evidence Zorbland#1 carries no sentence text (pass --corpus" in err


def test_retrieval_over_the_fever_store_predicts_fever_evidence(env, tmp_path, capsys) -> None:
    out = tmp_path / "pred.jsonl"
    code, _, err = run(_r2vc(env, env["fever"], out, "--corpus", str(env["store"])), capsys)
    assert code == 0, err
    pages = {page for line in out.read_text().splitlines() for page, _ in json.loads(line)["predicted_evidence"]}
    assert pages and pages <= {"Zorbland", "Quuxia_-LRB-country-RRB-", "Plimf"}
    code, stdout, err = run(["score", str(out), str(env["fever"]), "--profile", "fever", "--json"], capsys)
    assert code == 0 and 0.0 <= json.loads(stdout)["strict_score"] <= 1.0, err


def test_averitec_gold_qa_and_standardised_rows_as_given_evidence(tmp_path) -> None:
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.baselines.r2vc.io.given_evidence import with_given_evidence
    from averitec_tools.errors import UserError

    claims = [{"claim": "C.", "label": "Refuted", "questions": [{"question": "Q?", "answers": [
        {"answer": "No", "answer_type": "Boolean", "boolean_explanation": "It did not.", "source_url": "https://a.org/x"},
        {"answer": "No answer could be found.", "answer_type": "Unanswerable"}]}]}]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(claims))
    [claim] = with_given_evidence(path=str(path), claims=read_claims(str(path)))
    assert [(p.text, p.url, p.title) for p in claim.evidence or ()] == [("No. It did not.", "https://a.org/x", "a.org")]
    rows = tmp_path / "std.jsonl"
    write_jsonl(rows, [{"id": 1, "claim": "X.", "label": "SUPPORTS",
                        "evidence_text": "[Soul Food (film), line 0] Soul Food is a film. [B, line 2] Bee."}])
    [std] = with_given_evidence(path=str(rows), claims=read_claims(str(rows)))
    assert [(p.doc_id, p.text) for p in std.evidence or ()] == [("Soul_Food_-LRB-film-RRB-#0", "Soul Food is a film."),
                                                                 ("B#2", "Bee.")]
    bare = write_jsonl(tmp_path / "bare.jsonl", [{"id": 7, "claim": "X.", "label": "SUPPORTS"}])
    with pytest.raises(UserError, match=r"bare.jsonl:1: claim 7 carries no evidence"):
        with_given_evidence(path=str(bare), claims=read_claims(str(bare)))


# ----------------------------------------------------------------------------- calibration slice


def test_slice_is_drawn_in_whole_groups_disjoint_from_excluded_claims(tmp_path, capsys) -> None:
    rows = vitaminc_rows(6)
    data = write_jsonl(tmp_path / "train.jsonl", rows)
    sft = write_jsonl(tmp_path / "sft.jsonl", [{"claim": rows[0]["claim"]}])  # case0 is training data
    out, rest = tmp_path / "slice.jsonl", tmp_path / "rest.jsonl"
    code, stdout, err = run(["baseline", "r2vc", "slice", "--data", str(data), "--n", "6", "--out", str(out),
                             "--rest", str(rest), "--exclude-claims", str(sft), "--json"], capsys)
    assert code == 0, err
    info = json.loads(stdout)
    assert (info["slice_rows"], info["slice_groups"], info["excluded_groups"], info["group_key"]) == (6, 3, 1, "case_id")
    got = [json.loads(x) for x in out.read_text().splitlines()]
    left = [json.loads(x) for x in rest.read_text().splitlines()]
    assert len(got) + len(left) == len(rows) and not {r["case_id"] for r in got} & {r["case_id"] for r in left}
    assert "case0" not in {r["case_id"] for r in got} and got[0] == next(r for r in rows if r == got[0])
    # seeded: the same draw again
    run(["baseline", "r2vc", "slice", "--data", str(data), "--n", "6", "--out", str(tmp_path / "again.jsonl"),
         "--exclude-claims", str(sft)], capsys)
    assert (tmp_path / "again.jsonl").read_text() == out.read_text()
    for n, message in ((5, "whole groups make 4 rows, not the 5 asked for"),
                       (11, "only 10 rows (5 groups) are eligible for a slice of 11")):
        code, _, err = run(["baseline", "r2vc", "slice", "--data", str(data), "--n", str(n), "--out",
                            str(tmp_path / "x.jsonl"), "--exclude-claims", str(sft)], capsys)
        assert code == 2 and message in err and not (tmp_path / "x.jsonl").exists()


# ----------------------------------------------------------------------------- the paper's table columns


def test_table_columns_match_scikit_learn_and_a_hand_computed_ece(tmp_path, capsys) -> None:
    from sklearn.metrics import accuracy_score, brier_score_loss, f1_score

    gold = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "SUPPORTS", "REFUTES"]
    pred = ["SUPPORTS", "SUPPORTS", "NOT ENOUGH INFO", "SUPPORTS", "NOT ENOUGH INFO"]
    conf = [0.9, 0.8, 0.5, 0.95, 0.2]
    write_jsonl(tmp_path / "gold.jsonl", [{"unique_id": f"u{i}", "claim": "c", "label": g} for i, g in enumerate(gold)])
    write_jsonl(tmp_path / "p.jsonl", [{"id": f"u{i}", "predicted_label": p, "confidence": c,
                                        "r2vc": {"abstained": p == "NOT ENOUGH INFO"}}
                                       for i, (p, c) in enumerate(zip(pred, conf, strict=True))])
    code, stdout, err = run(["baseline", "r2vc", "table", "--gold", str(tmp_path / "gold.jsonl"), "--predictions",
                             str(tmp_path / "p.jsonl"), "--name", "toy", "--dataset", "VitaminC", "--json"], capsys)
    assert code == 0, err
    row = json.loads(stdout)["rows"][0]
    correct = [g == p for g, p in zip(gold, pred, strict=True)]
    assert row["accuracy"] == pytest.approx(accuracy_score(gold, pred), abs=1e-12)
    assert row["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro", zero_division=0), abs=1e-12)
    assert row["brier"] == pytest.approx(brier_score_loss(correct, conf), abs=1e-12)
    # 15 equal-width bins: 0.2→bin 3 (wrong), 0.5→7 (right), 0.8→12 (wrong), 0.9→13, 0.95→14 (right)
    assert row["ece"] == pytest.approx((0.2 + 0.5 + 0.8 + 0.1 + 0.05) / 5, abs=1e-12)
    assert row["paper_cells"] == {"accuracy": "60.00", "macro_f1": "48.89", "brier": f"{row['brier']:.3f}",
                                  "ece": f"{row['ece']:.4f}"}
    assert row["n_abstained"] == 2
    write_jsonl(tmp_path / "short.jsonl", [{"id": "u0", "predicted_label": "SUPPORTS", "confidence": 0.5}])
    code, _, err = run(["baseline", "r2vc", "table", "--gold", str(tmp_path / "gold.jsonl"), "--predictions",
                        str(tmp_path / "short.jsonl")], capsys)
    assert code == 2 and "no prediction for 4 gold claims (first: 'u1')" in err
