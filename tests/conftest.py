"""Shared fixtures. Integration tests read ``$AVERITEC_DATA_DIR`` (../shared/data).

In CI (``CI=true``) missing shared data is a failure, not a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

# Tests must never download: point NLTK at the shared data before anything imports nltk.
if "NLTK_DATA" not in os.environ and (REPO_ROOT.parent / "shared" / "nltk_data").exists():
    os.environ["NLTK_DATA"] = str(REPO_ROOT.parent / "shared" / "nltk_data")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


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
        msg = "shared data not found: set AVERITEC_DATA_DIR to ../shared/data"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(msg)
        pytest.skip(msg)
    return path




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
        msg = "ray is not installed: pip install 'averitec-tools[ray]'"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(msg)
        pytest.skip(msg)
    from averitec_tools.engines.ray_runtime import ensure_ray

    ray = ensure_ray(num_cpus=2)
    yield ray
    ray.shutdown()
