"""Output-path safety across commands (issue 12): outputs that are inputs, unwritable or
directory outputs, write failures and file modes. Every refusal happens before the work."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from _score_fixtures import make_files

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory, atomic_writer
from averitec_tools.outputs import check_output_dir, check_output_file

REPO = Path(__file__).resolve().parents[1]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    return make_files(tmp_path)


def one_line_error(capsys: pytest.CaptureFixture[str], code: int, *needles: str) -> str:
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err
    return err


def aliases(target: Path, tmp_path: Path) -> list[Path]:
    """The same file under three names: itself, a symlink and a hard link."""
    sym = tmp_path / f"sym-{target.name}"
    hard = tmp_path / f"hard-{target.name}"
    sym.symlink_to(target)
    os.link(target, hard)
    return [target, sym, hard]


# ---------------------------------------------------------------- the helper itself

def test_check_output_file_refuses_inputs_under_any_name(tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    gold.write_text("[]")
    for alias in aliases(gold, tmp_path):
        with pytest.raises(UserError, match="is the input file"):
            check_output_file(alias, option="--out", inputs=[gold])
    relative = Path(os.path.relpath(gold))
    with pytest.raises(UserError, match="is the input file"):
        check_output_file(gold, option="--out", inputs=[relative])
    assert check_output_file(tmp_path / "new.json", option="--out", inputs=[gold]) == tmp_path / "new.json"


def test_check_output_file_and_dir_refuse_unwritable_places(tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError, match="is an existing directory"):
        check_output_file(tmp_path / "adir", option="--out")
    with pytest.raises(UserError, match="afile is not a directory"):
        check_output_file(tmp_path / "afile" / "x.json", option="--out")
    with pytest.raises(UserError, match="exists and is not a directory"):
        check_output_dir(tmp_path / "afile", option="--plot")
    with pytest.raises(UserError, match="afile is not a directory"):
        check_output_dir(tmp_path / "afile" / "sub", option="--plot")
    # a missing parent is fine: it is created when the file is written
    assert check_output_file(tmp_path / "new" / "deeper" / "x.json", option="--out").name == "x.json"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_check_output_refuses_read_only_directory(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(UserError, match="cannot write in"):
            check_output_file(ro / "x.json", option="--out")
        with pytest.raises(UserError, match="cannot write in"):
            check_output_dir(ro / "plots", option="--plot")
    finally:
        ro.chmod(0o755)


def test_probe_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    with pytest.raises(UserError, match="cannot write in .*Permission denied"):
        check_output_file(tmp_path / "x.json", option="--out")


# ---------------------------------------------------------------- modes (umask)

@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_writer_respects_umask(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        with atomic_writer(tmp_path / "f.txt") as fh:
            fh.write("x")
        with atomic_writer(tmp_path / "b.png", "wb") as fh:
            fh.write(b"x")
        with atomic_directory(tmp_path / "d") as tmp:
            (tmp / "x").write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o666 & ~mask
    assert stat.S_IMODE((tmp_path / "b.png").stat().st_mode) == 0o666 & ~mask
    assert stat.S_IMODE((tmp_path / "d").stat().st_mode) == 0o777 & ~mask


def test_atomic_writer_keeps_an_existing_files_mode(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    target.chmod(0o640)
    with atomic_writer(target) as fh:
        fh.write("new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_atomic_writer_failure_is_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    with pytest.raises(UserError, match="cannot write"), atomic_writer(tmp_path / "afile" / "x.json") as fh:
        fh.write("x")
    (tmp_path / "adir").mkdir()
    with pytest.raises(UserError, match="cannot write"), atomic_writer(tmp_path / "adir") as fh:
        fh.write("x")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp files left


def test_cli_created_files_follow_umask(files: dict[str, Path], tmp_path: Path, capsys) -> None:
    old = os.umask(0o022)
    try:
        out = tmp_path / "claims.jsonl"
        html = tmp_path / "audit.html"
        assert main(["score", str(files["pred2024"]), str(files["gold"]), "--json", "--jobs", "1",
                     "--per-claim", str(out)]) == 0
        assert main(["audit", str(files["gold"]), "--json", "--html", str(html)]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    for path in (out, html):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


# ---------------------------------------------------------------- output = input, per command

@pytest.mark.parametrize("which", ["pred2024", "gold"])
def test_score_per_claim_never_overwrites_an_input(files, tmp_path, capsys, monkeypatch, which) -> None:
    from averitec_tools.scoring.profiles import averitec2024

    before = {k: digest(files[k]) for k in ("pred2024", "gold")}
    monkeypatch.setattr(averitec2024.Profile, "score", lambda *a, **k: pytest.fail("scored before checking"))
    for alias in aliases(files[which], tmp_path):
        code = main(["score", str(files["pred2024"]), str(files["gold"]), "--per-claim", str(alias)])
        one_line_error(capsys, code, "--per-claim", "is the input file")
    assert {k: digest(files[k]) for k in before} == before


def test_audit_html_never_overwrites_an_input(files, tmp_path, capsys) -> None:
    gold, pred = files["gold"], files["pred2024"]
    before = (digest(gold), digest(pred))
    for alias in aliases(gold, tmp_path):
        one_line_error(capsys, main(["audit", str(gold), "--html", str(alias)]), "--html", "is the input file")
        one_line_error(capsys, main(["audit", str(pred), "--references", str(gold), "--html", str(alias)]),
                       "is the input file")
    assert (digest(gold), digest(pred)) == before


def test_baseline_out_never_overwrites_claims(tmp_path: Path, capsys, monkeypatch) -> None:
    from averitec_tools.baselines.r2vc import build

    monkeypatch.setattr(build, "build_pipeline", lambda *a, **k: pytest.fail("built before checking --out"))
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    before = digest(claims)
    for alias in aliases(claims, tmp_path):
        for cmd in ("r2vc", "r2vc-calibrate"):
            code = main(["baseline", cmd, "--config", "offline-minilm", "--claims", str(claims), "--out", str(alias)])
            one_line_error(capsys, code, "--out", "is the input file")
    assert digest(claims) == before


# ---------------------------------------------------------------- unwritable / directory outputs

def test_directory_and_unwritable_outputs_fail_before_work(files, tmp_path, capsys, monkeypatch) -> None:
    from averitec_tools.baselines.r2vc import build
    from averitec_tools.scoring import calibration

    monkeypatch.setattr(build, "build_pipeline", lambda *a, **k: pytest.fail("built before checking --out"))
    monkeypatch.setattr(calibration, "score_with_profile", lambda **k: pytest.fail("scored before checking --plot"))
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    pred, gold = str(files["pred2024"]), str(files["gold"])
    for bad in (tmp_path / "adir", tmp_path / "afile" / "x"):
        cases = [
            ["score", pred, gold, "--per-claim", str(bad)],
            ["audit", gold, "--html", str(bad)],
            ["baseline", "r2vc", "--config", "offline-minilm", "--claims", str(claims), "--out", str(bad)],
        ]
        for argv in cases:
            one_line_error(capsys, main(argv), str(bad))
    for bad in (tmp_path / "afile", tmp_path / "afile" / "sub"):
        one_line_error(capsys, main(["calibration", pred, gold, "--plot", str(bad)]), "--plot")
        one_line_error(capsys, main(["export-hf", "averitec", "--split", "dev", "--data-dir", gold,
                                     "--out", str(bad)]), "--out")


def test_export_hf_refuses_the_input_folder(tmp_path: Path, capsys) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "dev.json").write_text(json.dumps([{"claim": "c", "label": "Refuted", "questions": []}]))
    before = sorted(p.name for p in data.iterdir())
    one_line_error(capsys, main(["export-hf", "averitec", "--split", "dev", "--data-dir", str(data),
                                 "--out", str(data)]), "input folder")
    assert sorted(p.name for p in data.iterdir()) == before


def test_os_error_in_a_command_is_one_line(monkeypatch, capsys) -> None:
    from averitec_tools.cli import stats

    def broken(args: object) -> int:
        raise OSError(28, "No space left on device", "/tmp/x")

    monkeypatch.setattr(stats, "run", broken)
    code = main(["stats", "averitec", "--split", "dev"])
    one_line_error(capsys, code, "/tmp/x: No space left on device")


# ---------------------------------------------------------------- partial runs

def test_baseline_refuses_to_discard_partial_progress(tmp_path: Path, capsys, monkeypatch) -> None:
    from averitec_tools.baselines.r2vc import build

    def stop(*args: object, **kwargs: object) -> None:
        raise UserError("stopped after the checks")

    monkeypatch.setattr(build, "build_pipeline", stop)
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    out = tmp_path / "pred.json"
    from averitec_tools.baselines._run.sidecar import sidecar_path

    side = sidecar_path(out)
    side.write_text('{"_r2vc_sidecar": 1}\n')
    argv = ["baseline", "r2vc", "--config", "offline-minilm", "--claims", str(claims), "--out", str(out)]
    one_line_error(capsys, main(argv), "partial progress", "--resume", "--overwrite")
    assert side.exists()
    one_line_error(capsys, main([*argv, "--resume", "--overwrite"]), "contradict")
    one_line_error(capsys, main([*argv, "--overwrite"]), "stopped after the checks")
    assert side.exists()  # discarded only when the new run starts writing, not by a run that failed before


# ---------------------------------------------------------------- pipes and progress bars

def test_score_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys

    cmd = (f"{sys.executable} -m averitec_tools.cli.main score examples/demo_predictions.json "
           f"examples/demo_gold.json --jobs 1 2>{tmp_path / 'err'} | head -1")
    done = subprocess.run(cmd, shell=True, cwd=REPO, capture_output=True, text=True, check=False)
    assert done.stdout.count("\n") == 1
    assert (tmp_path / "err").read_text() == ""


def test_no_progress_bars_off_a_terminal(files, tmp_path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "cache")}
    for argv in (["score", str(files["pred2024"]), str(files["gold"]), "--jobs", "1"],
                 ["export-hf", "averitec", "--split", "dev", "--data-dir", str(files["gold"]),
                  "--out", str(tmp_path / "hf")]):
        done = subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", *argv], cwd=REPO, env=env,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        assert "%|" not in done.stderr and "it/s" not in done.stderr and "ba/s" not in done.stderr, done.stderr


def test_export_hf_never_overwrites_a_foreign_readme(files, tmp_path, capsys) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / "README.md").write_text("# my project\n")
    code = main(["export-hf", "averitec", "--split", "dev", "--data-dir", str(files["gold"]), "--out", str(out)])
    one_line_error(capsys, code, "README.md that is not a dataset card")
    assert (out / "README.md").read_text() == "# my project\n" and not (out / "data").exists()


def test_special_files_are_written_through_not_replaced(tmp_path: Path) -> None:
    """`--per-claim /dev/null` must not replace /dev/null with a regular file (as root it could)."""
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link-to-fifo"
    link.symlink_to(fifo)
    received: list[bytes] = []
    for target in (fifo, link):
        reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
        reader.start()
        with atomic_writer(target) as fh:
            fh.write("row\n")
        reader.join(timeout=10)
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
    assert received == [b"row\n", b"row\n"]
    check_output_file(os.devnull, option="--per-claim")  # allowed: written through
