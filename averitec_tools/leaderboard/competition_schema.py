"""The competition file's schema: what keys a competition YAML may hold and their types.

Validated by pydantic through :func:`averitec_tools.configfile.validate` (unknown keys
refused with close names, strict scalars, one-line errors naming the file and the key);
:func:`averitec_tools.leaderboard.competition.parse_competition` then checks what needs
the registries or the environment (profile names, primary metric, ``${VAR}`` in ``gold``)
and builds the :class:`~averitec_tools.leaderboard.competition.Competition`.

Example:
    >>> from averitec_tools.configfile import validate
    >>> f = validate(CompetitionFile, {"name": "c", "phases": [{"name": "dev", "gold": "g.json",
    ...              "primary_metric": "label_accuracy", "limits": {"per_day": 5}}]}, where="c.yaml")
    >>> f.phases[0].limits.per_day, f.phases[0].visibility, f.max_upload_mb
    (5, 'public', 50.0)
    >>> validate(CompetitionFile, {"name": "c", "phases": [{"name": "dev", "gold": "g", "primary_metric": "m",
    ...          "limit": {}}]}, where="c.yaml")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: c.yaml: phases[0]: unknown key 'limit' (did you mean: limits, split?)
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from averitec_tools.configfile import StrictModel

_PHASE_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def _positive(value: int) -> int:
    if value < 1:
        raise ValueError("must be a positive integer")
    return value


def _open_unit(value: float) -> float:
    if not 0.0 < value < 1.0:
        raise ValueError("must be in (0, 1)")
    return value


def _timeout(value: float) -> float:
    if not 0 < value <= 86_400:
        raise ValueError("must be in (0, 86400]")
    return value


def _phase_name(value: str) -> str:
    if not _PHASE_NAME.fullmatch(value):
        raise ValueError("phase names use letters, digits, '_', '.', '-' only (at most 40)")
    return value


def _timestamp(value: object) -> object:
    """YAML reads an unquoted ``2026-05-01T12:00:00Z`` as a datetime: keep it as ISO text."""
    import datetime as dt

    return value.isoformat() if isinstance(value, (dt.datetime, dt.date)) else value


def _one_or_many(value: object) -> object:
    if isinstance(value, str):
        return (value,)
    return tuple(value) if isinstance(value, list) else value  # strict tuples: YAML gives lists


PositiveInt = Annotated[StrictInt, AfterValidator(_positive)]
#: A string or a list of strings (a single string is a list of one).
Names = Annotated[tuple[StrictStr, ...], BeforeValidator(_one_or_many)]


class LimitsFile(StrictModel):
    """``limits``: submissions per UTC day and in total (absent: no limit)."""

    per_day: PositiveInt | None = None
    total: PositiveInt | None = None


class SplitFile(StrictModel):
    """``split``: a seeded public/private split of the phase's claims."""

    public_fraction: Annotated[StrictFloat, AfterValidator(_open_unit)]
    seed: StrictInt = 0


class BaselineFile(StrictModel):
    """``resolution.baseline``: the submission whose per-claim spread states the floor."""

    team: StrictStr
    system: StrictStr


class ResolutionFile(StrictModel):
    """``resolution``: how the phase's resolution floor is found (leaderboard.floor)."""

    difference_variance: Annotated[StrictFloat, Field(gt=0, le=1)] | None = None
    baseline: BaselineFile | None = None


class PhaseFile(StrictModel):
    """One entry of ``phases``."""

    name: Annotated[StrictStr, AfterValidator(_phase_name)]
    gold: StrictStr
    primary_metric: StrictStr
    title: StrictStr | None = None
    profiles: Names = ()
    #: The single-profile spelling (``profiles`` wins when both are given).
    profile: StrictStr = "averitec2024"
    visibility: Literal["public", "private", "hidden"] = "public"
    limits: LimitsFile = LimitsFile()
    split: SplitFile | None = None
    columns: Names = ()
    #: Gold labels and claim types never shown, not even after the phase is revealed.
    gold_private: StrictBool = False
    #: Per-profile scoring options (leaderboard.phase_rules): profile -> {option: value}.
    options: dict[StrictStr, dict[StrictStr, StrictStr | StrictBool | StrictInt | StrictFloat | None]] = Field(default_factory=dict)
    #: A failed or unparseable LLM-judge request: the claim is unscored (default) or scores 0 (official).
    judge_failures: Literal["unscored", "zero"] = "unscored"
    #: Audit rules: refuse a submission citing the claim's own fact-check / evidence published after the claim.
    reject_own_factcheck: StrictBool = False
    reject_published_after_claim: StrictBool = False
    #: Per-claim scores to the submitting team while the gold is not shown (None: unless gold_private).
    per_claim_feedback: StrictBool | None = None
    #: When the phase ends (ISO 8601, UTC unless it names an offset); after it: ``after_deadline``.
    deadline: Annotated[StrictStr, BeforeValidator(_timestamp)] | None = None
    after_deadline: Literal["refuse", "late"] = "refuse"
    resolution: ResolutionFile = ResolutionFile()


class ValidationFile(StrictModel):
    """``validation``: submission bounds checked before scoring (absent or null: the default)."""

    max_tokens_per_string: PositiveInt | None = None
    max_evidence_per_claim: PositiveInt | None = None
    max_tokens_total: PositiveInt | None = None
    max_images_per_claim: PositiveInt | None = None
    max_image_bytes: PositiveInt | None = None
    max_image_pixels: PositiveInt | None = None


class ScoringFile(StrictModel):
    """``scoring``: the time one scoring run may take and the runs a submission gets."""

    timeout_seconds: Annotated[StrictFloat, AfterValidator(_timeout)] = 600.0
    max_attempts: PositiveInt | None = None
    memory_mb: Annotated[PositiveInt, Field(ge=64)] | None = None


class RateLimitsFile(StrictModel):
    """``rate_limits``: per server process (absent or null: the default)."""

    posts_per_team_per_minute: PositiveInt | None = None
    failed_tokens_per_client: PositiveInt | None = None
    request_seconds: Annotated[StrictFloat, AfterValidator(_timeout)] | Annotated[PositiveInt, Field(le=86_400)] | None = None
    connections_per_client: PositiveInt | None = None
    uploads_per_team: PositiveInt | None = None


class CompetitionFile(StrictModel):
    """The whole competition file."""

    name: StrictStr
    phases: Annotated[list[PhaseFile], Field(min_length=1)]
    title: StrictStr | None = None
    disclosure: Names = ()
    max_upload_mb: Annotated[StrictFloat, Field(gt=0)] = 50.0
    alpha: StrictFloat = 0.05
    test: Literal["bootstrap", "randomization"] = "bootstrap"
    n_resamples: StrictInt = 1000
    seed: StrictInt = 0
    validation: ValidationFile = ValidationFile()
    scoring: ScoringFile = ScoringFile()
    rate_limits: RateLimitsFile = RateLimitsFile()


__all__ = ["CompetitionFile", "PhaseFile"]
