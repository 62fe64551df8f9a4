"""The run room shared by both baselines (``r2vc``, ``averitec``): one partial-run policy,
one run loop, one manifest, one run specification.

* :mod:`.sidecar` — ``OUT.partial.jsonl``: refused unless ``--resume`` or ``--overwrite``,
  torn last line repaired, header (configuration, format, claims) checked on resume;
* :mod:`.loop` — :func:`~.loop.run_claims`: todo = claims not in the sidecar, one
  ``predict_many`` hook, progress bar, append, final atomic output;
* :mod:`.claims` — a claims file's objects and their checked ids (both baselines' readers);
* :mod:`.manifest` — what ran, on what, from which data (git commit read at the start);
* :mod:`.spec` — :class:`~.spec.RunSpec` (what a run is asked) and
  :class:`~.spec.RunSummary` (what every summary has, ``extra`` its one extension field).

This package sits between ``engines`` and the baselines: both baselines import it, it
imports neither.
"""
