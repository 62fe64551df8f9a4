"""``averitec baseline r2vc ablations``: Table 2 rows from one stored decoding.

Reads the candidate store that ``averitec baseline r2vc --candidates DIR`` wrote for the
same configuration and claims, and computes every ablation row that needs no new
decoding (:data:`~averitec_tools.baselines.r2vc.experiments.ablations.ABLATION_ROWS`), writing one
prediction file per row and ``ablations.json`` into ``--out`` (replaced whole, at the
end). Registered under ``averitec baseline r2vc`` by :mod:`averitec_tools.cli.baseline`.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="r2vc")
    >>> def common(p, required=True):
    ...     p.add_argument("--config", required=required)
    ...     p.add_argument("--candidates")
    >>> add_ablations_subcommand(parser.add_subparsers(dest="cmd"), common=common)
    >>> args = parser.parse_args(["ablations", "--config", "c.yaml", "--candidates", "s", "--out", "o"])
    >>> args.rows, args.func.__name__
    ('full,no_calibration,no_verifier_selection,single_candidate,nli_only,gates_off', 'run_ablations_cli')
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json

DEFAULT_ROWS = "full,no_calibration,no_verifier_selection,single_candidate,nli_only,gates_off"


def add_ablations_subcommand(sub: Any, *, common: Callable[..., None]) -> None:
    """Add ``ablations`` to the ``r2vc`` subcommand group ``sub``."""
    p = sub.add_parser(
        "ablations",
        help="Table 2 ablation rows computed from stored candidates (no new decoding)",
        description="Compute the R2VC ablation rows that need no new decoding (no calibration, no verifier "
        "selection, single candidate, NLI-only, gates off) from the candidates that `averitec baseline r2vc "
        "--candidates DIR` stored for the same --config and --claims. Writes ROW.json (ROW.jsonl for FEVER "
        "claims) per row and ablations.json into --out.",
    )
    common(p)
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the row predictions and ablations.json")
    p.add_argument("--rows", default=DEFAULT_ROWS, metavar="ROW,...", help=f"rows to compute (default: {DEFAULT_ROWS})")
    p.add_argument("--format", choices=("auto", "averitec2024", "ternary"), default="auto",
                   help="output format (default: averitec2024 for AVeriTeC claims, ternary for FEVER/VitaminC)")
    p.set_defaults(func=run_ablations_cli)


def _calibrator_and_config(config: Any, claims: list[Any], *, progress: bool) -> tuple[Any, Any, dict[str, Any]]:
    """The calibrator, the configuration as run (offline: fitted values) and the components, loading no LM."""
    cfg = config.effective()
    cfg.check_components()
    if cfg.offline.enabled:  # small models, cached: build it for its fitted values and calibrator
        from averitec_tools.baselines.r2vc import build

        pipe = build.build_pipeline(config, claims=claims, progress=progress)
        return pipe.calibrator, pipe.config, pipe.components
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import load_or_none

    calibrator = None if cfg.ablation.no_calibration else load_or_none(cfg.calibration.path)
    components = {
        "retrieval": {"sparse": cfg.retrieval.sparse, "dense": cfg.retrieval.dense_model},
        "generator": {"model": cfg.generator.model} if cfg.generator.model else "ablation:nli_only",
        "verifier": {"backend": f"hf:{cfg.verifier.model}"},
    }
    return calibrator, cfg, components


def run_ablations_cli(args: argparse.Namespace) -> int:
    from averitec_tools.baselines.r2vc.config import resolve_config
    from averitec_tools.baselines.r2vc.experiments.ablations import ABLATION_ROWS, run_ablations
    from averitec_tools.baselines.r2vc.io.candidates import open_store
    from averitec_tools.baselines.r2vc.io.claims import read_claims
    from averitec_tools.baselines.r2vc.io.formats import default_format
    from averitec_tools.cli._baseline_shared import _claims_path, _quiet_models
    from averitec_tools.jsonio import atomic_directory
    from averitec_tools.outputs import check_output_dir

    if not args.candidates:
        raise UserError("--candidates DIR is required: the store written by `averitec baseline r2vc --candidates DIR`")
    rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    if not rows:
        raise UserError("--rows: no row named")
    for r in rows:
        ABLATION_ROWS.get(r)  # unknown names: one line with suggestions
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1, got {args.limit}")
    config = resolve_config(args.config)
    if any(getattr(config.ablation, f) for f in ("no_verifier_selection", "single_candidate", "no_calibration")) \
            or not config.calibration.abstain:
        raise UserError(f"config {config.name!r}: give the configuration the store was written with, ablation "
                        "switches off; the rows switch them on")
    claims_path = _claims_path(args, config)
    claims = read_claims(claims_path)
    if args.limit is not None:
        claims = claims[: args.limit]
    fmt = default_format(claims) if args.format == "auto" else args.format
    suffix = ".json" if fmt == "averitec2024" else ".jsonl"
    inputs = [claims_path, args.config if "." in str(args.config) else None, args.candidates]
    check_output_dir(args.out, option="--out", inputs=inputs,
                     files=[f"{r}{suffix}" for r in rows] + ["ablations.json"])
    if config.offline.enabled and args.corpus:
        raise UserError(f"config {config.name!r} builds its own corpus: drop --corpus")
    progress = not args.no_progress and not args.json and sys.stderr.isatty()
    _quiet_models(progress)
    calibrator, cfg, components = _calibrator_and_config(config, claims, progress=progress)
    if args.evidence == "given":  # as `r2vc --evidence given` named it when it wrote the store
        from averitec_tools.baselines.r2vc.io.given_evidence import GIVEN_COMPONENT

        components["retrieval"] = {"retriever": GIVEN_COMPONENT, "evidence": "given"}
    if config.offline.enabled:
        config = replace(cfg, ablation=config.ablation)  # the fitted values, ablation switches as given
    store = open_store(args.candidates, config=cfg, components=components, corpus=args.corpus, replay_only=True)
    with atomic_directory(args.out) as tmp:
        result = run_ablations(config=config, store=store, claims=claims, calibrator=calibrator,
                               components=components, out_dir=tmp, output_format=fmt, rows=rows, progress=progress)
        for row in result["rows"].values():
            row["out"] = str(args.out) + "/" + row["out"].rsplit("/", 1)[1]
        result["out"] = str(args.out)
        result["config"] = config.name
        (tmp / "ablations.json").write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    if args.json:
        print_json(result)
        return 0
    print(f"{len(rows)} ablation rows from {store.path} ({len(claims)} claims) written to {args.out}")
    for name, row in result["rows"].items():
        d = row["decision"] or {}
        acc = row.get("accuracy")
        f1 = row.get("macro_f1")
        print(f"  {name:22s} accuracy {acc if acc is None else f'{acc:.4f}'}  macro-F1 "
              f"{f1 if f1 is None else f'{f1:.4f}'}  coverage {d.get('coverage')}  ({row['description']})")
        if "gated_paper" in row:
            g, u = row["gated_paper"], row["ungated"]
            print(f"  {'':22s} gated_paper acc {g['accuracy']:.4f} macro-F1 {g['macro_f1']:.4f}  "
                  f"ungated acc {u['accuracy']:.4f} macro-F1 {u['macro_f1']:.4f}")
    if result["rows"]:
        print(f"signature: {next(iter(result['rows'].values())).get('signature')}")
    return 0


__all__ = ["DEFAULT_ROWS", "add_ablations_subcommand", "run_ablations_cli"]
