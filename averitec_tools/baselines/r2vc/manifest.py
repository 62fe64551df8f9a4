"""The run manifest of an R2VC run: ``PREDICTIONS.manifest.json`` beside the predictions.

The manifest itself (git commit, versions, hardware, seeds, input hashes, configuration)
is the baselines' shared one, :mod:`averitec_tools.baselines._run.manifest`; this module
says which inputs and seeds an R2VC run has (the preset adds its own seeds,
:meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.seeds`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.manifest import manifest_path, run_manifest, write_manifest
from averitec_tools.baselines.r2vc.presets import preset_for


def write_run_manifest(
    *,
    out: str | os.PathLike[str],
    config: Any,
    claims: str | os.PathLike[str],
    corpus: str | None = None,
    config_file: str | None = None,
    evidence: str = "retrieved",
    limit: int | None = None,
    git: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``PREDICTIONS.manifest.json`` beside the predictions ``out`` of an R2VC run: git
    commit, library versions, GPU/CUDA, seeds, the sha256 of every input (claims, corpus,
    calibrator, config file, local models) and the configuration. Returns its path.
    ``git``: the checkout's state read when the run started (default: now).

    Example:
        >>> import tempfile, pathlib, json
        >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "claims.json").write_text("[]")
        >>> path = write_run_manifest(out=d / "p.json", config=R2VCConfig(), claims=d / "claims.json", limit=5)
        >>> manifest = json.loads(path.read_text())
        >>> path.name, manifest["evidence"], manifest["limit"], sorted(manifest["data"])
        ('p.json.manifest.json', 'retrieved', 5, ['claims'])
    """
    g = config.generator
    data: dict[str, str | os.PathLike[str] | None] = {
        "claims": claims, "corpus": corpus or config.retrieval.corpus, "calibrator": config.calibration.path,
        "config": config_file if config_file and os.path.isfile(config_file) else None,
    }
    for role, model in (("generator", g.model), ("verifier", config.verifier.model)):
        if model and os.path.exists(model):
            data[role] = model
    seeds = {"generator": g.seed, "calibrator_heldout": g.seed, **preset_for(config).seeds(config)}
    path = manifest_path(out)
    write_manifest(path, run_manifest(data=data, seeds=seeds, config=config, git=git,
                                      extra={"evidence": evidence, "limit": limit}))
    return path


__all__ = ["write_run_manifest"]
