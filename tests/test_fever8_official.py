"""fever8, leaderboard-exact: the organisers' prompt (downloaded from a local server and
verified by SHA-256), their judge call and reply parsing, threshold presets, FEVER-8 CSVs
recognised by header, ``split == gold`` references, and the two failure modes.

The prompt file served here is a stand-in written for these tests in the organisers'
format (a Python module whose string constants hold ``str.format`` templates); the real
file is never needed. Replies are written in the organisers' reply format (the JSON their
prompt asks for). Expected values come from hand-built strings and from an independent
restatement of the organisers' parsing (:func:`organisers_parse`), not from the code under test.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _judge_server import requests_sent, running
from _score_fixtures import GOLD, make_files

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.fever8_inputs import load_claims
from averitec_tools.leaderboard.profiles import get_profile
from averitec_tools.metrics import ev2r_official
from averitec_tools.metrics.ev2r import parse_judgement
from averitec_tools.metrics.ev2r_official import (
    FEVER8_PROMPT_SOURCE,
    cached_file,
    load_official_prompt,
)
from averitec_tools.metrics.signature import parse_signature

QA_TEMPLATE = ('Compare the evidence, fact by fact. Answer as {{"facts count predicted evidence": n, ...}}.\n'
               "Claim: {}\nReference evidence: {}\nPredicted evidence: {}\nOutput:\n")
Q_TEMPLATE = "Compare the questions.\nClaim: {}\nReference questions: {}\nPredicted questions: {}\nOutput:\n"
PROPERTIES = (
    '"""Stand-in for the organisers\' properties.py (test fixture)."""\nimport enum  # never executed\n\n'
    f"UNRELATED = 'x'\nATOMIC_REFERENCE_PROMPT_PREC_RECALL = {QA_TEMPLATE!r}\n"
    f"ATOMIC_QUESTION_REFERENCE_PROMPT_PREC_RECALL = {Q_TEMPLATE!r}\n"
).encode()
PROPERTIES_SHA256 = hashlib.sha256(PROPERTIES).hexdigest()

# What the organisers' scorer shows the judge for fixture claims 0 and 1 (built by hand):
# every pair "question TAB TAB NL answer TAB TAB NL NL", a Boolean answer with ". " + explanation.
GOLD_EVI_0 = "What is the moon made of?\t\t\nRock and dust.\t\t\n\nIs the moon cheese?\t\t\nNo. It is rock.\t\t\n\n"
PRED_EVI_0 = "What is the moon made of?\t\t\nRock.\t\t\n\nIs the moon cheese?\t\t\nNo\t\t\n\n"
GOLD_EVI_1 = "Do cats have wings?\t\t\nNo answer could be found.\t\t\n\n"


def organisers_reply(pred: Any, sup_pred: Any, ref: Any, sup_ref: Any, kind: str = "evidence", prose: str = "") -> str:
    """A reply in the format the organisers' prompt asks for (fact lists, checks, then counts)."""
    return prose + "{\n" + ",\n".join([
        f'    "facts in predicted {kind}": "1. The moon is rock. 2. The moon is not cheese."',
        f'    "fact check predicted {kind}": "1. Supported. 2. Supported."',
        f'    "facts count predicted {kind}": {json.dumps(pred)}',
        f'    "support predicted {kind}": {json.dumps(sup_pred)}',
        f'    "facts in reference {kind}": "1. The moon is rock and dust. 2. The moon is not cheese."',
        f'    "fact check reference {kind}": "1. Partly. 2. Supported."',
        f'    "facts count reference {kind}": {json.dumps(ref)}',
        f'    "support reference {kind}": {json.dumps(sup_ref)}',
    ]) + "\n}"


def organisers_parse(reply: str, kind: str) -> tuple[float, float] | None:
    """The organisers' reply handling restated: first {...} block (non-greedy, DOTALL), json.loads,
    support / count; any exception gives None (their code then scores 0)."""
    try:
        block = "{" + re.findall(r"\{(.*?)\}", reply, re.DOTALL)[0] + "}"
    except Exception:  # noqa: BLE001 - their query function swallows everything
        block = ""
    noun = "evidence" if kind == "qa" else "questions"
    try:
        r = json.loads(block)
        return (r[f"support predicted {noun}"] / r[f"facts count predicted {noun}"],
                r[f"support reference {noun}"] / r[f"facts count reference {noun}"])
    except Exception:  # noqa: BLE001
        return None


REPLIES = [
    organisers_reply(2, 2, 3, 2),
    organisers_reply(4, 1, 2, 2, prose="Here is my analysis.\nOutput: "),
    "```json\n" + organisers_reply(3, 0, 4, 1) + "\n```",
    organisers_reply(2, 1, 2, 1) + "\nand a second object {\"facts count predicted evidence\": 9}",
    organisers_reply(2.0, 1.5, 4, 3.0),
    organisers_reply(True, True, 2, True),  # Python divides booleans as integers
    organisers_reply("3", "2", "4", "1"),  # strings: their division raises
    organisers_reply(0, 0, 3, 3),  # zero predicted facts: precision raises, so recall is lost too
    organisers_reply(2, 1, 0, 0),
    organisers_reply(None, 1, 2, 1),
    organisers_reply(2, 3, 2, 5),  # more supported than counted: not clipped
    '{"facts in predicted evidence": "see {note} here", "facts count predicted evidence": 2}',  # a brace in a value
    '{"facts count predicted evidence": 2, "support predicted evidence": 1, "facts count reference evidence": 2',
    "I cannot judge this.",
    "",
    organisers_reply(2, 1, 2, 1, kind="questions"),  # keys of the other kind
]


@pytest.mark.parametrize("reply", REPLIES)
@pytest.mark.parametrize("kind", ["qa", "questions"])
def test_reply_parsing_is_the_organisers(reply: str, kind: str) -> None:
    expected = organisers_parse(reply, kind)
    got = parse_judgement(reply, kind)
    assert got.parsed == (expected is not None)
    assert (got.precision, got.recall) == (expected if expected is not None else (0.0, 0.0))


def test_non_finite_counts_are_unparseable_a_listed_departure() -> None:
    nan = organisers_reply(2, 1, float("nan"), 1)  # json.dumps writes NaN, which json.loads accepts
    assert math.isnan(organisers_parse(nan, "qa")[1])  # type: ignore[index]
    assert parse_judgement(nan, "qa").parsed is False
    huge = organisers_reply(2, 1, 2, "x").replace('"x"', "1e400")  # parsed as infinity
    assert organisers_parse(huge, "qa") == (0.5, math.inf)
    assert parse_judgement(huge, "qa").parsed is False


@pytest.fixture()
def prompt_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A real HTTP server process (python -m http.server) serving the stand-in properties.py."""
    root = tmp_path / "www"
    root.mkdir()
    (root / "properties.py").write_bytes(PROPERTIES)
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                             "--directory", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(re.search(r"port (\d+)", proc.stdout.readline())[1])  # type: ignore[index]
        yield f"http://127.0.0.1:{port}/properties.py", root
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def local_source(url: str, sha256: str = PROPERTIES_SHA256) -> ev2r_official.OfficialPromptSource:
    return dataclasses.replace(FEVER8_PROMPT_SOURCE, url=url, sha256=sha256)


def test_download_verify_cache(tmp_path: Path, prompt_server: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = prompt_server
    cache = tmp_path / "cache"
    prompt = load_official_prompt(cache_dir=cache, source=local_source(url))
    assert (prompt.name, prompt.sha256, prompt.style) == ("fever8-official@5bf344f", PROPERTIES_SHA256, "positional")
    assert prompt.render("qa", claim="C", reference="R {x}", prediction="P") == QA_TEMPLATE.format("C", "R {x}", "P")
    assert prompt.render("questions", claim="C", reference="R", prediction="P") == Q_TEMPLATE.format("C", "R", "P")
    assert cached_file(local_source(url), cache).read_bytes() == PROPERTIES
    assert "downloading the organisers' Ev2R prompt file" in capsys.readouterr().err
    # Cached: no network needed (the URL now points at a closed port).
    again = load_official_prompt(cache_dir=cache, source=local_source("http://127.0.0.1:9/properties.py"))
    assert again == prompt
    # A damaged cache file is reported and fetched again.
    cached_file(local_source(url), cache).write_bytes(b"tampered")
    assert load_official_prompt(cache_dir=cache, source=local_source(url)) == prompt
    assert "does not verify" in capsys.readouterr().err


def test_mismatch_is_one_line_and_exit_2(tmp_path: Path, prompt_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = prompt_server
    files = make_files(tmp_path)
    argv = ["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever8", "--dry-run", "--json",
            "--judge-cache", str(tmp_path / "cache"), "--judge-prompt", "official"]
    monkeypatch.setattr(ev2r_official, "FEVER8_PROMPT_SOURCE", local_source(url, sha256="0" * 64))
    assert main(argv) == 2
    notice, error = capsys.readouterr().err.splitlines()  # the download notice, then one error line
    assert notice.startswith("averitec: downloading the organisers' Ev2R prompt file")
    assert "is not the organisers' prompt file Raldir/FEVER-8-Shared-Task@5bf344f" in error
    assert not cached_file(local_source(url), tmp_path / "cache").exists()
    monkeypatch.setattr(ev2r_official, "FEVER8_PROMPT_SOURCE", local_source(url))
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["prompt"] == "fever8-official@5bf344f"
    # Downloads disabled and nothing cached: one line, exit 2.
    assert main([*argv[:-4], "--judge-cache", str(tmp_path / "empty"), "--judge-prompt", "official", "--no-download"]) == 2
    assert "not cached and downloads are disabled" in capsys.readouterr().err


def test_clone_of_the_repository(tmp_path: Path) -> None:
    source = local_source("http://127.0.0.1:9/unused")
    clone = tmp_path / "FEVER-8-Shared-Task"
    (clone / "evaluation").mkdir(parents=True)
    (clone / "evaluation" / "properties.py").write_bytes(PROPERTIES)  # the April 2025 layout
    prompt = load_official_prompt(f"official:{clone}", cache_dir=tmp_path / "c", source=source)
    assert prompt.sha256 == PROPERTIES_SHA256
    (clone / "properties.py").write_bytes(PROPERTIES + b"# edited\n")  # the root file wins, and must verify
    with pytest.raises(UserError, match=r"properties.py: SHA-256 .* is not the organisers' prompt file"):
        load_official_prompt(f"official:{clone}", cache_dir=tmp_path / "c2", source=source)
    assert load_official_prompt(f"official:{clone}/evaluation/properties.py", cache_dir=tmp_path / "c3",
                                source=source).sha256 == PROPERTIES_SHA256
    with pytest.raises(UserError, match="no properties.py or evaluation/properties.py here"):
        load_official_prompt(f"official:{tmp_path}", source=source, cache_dir=tmp_path / "c4")


def official_fixtures() -> dict[str, Any]:
    return {
        "rules": [
            {"match": [GOLD[0]["claim"], "Reference evidence"], "responses": [{"content": organisers_reply(2, 2, 3, 2)}]},
            {"match": [GOLD[0]["claim"], "Reference questions"],
             "responses": [{"content": organisers_reply(2, 2, 2, 1, kind="questions", prose="Output: ")}]},
            {"match": [GOLD[1]["claim"]], "responses": [{"status": 500}]},
            {"match": [GOLD[2]["claim"], "Reference evidence"],  # a dropped connection, then the answer
             "responses": [{"drop": True}, {"content": organisers_reply(1, 1, 2, 2)}]},
            {"match": ["Reference questions"], "responses": [{"content": organisers_reply(1, 1, 2, 2, kind="questions")}]},
        ],
        "default": {"content": organisers_reply(1, 1, 2, 2, kind="evidence")},
    }


def test_the_organisers_judge_call_failures_and_presets(tmp_path: Path, prompt_server: tuple[str, Path],
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = prompt_server
    monkeypatch.setattr(ev2r_official, "FEVER8_PROMPT_SOURCE", local_source(url))
    files = make_files(tmp_path)
    with running(official_fixtures(), tmp_path) as (judge_url, log):
        base = ["score", str(files["pred2024"]), str(files["gold"]), "--profile", "fever8", "--json", "--jobs", "1",
                "--judge-url", judge_url, "--judge-model", "llama3.3-70b", "--judge-prompt", "official",
                "--judge-cache", str(tmp_path / "cache"), "--judge-retries", "1", "--judge-backoff", "0.01",
                "--judge-concurrency", "1"]
        # Default: claim 1's requests fail after their retries; the run stops, naming them.
        assert main(base) == 2
        err = capsys.readouterr().err.splitlines()[-1]  # after the prompt download notice
        assert err.startswith("averitec score: error: the judge failed for 1 request(s): claim 1 (questions)")
        assert "HTTP 500 after 2 attempt(s)" in err and "--official-failure-mode" in err
        # The organisers' behaviour: failures score 0, counted in the summary and the signature.
        assert main([*base, "--official-failure-mode"]) == 0
        captured = capsys.readouterr()
        out = json.loads(captured.out)
        assert out["judge"]["retries"] == 1  # the dropped connection (claim 2), retried
        assert out["judge"]["failed_scored_zero"] == 2 and out["judge"]["unparseable"] == {
            "questions_answers": 0, "questions_only": 0}
        assert parse_signature(out["signature"])["failures"] == "zero(2)"
        assert "2 judge request(s) failed and score 0" in captured.err and "claim 1 (questions)" in captured.err
        assert "not the organisers'" not in captured.err
        sent = requests_sent(log)
    # The request body is the organisers' call and nothing else; the prompt is their template
    # filled with str.format(reference claim, reference evi, predicted evi).
    bodies = {e["request"]["messages"][0]["content"]: e["request"] for e in sent}
    qa_0 = QA_TEMPLATE.format(GOLD[0]["claim"], GOLD_EVI_0, PRED_EVI_0)
    q_0 = Q_TEMPLATE.format(GOLD[0]["claim"], "What is the moon made of? Is the moon cheese?",
                            "What is the moon made of? Is the moon cheese?")
    assert bodies[qa_0] == {"messages": [{"role": "user", "content": qa_0}], "model": "llama3.3-70b",
                            "temperature": 0, "max_tokens": 3000}
    assert q_0 in bodies
    assert QA_TEMPLATE.format(GOLD[1]["claim"], GOLD_EVI_1, "Do cats have wings?\t\t\nNo answer could be found.\t\t\n\n") in bodies
    # Hand-derived: Q+A recall 2/3, 0 (failed), 2/2; labels right for claims 0 and 2.
    assert out["ev2r"]["questions_answers"]["recall"] == pytest.approx((2 / 3 + 0 + 1) / 3)
    assert out["ev2r"]["questions_only"]["recall"] == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert out["averitec_score_ev2r"] == {"0.5": pytest.approx(2 / 3)}
    sig = parse_signature(out["signature"])
    assert sig["prompt"] == f"fever8-official@5bf344f+sha256.{PROPERTIES_SHA256[:12]}"
    assert (sig["thr"], sig["thr_preset"]) == ("0.5(>)", "leaderboard")
    # Presets re-score from the cache; an unknown one is one line with a suggestion.
    with running({"default": {"status": 500}}, tmp_path, "dead") as (dead_url, _):
        cached = [*base[:9], dead_url, *base[10:], "--official-failure-mode"]
        assert main([*cached, "--ev2r-preset", "evalai-2025-01-debug"]) == 0
        debug = json.loads(capsys.readouterr().out)
    assert parse_signature(debug["signature"])["thr"] == "0.46(>)" and debug["judge"]["sent"] == 0
    assert debug["threshold"]["source"].startswith("zhenyundeng/AVeriTeC_FEVER8")
    assert main([*cached, "--ev2r-preset", "leaderbord"]) == 2
    assert "did you mean" in capsys.readouterr().err.lower()


def write_csv(path: Path, rows: list[list[Any]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_csv_inputs_verbatim_and_only_gold_rows(tmp_path: Path) -> None:
    solution = write_csv(tmp_path / "solution", [
        ["id", "claim", "evi", "label", "split"],
        [0, GOLD[0]["claim"], GOLD_EVI_0, "Refuted", "gold"],
        [1, GOLD[1]["claim"], GOLD_EVI_1, "Refuted", "gold"],
        [7, "A claim the leaderboard does not score.", "Q?\t\t\nA.\t\t\n\n", "Supported", "other"],
    ])
    # Predictions as a user might have written them: no trailing separator; the judge sees them verbatim.
    predicted = "What is the moon made of?\t\t\nRock."
    submission = write_csv(tmp_path / "submission.txt", [
        ["id", "claim", "evi", "label", "split"],
        [0, GOLD[0]["claim"], predicted, "Refuted", "pred"],
        [1, GOLD[1]["claim"], "Q?\t\t\nA.\t\t\n\n", "Supported", "pred"],
        [7, "x", "Q?\t\t\nA.\t\t\n\n", "Supported", "pred"],
    ])
    claim_set = load_claims(predictions=submission, references=solution)
    assert claim_set.skipped_references == 1 and [c.id for c in claim_set.claims] == [0, 1]
    assert (claim_set.claims[0].gold_evi, claim_set.claims[0].pred_evi) == (GOLD_EVI_0, predicted)
    with running({"default": {"content": organisers_reply(1, 1, 2, 2)}}, tmp_path) as (url, _):
        r = get_profile("fever8").score(predictions=submission, references=solution, jobs=1, judge_url=url,
                                        judge_model="m", judge_cache=str(tmp_path / "cache"))
    assert r.n_claims == 2 and r.summary["reference_rows_skipped"] == 1
    assert any("split other than 'gold'" in w for w in r.warnings)
    assert r.summary["averitec_score_ev2r"] == {"0.5": 0.5}  # recall 1 each; claim 1's label is wrong
    only_other = write_csv(tmp_path / "other.csv", [["id", "claim", "evi", "label", "split"],
                                                   [0, "c", "Q?\t\t\nA.", "Refuted", "dev"]])
    with pytest.raises(UserError, match="no reference rows with split 'gold'"):
        load_claims(predictions=submission, references=only_other)


@pytest.mark.shared_data
def test_dev_references_equal_the_organisers_solution_csv(shared_data: Path) -> None:
    """Claim, evi and label of every dev claim as the organisers' solution_dev.csv holds them.

    The digest is SHA-256 of json.dumps([[id, claim, evi, label], ...]) over the 500 rows of
    leaderboard_submission/solution_dev.csv in Raldir/FEVER-8-Shared-Task (commit 5bf344f),
    computed from the public file.
    """
    base = shared_data / "averitec"
    claims = load_claims(predictions=base / "baseline_dev_predictions.json", references=base / "dev.json").claims
    rows = json.dumps([[c.id, c.claim, c.gold_evi, c.gold_label] for c in claims], ensure_ascii=False)
    assert hashlib.sha256(rows.encode("utf-8")).hexdigest() == \
        "bd9157ce73d4a90b429fd8f790b9491f76fbad009557151913cc3dbde820588c"
