"""The scheduler `make test` uses under pytest-xdist (``tests/conftest.py``): its file groups
and hand-out order, on hand-written node ids, and that every file it names exists."""

from __future__ import annotations

from pathlib import Path

from conftest import HEAVY_FIRST, SHARED_FIXTURE_GROUPS, xdist_rank, xdist_unit

TESTS = Path(__file__).parent


def test_every_named_file_exists() -> None:
    for name in (*HEAVY_FIRST, *SHARED_FIXTURE_GROUPS):
        assert (TESTS / name).is_file(), name
    assert len(set(HEAVY_FIRST)) == len(HEAVY_FIRST)


def test_a_file_is_one_unit_and_a_group_is_one_unit() -> None:
    assert xdist_unit("tests/test_ece.py::test_a[1-x]") == xdist_unit("tests/test_ece.py::test_b") == "tests/test_ece.py"
    assert xdist_unit("tests/test_cli_thin.py::test_a") == "tests/test_cli_thin.py"
    # the three files that share the encoded corpus (and Ray) run on one worker, one after the other
    units = {xdist_unit(f"tests/{name}::test_x") for name in ("test_engines.py", "test_engines_ray.py", "test_index_threads.py")}
    assert units == {"encoded_tiny_corpus"}


def test_heavy_files_are_handed_out_first_in_their_listed_order() -> None:
    ids = ["tests/test_a.py::t", f"tests/{HEAVY_FIRST[1]}::t", "tests/test_b.py::t", f"tests/{HEAVY_FIRST[0]}::t[p]"]
    assert sorted(ids, key=xdist_rank) == [ids[3], ids[1], ids[0], ids[2]]  # stable for the rest
    assert xdist_rank("tests/test_a.py::t") == xdist_rank("tests/test_b.py::t") == len(HEAVY_FIRST)


def test_two_workers_keep_files_and_groups_whole_and_start_with_a_heavy_file(tmp_path: Path) -> None:
    """The real scheduler under ``-n 2 --dist loadfile``, on stand-in files with the real
    names: each logs which worker ran which of its tests, in order."""
    import os
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    names = ["test_a.py", "test_engines.py", "test_engines_ray.py", "test_index_threads.py", "test_z.py", HEAVY_FIRST[0]]
    (tmp_path / "conftest.py").write_text("from tests.conftest import pytest_xdist_make_scheduler  # noqa: F401\n")
    body = ("import os\n\n"
            "def _log(n):\n"
            f"    with open({str(log)!r}, 'a') as fh:\n"
            "        fh.write(f\"{os.environ['PYTEST_XDIST_WORKER']} {__name__} {n}\\n\")\n\n"
            + "".join(f"def test_{n}():\n    _log({n})\n\n" for n in range(4)))
    for name in names:
        (tmp_path / name).write_text(body)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile",
                           "--rootdir", str(tmp_path), "-o", "addopts=", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line.split() for line in log.read_text().splitlines()]
    assert len(rows) == 4 * len(names)
    worker_of: dict[str, set[str]] = {}
    for worker, module, _ in rows:
        worker_of.setdefault(module, set()).add(worker)
    assert all(len(w) == 1 for w in worker_of.values()), worker_of  # a file never split
    assert worker_of["test_engines"] == worker_of["test_engines_ray"] == worker_of["test_index_threads"]
    firsts = {next(m for w, m, _ in rows if w == worker) for worker in ("gw0", "gw1")}
    assert HEAVY_FIRST[0].removesuffix(".py") in firsts  # the heavy file was handed out first
