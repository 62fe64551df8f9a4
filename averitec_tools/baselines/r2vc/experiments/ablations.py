"""The Table 2 ablation rows that need no new decoding, computed from stored candidates (§4).

One decoding (``averitec baseline r2vc --candidates DIR``) stores every claim's k
candidates with their NLI probabilities (:mod:`~averitec_tools.baselines.r2vc.io.candidates`).
:func:`run_ablations` then replays them through the ordinary decision stages once per
row of :data:`ABLATION_ROWS`, writing each row's predictions (scored by ``averitec
score`` like any run) and its figures: label accuracy and macro-F1 in the scored space,
Brier and ECE of the emitted confidence, coverage, covered accuracy and AURC.

============================  ==========================================================
row                           what changes (the paper's Table 2 switch)
============================  ==========================================================
``full``                      nothing: the configuration as it is
``no_calibration``            π = s_ver clipped to [0, 1] (``ablation.no_calibration``)
``no_verifier_selection``     the first candidate, only the confidence gate
``single_candidate``          k = 1: candidate θ_0 on subset S_0 of the stored decoding
``nli_only``                  the NLI-only generator on the stored probabilities
``gates_off``                 ``calibration.abstain: false``
============================  ==========================================================

``no_dpo``, ``sparse_only`` and ``dense_only`` change the generator or the evidence pool,
so they need their own decoding. Replays load no model: the NLI probabilities and LM
candidates come from the store and the questions of AVeriTeC evidence are the template
question (the LM question writer is not run; label figures do not depend on it).

Example:
    >>> sorted(ABLATION_ROWS)
    ['full', 'gates_off', 'nli_only', 'no_calibration', 'no_verifier_selection', 'single_candidate']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.build import AblationInputs
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.candidates import StoredGenerator, StoredNLI
from averitec_tools.baselines.r2vc.io.claims import ClaimInput, scored_gold
from averitec_tools.baselines.r2vc.io.formats import OUTPUT_FORMATS
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import ClaimRules
from averitec_tools.baselines.r2vc.types import Generator
from averitec_tools.registry import Registry


@dataclass(frozen=True)
class AblationRow:
    """One row: its description and how it changes the configuration."""

    name: str
    description: str
    apply: Callable[[R2VCConfig], R2VCConfig]


def _ablate(**flags: bool) -> Callable[[R2VCConfig], R2VCConfig]:
    return lambda cfg: replace(cfg, ablation=replace(cfg.ablation, **flags))


ABLATION_ROWS: Registry[AblationRow] = Registry("ablation row")
for _row in (
    AblationRow("full", "the configuration as it is", lambda cfg: cfg),
    AblationRow("no_calibration", "π = s_ver clipped to [0, 1]", _ablate(no_calibration=True)),
    AblationRow("no_verifier_selection", "first candidate; only the confidence gate",
                _ablate(no_verifier_selection=True)),
    AblationRow("single_candidate", "k = 1 (candidate θ_0 on S_0 of the stored decoding)",
                _ablate(single_candidate=True)),
    AblationRow("nli_only", "the NLI-only generator on the stored NLI probabilities", _ablate(nli_only=True)),
    AblationRow("gates_off", "no abstention (calibration.abstain: false)",
                lambda cfg: replace(cfg, calibration=replace(cfg.calibration, abstain=False))),
):
    ABLATION_ROWS.add(_row.name, _row)


def replay_pipeline(cfg: R2VCConfig, *, inputs: AblationInputs) -> R2VCPipeline:
    """A pipeline for an (ablated, effective) configuration whose candidates all come from ``inputs.store``."""
    from averitec_tools.baselines.r2vc.reporting import describe_components
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config

    components = inputs.components
    v = cfg.verifier
    verifier = verifier_from_config(backend=StoredNLI(str((components.get("verifier") or {}).get("backend"))),
                                    config=v)
    g = cfg.generator
    generator: Generator
    if g.model is None:
        generator = NLIFallbackGenerator(nli=verifier.nli, subset_size=g.subset_size, t_ent=v.t_ent,
                                         t_contr=v.t_contr, delta=v.delta)
    else:
        generator = StoredGenerator(str(components.get("generator")))
    described = describe_components(cfg, retriever=None, generator=generator, verifier=verifier,
                                    calibrator=inputs.calibrator, question_writer=None)
    described = {**described, "retrieval": components.get("retrieval"), "replayed_from": str(inputs.store.path)}
    if g.model is not None:
        described["generator"] = components.get("generator")
    return R2VCPipeline(retriever=None, generator=generator, verifier=verifier, calibrator=inputs.calibrator,
                        config=cfg, components=described, candidate_store=inputs.store,
                        rules=ClaimRules.from_fitted(inputs.fitted))


def row_metrics(*, claims: Sequence[ClaimInput], records: Sequence[dict[str, Any]], fmt: str) -> dict[str, Any]:
    """Label accuracy and macro-F1 (scored space), Brier and ECE of ``confidence`` vs emitted correctness."""
    import numpy as np

    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import calibration_metrics
    from averitec_tools.labels import SPACES
    from averitec_tools.metrics.label_metrics import accuracy, macro_f1

    space, key = OUTPUT_FORMATS.get(fmt).space, OUTPUT_FORMATS.get(fmt).label_key
    pairs = [(scored_gold(c, space=space), r) for c, r in zip(claims, records, strict=True)
             if c.gold_label_raw is not None]
    if not pairs:
        return {}
    gold = [g for g, _ in pairs]
    pred = [r[key] for _, r in pairs]
    correct = np.array([int(g == p) for g, p in zip(gold, pred, strict=True)])
    cal = calibration_metrics(y_true=correct, prob=np.array([float(r["confidence"]) for _, r in pairs]))
    labels: dict[str, int] = {}
    for p in pred:
        labels[p] = labels.get(p, 0) + 1
    return {"accuracy": accuracy(gold=gold, predicted=pred),
            "macro_f1": macro_f1(gold=gold, predicted=pred, labels=SPACES.get(space).labels),
            "brier": cal["brier"], "ece": cal["ece"], "labels": dict(sorted(labels.items()))}


def run_ablations(
    inputs: AblationInputs,
    *,
    claims: Sequence[ClaimInput],
    out_dir: str | Path,
    output_format: str,
    rows: Sequence[str] = tuple(ABLATION_ROWS.names()),
    progress: bool = False,
) -> dict[str, Any]:
    """Compute ``rows`` from the stored candidates; write ``<out_dir>/<row>.json[l]`` for each.

    Args:
        inputs: What the rows replay with (:func:`~averitec_tools.baselines.r2vc.build.ablation_inputs`):
            the configuration the store was written with (ablation switches off; for the
            offline configuration, with its fitted values), the store (every claim must be
            in it), the calibrator, the writing run's components (named in each row's
            summary) and the fitted values (offline: every row keeps its claim-level rules,
            as it keeps the fitted thresholds).
        claims: The claims, in output order.
        out_dir: Where the row predictions go (created).
        output_format: ``averitec2024`` or ``ternary``.
        rows: Row names (:data:`ABLATION_ROWS`).
        progress: Progress bars.

    Returns:
        ``{"rows": {row: {"description", "out", "decision", **row_metrics, "gated_paper", "ungated",
        "selective", "signature"}}}`` (the last four as in a run summary:
        :func:`~averitec_tools.baselines.r2vc.paper_scores.paper_scores`).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"store": str(inputs.store.path), "format": output_format, "rows": {}}
    suffix = OUTPUT_FORMATS.get(output_format).suffix
    for name in rows:
        row = ABLATION_ROWS.get(name)
        pipe = replay_pipeline(row.apply(inputs.config).effective(), inputs=inputs)
        path = out / f"{name}{suffix}"
        summary = pipe.run(claims, out=path, output_format=output_format, progress=progress)
        records = _read(path, output_format)
        row_result: dict[str, Any] = {"description": row.description, "out": str(path),
                                "decision": summary.figures["decision"],
                                **row_metrics(claims=claims, records=records, fmt=output_format),
                                "n_abstained": summary.figures["n_abstained"], "components": summary.components,
                                **{k: summary.extra[k] for k in ("gated_paper", "ungated", "selective", "signature")
                                   if k in summary.extra}}
        result["rows"][name] = row_result
    return result


def _read(path: Path, fmt: str) -> list[dict[str, Any]]:
    import json

    text = path.read_text(encoding="utf-8")
    if not OUTPUT_FORMATS.get(fmt).json_lines:
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


__all__ = ["ABLATION_ROWS", "run_ablations"]
