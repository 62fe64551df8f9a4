"""Defects found with other people's files (issue 11, part 1); each test failed before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _score_fixtures import ROOT, make_files, write_jsonl

from averitec_tools.cli.main import main
from averitec_tools.jsonio import iter_records, sniff_format
from averitec_tools.leaderboard.profiles import get_profile


@pytest.mark.parametrize("size", [4 * 1024, 64 * 1024, 10 * 1024 * 1024], ids=["4KiB", "64KiB", "10MB"])
def test_jsonl_with_a_long_first_line_is_jsonl(tmp_path: Path, size: int) -> None:
    first = {"id": 0, "label": "Supported", "evidence": ["x" * size]}
    path = write_jsonl(tmp_path / "long.jsonl", [first, {"id": 1, "label": "Refuted", "evidence": ["y"]}])
    assert len(path.read_bytes().split(b"\n", 1)[0]) > size
    assert sniff_format(path) == "jsonl"
    items = [loc.value for loc in iter_records(path)]
    assert [i["id"] for i in items] == [0, 1] and len(items[0]["evidence"][0]) == size


def test_long_first_answer_scores(tmp_path: Path) -> None:
    # A long first record in an EvalAI prediction file is scored, not rejected with "Extra data".
    gold = write_jsonl(tmp_path / "g.jsonl", [{"id": 0, "label": "Supported", "evidence": ["Who? Bob."]},
                                               {"id": 1, "label": "Refuted", "evidence": ["Why? No."]}])
    pred = write_jsonl(tmp_path / "p.jsonl", [{"id": 0, "label": "Supported", "evidence": ["Who? " + "Bob " * 2000]},
                                               {"id": 1, "label": "Refuted", "evidence": ["Why? No."]}])
    result = get_profile("evalai").score(predictions=pred, references=gold, jobs=1)
    assert result.n_claims == 2
    # By hand (METEOR, alpha 0.9, penalty 0.5 * frag^3; checked against real NLTK 3.9.1):
    # claim 0: 2,002 hypothesis tokens (Who ? Bob x 2000) vs 4 reference tokens (Who ? Bob .);
    # 3 matches, P = 3/2002, R = 3/4. NLTK aligns "Bob" with the last "Bob", so 2 chunks.
    p, r = 3 / 2002, 3 / 4
    long_answer = p * r / (0.9 * p + 0.1 * r) * (1 - 0.5 * (2 / 3) ** 3)
    # claim 1: identical 4 tokens, one chunk: 1 - 0.5 * (1/4)^3.
    same = 1 - 0.5 * (1 / 4) ** 3
    assert [c.values["evidence_score"] for c in result.per_claim] == pytest.approx([long_answer, same], abs=1e-12)
    # Claim 0's evidence (0.0125) is below every lambda: only claim 1 counts.
    assert result.summary["label_accuracy"] == {"0.2": 0.5, "0.25": 0.5, "0.3": 0.5}
    assert result.summary["evidence_meteor"] == pytest.approx({"0.2": same / 2, "0.25": same / 2, "0.3": same / 2}, abs=1e-12)


def test_pretty_printed_json_object_is_still_json(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{\n  "a": 1\n}\n', encoding="utf-8")
    assert sniff_format(path) == "json"


def test_evalai_empty_evidence_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    lines = files["pred_evalai"].read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["evidence"] = []
    bad = tmp_path / "empty.jsonl"
    bad.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    assert main(["score", str(bad), str(files["gold_evalai"]), "--profile", "evalai", "--json"]) == 2
    err = capsys.readouterr().err
    assert "skips such a claim and scores it 0" in err and "divides" not in err
    assert err.count("\n") == 1


def test_answers_only_is_the_public_definition(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    r = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    # Claim 0: predicted answers ["Rock.", "No"] vs raw gold answers ["Rock and dust.", "No"]
    # (no Boolean explanation). "No"/"No": m = 1, one chunk -> 0.5. "Rock."/"Rock and dust.":
    # m = 2 of 2 hypothesis and 4 reference tokens, two chunks -> 0.5 * PR / (0.9P + 0.1R).
    expected = (0.5 + 0.5 * 0.5 / (0.9 + 0.1 * 0.5)) / 2
    assert r.per_claim[0].values["answers_only"] == pytest.approx(expected, abs=1e-12)
    # Claim 1's only gold question has no answer: no gold answers, score 0.
    assert r.per_claim[1].values["answers_only"] == 0.0
    # Our earlier definition stays, under a name that says whose it is.
    assert r.per_claim[1].values["answers_only_averitec_tools"] > 0.9


def test_reference_refuses_any_other_nltk(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # the installed NLTK (3.10.x), not 3.9.1
    import nltk

    if nltk.__version__ in ("3.8.1", "3.9.1"):
        pytest.skip("the installed NLTK is itself a reference version")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "reference_scorer.py"), str(files["pred2024"]), str(files["gold"])],
        capture_output=True, text=True, env=env,
    )
    assert proc.returncode == 3 and proc.stdout == ""
    assert "runs only under NLTK 3.8.1 or 3.9.1" in proc.stderr
