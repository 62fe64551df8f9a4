"""Measure the offline-minilm R2VC variants on AVeriTeC dev (the docs/r2vc.md table).

Variants: verifier score literal / label-aware × corpus with own evidence (oracle) /
``exclude_own_evidence``, each gated (the paper's τ_cal, τ_ver) and ungated. The
ungated row of a variant is derived from its gated run: with ``calibration.abstain:
false`` the pipeline emits the label of the same chosen candidate i* (same π, same
evidence), which every gated record keeps as ``r2vc.candidate_label``; this script
rewrites ``pred_label`` from it, so no second run is needed.

Usage (from the repository root, with AVERITEC_DATA_DIR set)::

    python benchmarks/r2vc_offline_table.py --n 500 --out results/r2vc-table

``--n N`` scores the first N dev claims against the matching gold subset (written to
``OUT/gold_first_N.json``). Prints a markdown table and writes ``OUT/table.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

VARIANTS: dict[str, dict[str, Any]] = {
    "label-aware, own evidence (oracle)": {"verifier": {"score": "label-aware"}},
    "literal, own evidence (oracle)": {"verifier": {"score": "literal"}},
    "label-aware, exclude_own_evidence": {"verifier": {"score": "label-aware"},
                                          "offline": {"exclude_own_evidence": True}},
    "literal, exclude_own_evidence": {"verifier": {"score": "literal"}, "offline": {"exclude_own_evidence": True}},
}
R2VC_TO_AVERITEC = {"True": "Supported", "False": "Refuted", "Uncertain": "Not Enough Evidence"}


def averitec(*args: str) -> dict[str, Any]:
    exe = Path(sys.executable).with_name("averitec")
    done = subprocess.run([str(exe), *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def ungated(pred_file: Path, out: Path) -> None:
    records = json.loads(pred_file.read_text())
    for r in records:
        label = r["r2vc"]["candidate_label"]
        if label is not None:
            r["pred_label"] = R2VC_TO_AVERITEC[label]
    out.write_text(json.dumps(records))


def score(pred: Path, gold: Path) -> dict[str, Any]:
    s = averitec("score", str(pred), str(gold), "--profile", "averitec2024")
    c = averitec("calibration", str(pred), str(gold), "--profile", "averitec2024", "--n-resamples", "0")
    return {"score": s, "calibration": c}


def row(name: str, gate: str, result: dict[str, Any], decision: dict[str, Any] | None) -> str:
    sc, cal = result["score"], result.get("calibration") or {}
    lam = sc["averitec_score"]
    labels = ", ".join(f"{k.split()[0][0] if k != 'Not Enough Evidence' else 'NEE'} {v}"
                       for k, v in sorted(result.get("labels", {}).items()))
    cov = "–" if decision is None else f"{decision['coverage']:.3f}"
    brier = f"{cal['brier']:.3f}" if cal else "–"
    ece = f"{cal['ece']:.3f}" if cal else "–"
    aurc = f"{cal['aurc']:.3f}" if cal else "–"
    return (f"| {name} | {gate} | {sc['veracity']['accuracy']:.3f} | {sc['veracity']['macro_f1']:.3f} | "
            f"{sc['questions_only']:.3f} | {sc['questions_answers']:.3f} | "
            f"{lam['0.2']:.3f} / {lam['0.25']:.3f} / {lam['0.3']:.3f} | {brier} | {ece} | {aurc} | {cov} | {labels} |")


def render(table: dict[str, Any], official: dict[str, Any] | None) -> str:
    lines = ["| run | gates | label acc | macro-F1 | Q-only | Q+A | AVeriTeC λ=0.2 / 0.25 / 0.3 | Brier | ECE | AURC | coverage | labels |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, t in table.items():
        lines.append(row(name, "gated", t["gated"], t["run"].get("decision")))
        lines.append(row(name, "ungated", t["ungated"], None))
    if official is not None:
        lines.append(row("*official AVeriTeC 2024 baseline (BLOOM-7b1 + BERT)*", "–", official, None))
    return "\n".join(lines)


def label_counts(pred: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in json.loads(pred.read_text()):
        counts[r["pred_label"]] = counts.get(r["pred_label"], 0) + 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="first N dev claims")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--only", nargs="*", help="variant indexes to run (default: all)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = json.loads((Path(os.environ["AVERITEC_DATA_DIR"]) / "averitec" / "dev.json").read_text())
    gold = out / f"gold_first_{args.n}.json"
    gold.write_text(json.dumps(dev[: args.n]))
    table_file = out / "table.json"
    table: dict[str, Any] = json.loads(table_file.read_text()) if table_file.is_file() else {}
    for i, (name, settings) in enumerate(VARIANTS.items()):
        if args.only and str(i) not in args.only:
            continue
        cfg = out / f"variant{i}.yaml"
        cfg.write_text(json.dumps({"base": "offline-minilm", **settings}))  # JSON is YAML
        pred = out / f"variant{i}.json"
        run = averitec("baseline", "r2vc", "--config", str(cfg), "--limit", str(args.n), "--out", str(pred),
                       "--no-progress")
        free = out / f"variant{i}_ungated.json"
        ungated(pred, free)
        table[name] = {"run": run, "gated": score(pred, gold) | {"labels": label_counts(pred)},
                       "ungated": score(free, gold) | {"labels": label_counts(free)}}
        (out / "table.json").write_text(json.dumps(table, indent=1))
        print(f"done: {name}", file=sys.stderr)
    official_src = Path(os.environ["AVERITEC_DATA_DIR"]) / "averitec" / "baseline_dev_predictions.json"
    official = None
    if official_src.is_file():
        sub = out / f"official_first_{args.n}.json"
        sub.write_text(json.dumps(json.loads(official_src.read_text())[: args.n]))
        official = {"score": averitec("score", str(sub), str(gold), "--profile", "averitec2024"),
                    "labels": label_counts(sub)}
    (out / "official.json").write_text(json.dumps(official))
    print(render(table, official))
    return 0


if __name__ == "__main__":
    sys.exit(main())
