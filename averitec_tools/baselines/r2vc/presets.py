"""How a kind of R2VC configuration runs: the ``standard`` and ``offline-minilm`` presets.

A configuration either names its models (``standard``: generator, verifier, calibrator
files, a corpus) or trains them itself from the AVeriTeC training split
(``offline-minilm``, ``offline.enabled: true``: corpus, verifier and calibrator built
and cached by :mod:`~averitec_tools.baselines.r2vc.offline.preset`). What differs between the
two is written once, here, as a :class:`RunPreset` in :data:`PRESETS`:

* the default ``--claims`` and whether ``--corpus`` is accepted;
* whether ``averitec baseline r2vc-calibrate`` applies (offline fits its own);
* the seeds the run manifest records and the settings that enter the candidate-store key;
* what the run summary adds (``offline``: the corpus caveat, training facts).

The pipeline builders of each preset are in :mod:`~averitec_tools.baselines.r2vc.build`
(:data:`~averitec_tools.baselines.r2vc.build.BUILDERS`, same names).

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

from averitec_tools.baselines.r2vc.config import OFFLINE_DEPARTURES, R2VCConfig
from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

ORACLE_NOTE = (
    "oracle-corpus: the offline-minilm corpus contains the scored claims' gold answers, so "
    "evidence scores are upper bounds, not open-retrieval figures"
)
EXCLUDE_NOTE = (
    "honest corpus: the training claims' gold answers only (no dev or pseudo-test annotation); each "
    "claim's own answers, its fact-checking article's and its sibling claims' are removed from its "
    "retrieval results"
)
DEV_CORPUS_NOTE = (
    "dev-annotation corpus: the corpus holds every dev claim's gold answers; each claim's own, its "
    "article's and its siblings' are removed from its retrieval results, the other dev claims' stay "
    "(dev-transductive, not honest)"
)


@dataclass(frozen=True)
class RunPreset:
    """The ``standard`` preset: every model is named by the configuration."""

    name: str = "standard"
    #: Whether the preset fits its own calibrator (and verifier) when the pipeline is built.
    fits_own_models: bool = False

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
        return {"offline": describe(config)}


def describe(cfg: R2VCConfig) -> dict[str, Any]:
    """Facts about the offline configuration for run summaries and docs.

    Example:
        >>> from averitec_tools.baselines.r2vc.config import resolve_config
        >>> d = describe(resolve_config("offline-minilm-oracle"))
        >>> d["oracle_corpus"], d["note"] == ORACLE_NOTE, d["trained_on"]
        (True, True, 'averitec/train.json')
    """
    from averitec_tools.baselines.r2vc.offline.data import cache_root

    off = cfg.offline
    note = ORACLE_NOTE if not off.exclude_own_evidence else DEV_CORPUS_NOTE if off.corpus == "train+dev" \
        else EXCLUDE_NOTE
    return {"oracle_corpus": not off.exclude_own_evidence, "dev_annotations_in_corpus": off.corpus == "train+dev",
            "note": note,
            "trained_on": "averitec/train.json", "train_claims": off.train_claims,
            "pair_labels": off.pair_labels, "epochs": off.epochs, "calibration_claims": off.calibration_claims,
            "departures": list(OFFLINE_DEPARTURES),
            "cache_dir": str(cache_root(cfg))}


#: The presets by name.
PRESETS: Registry[RunPreset] = Registry("R2VC run preset")
PRESETS.add("standard", RunPreset())
PRESETS.add("offline-minilm", OfflinePreset())


def preset_for(config: R2VCConfig) -> RunPreset:
    """The preset a configuration runs under (``offline.enabled`` → ``offline-minilm``)."""
    return PRESETS.get("offline-minilm" if config.offline.enabled else "standard")


__all__ = ["EXCLUDE_NOTE", "ORACLE_NOTE", "PRESETS", "OfflinePreset", "RunPreset", "describe", "preset_for"]
