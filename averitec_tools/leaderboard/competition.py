"""A competition: one YAML file with its phases, limits, split and shown columns.

Example YAML (``examples/leaderboard/averitec-dev.yaml``)::

    name: averitec-dev
    title: AVeriTeC dev leaderboard
    max_upload_mb: 50
    disclosure: [model, open_weights, seconds_per_claim]
    validation:                     # checked before scoring; defaults shown
      max_tokens_per_string: 5000
      max_evidence_per_claim: 200
      max_tokens_total: 5000000
    scoring:
      timeout_seconds: 600          # a submission still scoring then fails
      max_attempts: 3               # runs interrupted (worker killed) before it fails
      memory_mb: 4096               # memory one scoring run may add to the worker; past it: refused
    rate_limits:                    # per server process; past them: 429 with Retry-After
      posts_per_team_per_minute: 30
      failed_tokens_per_client: 10  # per 5 minutes
    phases:
      - name: dev
        gold: ${AVERITEC_DATA_DIR}/averitec/dev.json
        profiles: [averitec2024]
        primary_metric: averitec_score@0.25
        visibility: public          # public | private | hidden
        limits: {per_day: 5, total: 100}
        split: {public_fraction: 0.5, seed: 13}   # optional public/private claim split
        columns: [averitec_score@0.25, questions_answers, label_accuracy]
        gold_private: false         # true: gold labels and claim types never shown, even after reveal

``${VAR}`` in ``gold`` is replaced by the environment variable (an unset variable is an
error naming the file and the key; a stored competition is loaded with ``env="optional"``,
so commands that do not read the gold, such as ``status``, do not need the variable). The keys and their types are the schema of
:mod:`averitec_tools.leaderboard.competition_schema`: an unknown key is an error with the
close names.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import read_text
from averitec_tools.leaderboard.limits import SubmissionLimits
from averitec_tools.leaderboard.phase_checks import check_metrics, declared_metrics, parse_deadline

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: Readable names of per-claim metric keys (anything else is shown as its key).
METRIC_TITLES: dict[str, str] = {
    "averitec_score@0.1": "AVeriTeC @ 0.1",
    "averitec_score@0.2": "AVeriTeC @ 0.2",
    "averitec_score@0.25": "AVeriTeC @ 0.25",
    "averitec_score@0.3": "AVeriTeC @ 0.3",
    "averitec_score@0.4": "AVeriTeC @ 0.4",
    "averitec_score@0.5": "AVeriTeC @ 0.5",
    "questions_only": "Q only",
    "questions_answers": "Q+A",
    "answers_only": "A only",
    "label_accuracy": "Label acc.",
}


def metric_title(key: str) -> str:
    """Readable column title of a metric key.

    Example:
        >>> metric_title("averitec_score@0.25"), metric_title("fever_score")
        ('AVeriTeC @ 0.25', 'fever_score')
    """
    return METRIC_TITLES.get(key, key)


def expand_env(value: str, *, where: str) -> str:
    """Replace ``${VAR}`` by the environment's value.

    Example:
        >>> os.environ["LB_DOC_DIR"] = "/data"
        >>> expand_env("${LB_DOC_DIR}/dev.json", where="x.yaml: gold")
        '/data/dev.json'
    """

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise UserError(f"{where}: environment variable ${{{name}}} is not set")
        return os.environ[name]

    return _ENV.sub(sub, value)


@dataclass(frozen=True)
class Limits:
    """Submissions a team may make per phase: per UTC day and in total (``None``: no limit)."""

    per_day: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class ScoringPolicy:
    """How long one submission may be scored and how often a run may be interrupted.

    ``timeout_seconds`` bounds one scoring run (validation, parsing, METEOR, CIs): a
    submission still running then fails with a message and the worker takes the next.
    ``max_attempts`` bounds the runs a submission gets when its worker dies under it
    (killed, out of memory): after that many it fails instead of being leased again.
    ``memory_mb`` bounds the memory one scoring run may add to the warm worker: each run
    is a child process capped at the worker's size plus this much
    (:mod:`~averitec_tools.leaderboard.isolation`); past it the submission is refused as
    too large to score (charged), and the memory goes back to the system after each run.
    """

    timeout_seconds: float = 600.0
    max_attempts: int = 3
    memory_mb: int = 4096

    @property
    def memory_bytes(self) -> int:
        return int(self.memory_mb) << 20


@dataclass(frozen=True)
class RateLimits:
    """Bounds of the web app, per server process: authenticated posts (sign-ins and
    uploads) per team per minute, failed token checks per client address per five
    minutes, the seconds one request may take from its first byte to its last body byte
    (``request_seconds``: a body that trickles in is cut off), open connections per client
    address, and uploads of one team in flight at once."""

    posts_per_team_per_minute: int = 30
    failed_tokens_per_client: int = 10
    request_seconds: float = 60.0
    connections_per_client: int = 20
    uploads_per_team: int = 4


@dataclass(frozen=True)
class Split:
    """A seeded public/private split of the phase's claims."""

    public_fraction: float
    seed: int

    def public_mask(self, n_claims: int) -> list[bool]:
        """``True`` for claims on the public board; the same seed gives the same split.

        Example:
            >>> Split(0.5, 1).public_mask(4).count(True)
            2
        """
        import numpy as np

        n_public = int(round(self.public_fraction * n_claims))
        order = np.random.default_rng(self.seed).permutation(n_claims)
        mask = [False] * n_claims
        for i in order[:n_public]:
            mask[int(i)] = True
        return mask


@dataclass(frozen=True)
class Phase:
    """One phase (e.g. dev or test) of a competition."""

    name: str
    #: The gold file (``${VAR}`` expanded; as written when the variable is unset and the
    #: competition was loaded with ``env="optional"``).
    gold: str
    profiles: tuple[str, ...]
    primary_metric: str
    visibility: str = "public"
    limits: Limits = field(default_factory=Limits)
    split: Split | None = None
    columns: tuple[str, ...] = ()
    title: str = ""
    #: Gold labels and claim metadata (claim types) stay off every page even after the reveal.
    gold_private: bool = False
    #: Per-profile scoring options (:mod:`~averitec_tools.leaderboard.phase_rules`).
    options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    #: A failed LLM-judge request: ``unscored`` (the claim left out, counted) or ``zero`` (official).
    judge_failures: str = "unscored"
    #: Organiser audit rules that reject a submission (``reject_own_factcheck``, ...): True ones.
    reject: tuple[str, ...] = ()
    #: Whether the submitting team sees its per-claim scores while the gold is not shown.
    per_claim_feedback: bool = True
    #: When the phase ends (naive UTC; ``None``: open); after it uploads are refused or marked late.
    deadline: dt.datetime | None = None
    after_deadline: str = "refuse"
    #: The stated variance of a per-claim difference, and the baseline (team, system) whose
    #: spread replaces it once scored (:mod:`~averitec_tools.leaderboard.floor`).
    difference_variance: float = 0.5
    baseline: tuple[str, str] | None = None

    @property
    def profile(self) -> str:
        """The profile whose scores rank the phase (the first one listed)."""
        return self.profiles[0]


@dataclass(frozen=True)
class Competition:
    """A parsed competition file."""

    name: str
    title: str
    phases: tuple[Phase, ...]
    disclosure: tuple[str, ...] = ()
    max_upload_mb: float = 50.0
    alpha: float = 0.05
    test: str = "bootstrap"
    n_resamples: int = 1000
    #: Seed of the board's bootstrap resamples (CIs, tiers, rank intervals).
    seed: int = 0
    source: str = ""
    validation: SubmissionLimits = field(default_factory=SubmissionLimits)
    scoring: ScoringPolicy = field(default_factory=ScoringPolicy)
    rate_limits: RateLimits = field(default_factory=RateLimits)

    def phase(self, name: str) -> Phase:
        """The phase called ``name`` (UserError listing the phases otherwise)."""
        for p in self.phases:
            if p.name == name:
                return p
        shown = repr(name) if len(name) <= 60 else f"{name[:40]!r}... ({len(name)} characters)"
        raise UserError(f"unknown phase {shown}; phases: {', '.join(p.name for p in self.phases)}")

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


def _gold(spec: str, *, where: str, env: str) -> str:
    """``spec`` with ``${VAR}`` expanded; with ``env="optional"`` an unset variable leaves
    ``spec`` as written (a stored competition: only reading the gold needs the variable)."""
    try:
        return expand_env(spec, where=where)
    except UserError:
        if env == "optional":
            return spec
        raise


def _phase(raw: Any, *, where: str, env: str = "required") -> Phase:
    """A schema-checked phase (:class:`~averitec_tools.leaderboard.competition_schema.PhaseFile`)
    with its names checked against the registries and ``${VAR}`` in ``gold`` expanded."""
    from averitec_tools.scoring.profiles import PROFILES

    where = f"{where} ({raw.name})"
    profiles = raw.profiles or (raw.profile,)
    for p in profiles:
        PROFILES.get(p)  # UserError with close names if unknown
    check_metrics(raw.primary_metric, raw.columns, profile=profiles[0], options=raw.options.get(profiles[0], {}), where=where)
    columns = raw.columns or (raw.primary_metric,)
    if raw.primary_metric not in columns:
        columns = (raw.primary_metric, *columns)
    split = None if raw.split is None else Split(raw.split.public_fraction, raw.split.seed)
    from averitec_tools.leaderboard.phase_rules import REJECT_RULES, profile_options

    options = profile_options(raw.options, profiles=profiles, where=where,
                              expand=lambda v, where: _gold(v, where=where, env=env))
    return Phase(
        name=raw.name,
        gold=_gold(raw.gold, where=f"{where}: gold", env=env),
        profiles=profiles,
        primary_metric=raw.primary_metric,
        visibility=raw.visibility,
        limits=Limits(raw.limits.per_day, raw.limits.total),
        split=split,
        columns=columns,
        title=raw.name if raw.title is None else raw.title,
        gold_private=raw.gold_private,
        options=options,
        judge_failures=raw.judge_failures,
        reject=tuple(k for k in REJECT_RULES if getattr(raw, k)),
        per_claim_feedback=(not raw.gold_private) if raw.per_claim_feedback is None else raw.per_claim_feedback,
        deadline=parse_deadline(raw.deadline, where=where),
        after_deadline=raw.after_deadline,
        difference_variance=raw.resolution.difference_variance or 0.5,
        baseline=None if raw.resolution.baseline is None else (raw.resolution.baseline.team, raw.resolution.baseline.system),
    )


def _or_defaults(values: Any, defaults: Any) -> dict[str, Any]:
    """The section's values, a key left out or null taking the dataclass default."""
    return {k: getattr(defaults, k) if v is None else v for k, v in values.model_dump().items()}


def parse_competition(data: Any, *, where: str, source: str = "", env: str = "required") -> Competition:
    """Validate a competition mapping (already loaded from YAML).

    The keys and their types are the schema's
    (:class:`~averitec_tools.leaderboard.competition_schema.CompetitionFile`: unknown keys
    are errors with close names); profiles and primary metrics are checked against the
    registries.

    Example:
        >>> c = parse_competition({"name": "demo", "phases": [{"name": "dev", "gold": "dev.json",
        ...     "primary_metric": "averitec_score@0.25"}]}, where="demo.yaml")
        >>> c.phase("dev").profile, c.max_upload_mb
        ('averitec2024', 50.0)
    """
    from averitec_tools.configfile import validate
    from averitec_tools.leaderboard.competition_schema import CompetitionFile

    if not isinstance(data, Mapping):
        raise UserError(f"{where}: a competition file is a YAML mapping with 'name' and 'phases'")
    raw = validate(CompetitionFile, data, where=where)
    phases = tuple(_phase(p, where=f"{where}: phases[{i}]", env=env) for i, p in enumerate(raw.phases))
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise UserError(f"{where}: duplicate phase names in {names}")
    scoring = _or_defaults(raw.scoring, ScoringPolicy())
    return Competition(
        name=raw.name,
        title=raw.name if raw.title is None else raw.title,
        phases=phases,
        disclosure=raw.disclosure,
        max_upload_mb=raw.max_upload_mb,
        alpha=raw.alpha,
        test=raw.test,
        n_resamples=raw.n_resamples,
        seed=raw.seed,
        source=source,
        validation=SubmissionLimits(**_or_defaults(raw.validation, SubmissionLimits())),
        scoring=ScoringPolicy(float(scoring["timeout_seconds"]), scoring["max_attempts"], scoring["memory_mb"]),
        rate_limits=RateLimits(**_or_defaults(raw.rate_limits, RateLimits())),
    )


def load_competition_text(text: str, *, where: str, env: str = "required") -> Competition:
    """Parse competition YAML text (UserError with the file name on a YAML error)."""
    from averitec_tools.configfile import load_yaml_text

    return parse_competition(load_yaml_text(text, where=where), where=where, source=text, env=env)


def load_competition(path: str | os.PathLike[str]) -> Competition:
    """Read and validate a competition YAML file."""
    p = Path(path)
    text = read_text(p, what="competition file", undecodable="the competition file")
    return load_competition_text(text, where=str(p))


__all__ = [
    "Competition", "Limits", "Phase", "RateLimits", "Split", "load_competition", "declared_metrics", "load_competition_text",
    "metric_title", "parse_competition", "parse_deadline",
]

