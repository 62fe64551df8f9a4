"""Cold start of ``averitec score``: no NLTK package ``__init__``, only SciPy's solver, cached gold strings,
no ``leaderboard`` module, no Pillow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _score_fixtures import GOLD, ROOT, make_files, write_json

from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.prepared_cache import prepared_cache_file


def test_score_process_skips_nltk_init_and_scipy_optimize(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    code = (
        "import sys; from averitec_tools.cli.main import main; "
        f"rc = main(['score', {str(files['pred2024'])!r}, {str(files['gold'])!r}, '--json', '--jobs', '1']); "
        "print(rc, any(m == 'nltk' or m.startswith(('nltk.', 'scipy.')) for m in sys.modules), "
        "any(m.startswith('averitec_tools.leaderboard') for m in sys.modules), "
        "any(m.split('.')[0] == 'PIL' or m.startswith('averitec_tools.scoring.averimatec') for m in sys.modules), "
        "file=sys.stderr)"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), AVERITEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    # no NLTK/SciPy package init, nothing of the competition server (issue 21: scoring/ stands alone), and
    # neither Pillow nor the AVerImaTeC scorer (issue 40: only the averimatec profile loads them)
    assert proc.stderr.strip().splitlines()[-1] == "0 False False False"
    assert json.loads(proc.stdout)["n_claims"] == 3


#: Prints what ``averitec score`` left: OPENBLAS_NUM_THREADS as NumPy began to load, as the scoring
#: profiles began to load (after NumPy: the variable is set for NumPy's import alone), then after the
#: command, and whether the exit handlers freeze the collector's objects.
BLAS_PROBE = """
import atexit, gc, os, sys
seen = {}
sys.addaudithook(lambda event, args: seen.setdefault(args[0], os.environ.get("OPENBLAS_NUM_THREADS"))
                 if event == "import" and args[0] in {"numpy", "averitec_tools.scoring.profiles"} else None)
from averitec_tools.cli.main import main
rc = main(["score", sys.argv[1], sys.argv[2], "--json"])
after = os.environ.get("OPENBLAS_NUM_THREADS")
atexit._run_exitfuncs()
print(rc, [seen["numpy"], seen["averitec_tools.scoring.profiles"]], after, gc.get_freeze_count() > 0, file=sys.stderr)
"""


@pytest.mark.parametrize(("user", "expected"), [
    ({}, "0 ['1', None] None True"),  # no user setting: one thread while NumPy loads, removed at once
    ({"OPENBLAS_NUM_THREADS": "3"}, "0 ['3', '3'] 3 True"),  # the user's own value is kept
    ({"OMP_NUM_THREADS": "2"}, "0 [None, None] None True"),  # a user's OpenMP cap is left to OpenBLAS
])
def test_score_caps_blas_threads_unless_the_user_set_them(tmp_path: Path, user: dict[str, str], expected: str) -> None:
    files = make_files(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"}}
    env.update(user, PYTHONPATH=str(ROOT), AVERITEC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", BLAS_PROBE, str(files["pred2024"]), str(files["gold"])],
                          capture_output=True, text=True, env=env, check=True)
    assert proc.stderr.strip().splitlines()[-1] == expected
    assert json.loads(proc.stdout)["n_claims"] == 3


def test_lean_import_leaves_a_real_nltk_importable() -> None:
    code = (
        "from averitec_tools.metrics._lean import import_lean; import_lean('nltk.stem.porter'); "
        "import nltk, nltk.stem.porter; from nltk.stem import PorterStemmer; "
        "print(hasattr(nltk, 'word_tokenize'), PorterStemmer is nltk.stem.porter.PorterStemmer)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.stdout.split() == ["True", "True"]


class CountingEngine(MeteorEngine):
    def __init__(self) -> None:
        super().__init__(allow_download=False)
        self.prepared_here: list[str] = []

    def prepare_many(self, texts):  # type: ignore[no-untyped-def]
        self.prepared_here += [t for t in dict.fromkeys(texts) if not self.is_prepared(t)]
        return super().prepare_many(texts)


def test_prepared_gold_cache_is_keyed_by_the_gold_file(tmp_path: Path) -> None:
    gold = write_json(tmp_path / "gold.json", GOLD)
    cache_file = prepared_cache_file(references=gold, cache_dir=tmp_path / "cache")
    assert cache_file is not None and not cache_file.exists()
    tasks = [HungarianTask(("the moon is rock",), ("What is the moon made of? Rock and dust.", "Is the moon cheese? No."))]
    first = CountingEngine()
    a = score_tasks(tasks, engine=first, jobs=1, reference_cache=cache_file)
    assert cache_file.exists() and len(first.prepared_here) == 3
    second = CountingEngine()
    b = score_tasks(tasks, engine=second, jobs=1, reference_cache=cache_file)
    assert a == b and second.prepared_here == ["the moon is rock"]  # gold strings came from the cache
    assert second.is_prepared("Is the moon cheese? No.")
    # Another gold file (even the same claims, formatted differently) gets its own cache file.
    other = tmp_path / "gold2.json"
    other.write_text(json.dumps(GOLD, indent=2), encoding="utf-8")
    assert prepared_cache_file(references=other, cache_dir=tmp_path / "cache") != cache_file


@pytest.mark.parametrize("no_cache", ["", "1"])
def test_cli_uses_the_cache_unless_disabled(tmp_path: Path, no_cache: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.cli.main import main

    files = make_files(tmp_path)
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("AVERITEC_NO_CACHE", no_cache)
    outs = []
    for _ in range(2):
        assert main(["score", str(files["pred2024"]), str(files["gold"]), "--json", "--jobs", "1"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert (tmp_path / "cache" / "prepared").exists() == (not no_cache)


def test_prepared_cache_round_trips_any_string(tmp_path: Path) -> None:
    """The cache file is ASCII JSON (non-ASCII characters escaped, a lone surrogate too) and reads
    back into the same prepared strings."""
    from averitec_tools.metrics.prepared_cache import load_prepared, save_prepared

    texts = ["Was İstanbul’s mayor “elected”? Yes.", "Σ über naïve café \ud800 x", "plain words"]
    engine = MeteorEngine(allow_download=False)
    engine.prepare_many(texts)
    path = tmp_path / "prepared.json"
    save_prepared(engine, path, texts)
    assert path.read_bytes().isascii()
    fresh = MeteorEngine(allow_download=False)
    assert load_prepared(fresh, path) == 3
    assert [fresh._prepared[t] for t in texts] == [engine._prepared[t] for t in texts]
