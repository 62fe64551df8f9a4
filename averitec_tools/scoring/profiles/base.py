"""The contract every scoring profile implements.

A profile reproduces one official scorer (file formats, normalisation, thresholds and
quirks). It declares the options it takes (:attr:`ScoringProfile.OPTIONS`, one
:class:`ProfileOption` each: type, default, choices, range), which :meth:`ScoringProfile.score`
checks once, with :func:`check_options`, before any file is read; it implements
``_score(call)`` on the arguments as one :class:`ScoreCall`. Besides the headline summary
(with its signature) it returns one :class:`ClaimScore` per claim, so that ``averitec
compare`` (paired significance tests), ``averitec calibration`` and ``--per-claim`` work on
any profile without knowing its format, and it lists the reference strings it compares
(:meth:`ScoringProfile.gold_strings`) for a warm scorer to prepare.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.warm import WarmScoring

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class ProfileOption:
    """One declared option of a scoring profile (what ``score(**options)`` accepts).

    Everything a value must satisfy is declared here and checked in one place,
    :func:`check_options`, before any file is read.

    Attributes:
        types: The accepted value types (``None`` always means "the default").
        default: The value used when the option is not given.
        help: One line saying what the option does.
        choices: The only values accepted (empty: any value of ``types``).
        minimum: The smallest value accepted (numbers; ``None``: no bound).
        maximum: The largest value accepted (numbers; ``None``: no bound).
        excludes: Options that may not be set (truthy) together with this one.
        check: Called with a value; raises :class:`UserError` for a value it refuses (an
            ``--evidence-scorer`` spec that does not parse).

    Example:
        >>> opt = ProfileOption((int, type(None)), 5, "predicted sentences that count", minimum=1)
        >>> opt.default, opt.problem(3), opt.problem("3"), opt.problem(0)
        (5, None, "expected int or None, got '3'", 'must be at least 1, got 0')
    """

    types: type | tuple[type, ...]
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    excludes: tuple[str, ...] = ()
    check: Callable[[Any], Any] | None = None

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (type, range or :attr:`check`; not :attr:`choices`), or ``None``."""
        if value is None:
            return None
        if not isinstance(value, self.types):
            kinds = self.types if isinstance(self.types, tuple) else (self.types,)
            names = " or ".join("None" if t is type(None) else t.__name__ for t in kinds)
            return f"expected {names}, got {value!r}"
        number: Any = value  # a bounded option is numeric (declared so)
        if self.minimum is not None and number < self.minimum:
            return f"must be at least {self.minimum:g}, got {value}"
        if self.maximum is not None and number > self.maximum:
            return f"must be at most {self.maximum:g}, got {value}"
        if self.check is not None:
            try:
                self.check(value)
            except UserError as exc:
                return str(exc)
        return None

    def accepts(self, value: Any) -> bool:
        """Whether ``value`` passes every declared rule of this option alone."""
        return self.problem(value) is None and (not self.choices or value in self.choices)


def _option_error(profile: str, name: str, problem: str, *, hint: str | None = None) -> UserError:
    return UserError(f"profile {profile!r}: {name}: {problem}", hint=hint)


def check_options(profile: str, options: Mapping[str, Any], declared: Mapping[str, ProfileOption], *,
                  spell: Callable[[str], str | None] | None = None) -> None:
    """The one check of a profile's options: each declared, of its type, in its range and
    choices, and not set together with one it excludes; one message style,
    ``profile 'P': OPTION: PROBLEM``.

    ``spell(name)`` is how the caller writes an option (``averitec score``: its flag;
    ``None`` for an option it cannot set); by default its name.

    Example:
        >>> declared = {"metric": ProfileOption(str, "all", "figures", choices=("all", "hu-meteor"))}
        >>> check_options("evalai", {"metric": "hu-meteor"}, declared)
        >>> check_options("evalai", {"metric": "hu-meteo"}, declared)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: profile 'evalai': metric: unknown value 'hu-meteo' (did you mean hu-meteor?)
        >>> check_options("evalai", {"max_evidence": 3}, declared, spell=lambda name: "--" + name.replace("_", "-"))
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: profile 'evalai': --max-evidence: not an option of this profile (it takes --metric)
    """
    def name_of(option: str) -> str:
        return (spell(option) if spell else None) or option

    for name, value in options.items():
        if name not in declared:
            takes = [s for s in (spell(o) if spell else o for o in declared) if s]
            raise _option_error(profile, name_of(name), "not an option of this profile",
                                hint=f"it takes {', '.join(takes)}" if takes else None)
        option = declared[name]
        problem = option.problem(value)
        if problem is not None:
            raise _option_error(profile, name_of(name), problem, hint=option.help if problem.startswith("expected") else None)
        if option.choices and value not in option.choices:
            from averitec_tools.registry import close_names

            close = close_names(str(value), [str(c) for c in option.choices], n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"choose one of: {', '.join(map(str, option.choices))}"
            raise _option_error(profile, name_of(name), f"unknown value {value!r}", hint=hint)
        clash = next((o for o in option.excludes if value and options.get(o)), None)
        if clash is not None:
            raise _option_error(profile, name_of(name), f"cannot be set with {name_of(clash)} (they exclude each other)")


@dataclass(frozen=True)
class ClaimScore:
    """Per-claim outcome under one profile.

    Attributes:
        claim_id: The claim's id (index or ``id`` field) as the profile aligns files.
        gold_label: Reference label (``None`` if the reference has none).
        pred_label: Predicted label as submitted (after the profile's normalisation).
        values: Per-claim metric values; every headline metric that is a mean over claims
            appears here under the same key the summary uses (e.g. ``"questions_answers"``,
            ``"averitec_score@0.25"``, ``"label_accuracy"``), so resampling claims and
            averaging ``values`` reproduces the headline figure.
        confidence: The submission's ``confidence`` field for this claim, if any.
        probabilities: The submission's per-label ``probabilities``, if any.
        claim_type: Claim types (AVeriTeC) used for per-type breakdowns.
        unscored: Why the claim has no score for some metrics (their ``values`` are NaN,
            left out of the means), e.g. ``"judge_request_failed"``; ``None``: scored.
    """

    claim_id: int | str
    gold_label: str | None
    pred_label: str | None
    values: Mapping[str, float]
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None
    claim_types: tuple[str, ...] = ()
    unscored: str | None = None


@dataclass(frozen=True)
class ProfileResult:
    """What a profile returns: the JSON summary, its signature and per-claim scores.

    ``summary`` is exactly the object ``averitec score --json`` prints (it includes
    ``profile``, ``signature`` and ``n_claims``).
    """

    profile: str
    signature: str
    n_claims: int
    summary: Mapping[str, Any]
    per_claim: tuple[ClaimScore, ...] = field(default=(), repr=False)
    #: Label set used for macro-F1 (so resampled macro-F1 uses the same classes).
    labels: tuple[str, ...] = ()
    #: Lines for stderr (e.g. one per input class tolerated by ``--lenient``, with its count).
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoreCall:
    """The arguments of one :meth:`ScoringProfile.score` call (see there), as one value.

    Example:
        >>> call = ScoreCall(predictions="pred.json", references="dev.json", options={"metric": "all"})
        >>> call.jobs, call.progress, call.options["metric"]
        (None, False, 'all')
    """

    predictions: PathLike
    references: PathLike
    jobs: int | None = None
    progress: bool = False
    warm: WarmScoring | None = None
    options: dict[str, Any] = field(default_factory=dict)


class ScoringProfile(ABC):
    """Base class for a scoring profile; subclasses register in ``profiles.PROFILES``."""

    name: ClassVar[str]
    #: One line shown in ``averitec score --help``.
    description: ClassVar[str]
    #: Citation of the scorer being reproduced.
    citation: ClassVar[str] = ""
    #: Names of the per-claim values :meth:`score` returns with default options (empty:
    #: not fixed in advance, e.g. named after an option). ``averitec compare --metric`` and
    #: a competition's ``primary_metric`` are checked against them before anything is
    #: scored; ``tests/test_cli_wrong_data.py`` checks them against real results.
    per_claim_metrics: ClassVar[tuple[str, ...]] = ()
    #: The options :meth:`score` takes, by name (``averitec score`` maps its flags onto
    #: them; anything else is refused before any file is read).
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = {}

    def score(
        self,
        *,
        predictions: PathLike,
        references: PathLike,
        jobs: int | None = None,
        progress: bool = False,
        warm: WarmScoring | None = None,
        **options: Any,
    ) -> ProfileResult:
        """Score ``predictions`` against ``references`` (both file paths).

        Args:
            predictions: The submission.
            references: The gold file.
            jobs: Worker processes (``None``: the profile's default).
            progress: Show a progress bar on stderr.
            warm: Warm state lent by a long-lived scorer (see :mod:`averitec_tools.scoring.warm`);
                scores are identical with or without it.
            **options: Options declared in :attr:`OPTIONS`.

        Raises:
            UserError: for an option not in :attr:`OPTIONS` (or outside its choices), and for
                any malformed, mismatched or wrong-format input.
        """
        self.check_options(options)  # before any file is read
        call = ScoreCall(predictions=predictions, references=references, jobs=jobs, progress=progress,
                         warm=warm, options=options)
        return self._score(call)

    def check_options(self, options: Mapping[str, Any], *, spell: Callable[[str], str | None] | None = None) -> None:
        """:func:`check_options` against :attr:`OPTIONS` (``averitec score`` calls it with its flags as ``spell``)."""
        check_options(self.name, options, self.OPTIONS, spell=spell)

    @abstractmethod
    def _score(self, call: ScoreCall) -> ProfileResult:
        """What :meth:`score` does for this profile, given its arguments as one :class:`ScoreCall`."""

    def gold_strings(self, references: PathLike) -> list[str]:
        """The reference-side strings this profile compares with METEOR, each once, so
        that a warm scorer can prepare (tokenise, stem, pin) them before any submission.

        Empty for a profile that compares no strings (the default).
        """
        return []


__all__ = ["ClaimScore", "PathLike", "ProfileOption", "ProfileResult", "ScoreCall", "ScoringProfile", "check_options"]
