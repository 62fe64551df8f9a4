"""Baselines beside their trivial references: always-Refuted and the claim-only probe (issue 37).

Reads a gold claims file and any number of 2024-format prediction files (``NAME=FILE``),
keeps the first ``--n`` gold claims (a run on a prefix of dev: every row on the same
claims), and prints one Markdown row per system: accuracy, four-label macro-F1, per-label
F1 (S/R/NEE/C) and the predicted label counts, always-Refuted first. Labels only (no
evidence score: the probe has none; ``averitec score`` gives the rest).

    python benchmarks/trivial_references.py --gold dev.json --n 100 \\
        claim-only=results/probe_dev.json r2vc=results/r2vc_dev.json averitec=results/av_dev.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from averitec_tools.jsonio import load_json
from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.label_metrics import accuracy, f1_per_label, macro_f1

SHORT = {"Supported": "S", "Refuted": "R", "Not Enough Evidence": "NEE", "Conflicting Evidence/Cherrypicking": "C"}


def row(name: str, gold: list[str], pred: list[str]) -> dict[str, object]:
    f1 = f1_per_label(gold=gold, predicted=pred, labels=AVERITEC_LABELS)
    return {"system": name, "n": len(gold), "accuracy": accuracy(gold=gold, predicted=pred),
            "macro_f1": macro_f1(gold=gold, predicted=pred, labels=AVERITEC_LABELS),
            "f1": [f1[label] for label in AVERITEC_LABELS],
            "predicted": {SHORT[k]: v for k, v in sorted(Counter(pred).items())}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", required=True)
    ap.add_argument("--n", type=int, help="only the first N gold claims")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("runs", nargs="*", metavar="NAME=FILE")
    args = ap.parse_args()
    gold = [g["label"] for g in load_json(args.gold)][: args.n]
    rows = [row("always-Refuted", gold, ["Refuted"] * len(gold))]
    for spec in args.runs:
        name, _, path = spec.partition("=")
        by_id = {p["claim_id"]: p["pred_label"] for p in load_json(path)}
        missing = [i for i in range(len(gold)) if i not in by_id]
        if missing:
            raise SystemExit(f"{path}: no prediction for claim_id {missing[0]} ({len(missing)} missing)")
        rows.append(row(name, gold, [by_id[i] for i in range(len(gold))]))
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("| system | n | accuracy | macro-F1 | F1 S/R/NEE/C | predicted |\n|---|---|---|---|---|---|")
    for r in rows:
        f1 = "/".join(f"{x:.3f}" for x in r["f1"])  # type: ignore[attr-defined]
        pred = ", ".join(f"{k} {v}" for k, v in r["predicted"].items())  # type: ignore[attr-defined]
        print(f"| {r['system']} | {r['n']} | {r['accuracy']:.3f} | {r['macro_f1']:.3f} | {f1} | {pred} |")


if __name__ == "__main__":
    main()
