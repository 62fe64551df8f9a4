"""The one place a metric's spelling meets the JSON keys the package prints.

A metric has one spelling, its parse form (``label-accuracy``,
``averitec-score(threshold=0.25)``; see :func:`~averitec_tools.metrics.base.parse_metric`).
The JSON keys of ``averitec score --json`` / ``--per-claim``, of ``averitec compare`` and
``averitec calibration``, and of a leaderboard's store and competition files predate that
spelling and are documented, so they are kept, and derived from the metric here:

=====================================================  ===============================
metric (parse form)                                    JSON key
=====================================================  ===============================
``label-accuracy``                                     ``label_accuracy`` per claim and in a
                                                       summary; ``accuracy`` in a report's
                                                       label block (``veracity``, compare,
                                                       calibration)
``label-macro-f1``                                     ``macro_f1`` (label block)
``fever-score``                                        ``strict_score``
``averitec-score(threshold=λ)``                        ``averitec_score@λ``
``averitec-score(threshold=λ,strict=False)`` (``>=``)  ``label_accuracy@λ`` (the EvalAI
                                                       scorer's name for it)
=====================================================  ===============================

Example:
    >>> from averitec_tools.metrics.averitec_score import AVeriTeCScore
    >>> claim_key(AVeriTeCScore(threshold=0.25)), claim_key(AVeriTeCScore(threshold=0.2, strict=False))
    ('averitec_score@0.25', 'label_accuracy@0.2')
    >>> str(metric_of_key("averitec_score@0.1")), str(metric_of_key("label_accuracy"))
    ('averitec-score(threshold=0.1)', 'label-accuracy')
"""

from __future__ import annotations

from typing import Any

from averitec_tools.metrics.averitec_score import AVeriTeCScore, threshold_key
from averitec_tools.metrics.fever_score import FEVER_SCORE
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY, LABEL_MACRO_F1

#: Per-claim (and summary) key of each metric without a λ, by parse form.
CLAIM_KEYS: dict[str, str] = {str(LABEL_ACCURACY): "label_accuracy", str(FEVER_SCORE): "strict_score"}
#: Key in a report's label block (``veracity``, ``averitec compare``, ``averitec calibration``).
REPORT_KEYS: dict[str, str] = {str(LABEL_ACCURACY): "accuracy", str(LABEL_MACRO_F1): "macro_f1"}
_AT = {True: "averitec_score", False: "label_accuracy"}


def claim_key(metric: Any) -> str:
    """The per-claim key of ``metric`` (see the module's table).

    Raises:
        KeyError: a metric that has no per-claim key.
    """
    if isinstance(metric, AVeriTeCScore):
        return f"{_AT[metric.strict]}@{threshold_key(metric.threshold)}"
    return CLAIM_KEYS[str(metric)]


def report_key(metric: Any) -> str:
    """The key of ``metric`` in a report's label block (see the module's table).

    Example:
        >>> report_key(LABEL_MACRO_F1)
        'macro_f1'
    """
    return REPORT_KEYS[str(metric)]


def metric_of_key(key: str) -> Any | None:
    """The metric a per-claim or label-block key holds (``None``: a profile's own figure,
    such as ``questions_answers``, that is no registry metric)."""
    name, at, level = key.partition("@")
    if at:
        strict = {v: k for k, v in _AT.items()}.get(name)
        try:
            return None if strict is None else AVeriTeCScore(threshold=float(level), strict=strict)
        except ValueError:
            return None
    from averitec_tools.metrics.base import parse_metric

    for table in (CLAIM_KEYS, REPORT_KEYS):
        for spec, json_key in table.items():
            if json_key == key:
                return parse_metric(spec)
    return None


def json_key(name: str, available: Any) -> str:
    """``name`` as one of the ``available`` keys: itself, or the key of the metric it
    spells (``label-accuracy`` → ``label_accuracy`` or ``accuracy``, whichever is there).

    Example:
        >>> json_key("averitec-score(threshold=0.25)", ["averitec_score@0.25"]), json_key("questions_only", [])
        ('averitec_score@0.25', 'questions_only')
    """
    if name in available or "-" not in name:
        return name
    from averitec_tools.errors import UserError
    from averitec_tools.metrics.base import parse_metric

    try:
        metric = parse_metric(name)
    except UserError:
        return name
    for key_of in (claim_key, report_key):
        try:
            key = key_of(metric)
        except KeyError:
            continue
        if key in available:
            return key
    return name


__all__ = ["claim_key", "json_key", "metric_of_key", "report_key"]
