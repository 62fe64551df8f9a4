"""What the METEOR-based profiles (``averitec2024``, ``averitec2023``, ``evalai``,
``fever8``) share: their declared options, their METEOR engine (cold, or the warm one
lent to them) and their signature."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.metrics.signature import Signature, lexicon_field, wordnet_field
from averitec_tools.metrics.tokenize import TOKENIZER_NAME
from averitec_tools.scoring.profiles.base import ProfileOption
from averitec_tools.scoring.warm import WarmScoring, warm_engine

#: ``--metric`` values: every figure of the profile, or Hungarian METEOR only.
METRIC_CHOICES = ("all", "hu-meteor")

ALLOW_DOWNLOAD = ProfileOption(bool, True, "whether missing NLTK data may be downloaded")
CACHE_DIR = ProfileOption((str, type(None)), None, "where prepared gold strings are cached (None: not cached)")

#: The options of the Hungarian METEOR profiles (2023, 2024, EvalAI).
METEOR_OPTIONS: Mapping[str, ProfileOption] = {
    "allow_download": ALLOW_DOWNLOAD,
    "metric": ProfileOption(str, "all", "'all' figures or only the evidence scores ('hu-meteor')",
                            choices=METRIC_CHOICES),
    "lenient": ProfileOption(bool, False, "accept and count what the official scorer accepts"),
    "cache_dir": CACHE_DIR,
}


def make_engine(options: Mapping[str, Any], *, warm: WarmScoring | None, profile: str) -> MeteorEngine:
    """The warm engine lent to ``profile``, or a fresh one (``allow_download`` option).

    Example:
        >>> make_engine({}, warm=WarmScoring(profile="evalai", engine="E"), profile="evalai")
        'E'
        >>> make_engine({"allow_download": False}, warm=None, profile="evalai").allow_download
        False
    """
    lent = warm_engine(warm, profile=profile)
    return lent if lent is not None else MeteorEngine(allow_download=bool(options.get("allow_download", True)))


def signature(
    *,
    profile: str,
    engine: MeteorEngine,
    thresholds: Sequence[float],
    comparison: str,
    normalisation: str,
    evidence_cap: int | None,
    lenient: bool = False,
) -> str:
    """The Hungarian METEOR profiles' signature (see :class:`~averitec_tools.metrics.signature.Signature`)."""
    return Signature(
        profile=profile,
        metric="hu-meteor",
        tokenizer=TOKENIZER_NAME,
        wordnet=wordnet_field(engine.lexicon),
        lexicon=lexicon_field(engine.lexicon),
        thresholds=tuple(thresholds),
        comparison=comparison,
        normalisation=normalisation,
        evidence_cap=evidence_cap,
        version=__version__,
        lenient=lenient,
    ).render()


__all__ = ["METEOR_OPTIONS", "make_engine", "signature"]
