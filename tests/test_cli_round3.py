"""Issue 39, the smaller command-line defects, each reproduced first: ``convert`` left a hidden
temporary file on SIGTERM, crashed on bare-CR line ends and symlink loops, and wrote
duplicate claim ids to EvalAI lines; ``meta-eval --lite -5`` ran for 9 minutes (every numeric
option is now checked when parsed); ``audit`` took a misspelled ``claim_id``; ``--help``
called ``baseline`` R2VC only; ``meta-eval --json`` drew a progress bar; ``lite-check``'s
default size was refused on the bundled example; ``doctor``, the plans and ``data download
--dry-run`` printed lines of 400-800 columns."""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

import pytest

from averitec_tools.cli.main import build_parser, main
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS, variant


def _one_line(capsys: pytest.CaptureFixture[str], code: int, *, expect: int = 2) -> str:
    captured = capsys.readouterr()
    assert code == expect, captured
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_convert_removes_its_temporary_file_on_sigterm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """SIGTERM arrives while the output is half written (sent from inside the writer, so the
    moment is fixed): the command ends 128 + 15 with one line, no output and no temp file."""
    import json as json_module

    real_dump = json_module.dump

    def dump_then_terminated(obj, fh, **kwargs):  # type: ignore[no-untyped-def]
        fh.write("[\n")
        os.kill(os.getpid(), signal.SIGTERM)
        return real_dump(obj, fh, **kwargs)

    monkeypatch.setattr(json_module, "dump", dump_then_terminated)
    src = tmp_path / "p.json"
    src.write_bytes(DEMO_PREDS.read_bytes())
    line = _one_line(capsys, main(["convert", str(src), "--to", "2023", "--out", str(tmp_path / "out.json")]),
                     expect=128 + signal.SIGTERM)
    assert "terminated by signal 15" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]  # no out.json, no .out.json.*.tmp
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL or callable(signal.getsignal(signal.SIGTERM))


@pytest.mark.parametrize("kind", ["bare-cr", "symlink-loop", "duplicate-evalai", "duplicate-2024"])
def test_convert_bad_inputs_are_one_line(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = json.loads(DEMO_PREDS.read_text())[:3]
    src = tmp_path / "in.jsonl"
    if kind == "bare-cr":
        src.write_bytes("\r".join(json.dumps(p) for p in preds).encode() + b"\r")
    elif kind == "symlink-loop":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        src = tmp_path / "a"
    elif kind == "duplicate-evalai":
        row = {"id": 0, "label": "Refuted", "evidence": ["q a"]}
        src.write_text(json.dumps(row) + "\n" + json.dumps({**row, "evidence": ["q b"]}) + "\n")
    else:
        src = tmp_path / "in.json"
        src.write_text(json.dumps([*preds, preds[0]]))
    line = _one_line(capsys, main(["convert", str(src), "--to", "evalai", "--out", str(tmp_path / "out.jsonl")]))
    expected = {"bare-cr": "invalid JSON", "symlink-loop": "a loop of symbolic links", "duplicate-evalai": "duplicate claim id",
                "duplicate-2024": "duplicate claim id"}[kind]
    assert expected in line and not (tmp_path / "out.jsonl").exists(), line


def _numeric_actions(parser: argparse.ArgumentParser, path: str = "averitec") -> list[tuple[str, str]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _numeric_actions(sub, f"{path} {name}")
        elif action.type in (int, float):
            out.append((path, "/".join(action.option_strings)))
    return out


def test_every_numeric_option_is_checked_when_parsed(capsys: pytest.CaptureFixture[str]) -> None:
    assert _numeric_actions(build_parser()) == []  # no bare int/float: each option says its range
    for argv in (["meta-eval", "--lite", "-5"], ["meta-eval", "--resamples", "0"], ["lite-check", "g.json", "--submission", "s",
                 "--confidence-level", "1.5"], ["score", "p", "g", "--jobs", "0"], ["compare", "a", "b", "g", "--alpha", "nan"],
                 ["leaderboard", "serve", "--port", "70000"], ["score", "p", "g", "--judge-retries", "-1"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and "expected a" in err and "Traceback" not in err, (argv, err)


def test_audit_refuses_a_misspelled_claim_id(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    preds = json.loads(DEMO_PREDS.read_text())[:3]
    preds[1]["claim_idd"] = preds[1].pop("claim_id")
    (tmp_path / "p.json").write_text(json.dumps(preds))
    line = _one_line(capsys, main(["audit", str(tmp_path / "p.json"), "--references", str(DEMO_GOLD), "--json"]))
    assert "p.json[1]: missing key 'claim_id'" in line and "claim_idd" in line


def test_help_names_both_baselines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert "R2VC or the AVeriTeC" in " ".join(top.split())
    with pytest.raises(SystemExit):
        main(["baseline", "--help"])
    assert "BLOOM/BERT/BART" in capsys.readouterr().out


def test_lite_check_default_size_fits_the_bundled_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subs = []
    for k in range(3):
        (tmp_path / f"s{k}.json").write_bytes(variant(k, n_wrong=5 * k))
        subs += ["--submission", str(tmp_path / f"s{k}.json")]
    assert main(["lite-check", str(DEMO_GOLD), *subs, "--resamples", "20", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["size"], report["of"]) == (50, 50)


@pytest.mark.parametrize("argv", [["doctor", "--no-hub"], ["baseline", "averitec", "reproduce", "--plan", "--gpu", "h200"],
                                  ["data", "download", "averitec", "--split", "dev", "--dry-run"]])
@pytest.mark.parametrize("columns", [60, 100])
def test_long_reports_fit_the_terminal(argv: list[str], columns: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    if argv[0] == "data":
        argv = [*argv, "--out", str(tmp_path / "data")]
    main(argv)
    out = capsys.readouterr().out
    long = [ln for ln in out.splitlines() if len(ln) > columns and len(ln.split()) > 1]  # one long word (a path) stays whole
    assert out.strip() and long == [], "\n".join(long)
    main([*argv, "--json"])
    assert json.loads(capsys.readouterr().out)  # the full record


def test_meta_eval_json_silences_progress_bars(monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.cli._command import silence_progress_bars

    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    silence_progress_bars()
    assert os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    from huggingface_hub import utils

    assert utils.are_progress_bars_disabled()
    utils.enable_progress_bars()
