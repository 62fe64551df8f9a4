#!/usr/bin/env bash
# Measure the AVeriTeC baseline (offline-minilm) on AVeriTeC dev: every row of the results
# table in docs/averitec_baseline.md. Usage:
#   benchmarks/averitec_baseline_dev.sh OUT_DIR [LIMIT]
# LIMIT (default 500 = all of dev) runs the first LIMIT dev claims; every score is then
# computed against the gold items of exactly those claims (written by --write-gold-subset).
# Needs AVERITEC_DATA_DIR; AVERITEC=path/to/averitec (default: averitec on PATH).
set -euo pipefail
OUT=${1:?usage: $0 OUT_DIR [LIMIT]}
LIMIT=${2:-500}
AV=${AVERITEC:-averitec}
DEV="$AVERITEC_DATA_DIR/averitec/dev.json"
mkdir -p "$OUT"
[ -d "$OUT/store_own" ] || $AV baseline averitec build-store --claims "$DEV" --out "$OUT/store_own" --json > "$OUT/store_own.json"
[ -d "$OUT/store_excl" ] || $AV baseline averitec build-store --claims "$DEV" --out "$OUT/store_excl" --exclude-own-evidence --json > "$OUT/store_excl.json"
run() {  # name variant store
  local name=$1 variant=$2 store=$3
  local args=(--config offline-minilm --claims "$DEV" --out "$OUT/$name.pred.json" --variant "$variant"
              --limit "$LIMIT" --write-gold-subset "$OUT/gold.json" --resume --json --no-progress)
  [ -n "$store" ] && args+=(--store "$store")
  $AV baseline averitec "${args[@]}" > "$OUT/$name.run.json"
  $AV score "$OUT/$name.pred.json" "$OUT/gold.json" --json > "$OUT/$name.score.json"
  $AV calibration "$OUT/$name.pred.json" "$OUT/gold.json" --json > "$OUT/$name.calibration.json"
  echo "done: $name"
}
run gold-evidence gold-evidence ""
run claim-only claim-only ""
run full-own full "$OUT/store_own"
run no-reranker-own no-reranker "$OUT/store_own"
run full-excl full "$OUT/store_excl"
${PYTHON:-python3} - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
rows = [("full-own", "ours, full, own-evidence store (oracle store)"),
        ("full-excl", "ours, full, --exclude-own-evidence store"),
        ("claim-only", "ours, claim-only"),
        ("gold-evidence", "ours, gold evidence (oracle)"),
        ("no-reranker-own", "ours, no reranker, own-evidence store (oracle store)")]
print("| system | n | label acc | macro-F1 | Q | Q+A | AVeriTeC @0.2 | @0.25 | @0.3 | Brier | ECE | retrieval recall@100 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, label in rows:
    f = out / f"{name}.score.json"
    if not f.exists():
        continue
    s = json.loads(f.read_text()); c = json.loads((out / f"{name}.calibration.json").read_text())
    r = json.loads((out / f"{name}.run.json").read_text())
    a = s["averitec_score"]; v = s["veracity"]
    rec = r.get("retrieval_recall_at_k")
    print(f"| {label} | {s['n_claims']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} | {s['questions_only']:.3f} | "
          f"{s['questions_answers']:.3f} | {a['0.2']:.3f} | {a['0.25']:.3f} | {a['0.3']:.3f} | {c['brier']:.3f} | "
          f"{c['ece']:.3f} | {'' if rec is None else f'{rec:.3f}'} |")
print()
print("score signature:", json.loads((out / "gold-evidence.score.json").read_text())["signature"])
print("calibration signature:", json.loads((out / "gold-evidence.calibration.json").read_text())["signature"])
PY
