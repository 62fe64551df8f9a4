"""Per-claim stage results on disk, keyed by a hash of the stage's inputs and settings.

Each stage of a claim (BM25 top-k sentences, generated QA pairs, reranked top 3, verdict,
justification) is stored as one JSON file under ``<cache_dir>/stages/<stage>/``, named by
the sha256 of everything that determines it: the stage's settings and component (model
id and revision), and the key of the stage before it (the first stage hashes the claim
text and its store file's bytes). A result is written atomically as soon as it is
computed, so an interrupted run resumes at the first missing stage of the first missing
claim, and variants share what they have in common: ``full``, ``no-reranker`` and a rerun
with another verdict model reuse the cached retrieval and question generation (the LM is
not even loaded when every claim's questions are cached).

Example:
    >>> import tempfile
    >>> cache = StageCache(tempfile.mkdtemp())
    >>> key = stage_key("questions", {"model": "m"}, "parent-key")
    >>> cache.get("questions", key) is None
    True
    >>> cache.put("questions", key, {"questions": ["Q?"]})
    >>> cache.get("questions", key), cache.counts()["questions"]
    ({'questions': ['Q?']}, {'cached': 1, 'computed': 1})
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from averitec_tools.hashing import file_sha256, json_digest, sha256_hex
from averitec_tools.jsonio import atomic_writer

#: The cached stages, in pipeline order.
CACHED_STAGES: tuple[str, ...] = ("retrieval", "questions", "reranker", "verdict", "justification")


def stage_key(stage: str, settings: Any, parent: str) -> str:
    """sha256 of a stage's name, settings and its parent stage's key.

    Example:
        >>> stage_key("verdict", {"a": 1}, "p") == stage_key("verdict", {"a": 1}, "p") != stage_key("verdict", {"a": 2}, "p")
        True
    """
    return sha256_hex(json.dumps([stage, settings, parent], sort_keys=True, default=str, ensure_ascii=False))


def file_key(path: str | os.PathLike[str]) -> str:
    """sha256 of a file's bytes (``missing`` when there is no file)."""
    p = Path(path)
    return file_sha256(p) if p.is_file() else "missing"


def local_model_stamp(location: str) -> str:
    """A cheap identity of a local model directory without a revision (file names, sizes and
    modification times), so an edited local model is not served stale results."""
    p = Path(location)
    if not p.is_dir():
        return location
    parts = sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in p.iterdir() if f.is_file())
    return json_digest(parts)


class StageCache:
    """Stage results under ``root`` (nothing is stored when ``root`` is ``None``).

    Args:
        root: Directory of the cache (``<cache_dir>/stages``), or ``None`` to disable it.
    """

    def __init__(self, root: str | os.PathLike[str] | None) -> None:
        self.root = Path(root) if root is not None else None
        self._counts: dict[str, dict[str, int]] = {}

    def _path(self, stage: str, key: str) -> Path:
        assert self.root is not None
        return self.root / stage / key[:2] / f"{key}.json"

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        """The stored result, or ``None`` (a missing or unreadable entry counts as absent)."""
        if self.root is None:
            return None
        try:
            value = json.loads(self._path(stage, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(value, dict):
            return None
        self._count(stage, "cached")
        return value

    def has(self, stage: str, key: str) -> bool:
        """Whether a result is stored (not counted: a look before deciding what to compute)."""
        return self.root is not None and self._path(stage, key).is_file()

    def put(self, stage: str, key: str, value: Mapping[str, Any]) -> None:
        """Store ``value`` atomically (and count the stage as computed)."""
        self._count(stage, "computed")
        if self.root is None:
            return
        path = self._path(stage, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(path) as fh:
            json.dump(value, fh, ensure_ascii=False)

    def fetch(self, stage: str, key: str, compute: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], bool]:
        """(result, whether it came from the cache): the stored one, else ``compute()`` stored."""
        found = self.get(stage, key)
        if found is not None:
            return found, True
        value = compute()
        self.put(stage, key, value)
        return value, False

    def _count(self, stage: str, kind: str) -> None:
        c = self._counts.setdefault(stage, {"cached": 0, "computed": 0})
        c[kind] += 1

    def counts(self) -> dict[str, dict[str, int]]:
        """Stage -> {"cached": claims served from the cache, "computed": claims computed}."""
        return {k: dict(v) for k, v in self._counts.items()}


__all__ = ["StageCache", "file_key", "local_model_stamp", "stage_key"]
