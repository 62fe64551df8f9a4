"""How a kind of R2VC configuration runs: the ``standard`` and ``offline-minilm`` presets.

A configuration names its preset (``preset:``; a YAML file may keep the older
``offline: {enabled: true}``). The ``standard`` preset builds the models the configuration
names (generator, verifier, calibrator files, a corpus:
:func:`~averitec_tools.baselines.r2vc.standard.build_standard`); ``offline-minilm`` trains
them itself from the AVeriTeC training split (corpus, verifier and calibrator built and
cached: :func:`~averitec_tools.baselines.r2vc.offline.preset.build_offline`). What differs
between the two is written once, here, as a :class:`RunPreset` in :data:`PRESETS`:

* :meth:`~RunPreset.build`: the whole pipeline, complete when it is built;
* the default ``--claims`` and whether ``--corpus`` is accepted;
* whether ``averitec baseline r2vc-calibrate`` applies (offline fits its own);
* the seeds the run manifest records and the settings that enter the candidate-store key;
* what the run summary adds (``offline``: the corpus caveat, training facts).

Example:
    >>> from averitec_tools.baselines.r2vc.config import R2VCConfig, resolve_config
    >>> preset_for(R2VCConfig()).name, preset_for(resolve_config("offline-minilm")).name
    ('standard', 'offline-minilm')
    >>> preset_for(resolve_config("offline-minilm")).seeds(resolve_config("offline-minilm"))
    {'offline': 13}
    >>> preset_for(R2VCConfig(name="paper")).default_claims(R2VCConfig(name="paper"))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: config 'paper': --claims is required
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.request import BuildRequest
from averitec_tools.errors import UserError
from averitec_tools.registry import Registry


@dataclass(frozen=True)
class RunPreset:
    """The ``standard`` preset: every model is named by the configuration."""

    name: str = "standard"
    #: Whether the preset fits its own calibrator (and verifier) when the pipeline is built.
    fits_own_models: bool = False

    def build(self, config: R2VCConfig, request: BuildRequest) -> R2VCPipeline:
        """The pipeline of ``config`` (its ablation switches applied), complete.

        Raises:
            UserError / ResourceError: a component left unset without its ablation, no
                corpus, a missing or corrupt index, a model that cannot be loaded.
        """
        from averitec_tools.baselines.r2vc.standard import build_standard

        cfg = config.effective()
        cfg.check_components()
        return build_standard(cfg, request)

    def default_claims(self, config: R2VCConfig) -> str:
        """The claims file run without ``--claims``."""
        raise UserError(f"config {config.name!r}: --claims is required")

    def check_corpus(self, config: R2VCConfig, corpus: str | None) -> None:
        """Refuse a ``--corpus`` the preset does not read."""

    def check_calibrate(self, config: R2VCConfig) -> None:
        """Refuse ``r2vc-calibrate`` where the preset fits its own calibrator."""

    def seeds(self, config: R2VCConfig) -> dict[str, Any]:
        """Seeds the run manifest records beyond the generator's."""
        return {}

    def store_settings(self, config: R2VCConfig, components: dict[str, Any]
                       ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """What enters a candidate-store key beyond the model settings: (settings, components)."""
        return None, None

    def summary_extra(self, config: R2VCConfig) -> dict[str, Any]:
        """Keys the run summary adds."""
        return {}


@dataclass(frozen=True)
class OfflinePreset(RunPreset):
    """``offline-minilm``: corpus, verifier and calibrator built from the training split."""

    name: str = "offline-minilm"
    fits_own_models: bool = True

    def build(self, config: R2VCConfig, request: BuildRequest) -> R2VCPipeline:
        from averitec_tools.baselines.r2vc.offline.preset import build_offline

        return build_offline(config.effective(), request, base=config)

    def default_claims(self, config: R2VCConfig) -> str:
        from averitec_tools.baselines.r2vc.offline.data import default_claims_path

        return str(default_claims_path())

    def check_corpus(self, config: R2VCConfig, corpus: str | None) -> None:
        if corpus:
            raise UserError(f"config {config.name!r} builds its own corpus: drop --corpus")

    def check_calibrate(self, config: R2VCConfig) -> None:
        raise UserError("offline-minilm fits its own calibrator on the training split; use a YAML config here")

    def seeds(self, config: R2VCConfig) -> dict[str, Any]:
        return {"offline": config.offline.seed}

    def store_settings(self, config: R2VCConfig, components: dict[str, Any]
                       ) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        from averitec_tools.baselines.r2vc.offline.data import offline_store_settings

        return offline_store_settings(config, components)

    def summary_extra(self, config: R2VCConfig) -> dict[str, Any]:
        from averitec_tools.baselines.r2vc.offline.preset import describe

        return {"offline": describe(config)}


#: The presets by name (a configuration's ``preset``).
PRESETS: Registry[RunPreset] = Registry("R2VC run preset")
PRESETS.add("standard", RunPreset())
PRESETS.add("offline-minilm", OfflinePreset())


def preset_for(config: R2VCConfig) -> RunPreset:
    """The preset a configuration names (``config.preset``)."""
    return PRESETS.get(config.preset)


__all__ = ["PRESETS", "OfflinePreset", "RunPreset", "preset_for"]
