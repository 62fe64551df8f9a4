"""Shared fixtures. Integration tests read ``$AVERITEC_DATA_DIR`` (../shared/data).

In CI (``CI=true``) anything a test needs and does not find (shared data, Ray, a browser,
PostgreSQL, an optional extra) is a failure, not a skip: :func:`skip_or_fail` is the one
place that decides.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# Caches the code writes by default (gold strings, MiniLM reference embeddings) go to a fresh
# directory per test process, never to the user's cache root ($HOME): set before any test imports.
os.environ.setdefault("AVERITEC_CACHE_DIR", tempfile.mkdtemp(prefix="averitec-test-cache-"))

#: Test files that share an expensive session fixture: under ``pytest -n N --dist loadfile``
#: (what ``make test`` runs) each group runs on one worker, so the fixture is built once.
#: Every other file is its own work unit, so a module-scoped fixture is built once too.
SHARED_FIXTURE_GROUPS = {
    "test_engines.py": "encoded_tiny_corpus",
    "test_engines_ray.py": "encoded_tiny_corpus",
    "test_index_threads.py": "encoded_tiny_corpus",
    # the CI-sized offline R2VC build (offline_cache) is built once for both files
    "test_r2vc_offline_dev.py": "offline_cache",
    "test_offline_regression.py": "offline_cache",
    # the CI-sized AVeriTeC offline-minilm classifiers (averitec_ci_cache) are trained once for both
    "test_averitec_baseline_shared.py": "averitec_ci_cache",
    "test_offline_regression_averitec.py": "averitec_ci_cache",
}
#: Files of a few long tests (training, killed processes, full-dev reference comparisons),
#: handed out first under ``-n N`` so that no worker is left running one of them alone at
#: the end (xdist otherwise hands out the files with the most tests first). Order only.
HEAVY_FIRST = (
    "test_offline_regression.py", "test_offline_regression_averitec.py", "test_r2vc_resume.py", "test_r2vc_training.py", "test_r2vc_paper.py", "test_r2vc_gpu_recipe.py",
    "test_leaderboard_hostile_server.py", "test_leaderboard_reliability.py", "test_profiles_averitec.py",
    "test_r2vc_offline_dev.py", "test_averitec_baseline_pipeline.py",
)

# Tests must never download: point NLTK at the shared data before anything imports nltk.
if "NLTK_DATA" not in os.environ and (REPO_ROOT.parent / "shared" / "nltk_data").exists():
    os.environ["NLTK_DATA"] = str(REPO_ROOT.parent / "shared" / "nltk_data")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def xdist_unit(nodeid: str) -> str:
    """The work unit of a test under ``--dist loadfile``: its file, or its file's group."""
    path = nodeid.split("::", 1)[0]
    return SHARED_FIXTURE_GROUPS.get(path.rsplit("/", 1)[-1], path)


def xdist_rank(nodeid: str) -> int:
    """Hand-out rank of a test's file: its place in :data:`HEAVY_FIRST`, every other file after."""
    name = nodeid.split("::", 1)[0].rsplit("/", 1)[-1]
    return HEAVY_FIRST.index(name) if name in HEAVY_FIRST else len(HEAVY_FIRST)


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: ignored without pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with :data:`SHARED_FIXTURE_GROUPS`: one work unit per test file,
    except the files of one group, which go to one worker together; :data:`HEAVY_FIRST`
    files are handed out first, the rest in collection order.

    (xdist's own ``--dist loadgroup`` does not work with pytest 9: the group suffix it writes
    into ``item._nodeid`` never reaches ``item.nodeid``, so every test is scheduled alone.)
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtureScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

        def schedule(self) -> None:
            if self.collection is None and self.collection_is_completed and self.registered_collections:
                # The heavy units' keys go into the (empty) work queue first: xdist then fills
                # the queue in its own order, and a key already there keeps its place. (The
                # collections themselves must not be reordered: xdist sends the workers indices.)
                ids = next(iter(self.registered_collections.values()))
                heavy = sorted({xdist_unit(n): xdist_rank(n) for n in ids if xdist_rank(n) < len(HEAVY_FIRST)}.items(),
                               key=lambda unit_rank: unit_rank[1])
                for unit, _ in heavy:
                    self.workqueue[unit] = {}
            super().schedule()

    return SharedFixtureScheduling(config, log)


def _run_in_fresh_process(nodeid: str) -> None:
    """Run one test in a new pytest process (one process, no JUnit file) and fail with its output."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", nodeid],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        pytest.fail(f"{nodeid} failed in a fresh process:\n{done.stdout[-4000:]}{done.stderr[-2000:]}", pytrace=False)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``needs_fork`` run in a fresh process once this one has started a Java VM
    (the pyserini tests): the scorer forks no helpers there (averitec_tools/forking.py), and what
    these tests check is the forked helpers. Which worker ran the JVM tests first is up to
    xdist's schedule, so the decision is taken when the test runs."""
    for item in items:
        if item.get_closest_marker("needs_fork") is None or not isinstance(item, pytest.Function):
            continue
        in_this_process = item.runtest

        def runtest(item: pytest.Function = item, in_this_process: Any = in_this_process) -> None:
            from averitec_tools.forking import fork_is_safe

            if fork_is_safe():
                in_this_process()
            else:
                _run_in_fresh_process(item.nodeid)

        item.runtest = runtest  # type: ignore[method-assign]


def in_ci() -> bool:
    """Whether this is a CI run (``CI=true``), where nothing a test needs may be missing."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def skip_or_fail(reason: str, *, module_level: bool = False) -> NoReturn:
    """Skip the test (or module) when a requirement is missing locally; fail under CI."""
    if in_ci():
        pytest.fail(f"{reason} (required in CI)", pytrace=False)
    pytest.skip(reason, allow_module_level=module_level)


def _shared_data_dir() -> Path | None:
    env = os.environ.get("AVERITEC_DATA_DIR")
    candidates = [Path(env)] if env else [REPO_ROOT.parent / "shared" / "data"]
    for c in candidates:
        if (c / "averitec" / "dev.json").exists():
            return c
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Path to ../shared/data; fails in CI and skips elsewhere when it is absent."""
    path = _shared_data_dir()
    if path is None:
        skip_or_fail("shared data not found: set AVERITEC_DATA_DIR to ../shared/data")
    return path


@pytest.fixture(scope="session")
def offline_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of the CI-sized R2VC offline-minilm models, corpus and indexes per session
    (tests/_offline_ci.py); ``AVERITEC_TEST_CACHE=DIR`` keeps it between sessions."""
    env = os.environ.get("AVERITEC_TEST_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("r2vc-offline-cache")


@pytest.fixture(scope="session")
def averitec_ci_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache of the CI-sized AVeriTeC offline-minilm classifiers per session
    (tests/_offline_ci.py ``averitec_ci_config``): the reranker and the verdict model the
    regression guard and the dev test both use, trained by whichever runs first."""
    return tmp_path_factory.mktemp("averitec-offline-cache")


@pytest.fixture(scope="session")
def ray_runtime():  # type: ignore[no-untyped-def]
    """One local Ray runtime for the whole test session (2 CPUs, no dashboard, usage stats off).

    Started on first use and stopped at the end of the session. In CI a missing Ray is a
    failure, not a skip.
    """
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    try:
        import ray  # noqa: F401
    except ImportError:
        skip_or_fail("ray is not installed: pip install 'averitec-tools[ray]'")
    from averitec_tools.engines.ray_runtime import ensure_ray

    ray = ensure_ray(num_cpus=2)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def encoded_tiny_corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The engine tests' 150-paragraph corpus, MiniLM-encoded into shards and a flat index once
    per session (several tests compared against their own copy of it). Read-only."""
    from tests._engine_helpers import encode_tiny_corpus

    return encode_tiny_corpus(tmp_path_factory.mktemp("encoded-tiny-corpus"))
