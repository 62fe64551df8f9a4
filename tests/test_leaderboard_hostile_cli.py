"""Issue 39, the board's command line: nothing a command writes may wipe the board.

Each test reproduced its defect on main before the fix: ``export --out lb.db`` replaced the
database with a CSV and exited 0; ``secret rotate --secret-file lb.db`` did the same with a
secret; ``init --db sqlite:///gold.json`` made the gold file owner-only and then crashed; a
corrupt database gave a 52-line traceback; a read-only copy of a board said "no competition
here"; an unknown phase name of 10,000 characters came back whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from averitec_tools.cli.main import main
from tests._leaderboard_helpers import DEMO_GOLD, competition_yaml, variant


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One board (a team, one scored submission), built once; each test gets a copy."""
    import contextlib
    import io

    root = tmp_path_factory.mktemp("board")
    shutil.copyfile(DEMO_GOLD, root / "gold.json")
    (root / "c.yaml").write_text(competition_yaml(root / "gold.json"))
    (root / "p.json").write_bytes(variant(0))
    db = f"sqlite:///{root / 'lb.db'}"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["leaderboard", "init", str(root / "c.yaml"), "--db", db]) == 0
        assert main(["leaderboard", "team", "add", "blue", "--db", db]) == 0
        assert main(["leaderboard", "submit", str(root / "p.json"), "--team", "blue", "--system", "s", "--phase", "dev",
                     "--db", db]) == 0
    return root


@pytest.fixture
def board(template: Path, tmp_path: Path) -> dict[str, Path]:
    import sqlite3

    for name in ("gold.json", "c.yaml", "p.json", "lb.db", "lb.db.secret"):
        shutil.copy2(template / name, tmp_path / name)
    with sqlite3.connect(tmp_path / "lb.db") as conn:  # the copy's phase reads its own gold file
        conn.execute("UPDATE competition SET yaml = replace(yaml, ?, ?)", (str(template), str(tmp_path)))
    with sqlite3.connect(tmp_path / "lb.db") as conn:  # the database's bytes are then stable while nothing writes
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db = tmp_path / "lb.db"
    return {"db": db, "gold": tmp_path / "gold.json", "comp": tmp_path / "c.yaml", "preds": tmp_path / "p.json",
            "secret": Path(f"{db}.secret")}


def _one_line_exit_2(capsys: pytest.CaptureFixture[str], code: int) -> str:
    captured = capsys.readouterr()
    assert code == 2, captured
    lines = [ln for ln in captured.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


@pytest.mark.parametrize("what", ["db", "gold", "secret", "db-symlink", "db-hardlink", "gold-symlink"])
def test_export_refuses_the_board_and_its_gold(board: dict[str, Path], what: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    name, _, link = what.partition("-")
    target = board[name]
    if link == "symlink":
        (target.parent / "link").symlink_to(target)
        target = target.parent / "link"
    elif link == "hardlink":
        os.link(target, target.parent / "hard")
        target = target.parent / "hard"
    before = {k: _digest(p) for k, p in board.items()}
    code = main(["leaderboard", "export", "--phase", "dev", "--format", "csv", "--db", f"sqlite:///{board['db']}",
                 "--out", str(target)])
    line = _one_line_exit_2(capsys, code)
    assert "--out" in line and "refusing to overwrite" in line, line
    assert {k: _digest(p) for k, p in board.items()} == before
    assert main(["leaderboard", "show", "--phase", "dev", "--json", "--db", f"sqlite:///{board['db']}"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["team"] == "blue"


def test_secret_rotate_and_init_refuse_the_board(board: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    db_url = f"sqlite:///{board['db']}"
    (board["comp"]).write_text(competition_yaml(board["gold"]))
    before = {k: _digest(p) for k, p in board.items()}
    modes = {k: p.stat().st_mode for k, p in board.items()}
    for target in ("db", "gold", "comp"):
        if target != "comp":  # the stored competition names no file; init reads one
            code = main(["leaderboard", "secret", "rotate", "--secret-file", str(board[target]), "--db", db_url])
            assert "--secret-file" in _one_line_exit_2(capsys, code)
        code = main(["leaderboard", "init", str(board["comp"]), "--secret-file", str(board[target]), "--db", db_url])
        assert "--secret-file" in _one_line_exit_2(capsys, code)
    for target in ("gold", "comp", "preds"):  # a database on an input: it would be made owner-only, then written
        code = main(["leaderboard", "init", str(board["comp"]), "--db", f"sqlite:///{board[target]}"])
        assert "--db" in _one_line_exit_2(capsys, code)
    code = main(["leaderboard", "submit", str(board["preds"]), "--team", "blue", "--system", "s", "--phase", "dev",
                 "--db", f"sqlite:///{board['preds']}"])
    assert "--db" in _one_line_exit_2(capsys, code)
    assert {k: _digest(p) for k, p in board.items()} == before
    assert {k: p.stat().st_mode for k, p in board.items()} == modes


def test_corrupt_database_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "lb.db"
    db.write_text('"Rank","Tier","Team"\n"1","1","blue"\n')  # what `export --out lb.db` used to leave
    for argv in (["show", "--phase", "dev"], ["status"], ["export", "--phase", "dev"], ["team", "add", "x"]):
        line = _one_line_exit_2(capsys, main(["leaderboard", *argv, "--db", f"sqlite:///{db}"]))
        assert "not a leaderboard database" in line and str(db) in line, line


def test_read_only_copy_of_a_board_is_shown(board: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An archived board: the organisers may not write it (mode 0444 in a 0555 folder; for
    root an immutable file), yet show, status and export work, and a write says read-only."""
    import sqlite3
    import subprocess

    archive = tmp_path / "archive"
    archive.mkdir()
    copy = archive / "lb.db"
    with sqlite3.connect(board["db"]) as conn:  # the copy an organiser archives: the WAL folded in
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(board["db"], copy)
    copy.chmod(0o444)
    archive.chmod(0o555)
    if os.access(copy, os.W_OK):
        done = subprocess.run(["chattr", "+i", str(copy)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot make a file read-only for root here: {done.stderr.strip()}")
    try:
        assert main(["leaderboard", "show", "--phase", "dev", "--json", "--db", f"sqlite:///{copy}"]) == 0
        assert json.loads(capsys.readouterr().out)["rows"][0]["team"] == "blue"
        assert main(["leaderboard", "status", "--json", "--db", f"sqlite:///{copy}"]) == 0
        assert len(json.loads(capsys.readouterr().out)["submissions"]) == 1
        line = _one_line_exit_2(capsys, main(["leaderboard", "team", "add", "green", "--db", f"sqlite:///{copy}"]))
        assert "read-only" in line, line
    finally:
        subprocess.run(["chattr", "-i", str(copy)], capture_output=True, check=False)
        archive.chmod(0o755)


def test_unknown_phase_name_is_not_echoed_whole(board: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    long = "x" * 10_000
    line = _one_line_exit_2(capsys, main(["leaderboard", "show", "--phase", long, "--db", f"sqlite:///{board['db']}"]))
    assert "unknown phase" in line and len(line) < 300 and "10000 characters" in line, line
