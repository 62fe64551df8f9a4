"""What the README's commands write is git-ignored (issue 30 item 17), so following the README
in a clone never leaves untracked outputs (``lb.db``, ``audit.html``, ``plots/`` …) to commit."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Options whose value is a file or folder the command writes.
OUTPUT_OPTIONS = ("--out", "--plot", "--html", "--per-claim", "--write-gold-subset", "--work")


def readme_outputs() -> list[str]:
    """Relative output paths of the commands in the README's code blocks (placeholders,
    absolute paths and paths outside the repository left out), and SQLite databases."""
    found: set[str] = set()
    inside = False
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
            continue
        if not inside:
            continue
        for option, value in re.findall(r"(--[a-z-]+)[ =](\S+)", line):
            if option in OUTPUT_OPTIONS and not re.fullmatch(r"[A-Z_]+", value) \
                    and not value.startswith(("/", "$", "<", "..")):
                found.add(value)
        found.update(re.findall(r"sqlite:///([\w.-]+\.db)\b", line))
    return sorted(found)


def test_readme_outputs_are_found() -> None:
    assert {"lb.db", "audit.html", "plots/", "hf/averitec", "store/"} <= set(readme_outputs())


@pytest.mark.parametrize("path", readme_outputs())
def test_readme_output_is_git_ignored(path: str) -> None:
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    names = [path, f"{path}-wal", f"{path}-shm"] if path.endswith(".db") else [path]
    for name in names:
        probe = name + ("x" if name.endswith("/") else "")  # a file inside an output folder
        done = subprocess.run([git, "-C", str(REPO), "check-ignore", "--no-index", "-q", probe],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{probe} (written by a README command) is not in .gitignore"
