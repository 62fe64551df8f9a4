"""The claim-only probe as a baseline of its own: ``averitec baseline claim-only`` (issue 37).

The trivial reference every offline baseline table prints beside always-Refuted: a verdict
from the claim's words alone, no evidence at all
(:mod:`~averitec_tools.baselines._run.claim_prior`: the packaged all-MiniLM-L6-v2 claim
embedding, a logistic regression whose ``C`` is chosen by grouped 5-fold cross-validation
on the training claims). It trains on AVeriTeC's ``train.json`` minus every scored claim's
normalised twin and minus the pseudo-test (:mod:`averitec_tools.leakage.pseudo_test`), so
dev and the pseudo-test are scored on claims no fit saw. The predictions are a 2024-format
file (empty evidence, the probe's probabilities and confidence) that ``averitec score``
reads; :func:`run` is one call on the baselines' driver
(:func:`~averitec_tools.baselines._run.driver.drive`). It lives in the AVeriTeC wing (it
reads and writes AVeriTeC files, :mod:`.io`) as an entry of its own; the wing's
``claim-only`` *variant* is another thing: this baseline's verdict model fed no evidence.

Example:
    >>> import tempfile, pathlib, json
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "claims.json").write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
    >>> run(ClaimOnlySpec(claims=str(d / "claims.json"), out=str(d / "p.json"), limit=0))
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --limit must be at least 1, got 0
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines._run.claim_prior import PriorFit
from averitec_tools.baselines._run.driver import Baseline, PredictMany, Run, drive
from averitec_tools.baselines._run.spec import RunSpec
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.baselines.averitec.io.data import ClaimItem
from averitec_tools.errors import UserError
from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.leakage.pseudo_test import PSEUDO_TEST_CLAIMS

#: The one built-in configuration's name.
CLAIM_ONLY = "claim-only"


@dataclass(frozen=True)
class ClaimOnlyConfig:
    """How the probe is fitted.

    Attributes:
        train: The training claims file (None: ``$AVERITEC_DATA_DIR/averitec/train.json``).
        pseudo_test_claims: AVeriTeC ``train.json`` claims held out as the pseudo-test.
        folds: Cross-validation folds of the ``C`` choice (whole claim groups).
        seed: Seed of the folds.
    """

    train: str | None = None
    pseudo_test_claims: int = PSEUDO_TEST_CLAIMS
    folds: int = 5
    seed: int = 0


@dataclass(frozen=True, kw_only=True)
class ClaimOnlySpec(RunSpec):
    """A claim-only run: the shared flags (``config`` defaults to the built-in) and the training file.

    Args:
        train: The training claims file (overrides the configuration's).
    """

    config: Any = CLAIM_ONLY
    train: str | None = None


ClaimOnlyRun = Run[ClaimOnlySpec, ClaimOnlyConfig, ClaimItem]


@dataclass(frozen=True)
class Probe:
    """The fitted probe and the training file it was fitted on."""

    fit: PriorFit
    train: str


def prediction_row(item: ClaimItem, proba: Sequence[float]) -> dict[str, Any]:
    """One claim's 2024-format record: the probe's most probable label, no evidence.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> row = prediction_row(ClaimItem(3, AVeriTeCClaim(claim="C.")), [0.2, 0.7, 0.1, 0.0])
        >>> row["claim_id"], row["pred_label"], row["evidence"], row["confidence"]
        (3, 'Refuted', [], 0.7)
    """
    best = int(np.argmax(proba))
    return {"claim_id": item.claim_id, "claim": item.record.claim, "pred_label": AVERITEC_LABELS[best],
            "evidence": [], "confidence": float(proba[best]),
            "probabilities": {label: float(p) for label, p in zip(AVERITEC_LABELS, proba, strict=True)}}


class ClaimOnly(Baseline[ClaimOnlySpec, ClaimOnlyConfig, ClaimItem, Probe]):
    """The claim-only probe's hooks on the baselines' driver."""

    builtin_configs = (CLAIM_ONLY,)

    def load_config(self, name: str) -> ClaimOnlyConfig:
        if name != CLAIM_ONLY:
            raise UserError(f"--config {name}: the claim-only baseline has one configuration, {CLAIM_ONLY!r}")
        return ClaimOnlyConfig()

    def configure(self, spec: ClaimOnlySpec, config: ClaimOnlyConfig) -> ClaimOnlyConfig:
        from averitec_tools.outputs import check_output_file

        train = spec.train or config.train or _default_file("train.json", option="--train")
        check_output_file(spec.out, option="--out", inputs=[train])
        return replace(config, train=train)

    def default_claims(self, spec: ClaimOnlySpec, config: ClaimOnlyConfig) -> str:
        return _default_file("dev.json", option="--claims")

    def read_claims(self, spec: ClaimOnlySpec, config: ClaimOnlyConfig, path: str) -> list[ClaimItem]:
        from averitec_tools.baselines.averitec.io.data import read_claims

        read_claims(str(config.train), skip_empty=True)  # bad training input fails here, before any fit
        return read_claims(path)[: spec.limit]

    def output_format(self, spec: ClaimOnlySpec, claims: Sequence[ClaimItem]) -> str:
        if spec.output_format not in ("auto", "2024"):
            raise UserError(f"claim-only writes the 2024 format only, got {spec.output_format!r}")
        return "2024"

    def build(self, run: ClaimOnlyRun) -> Probe:
        from averitec_tools.baselines._run.claim_prior import fitted_prior

        cfg = run.config
        train = str(cfg.train)
        fit = fitted_prior(train_path=train, scored=[c.record.claim for c in run.claims],
                           pseudo_test_claims=cfg.pseudo_test_claims, folds=cfg.folds, seed=cfg.seed)
        return Probe(fit=fit, train=train)

    def predict(self, pipe: Probe, run: ClaimOnlyRun, predict_many: PredictMany | None) -> RunSummary:
        from averitec_tools.baselines._run.loop import run_claims
        from averitec_tools.baselines._run.output import write_rows
        from averitec_tools.hashing import json_digest

        s = run.spec

        def predict(todo: list[ClaimItem]) -> list[dict[str, Any]]:
            proba = pipe.fit.prior.predict_texts([c.record.claim for c in todo])
            return [prediction_row(c, p) for c, p in zip(todo, proba, strict=True)]

        done = run_claims(claims=run.claims, claim_id=lambda c: c.claim_id, kind="claim_only",
                          config=json_digest(asdict(run.config), pipe.fit.prior.c), output_format=run.output_format,
                          out=s.out, predict_many=predict, encode=lambda row: row,
                          write_output=lambda rows: write_rows(rows, out=s.out, json_lines=False),
                          resume=s.resume, overwrite=s.overwrite, progress=s.progress)
        return RunSummary(out=s.out, config=CLAIM_ONLY, output_format=run.output_format,
                          n_claims=len(done.records), n_resumed=done.n_resumed,
                          labels=dict(Counter(r["pred_label"] for r in done.records)),
                          components={"verdict": "claim-only probe: all-MiniLM-L6-v2 claim embedding + logistic "
                                                 f"regression (C {pipe.fit.prior.c:g}), no evidence"},
                          figures={"probe": _probe_facts(pipe), **_scores(run.claims, done.records)},
                          layout=("config", "format", "n_claims", "n_resumed", "labels", "components", "probe",
                                  *(("accuracy", "macro_f1") if _labelled(run.claims) else ()), "notes"))

    def summarise(self, summary: RunSummary, pipe: Probe, run: ClaimOnlyRun, *, on_workers: bool,
                  manifest: Path | None) -> None:
        summary.note("claim-only: no evidence is read or written; the trivial reference of the offline baselines")


def _default_file(name: str, *, option: str) -> str:
    from averitec_tools.loaders.locate import find_data_file

    found = find_data_file("averitec", name)
    if found is None:
        raise UserError(f"{option} is required", hint=f"or download AVeriTeC: averitec data download averitec ({name})")
    return str(found)


def _probe_facts(pipe: Probe) -> dict[str, Any]:
    info = pipe.fit.prior.info
    return {"train": pipe.train, "c": pipe.fit.prior.c,
            **{k: info[k] for k in ("claims", "train_duplicates_dropped", "pseudo_test_held_out") if k in info}}


def _labelled(claims: Sequence[ClaimItem]) -> bool:
    return bool(claims) and all(c.record.label in AVERITEC_LABELS for c in claims)


def _scores(claims: Sequence[ClaimItem], rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Accuracy and four-label macro-F1 of the run, where every claim has a gold label."""
    from averitec_tools.metrics.label_metrics import accuracy, macro_f1

    if not _labelled(claims):
        return {}
    gold = [c.record.label for c in claims]
    pred = [r["pred_label"] for r in rows]
    return {"accuracy": accuracy(gold=gold, predicted=pred),
            "macro_f1": macro_f1(gold=gold, predicted=pred, labels=AVERITEC_LABELS)}


def run(spec: ClaimOnlySpec) -> RunSummary:
    """Fit the probe (or read it from the cache) and write ``spec.out`` (see the module docs).

    Raises:
        UserError: bad flags or input, an output that would destroy an input, a partial
            run present without ``resume``/``overwrite`` (exit 2).
    """
    return drive(ClaimOnly(), spec)


__all__ = ["CLAIM_ONLY", "ClaimOnly", "ClaimOnlyConfig", "ClaimOnlySpec", "prediction_row", "run"]
