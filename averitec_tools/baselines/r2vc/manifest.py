"""What the run manifest of an R2VC run records: ``PREDICTIONS.manifest.json`` beside the predictions.

The manifest itself (git commit, versions, hardware, seeds, input hashes, configuration)
is the baselines' shared one, :mod:`averitec_tools.baselines._run.manifest`, written by the
driver; this module says which inputs and seeds an R2VC run has (the preset adds its own
seeds, :meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.seeds`).
"""

from __future__ import annotations

import os
from typing import Any

from averitec_tools.baselines._run.driver import ManifestParts
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.presets import preset_for


def manifest_parts(*, config: R2VCConfig, claims: str | os.PathLike[str], corpus: str | None = None,
                   config_file: str | None = None, evidence: str = "retrieved",
                   limit: int | None = None) -> ManifestParts:
    """The inputs (claims, corpus, calibrator, config file, local models), seeds and extra keys
    of an R2VC run's manifest; ``config`` is the configuration the pipeline ran.

    Example:
        >>> parts = manifest_parts(config=R2VCConfig(), claims="claims.json", limit=5)
        >>> sorted(k for k, v in parts.data.items() if v), parts.seeds, parts.extra
        (['claims'], {'generator': 0, 'calibrator_heldout': 0}, {'evidence': 'retrieved', 'limit': 5})
    """
    g = config.generator
    data: dict[str, Any] = {
        "claims": claims, "corpus": corpus or config.retrieval.corpus, "calibrator": config.calibration.path,
        "config": config_file if config_file and os.path.isfile(config_file) else None,
    }
    for role, model in (("generator", g.model), ("verifier", config.verifier.model)):
        if model and os.path.exists(model):
            data[role] = model
    seeds = {"generator": g.seed, "calibrator_heldout": g.seed, **preset_for(config).seeds(config)}
    return ManifestParts(data=data, config=config, seeds=seeds, extra={"evidence": evidence, "limit": limit})


__all__ = ["manifest_parts"]
