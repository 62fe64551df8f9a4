"""The metric registry: complete, consistently named, with metadata, no duplicates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from averitec_tools.errors import UserError
from averitec_tools.metrics import METRIC_MODULES, METRICS, all_metrics, register_metric
from averitec_tools.metrics.base import MetricInfo

METRICS_DIR = Path(__file__).resolve().parents[1] / "averitec_tools" / "metrics"


def test_every_registering_module_is_listed() -> None:
    registering = {
        p.stem for p in METRICS_DIR.glob("*.py") if "@register_metric" in p.read_text() and p.stem not in {"base", "__init__"}
    }
    assert registering == set(METRIC_MODULES)


def test_names_are_lowercase_hyphenated_and_have_metadata() -> None:
    names = all_metrics()
    assert {"hu-meteor", "meteor", "averitec-score", "label-accuracy", "fever-score", "brier", "ece", "mce", "aurc", "e-aurc"} <= set(names)
    for name in names:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9.]+)*", name), name
        info = METRICS.get(name).info
        assert isinstance(info, MetricInfo) and info.name == name and info.description


def test_duplicates_rejected_and_close_names_suggested() -> None:
    all_metrics()
    existing = METRICS.get("ece")
    with pytest.raises(ValueError, match="duplicate metric name 'ece'"):
        register_metric(type(existing))
    with pytest.raises(UserError, match="did you mean: ece"):
        METRICS.get("eces")


def test_docstrings_name_registered_keys() -> None:
    """Every ``METRICS.get("name")`` written in the package names a registered metric."""
    names = set(all_metrics())
    named = {
        (p.name, key)
        for p in METRICS_DIR.glob("*.py")
        for key in re.findall(r'METRICS\.get\("([^"]+)"\)', p.read_text(encoding="utf-8"))
    }
    assert named and not {(f, key) for f, key in named if key not in names}


def _changed(value: object, choices: tuple[object, ...] = ()) -> object:
    """A value of the same type as ``value`` that differs from it (another of ``choices`` if declared)."""
    if choices:
        return next(c for c in choices if c != value)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 2
    if isinstance(value, float):
        return round(value / 2, 6) or 0.5
    return "quantile" if value == "uniform" else f"{value}x"


def test_string_form_round_trips_with_typed_parameters() -> None:
    import dataclasses

    from averitec_tools.metrics.base import metric_spec, parse_metric

    checked = 0
    for name in all_metrics():
        metric = METRICS.get(name)
        assert parse_metric(name) == metric
        if not dataclasses.is_dataclass(metric):
            continue
        scalars = {f.name: getattr(metric, f.name) for f in dataclasses.fields(metric)
                   if isinstance(getattr(metric, f.name), (bool, int, float, str))
                   and len(metric.choices.get(f.name, (0, 1))) > 1}  # a one-value choice cannot change
        if not scalars:
            continue
        configured = dataclasses.replace(  # type: ignore[type-var]
            metric, **{k: _changed(v, metric.choices.get(k, ())) for k, v in scalars.items()})
        text = metric_spec(configured)
        assert text.startswith(f"{name}(") and parse_metric(text) == configured, text
        for key, value in scalars.items():
            assert type(getattr(parse_metric(text), key)) is type(value)
        checked += 1
    assert checked >= 8  # ece, mce, ece-classwise, coverage-at-risk, risk-at-coverage, selective-accuracy, ...


def test_parse_metric_errors_are_user_errors() -> None:
    from averitec_tools.metrics.base import parse_metric

    assert str(parse_metric("selective-accuracy(threshold=0.5)")) == "selective-accuracy(threshold=0.5)"
    assert parse_metric(" ece ( n_bins = 4 ) ").n_bins == 4
    with pytest.raises(UserError, match="did you mean: ece"):
        parse_metric("ecee(n_bins=4)")
    with pytest.raises(UserError, match="did you mean: n_bins"):
        parse_metric("ece(nbins=4)")
    with pytest.raises(UserError, match="expected int, got 'four'"):
        parse_metric("ece(n_bins=four)")
    with pytest.raises(UserError, match="expected True or False"):
        parse_metric("brier-multiclass(scale_by_half=yes)")
    with pytest.raises(UserError, match="cannot be set from a string"):
        parse_metric("abstain-coverage(abstain_labels=NEI)")
    with pytest.raises(UserError, match="expected PARAM=VALUE"):
        parse_metric("ece(4)")


def test_one_definition_style_and_one_registration() -> None:
    """Every registered metric is a frozen dataclass ``Metric`` registered by the decorator."""
    import dataclasses

    from averitec_tools.metrics.base import Metric

    for name in all_metrics():
        metric = METRICS.get(name)
        assert isinstance(metric, Metric) and dataclasses.is_dataclass(metric), name
        assert type(metric)() == metric and type(metric).name == name, name
    for path in METRICS_DIR.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "info: MetricInfo" not in text and "register_metric(" not in text.replace("def register_metric(", ""), path


def test_per_claim_keys_are_derived_from_parse_forms() -> None:
    """A profile's per-claim key of a registry metric maps to its parse form and back."""
    from averitec_tools.metrics.base import parse_metric
    from averitec_tools.metrics.keys import claim_key, json_key, metric_of_key
    from averitec_tools.scoring.profiles import PROFILES, get_profile

    assert str(parse_metric("averitec-score(threshold=0.25)")) == "averitec-score(threshold=0.25)"
    mapped = {}
    for profile in PROFILES.names():
        for key in get_profile(profile).per_claim_metrics:
            metric = metric_of_key(key)
            if metric is not None:
                assert claim_key(parse_metric(str(metric))) == key, (profile, key)
                assert json_key(str(metric), [key]) == key
                mapped[key] = str(metric)
    assert mapped["averitec_score@0.25"] == "averitec-score(threshold=0.25)"
    assert mapped["label_accuracy@0.2"] == "averitec-score(threshold=0.2,strict=False)"  # the EvalAI name
    assert mapped["label_accuracy"] == "label-accuracy" and mapped["strict_score"] == "fever-score"
    assert metric_of_key("questions_answers") is None and metric_of_key("justification_score@0.25") is None
    assert json_key("label-accuracy", ["accuracy", "macro_f1"]) == "accuracy"
