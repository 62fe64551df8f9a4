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

``${VAR}`` in any string is replaced by the environment variable (an unset variable is
an error naming the file and the key).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.limits import SubmissionLimits

VISIBILITIES = ("public", "private", "hidden")
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
    """

    timeout_seconds: float = 600.0
    max_attempts: int = 3


@dataclass(frozen=True)
class RateLimits:
    """Bounds of the web app, per server process: authenticated posts (sign-ins and
    uploads) per team per minute, and failed token checks per client address per five
    minutes."""

    posts_per_team_per_minute: int = 30
    failed_tokens_per_client: int = 10


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
    gold: str
    profiles: tuple[str, ...]
    primary_metric: str
    visibility: str = "public"
    limits: Limits = field(default_factory=Limits)
    split: Split | None = None
    columns: tuple[str, ...] = ()
    title: str = ""

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
    source: str = ""
    validation: SubmissionLimits = field(default_factory=SubmissionLimits)
    scoring: ScoringPolicy = field(default_factory=ScoringPolicy)
    rate_limits: RateLimits = field(default_factory=RateLimits)

    def phase(self, name: str) -> Phase:
        """The phase called ``name`` (UserError listing the phases otherwise)."""
        for p in self.phases:
            if p.name == name:
                return p
        raise UserError(f"unknown phase {name!r}; phases: {', '.join(p.name for p in self.phases)}")

    @property
    def max_upload_bytes(self) -> int:
        return int(self.max_upload_mb * 1024 * 1024)


def _get(obj: Mapping[str, Any], key: str, where: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if key not in obj:
        if default is ...:
            raise UserError(f"{where}: missing key {key!r}")
        return default
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        raise UserError(f"{where}: {key!r} has the wrong type ({type(value).__name__})")
    return value


def _limit(obj: Mapping[str, Any], key: str, where: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"{where}: {key} must be a positive integer, found {value!r}")
    return value


def _validation(data: Mapping[str, Any], where: str) -> SubmissionLimits:
    raw = _get(data, "validation", where, dict, {})
    defaults = SubmissionLimits()
    known = ("max_tokens_per_string", "max_evidence_per_claim", "max_tokens_total")
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise UserError(f"{where}: validation: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    values = {k: _limit(raw, k, f"{where}: validation") if raw.get(k) is not None else getattr(defaults, k) for k in known}
    return SubmissionLimits(**values)


def _scoring(data: Mapping[str, Any], where: str) -> ScoringPolicy:
    raw = _get(data, "scoring", where, dict, {})
    unknown = sorted(set(raw) - {"timeout_seconds", "max_attempts"})
    if unknown:
        raise UserError(f"{where}: scoring: unknown key(s) {', '.join(unknown)}; known: timeout_seconds, max_attempts")
    timeout = _get(raw, "timeout_seconds", f"{where}: scoring", (int, float), 600.0)
    if not 0 < float(timeout) <= 86_400:
        raise UserError(f"{where}: scoring.timeout_seconds must be in (0, 86400], found {timeout!r}")
    attempts = _limit(raw, "max_attempts", f"{where}: scoring") or 3
    return ScoringPolicy(float(timeout), attempts)


def _rate_limits(data: Mapping[str, Any], where: str) -> RateLimits:
    raw = _get(data, "rate_limits", where, dict, {})
    known = ("posts_per_team_per_minute", "failed_tokens_per_client")
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise UserError(f"{where}: rate_limits: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
    defaults = RateLimits()
    return RateLimits(**{k: _limit(raw, k, f"{where}: rate_limits") or getattr(defaults, k) for k in known})


def _str_list(obj: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where}: {key!r} must be a list of strings")
    return tuple(value)


def _check_primary_metric(name: str, *, profile: str, where: str) -> None:
    """Reject a primary metric that the phase's first profile does not return per claim
    (when the profile declares its per-claim metrics), with the close names."""
    from averitec_tools.leaderboard.profiles import get_profile
    from averitec_tools.registry import Registry

    declared = get_profile(profile).per_claim_metrics
    if not declared or name in declared:
        return
    known = Registry.of_names(f"per-claim metric of profile {profile!r}", declared)
    raise UserError(f"{where}: primary_metric: {known.unknown_message(name)}")


def parse_phase(raw: Any, *, where: str) -> Phase:
    """Validate one phase mapping (see the module docstring)."""
    from averitec_tools.leaderboard.profiles import PROFILES

    if not isinstance(raw, Mapping):
        raise UserError(f"{where}: each phase must be a mapping")
    name = _get(raw, "name", where, str)
    where = f"{where} ({name})"
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", name):
        raise UserError(f"{where}: phase names use letters, digits, '_', '.', '-' only")
    gold = expand_env(_get(raw, "gold", where, str), where=f"{where}: gold")
    profiles = _str_list(raw, "profiles", where) or (_get(raw, "profile", where, str, "averitec2024"),)
    for p in profiles:
        PROFILES.get(p)  # UserError with close names if unknown
    visibility = _get(raw, "visibility", where, str, "public")
    if visibility not in VISIBILITIES:
        raise UserError(f"{where}: visibility {visibility!r} is not one of {', '.join(VISIBILITIES)}")
    limits_raw = _get(raw, "limits", where, dict, {})
    limits = Limits(_limit(limits_raw, "per_day", f"{where}: limits"), _limit(limits_raw, "total", f"{where}: limits"))
    split = None
    if "split" in raw:
        s = _get(raw, "split", where, dict)
        frac = _get(s, "public_fraction", where, (int, float))
        if not 0.0 < float(frac) < 1.0:
            raise UserError(f"{where}: split.public_fraction must be in (0, 1), found {frac}")
        split = Split(float(frac), int(_get(s, "seed", where, int, 0)))
    primary = _get(raw, "primary_metric", where, str)
    _check_primary_metric(primary, profile=profiles[0], where=where)
    columns = _str_list(raw, "columns", where) or (primary,)
    if primary not in columns:
        columns = (primary, *columns)
    return Phase(
        name=name,
        gold=gold,
        profiles=profiles,
        primary_metric=primary,
        visibility=visibility,
        limits=limits,
        split=split,
        columns=columns,
        title=_get(raw, "title", where, str, name),
    )


def parse_competition(data: Any, *, where: str, source: str = "") -> Competition:
    """Validate a competition mapping (already loaded from YAML).

    Example:
        >>> c = parse_competition({"name": "demo", "phases": [{"name": "dev", "gold": "dev.json",
        ...     "primary_metric": "averitec_score@0.25"}]}, where="demo.yaml")
        >>> c.phase("dev").profile, c.max_upload_mb
        ('averitec2024', 50.0)
    """
    if not isinstance(data, Mapping):
        raise UserError(f"{where}: a competition file is a YAML mapping with 'name' and 'phases'")
    name = _get(data, "name", where, str)
    phases_raw = _get(data, "phases", where, list)
    if not phases_raw:
        raise UserError(f"{where}: 'phases' is empty")
    phases = tuple(parse_phase(p, where=f"{where}: phases[{i}]") for i, p in enumerate(phases_raw))
    names = [p.name for p in phases]
    if len(set(names)) != len(names):
        raise UserError(f"{where}: duplicate phase names in {names}")
    test = _get(data, "test", where, str, "bootstrap")
    if test not in ("bootstrap", "randomization"):
        raise UserError(f"{where}: test must be 'bootstrap' or 'randomization', found {test!r}")
    max_mb = float(_get(data, "max_upload_mb", where, (int, float), 50.0))
    if max_mb <= 0:
        raise UserError(f"{where}: max_upload_mb must be positive")
    return Competition(
        name=name,
        title=_get(data, "title", where, str, name),
        phases=phases,
        disclosure=_str_list(data, "disclosure", where),
        max_upload_mb=max_mb,
        alpha=float(_get(data, "alpha", where, (int, float), 0.05)),
        test=test,
        n_resamples=int(_get(data, "n_resamples", where, int, 1000)),
        source=source,
        validation=_validation(data, where),
        scoring=_scoring(data, where),
        rate_limits=_rate_limits(data, where),
    )


def load_competition_text(text: str, *, where: str) -> Competition:
    """Parse competition YAML text (UserError with the file name on a YAML error)."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{where}: not valid YAML: {str(exc).splitlines()[0]}") from None
    return parse_competition(data, where=where, source=text)


def load_competition(path: str | os.PathLike[str]) -> Competition:
    """Read and validate a competition YAML file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{p}: cannot read the competition file ({exc.strerror})") from None
    return load_competition_text(text, where=str(p))


__all__ = [
    "Competition",
    "Limits",
    "Phase",
    "RateLimits",
    "ScoringPolicy",
    "Split",
    "expand_env",
    "load_competition",
    "load_competition_text",
    "metric_title",
    "parse_competition",
]

