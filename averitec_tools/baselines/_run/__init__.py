"""The run room shared by every baseline (``r2vc``, ``averitec``): one contract, one driver,
one partial-run policy, one run loop, one manifest, one summary.

* :mod:`.spec` — :class:`~.spec.RunSpec` (the flags every baseline has; each baseline's spec
  extends it) and :func:`~.spec.resolve_config` (the one rule that tells a configuration
  file from a built-in name);
* :mod:`.driver` — :class:`~.driver.Baseline` (a baseline's hooks: build, predict,
  summarise) and :func:`~.driver.drive`, the one preamble (limit, configuration, output
  and partial-run checks, claims, engine, manifest, gold subset);
* :mod:`.sidecar` — ``OUT.partial.jsonl``: refused unless ``--resume`` or ``--overwrite``,
  torn last line repaired, header (configuration, format, claims) checked on resume;
* :mod:`.loop` — :func:`~.loop.run_claims`: todo = claims not in the sidecar, one
  ``predict_many`` hook, progress bar, append, final atomic output;
* :mod:`.output` — the prediction file, written whole and atomically;
* :mod:`.summary` — :class:`~.summary.RunSummary`, the one summary of every baseline;
* :mod:`.decision_fit` — a decision fit on held-out training claims, cached by its key;
* :mod:`.claims` — a claims file's objects and their checked ids (both baselines' readers);
* :mod:`.manifest` — what ran, on what, from which data (git commit read at the start);
* :mod:`.gpus` — GPU datasheet figures for run plans.

This package sits between ``engines`` and the baselines: every baseline imports it, it
imports none.
"""
