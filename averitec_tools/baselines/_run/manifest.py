"""The run manifest of a baseline run or training stage: what ran, on what, from which data.

``averitec baseline r2vc`` writes it beside the predictions (``PREDICTIONS.manifest.json``)
and the R2VC trainers put it into ``r2vc_training.json``. It records:

* ``git`` — the commit of the averitec-tools checkout (and whether it had uncommitted
  changes), or why none is known (an installed wheel); read when the run *starts*
  (:func:`git_state`, passed as ``git=``), so a checkout changed during a long run does
  not misname the code that ran;
* ``versions`` — python, averitec-tools and every library a baseline can use (absent
  ones as ``null``);
* ``hardware`` — platform, CPU count, torch's CUDA and cuDNN versions and each visible
  GPU (name, memory), or that none was visible;
* ``seeds`` and ``data`` — the seeds of the run and, for every input file, its size and
  sha256 (a paragraph store directory is identified by its fingerprint instead of
  hashing gigabytes);
* ``command`` — ``sys.argv``, and ``config`` — the configuration and its fingerprint.

Example:
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "claims.json"
    >>> _ = f.write_text("[]")
    >>> m = run_manifest(data={"claims": f}, seeds={"generator": 0}, git={"commit": "abc", "dirty": False})
    >>> m["data"]["claims"]["sha256"][:12], m["seeds"], m["git"], "averitec-tools" in m["versions"]
    ('4f53cda18c2b', {'generator': 0}, {'commit': 'abc', 'dirty': False}, True)
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from averitec_tools.hashing import file_sha256

#: Distributions whose versions are recorded (``null`` when not installed).
LIBRARIES: tuple[str, ...] = (
    "averitec-tools", "torch", "transformers", "trl", "accelerate", "datasets", "sentence-transformers",
    "bitsandbytes", "flash-attn", "faiss-cpu", "faiss-gpu-cu12", "bm25s", "pyserini", "numpy", "scipy",
    "scikit-learn", "pyarrow", "ray",
)


def library_versions() -> dict[str, str | None]:
    """Python and :data:`LIBRARIES` versions (``None`` for a library not installed)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_state() -> dict[str, Any]:
    """The commit of the checkout this package runs from, or why it is unknown."""
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return {"commit": None, "reason": f"{root} is not a git checkout (an installed package)"}
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return {"commit": None, "reason": f"git failed: {exc}"}
    return {"commit": commit, "dirty": bool(status.strip())}


def hardware() -> dict[str, Any]:
    """Platform, CPUs, and torch's view of CUDA (versions, visible GPUs)."""
    out: dict[str, Any] = {"platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        import torch
    except ImportError:
        return {**out, "cuda": None, "gpus": [], "note": "torch not installed"}
    gpus = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            gpus.append({"name": props.name, "memory_gib": round(props.total_memory / 2**30, 1)})
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {**out, "torch_cuda": torch.version.cuda, "cudnn": cudnn, "gpus": gpus}


def describe_input(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Size and sha256 of a file; the fingerprint of a paragraph store directory."""
    p = Path(path)
    if p.is_dir():
        meta = p / "corpus.json"
        if meta.is_file():
            info = json.loads(meta.read_text(encoding="utf-8"))
            return {"path": str(p), "kind": "paragraph store", "fingerprint": info.get("fingerprint"),
                    "num_paragraphs": info.get("num_paragraphs")}
        return {"path": str(p), "kind": "directory"}
    if not p.is_file():
        return {"path": str(p), "missing": True}
    return {"path": str(p), "bytes": p.stat().st_size, "sha256": file_sha256(p)}


def run_manifest(
    *,
    data: Mapping[str, str | os.PathLike[str] | None],
    seeds: Mapping[str, Any],
    config: Any = None,
    extra: Mapping[str, Any] | None = None,
    git: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest of one run (see the module docs); ``data`` maps a role to an input path.

    ``git``: the :func:`git_state` read when the run started (default: read now).
    """
    out: dict[str, Any] = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": list(sys.argv),
        "git": dict(git) if git is not None else git_state(),
        "versions": library_versions(),
        "hardware": hardware(),
        "seeds": dict(seeds),
        "data": {role: describe_input(path) for role, path in data.items() if path is not None},
    }
    if config is not None:
        out["config"] = {"name": getattr(config, "name", None), "fingerprint": config.fingerprint(),
                         "settings": config.to_dict()}
    return {**out, **(extra or {})}


def manifest_path(out: str | os.PathLike[str]) -> Path:
    """Where a run's manifest goes: ``PREDICTIONS.manifest.json``."""
    return Path(f"{os.fspath(out)}.manifest.json")


def write_manifest(path: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    """Write a manifest atomically."""
    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(path) as fh:
        json.dump(manifest, fh, indent=1, default=str)
        fh.write("\n")


__all__ = ["git_state", "hardware", "library_versions", "manifest_path", "run_manifest", "write_manifest"]
