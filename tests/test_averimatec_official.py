"""averimatec --judge-prompt official: the five files fetched from a local server (python -m
http.server) or read from a clone, each verified by SHA-256, cached, never executed.

The files are the stand-ins of tests/_averimatec_quirks.py (the organisers' names and code
structure, text written for the tests); the SHA-256 table is pointed at them. The published
hashes in the package are checked against the values the issue and docs state.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _averimatec_quirks import BETWEEN, INSTRUCTION, INTRO, TEMPLATES, write_case, write_clone

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.metrics import averimatec_official
from averitec_tools.metrics.averimatec_official import (
    AVERIMATEC_SOURCES,
    image_strings,
    load_official_prompts,
)
from averitec_tools.metrics.averimatec_prompts import AVerImaTeCPrompts
from averitec_tools.metrics.ev2r_official import OfficialPromptSource, cached_file

PUBLISHED = {  # issue 40 and docs/averimatec.md: SHA-256 of each file at f6f361d
    "templates/evid_evaluation_text_seperate.txt": "57f9e910f9801d67658b67df7722112d8b5b7cc4b27a96c96d538a467ad810d9",
    "templates/ques_evaluation_text.txt": "b5f72fe9f876c74e54cbad76b8d972801deb2f83978936128cabc2bb81f19228",
    "templates/justi_evaluation_text.txt": "43a30277a87004b33c7218035d0af429154f5284e514dc2b277fb0f70be93af6",
    "templates/qa_to_evid_demos.txt": "3915206b77be85e81cacd203058b070be9257f3538065f8c187b9642ab9a9be5",
    "prepare_submission/ref_eval.py": "4d05128a735c6b2dce41c85c0821bca3b14fe019e3e573b220e3a6b2ee471e64",
}


def test_the_pinned_table() -> None:
    assert {s.paths[0]: s.sha256 for s in AVERIMATEC_SOURCES.values()} == PUBLISHED
    for s in AVERIMATEC_SOURCES.values():
        assert s.url == f"https://raw.githubusercontent.com/abril4416/AVerImaTec_Shared_Task/{s.commit}/{s.paths[0]}"
        assert s.commit.startswith("f6f361d") and len(s.commit) == 40


@pytest.fixture()
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[dict[str, OfficialPromptSource], Path]]:
    """The stand-ins served by a real HTTP server process; the table points at it."""
    root = tmp_path / "www"
    hashes = write_clone(root)
    proc = subprocess.Popen([sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1",
                             "--directory", str(root)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(re.search(r"port (\d+)", proc.stdout.readline())[1])  # type: ignore[index]
        table = {role: dataclasses.replace(s, url=f"http://127.0.0.1:{port}/{s.paths[0]}", sha256=hashes[s.paths[0]])
                 for role, s in AVERIMATEC_SOURCES.items()}
        monkeypatch.setattr(averimatec_official, "AVERIMATEC_SOURCES", table)
        yield table, root
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_download_verify_cache(tmp_path: Path, served: tuple[dict, Path], capsys: pytest.CaptureFixture[str]) -> None:
    table, root = served
    prompts = load_official_prompts(cache_dir=tmp_path / "cache")
    assert prompts.name == "averimatec-official@f6f361d" and prompts.is_official
    assert capsys.readouterr().err.count("downloading the organisers' AVerImaTeC prompt file") == 5
    # The templates as the organisers read them: universal newlines; the demonstrations' lines
    # (newlines kept) joined by "\n", so they come out double-spaced.
    assert prompts.evidence == "STAND-IN evidence template.\nMatch the items.\n"
    assert prompts.qa_demos == "STAND-IN demos, line one\n\nline two\n\n[QUES]: Demo?\n\n[ANS]: Demo.\n\n[STAT]: A demo."
    assert (prompts.image_intro, prompts.image_between, prompts.image_instruction) == (INTRO, BETWEEN, INSTRUCTION)
    for s in table.values():
        assert cached_file(s, tmp_path / "cache").read_bytes() == (root / s.paths[0]).read_bytes()
    for s in table.values():  # cached: the server is not asked again
        (root / s.paths[0]).unlink()
    assert load_official_prompts(cache_dir=tmp_path / "cache") == prompts


def test_a_wrong_file_is_one_line_and_exit_2(tmp_path: Path, served: tuple[dict, Path], monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    table, _ = served
    sub, val = write_case(tmp_path / "data")
    argv = ["score", str(sub), str(val), "--profile", "averimatec", "--dry-run", "--json", "--judge-prompt", "official",
            "--judge-cache", str(tmp_path / "cache")]
    bad = dict(table)
    bad["questions"] = dataclasses.replace(table["questions"], sha256="0" * 64)
    monkeypatch.setattr(averimatec_official, "AVERIMATEC_SOURCES", bad)
    assert main(argv) == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert "ques_evaluation_text.txt: SHA-256" in error and "is not the organisers' prompt file" in error
    assert "abril4416/AVerImaTec_Shared_Task@f6f361d:templates/ques_evaluation_text.txt" in error
    assert not cached_file(bad["questions"], tmp_path / "cache").exists()
    monkeypatch.setattr(averimatec_official, "AVERIMATEC_SOURCES", table)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["prompt"] == "averimatec-official@f6f361d"
    assert main([*argv[:-2], "--judge-cache", str(tmp_path / "empty"), "--no-download"]) == 2
    assert "not cached and downloads are disabled" in capsys.readouterr().err


def test_clone_and_file_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "AVerImaTec_Shared_Task"
    hashes = write_clone(clone)
    table = {role: dataclasses.replace(s, url="http://127.0.0.1:9/unused", sha256=hashes[s.paths[0]])
             for role, s in AVERIMATEC_SOURCES.items()}
    monkeypatch.setattr(averimatec_official, "AVERIMATEC_SOURCES", table)
    prompts = load_official_prompts(f"official:{clone}", cache_dir=tmp_path / "c")
    assert prompts.justification == TEMPLATES["templates/justi_evaluation_text.txt"]
    (clone / "templates" / "justi_evaluation_text.txt").write_text("edited\n")
    with pytest.raises(UserError, match=r"justi_evaluation_text.txt: SHA-256 .* is not the organisers' prompt file"):
        load_official_prompts(f"official:{clone}", cache_dir=tmp_path / "c2")
    with pytest.raises(UserError, match="no templates/evid_evaluation_text_seperate.txt here"):
        load_official_prompts(f"official:{tmp_path}", cache_dir=tmp_path / "c3")
    # --judge-prompt FILE: this package's format; every section needed
    mine = tmp_path / "mine.txt"
    mine.write_text("[qa_to_evidence]\nq\n[evidence]\ne\n[questions]\nx\n[justification]\nj\n[image_intro]\ni\n"
                    "[image_between]\nb\n[image_instruction]\nr\n")
    assert AVerImaTeCPrompts.load(mine).evidence == "e" and not AVerImaTeCPrompts.load(mine).is_official
    mine.write_text("[qa_to_evidence]\nq\n")
    with pytest.raises(UserError, match=r"mine.txt: .* missing or empty: evidence, questions"):
        AVerImaTeCPrompts.load(mine)


def test_ref_eval_is_read_not_run() -> None:
    code = b"raise SystemExit('never executed')\n" + (
        b"def compute_image_scores(m):\n    prompt = 'A.\\n'\n    prompt += '[IMG_SET_1]:'\n"
        b"    x = {'type': 'text', 'text': '\\n[IMG_SET_2]:'}\n    y = {'type': 'text', 'text': '\\nInt:'}\n")
    assert image_strings(code, where="ref_eval.py").instruction == "\nInt:"
    with pytest.raises(UserError, match="no function compute_image_scores"):
        image_strings(b"x = 1\n", where="ref_eval.py")
    with pytest.raises(UserError, match="not a Python file"):
        image_strings(b"def (:\n", where="ref_eval.py")
