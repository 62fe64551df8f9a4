"""One decoding, every ablation row (issue 17 §4): stored candidates replayed equal separate runs.

Tiny fixtures, tiny random models (a 1-layer BERT NLI cross-encoder; a 2-layer Llama
generator), bm25s retrieval, on CPU.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from averitec_tools.cli.main import main
from tests._r2vc_helpers import save_tiny_nli_model, tiny_claims, tiny_passages

sys.path.insert(0, str(Path(__file__).parent))

ROWS = ("full", "no_calibration", "no_verifier_selection", "single_candidate", "nli_only", "gates_off")
SWITCH = {"full": "", "no_calibration": "ablation:\n  no_calibration: true\n",
          "no_verifier_selection": "ablation:\n  no_verifier_selection: true\n",
          "single_candidate": "ablation:\n  single_candidate: true\n", "nli_only": "ablation:\n  nli_only: true\n",
          "gates_off": "calibration:\n  abstain: false\n"}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main([*argv, "--no-progress", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    root = tmp_path_factory.mktemp("ablations")
    build_corpus(passages=tiny_passages(), out_dir=root / "corpus")
    (root / "claims.json").write_text(json.dumps(tiny_claims()))
    return {"root": root, "corpus": root / "corpus", "claims": root / "claims.json",
            "nli": save_tiny_nli_model(root / "nli")}


def _config(tiny: dict[str, Path], name: str, generator: str, extra: str = "", *, cal: str | None = None) -> Path:
    # Low thresholds so the random NLI model's verdicts vary; gates that reject some claims.
    text = (f"retrieval:\n  sparse: bm25s\n  dense_model: null\n  top_m: 4\n"
            f"verifier:\n  model: {tiny['nli']}\n  device: cpu\n  t_ent: 0.34\n  t_contr: 0.34\n  delta: 0.0\n"
            f"{generator}"
            f"calibration:\n  path: {tiny['root'] / ((cal or name) + '-cal.json')}\n  tau_cal: 0.5\n  tau_ver: 0.2\n"
            f"  fit_candidates: 3\n  heldout_fraction: 0.0\n  on_abstain: candidate\n")
    path = tiny["root"] / f"{name}.yaml"
    path.write_text(_merge(text, extra))
    return path


def _merge(base: str, extra: str) -> str:
    import yaml

    a, b = yaml.safe_load(base), yaml.safe_load(extra) or {}
    for k, v in b.items():
        a.setdefault(k, {}).update(v)
    return yaml.safe_dump(a)


def _records(path: Path, *, drop_questions: bool = False) -> list[dict]:
    recs = json.loads(path.read_text())
    if drop_questions:
        for r in recs:
            r["evidence"] = [{k: v for k, v in e.items() if k != "question"} for e in r["evidence"]]
    return recs


def _check_rows(tiny: dict[str, Path], tmp: Path, name: str, generator: str, capsys, *, rows, lm: bool) -> None:
    cfg = _config(tiny, name, generator)
    store = tmp / "store"
    common = ["--claims", str(tiny["claims"]), "--corpus", str(tiny["corpus"])]
    # r2vc-calibrate stores the calibration claims' candidates; the run then replays them
    fit = _run(["baseline", "r2vc-calibrate", "--config", str(cfg), *common, "--out",
                str(tiny["root"] / f"{name}-cal.json"), "--candidates", str(store)], capsys)
    assert fit["candidate_store"]["added"] == 4  # claim 3 retrieves nothing: stored as an empty pool
    first = _run(["baseline", "r2vc", "--config", str(cfg), *common, "--out", str(tmp / "full.json"),
                  "--candidates", str(store)], capsys)
    assert first["candidate_store"] == first["candidate_store"] | {"added": 0, "replayed": 4, "claims": 4}
    table = _run(["baseline", "r2vc", "ablations", "--config", str(cfg), *common, "--candidates", str(store),
                  "--out", str(tmp / "rows"), "--rows", ",".join(rows)], capsys)
    assert list(table["rows"]) == list(rows)
    for row in rows:
        separate = _config(tiny, f"{name}-{row}", generator, SWITCH[row], cal=name)
        out = tmp / f"sep-{row}.json"
        summary = _run(["baseline", "r2vc", "--config", str(separate), *common, "--out", str(out)], capsys)
        replayed = _records(tmp / "rows" / f"{row}.json", drop_questions=lm)
        assert replayed == _records(out, drop_questions=lm), row
        assert table["rows"][row]["decision"] == summary["decision"], row
        assert table["rows"][row]["accuracy"] == summary["decision"]["accuracy"]


@pytest.mark.slow
def test_nli_only_rows_equal_separate_runs(tiny, tmp_path, capsys) -> None:
    _check_rows(tiny, tmp_path, "nli", "generator:\n  k: 4\nablation:\n  nli_only: true\n", capsys,
                rows=ROWS, lm=False)


@pytest.mark.slow
def test_lm_rows_equal_separate_runs(tiny, tmp_path, capsys) -> None:
    """With an LM the rows equal separate runs too (questions: template vs LM); single_candidate cannot.

    The decision-stage rows (no verifier selection, gates off) do not depend on the
    generator and are covered above; here the rows whose candidates or π change.
    """
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    lm = tiny["root"] / "lm"
    tiny_lm(tok).save_pretrained(lm)
    tok.save_pretrained(lm)
    gen = f"generator:\n  model: {lm}\n  k: 3\n  max_new_tokens: 6\n  device: cpu\n"
    _check_rows(tiny, tmp_path, "lm", gen, capsys,
                rows=("full", "no_calibration", "nli_only"), lm=True)


def test_ablations_errors(tiny, tmp_path, capsys) -> None:
    import numpy as np

    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator

    cfg = _config(tiny, "err", "generator:\n  k: 4\nablation:\n  nli_only: true\n")
    Calibrator.fit(features=np.eye(7)[[0, 1, 1, 0]], targets=[0, 1, 1, 0]).save(tiny["root"] / "err-cal.json")
    args = ["baseline", "r2vc", "ablations", "--config", str(cfg), "--claims", str(tiny["claims"]),
            "--corpus", str(tiny["corpus"]), "--out", str(tmp_path / "rows")]
    for extra, message in (([], "--candidates DIR is required"),
                           (["--candidates", str(tmp_path / "none")], "no candidate store for this configuration"),
                           (["--candidates", str(tmp_path), "--rows", "full,no_calibraton"],
                            "did you mean: no_calibration")):
        code = main([*args, *extra])
        _, err = capsys.readouterr()
        assert code == 2 and message in err and "Traceback" not in err
    assert not (tmp_path / "rows").exists()


@pytest.mark.slow
def test_given_evidence_rows_equal_separate_runs(tiny, tmp_path, capsys) -> None:
    """`--evidence given` (VitaminC rows carry their evidence): the store is written and replayed the same way."""
    rows = [{"unique_id": f"v{i}", "claim": c, "evidence": e, "label": lab} for i, (c, e, lab) in enumerate([
        ("Zorbland won the zorb cup", "It is confirmed that Zorbland won the zorb cup in 2020.", "SUPPORTS"),
        ("Quuxia banned quux imports", "The claim that Quuxia banned quux imports is false.", "REFUTES"),
        ("Plimf is famous", "Plimf is a word about which little is written.", "NOT ENOUGH INFO"),
    ])]
    claims = tmp_path / "vitaminc.jsonl"
    claims.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cfg = _config(tiny, "given", "generator:\n  k: 4\nablation:\n  nli_only: true\n")
    common = ["--claims", str(claims), "--evidence", "given"]
    store = tmp_path / "store"
    _run(["baseline", "r2vc-calibrate", "--config", str(cfg), *common, "--out", str(tiny["root"] / "given-cal.json"),
          "--candidates", str(store)], capsys)
    first = _run(["baseline", "r2vc", "--config", str(cfg), *common, "--out", str(tmp_path / "full.jsonl"),
                  "--candidates", str(store)], capsys)
    assert first["candidate_store"]["replayed"] == 3
    table = _run(["baseline", "r2vc", "ablations", "--config", str(cfg), *common, "--candidates", str(store),
                  "--out", str(tmp_path / "rows"), "--rows", "full,no_calibration"], capsys)
    for row in ("full", "no_calibration"):
        separate = _config(tiny, f"given-{row}", "generator:\n  k: 4\nablation:\n  nli_only: true\n", SWITCH[row],
                           cal="given")
        out = tmp_path / f"sep-{row}.jsonl"
        summary = _run(["baseline", "r2vc", "--config", str(separate), *common, "--out", str(out)], capsys)
        assert (tmp_path / "rows" / f"{row}.jsonl").read_text() == out.read_text(), row
        assert table["rows"][row]["decision"] == summary["decision"], row
