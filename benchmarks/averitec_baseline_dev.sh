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
# The official 2024 baseline's shipped dev predictions, cut to the same claims.
${PYTHON:-python3} -c "import json,sys; p=json.load(open(sys.argv[1])); json.dump([x for x in p if x['claim_id'] < int(sys.argv[2])], open(sys.argv[3], 'w'))" \
  "$AVERITEC_DATA_DIR/averitec/baseline_dev_predictions.json" "$LIMIT" "$OUT/official2024.pred.json"
# ROWS="a b" runs only those rows (e.g. two shells in parallel); the table lists what exists.
for row in ${ROWS:-gold-evidence claim-only full-own no-reranker-own full-excl}; do
  case $row in
    gold-evidence) run gold-evidence gold-evidence "" ;;
    claim-only) run claim-only claim-only "" ;;
    full-own) run full-own full "$OUT/store_own" ;;
    no-reranker-own) run no-reranker-own no-reranker "$OUT/store_own" ;;
    full-excl) run full-excl full "$OUT/store_excl" ;;
    *) echo "unknown row $row" >&2; exit 2 ;;
  esac
done
$AV score "$OUT/official2024.pred.json" "$OUT/gold.json" --json > "$OUT/official2024.score.json"
${PYTHON:-python3} - "$OUT" <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
rows = [("official2024", "official 2024 baseline (shipped predictions; BLOOM-7b1 + BERT)"),
        ("full-own", "ours, full, own-evidence store (oracle store)"),
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
    s = json.loads(f.read_text())
    cf, rf = out / f"{name}.calibration.json", out / f"{name}.run.json"
    c = json.loads(cf.read_text()) if cf.exists() else {"brier": float("nan"), "ece": float("nan")}
    r = json.loads(rf.read_text()) if rf.exists() else {}
    a = s["averitec_score"]; v = s["veracity"]
    rec = r.get("retrieval_recall_at_k")
    print(f"| {label} | {s['n_claims']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} | {s['questions_only']:.3f} | "
          f"{s['questions_answers']:.3f} | {a['0.2']:.3f} | {a['0.25']:.3f} | {a['0.3']:.3f} | {c['brier']:.3f} | "
          f"{c['ece']:.3f} | {'' if rec is None else f'{rec:.3f}'} |")
gold = json.loads((out / "gold.json").read_text())
p = sum(g["label"] == "Refuted" for g in gold) / len(gold)
print()
print(f"all-Refuted macro-F1 on these {len(gold)} claims: {2 * p / (1 + p) / 4:.3f}")
print("score signature:", json.loads((out / "gold-evidence.score.json").read_text())["signature"])
print("calibration signature:", json.loads((out / "gold-evidence.calibration.json").read_text())["signature"])
PY
