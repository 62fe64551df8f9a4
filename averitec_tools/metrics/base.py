"""Metric objects: small parameterised definitions with metadata, in one registry.

A metric is a frozen dataclass instance with a ``name``, its ``params``, whether higher
is better, and a citation. Registration rejects duplicate names and lookups suggest
close names (see :class:`averitec_tools.registry.Registry`).

As in ir_measures, a configured metric has a string form, its registry name with the
parameters that differ from the defaults, which :func:`parse_metric` reads back into an
equal object (typed by the dataclass fields; unknown names and parameters get close-name
suggestions):

    >>> from averitec_tools.metrics import ece
    >>> m = parse_metric("ece(n_bins=10,strategy=quantile)")
    >>> m == ece.ExpectedCalibrationError(n_bins=10, strategy="quantile"), str(m)
    (True, 'ece(n_bins=10,strategy=quantile)')
    >>> str(parse_metric("ece")), parse_metric(str(m)) == m
    ('ece', True)
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - Python 3.10 (typing_extensions comes with pydantic)
    from typing_extensions import dataclass_transform


@dataclass(frozen=True)
class MetricInfo:
    """Metadata describing one metric.

    Example:
        >>> info = MetricInfo(name="brier", higher_is_better=False,
        ...                   description="mean squared error of confidence vs correctness")
        >>> info.higher_is_better
        False
    """

    name: str
    higher_is_better: bool
    description: str
    params: dict[str, Any] = field(default_factory=dict)
    citation: str = ""
    #: Value range, for documentation and property tests.
    bounds: tuple[float, float] = (0.0, 1.0)


#: The global metric registry: ``METRICS.get("ece")`` returns the metric's object.
METRICS: Registry[Any] = Registry("metric")


class Metric:
    """Base of the parameterised metrics: a frozen dataclass whose fields are its parameters.

    The one way to define a metric: subclasses pass the metadata as class keywords
    (``class ECE(Metric, name="ece", higher_is_better=False, description=...)``), declare
    the parameters as fields, implement ``__call__`` (or inherit it from
    :class:`ConfidenceMetric` / :class:`ProbabilityMetric`), and register with the
    :func:`register_metric` class decorator, which makes them frozen dataclasses; ``info``, ``params`` and the string form
    (:func:`metric_spec`) follow from the fields. ``shown=("threshold",)`` names parameters
    the string form always writes (``averitec-score(threshold=0.25)``: a per-claim key
    names its λ even at the default); ``choices`` the only values of a parameter with a fixed
    set, and :meth:`validate` any further check, both run on construction.

    Example:
        >>> from averitec_tools.metrics.selective import CoverageAtRisk
        >>> m = CoverageAtRisk(max_risk=0.05)
        >>> m.info.name, m.params, str(m)
        ('coverage-at-risk', {'max_risk': 0.05}, 'coverage-at-risk(max_risk=0.05)')
    """

    name: ClassVar[str]
    higher_is_better: ClassVar[bool]
    description: ClassVar[str]
    citation: ClassVar[str] = ""
    #: Value range, for documentation and property tests.
    bounds: ClassVar[tuple[float, float]] = (0.0, 1.0)
    #: Parameters the string form writes even at their default.
    shown: ClassVar[tuple[str, ...]] = ()
    #: The only values of a parameter with a fixed set (checked on construction).
    choices: ClassVar[Mapping[str, tuple[Any, ...]]] = {}

    def __init_subclass__(
        cls, *, name: str | None = None, higher_is_better: bool = False, description: str = "", citation: str = "",
        bounds: tuple[float, float] = (0.0, 1.0), shown: tuple[str, ...] = (), **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.name, cls.higher_is_better, cls.description = name, higher_is_better, description
            cls.citation, cls.bounds, cls.shown = citation, bounds, shown

    def __post_init__(self) -> None:
        for key, allowed in self.choices.items():
            value = getattr(self, key)
            if value not in allowed:
                raise UserError(f"{self.name}: {key} must be one of {', '.join(map(str, allowed))}, got {value!r}")
        self.validate()

    def validate(self) -> None:
        """Checks of the parameters beyond :attr:`choices` (ranges), run on construction; a
        :class:`UserError` names the metric and the parameter."""

    @property
    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]

    @property
    def info(self) -> MetricInfo:
        return MetricInfo(
            name=self.name, higher_is_better=self.higher_is_better, description=self.description,
            params=self.params, citation=self.citation, bounds=self.bounds,
        )

    def __str__(self) -> str:
        return metric_spec(self)


MetricClass = TypeVar("MetricClass", bound=type[Metric])


@dataclass_transform(frozen_default=True)
def register_metric(cls: MetricClass) -> MetricClass:
    """Class decorator, the one definition and registration: makes the class a frozen
    dataclass (its fields are the parameters) and ``METRICS`` holds its default instance
    under its ``name`` (a second metric of that name is an error).

    Example:
        >>> @register_metric
        ... class Half(Metric, name="half-doc-example", higher_is_better=True, description="always 0.5"):
        ...     def __call__(self) -> float:
        ...         return 0.5
        >>> METRICS.get(Half.name)(), str(METRICS.get(Half.name))
        (0.5, 'half-doc-example')
        >>> METRICS._items.pop(Half.name) == Half()  # (the example leaves the registry as it was)
        True
    """
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise TypeError(f"register_metric decorates a subclass of Metric, not {cls!r}")
    if "__dataclass_fields__" not in cls.__dict__:  # (not already made a dataclass by hand)
        dataclass(frozen=True)(cls)  # in place: the same class, now a frozen dataclass
    METRICS.add(cls.name, cls())
    return cls


class _FunctionMetric(Metric):
    """A metric that calls one module function with its parameters (``function=`` keyword)."""

    function: ClassVar[Callable[..., float]]

    def __init_subclass__(cls, *, function: Callable[..., Any] | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if function is not None:
            cls.function = staticmethod(function)


class ConfidenceMetric(_FunctionMetric):
    """A metric of confidences against correctness: ``function(confidences=, correct=, **params)``.

    Example:
        >>> from averitec_tools.metrics.selective import AURC
        >>> AURC()(confidences=[0.9, 0.1], correct=[1, 0]), AURC.function.__name__
        (0.25, 'aurc')
    """

    def __call__(self, *, confidences: Any, correct: Any) -> float:
        return type(self).function(confidences=confidences, correct=correct, **self.params)


class ProbabilityMetric(_FunctionMetric):
    """A metric of probability vectors against labels: ``function(probabilities=, labels_true=,
    classes=, **params)``.

    Example:
        >>> from averitec_tools.metrics.brier import MulticlassBrierScore
        >>> MulticlassBrierScore()(probabilities=[[1.0, 0.0]], labels_true=[1])
        2.0
    """

    def __call__(self, *, probabilities: Any, labels_true: Any, classes: Sequence[Any] | None = None) -> float:
        return type(self).function(probabilities=probabilities, labels_true=labels_true, classes=classes, **self.params)


_SPEC = re.compile(r"\s*([A-Za-z0-9_.@-]+)\s*(?:\((.*)\))?\s*")
_SCALARS: tuple[type, ...] = (bool, int, float, str)


def metric_spec(metric: Any) -> str:
    """The string form of a registered metric object: ``name`` or ``name(k=v,...)``.

    Only parameters that differ from the registered object's (and those the metric always
    shows) are written, in field order.

    Example:
        >>> from averitec_tools.metrics.brier import MulticlassBrierScore
        >>> metric_spec(MulticlassBrierScore(scale_by_half=True)), metric_spec(MulticlassBrierScore())
        ('brier-multiclass(scale_by_half=True)', 'brier-multiclass')
    """
    name = metric.info.name
    base = METRICS.get(name)
    changed = [
        f"{f.name}={getattr(metric, f.name)!s}"
        for f in dataclasses.fields(metric)
        if getattr(metric, f.name) != getattr(base, f.name) or f.name in getattr(metric, "shown", ())
    ]
    return f"{name}({','.join(changed)})" if changed else name


def _typed(value: str, default: Any, where: str) -> Any:
    kind = type(default)
    if kind is bool:
        if value not in ("True", "False"):
            raise UserError(f"{where}: expected True or False, got {value!r}")
        return value == "True"
    try:
        return kind(value)
    except ValueError:
        raise UserError(f"{where}: expected {kind.__name__}, got {value!r}") from None


def split_spec(text: str, *, kind: str) -> tuple[str, str]:
    """``(name, parameter text)`` of a spec ``NAME`` or ``NAME(PARAM=VALUE,...)`` (``kind`` names it in errors).

    Example:
        >>> split_spec("ece(n_bins=3)", kind="metric"), split_spec("bleu", kind="scorer")
        (('ece', 'n_bins=3'), ('bleu', ''))
    """
    match = _SPEC.fullmatch(text)
    if not match:
        raise UserError(f"not a {kind}: {text!r} (expected NAME or NAME(PARAM=VALUE,...))")
    return match[1], match[2] or ""


def spec_params(*, spec: str, args: str, base: Any, fields: Iterable[str], kind: str) -> dict[str, Any]:
    """The typed ``{PARAM: VALUE}`` of a spec's parameter text, each typed by ``base``'s value.

    Raises:
        UserError: An unknown parameter (with close names), a part without ``=``, a value of
            the wrong type, or a parameter that is not a simple value.

    Example:
        >>> from averitec_tools.metrics.brier import MulticlassBrierScore
        >>> spec_params(spec="b", args="scale_by_half=True", base=MulticlassBrierScore(),
        ...             fields=["scale_by_half"], kind="metric")
        {'scale_by_half': True}
    """
    name = split_spec(spec, kind=kind)[0]
    known = Registry.of_names(f"parameter of {kind} {name!r}", fields)
    values: dict[str, Any] = {}
    for part in args.split(","):
        if not part.strip():
            continue
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep:
            raise UserError(f"{kind} {spec!r}: expected PARAM=VALUE, got {part.strip()!r}")
        known.get(key)
        default = getattr(base, key)
        if not isinstance(default, _SCALARS):
            raise UserError(f"{kind} {spec!r}: parameter {key!r} cannot be set from a string")
        values[key] = _typed(raw.strip(), default, f"{kind} {spec!r}: {key}")
    return values


def parse_metric(text: str) -> Any:
    """The registered metric ``name(k=v,...)`` names, with its parameters set (typed).

    Raises:
        UserError: An unknown metric or parameter (with close names), a value of the
            wrong type, or a metric whose parameters are not simple values.

    Example:
        >>> parse_metric("risk-at-coverage(coverage=0.5)").coverage
        0.5
        >>> parse_metric("risk-at-coverage(coverag=0.5)")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: unknown parameter of metric 'risk-at-coverage' 'coverag' (did you mean: coverage?)
    """
    from averitec_tools.metrics import all_metrics

    name, args = split_spec(text, kind="metric")
    all_metrics()
    metric = METRICS.get(name)
    if not args.strip():
        return metric
    fields = {f.name: f for f in dataclasses.fields(metric)} if dataclasses.is_dataclass(metric) else {}
    return dataclasses.replace(metric, **spec_params(spec=text, args=args, base=metric, fields=fields, kind="metric"))


__all__ = [
    "METRICS", "ConfidenceMetric", "Metric", "MetricInfo", "ProbabilityMetric", "metric_spec", "parse_metric",
    "register_metric", "split_spec",
]
