"""Shared fixtures. Integration tests read ``$AVERITEC_DATA_DIR`` (../shared/data).

In CI (``CI=true``) anything a test needs and does not find (shared data, Ray, a browser,
PostgreSQL, an optional extra) is a failure, not a skip: :func:`skip_or_fail` is the one
place that decides.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

# Tests must never download: point NLTK at the shared data before anything imports nltk.
if "NLTK_DATA" not in os.environ and (REPO_ROOT.parent / "shared" / "nltk_data").exists():
    os.environ["NLTK_DATA"] = str(REPO_ROOT.parent / "shared" / "nltk_data")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


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
