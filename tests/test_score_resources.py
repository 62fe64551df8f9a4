"""NLTK resource resolution: existing data, announced download, actionable offline failure."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nltk
import pytest
from _score_fixtures import make_files
from conftest import skip_or_fail

from averitec_tools.cli.main import main
from averitec_tools.errors import ResourceError
from averitec_tools.resources import downloads_allowed, find_resource


@pytest.fixture()
def no_nltk_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    monkeypatch.setattr(nltk.data, "path", [str(empty)])
    monkeypatch.delenv("AVERITEC_NO_DOWNLOAD", raising=False)
    return empty


def test_finds_existing_data() -> None:
    assert find_resource("wordnet", allow_download=False) is not None
    assert find_resource("punkt_tab", allow_download=False) is not None


def test_no_download_fails_with_fix(no_nltk_data: Path) -> None:
    with pytest.raises(ResourceError) as info:
        find_resource("wordnet", allow_download=False)
    msg = str(info.value)
    assert "downloads are disabled" in msg and "NLTK_DATA" in msg and "python -m nltk.downloader wordnet" in msg


def test_env_forbids_download(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AVERITEC_NO_DOWNLOAD", "1")
    assert not downloads_allowed()
    monkeypatch.setenv("AVERITEC_NO_DOWNLOAD", "0")
    assert downloads_allowed()


def test_offline_download_failure_is_actionable(no_nltk_data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def offline(*args: object, **kwargs: object) -> bool:
        raise OSError("<urlopen error [Errno -3] Temporary failure in name resolution>")

    monkeypatch.setattr(nltk, "download", offline)
    with pytest.raises(ResourceError) as info:
        find_resource("punkt_tab")
    assert "could not be downloaded: OSError" in str(info.value) and "NLTK_DATA" in str(info.value)
    assert "downloading it with nltk.download('punkt_tab')" in capsys.readouterr().err


def test_download_is_announced_and_used(no_nltk_data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    source = Path(os.environ.get("NLTK_DATA", "nonexistent"))
    if not (source / "tokenizers" / "punkt_tab").exists():
        skip_or_fail("NLTK_DATA has no punkt_tab to simulate a download with")

    def fake_download(package: str, **kwargs: object) -> bool:
        print("[nltk_data] Downloading package", package)  # nltk writes progress to stdout
        shutil.copytree(source / "tokenizers" / "punkt_tab", no_nltk_data / "tokenizers" / "punkt_tab")
        return True

    monkeypatch.setattr(nltk, "download", fake_download)
    assert find_resource("punkt_tab") is not None
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout stays clean for --json
    assert "not found; downloading it with nltk.download('punkt_tab')" in captured.err


def test_cli_no_download_exit_2(no_nltk_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = make_files(tmp_path)
    assert main(["score", str(files["pred2024"]), str(files["gold"]), "--no-download", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NLTK resource" in err and "downloads are disabled" in err


def test_import_nltk_lean_leaves_packages_importable() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from averitec_tools.resources import import_nltk_lean; import_nltk_lean(); "
        "assert 'nltk' in sys.modules and 'sklearn' not in sys.modules and 'scipy.stats' not in sys.modules; "
        "import sklearn, scipy.stats; from nltk.stem.porter import PorterStemmer; print(PorterStemmer().stem('running'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "run"


def test_resources_resolved_before_any_scoring(no_nltk_data: Path) -> None:
    """Even when no text needs Punkt, a missing punkt_tab is reported up front."""
    from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
    from averitec_tools.metrics.meteor import MeteorEngine

    with pytest.raises(ResourceError, match="punkt_tab"):
        score_tasks([HungarianTask(("one sentence",), ("another one",))], engine=MeteorEngine(allow_download=False), jobs=1)
