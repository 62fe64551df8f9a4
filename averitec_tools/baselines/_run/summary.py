"""What a baseline run reports: the one :class:`RunSummary` of every baseline.

The fields every baseline has are typed attributes; what one baseline adds beyond them
(R2VC's candidate counts and per-candidate timings, the AVeriTeC baseline's stage cache and
departures) is in ``figures``, and ``layout`` is the order in which the baseline's
``--json`` lists its keys. ``extra`` is what the run adds afterwards (engine, manifest,
fitted values ...): listed after the layout's keys, in the order it was added.

Example:
    >>> s = RunSummary(out="p.json", config="c", output_format="2024", n_claims=2, figures={"variant": "full"},
    ...                layout=("config", "variant", "format", "n_claims", "notes"))
    >>> s.note("engine ray: counts cover this process only")
    >>> s.extra["engine"] = {"engine": "ray"}
    >>> s.to_dict()
    {'config': 'c', 'variant': 'full', 'format': '2024', 'n_claims': 2, 'notes': ['engine ray: counts cover this process only'], 'engine': {'engine': 'ray'}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Summary keys read from the typed attributes (``format`` names ``output_format``).
_ATTRIBUTES = {"out": "out", "config": "config", "format": "output_format", "output_format": "output_format",
               "n_claims": "n_claims", "n_resumed": "n_resumed", "labels": "labels", "components": "components",
               "fallbacks": "fallbacks", "warnings": "warnings"}


@dataclass(kw_only=True)
class RunSummary:
    """What a run did (see the module docs).

    Attributes:
        out: The prediction file written.
        config: The configuration's name.
        output_format: The output format written.
        n_claims: Claims in the output (resumed ones included).
        n_resumed: Claims read back from an interrupted run's sidecar.
        labels: Predicted label → count.
        components: Stage → what ran it (model id and revision, or the named fallback).
        fallbacks: Fallback kind → count.
        figures: The baseline's own counts, timings and settings.
        layout: The keys of :meth:`to_dict`, in order (attributes, ``notes``, or ``figures`` keys).
        warnings: Printed on stderr by the CLI.
        notes: Printed after the summary.
        extra: What the run adds after the baseline's summary, listed last.
    """

    out: str
    config: str
    output_format: str
    n_claims: int = 0
    n_resumed: int = 0
    labels: dict[str, int] = field(default_factory=dict)
    components: dict[str, Any] = field(default_factory=dict)
    fallbacks: dict[str, int] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    layout: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def note(self, text: str) -> None:
        """Add a note (printed after the summary, ``notes`` in ``--json``)."""
        self.notes.append(text)

    def _value(self, key: str) -> Any:
        if key == "notes":
            return list(self.notes)
        if key in _ATTRIBUTES:
            return getattr(self, _ATTRIBUTES[key])
        return self.figures[key]

    def to_dict(self) -> dict[str, Any]:
        """The summary as ``--json`` prints it: the layout's keys, then ``extra``."""
        return {key: self._value(key) for key in self.layout} | self.extra


__all__ = ["RunSummary"]
