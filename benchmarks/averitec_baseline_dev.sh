#!/usr/bin/env bash
# Measure the AVeriTeC baseline on AVeriTeC dev: every row of the results table in
# docs/averitec_baseline.md, once per configuration in CONFIGS (default: offline-minilm,
# the upstream settings, and offline-minilm-ours, this project's earlier choices). Usage:
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
CONFIGS=${CONFIGS:-offline-minilm offline-minilm-ours}
run() {  # config name variant store
  local cfg=$1 name=$2 variant=$3 store=$4
  mkdir -p "$OUT/$cfg"
  local args=(--config "$cfg" --claims "$DEV" --out "$OUT/$cfg/$name.pred.json" --variant "$variant"
              --limit "$LIMIT" --write-gold-subset "$OUT/gold.json" --resume --json --no-progress)
  [ -n "$store" ] && args+=(--store "$store")
  local t0=$SECONDS
  $AV baseline averitec "${args[@]}" > "$OUT/$cfg/$name.run.json"
  $AV score "$OUT/$cfg/$name.pred.json" "$OUT/gold.json" --json > "$OUT/$cfg/$name.score.json"
  $AV calibration "$OUT/$cfg/$name.pred.json" "$OUT/gold.json" --json > "$OUT/$cfg/$name.calibration.json"
  echo "done: $cfg $name ($((SECONDS - t0)) s wall, load $(cut -d' ' -f1-3 /proc/loadavg))"
}
# The official 2024 baseline's shipped dev predictions, cut to the same claims.
${PYTHON:-python3} -c "import json,sys; p=json.load(open(sys.argv[1])); json.dump([x for x in p if x['claim_id'] < int(sys.argv[2])], open(sys.argv[3], 'w'))" \
  "$AVERITEC_DATA_DIR/averitec/baseline_dev_predictions.json" "$LIMIT" "$OUT/official2024.pred.json"
# ROWS="a b" runs only those rows (e.g. two shells in parallel); the table lists what exists.
for cfg in $CONFIGS; do
  for row in ${ROWS:-gold-evidence claim-only full-own no-reranker-own full-excl}; do
    case $row in
      gold-evidence) run "$cfg" gold-evidence gold-evidence "" ;;
      claim-only) run "$cfg" claim-only claim-only "" ;;
      full-own) run "$cfg" full-own full "$OUT/store_own" ;;
      no-reranker-own) run "$cfg" no-reranker-own no-reranker "$OUT/store_own" ;;
      full-excl) run "$cfg" full-excl full "$OUT/store_excl" ;;
      *) echo "unknown row $row" >&2; exit 2 ;;
    esac
  done
done
$AV score "$OUT/official2024.pred.json" "$OUT/gold.json" --json > "$OUT/official2024.score.json"
${PYTHON:-python3} - "$OUT" $CONFIGS <<'PY'
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
setting = {"offline-minilm": "upstream", "offline-minilm-ours": "ours"}
names = [("full-own", "full, own-evidence store (oracle store)"),
         ("full-excl", "full, --exclude-own-evidence store"),
         ("claim-only", "claim-only"),
         ("gold-evidence", "gold evidence (oracle)"),
         ("no-reranker-own", "no reranker, own-evidence store (oracle store)")]
rows = [("official2024", "official 2024 baseline (shipped predictions; BLOOM-7b1 + BERT)")]
rows += [(f"{cfg}/{n}", f"{setting.get(cfg, cfg)}: {label}") for n, label in names for cfg in sys.argv[2:]]
print("| system | n | label acc | macro-F1 | Q | Q+A | AVeriTeC @0.2 | @0.25 | @0.3 | Brier | ECE | retrieval recall@100 | s/claim | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for name, label in rows:
    f = out / f"{name}.score.json"
    if not f.exists():
        continue
    s = json.loads(f.read_text())
    cf, rf = out / f"{name}.calibration.json", out / f"{name}.run.json"
    c = json.loads(cf.read_text()) if cf.exists() else {}
    r = json.loads(rf.read_text()) if rf.exists() and rf.stat().st_size else {}  # empty: a row still running
    a = s["averitec_score"]; v = s["veracity"]
    rec = r.get("retrieval_recall_at_k")
    cal = f"{c['brier']:.3f} | {c['ece']:.3f}" if c else "– | –"
    recall = "–" if rec is None else f"{rec:.3f}"
    speed = f"{r['seconds_per_claim_total']:.3f} | {r['memory']['peak_rss_mb']:.0f}" if r else "– | –"
    print(f"| {label} | {s['n_claims']} | {v['accuracy']:.3f} | {v['macro_f1']:.3f} | {s['questions_only']:.3f} | "
          f"{s['questions_answers']:.3f} | {a['0.2']:.3f} | {a['0.25']:.3f} | {a['0.3']:.3f} | {cal} | {recall} | {speed} |")
gold = json.loads((out / "gold.json").read_text())
p = sum(g["label"] == "Refuted" for g in gold) / len(gold)
print()
print(f"all-Refuted macro-F1 on these {len(gold)} claims: {2 * p / (1 + p) / 4:.3f}")
first = sys.argv[2]
print("score signature:", json.loads((out / first / "gold-evidence.score.json").read_text())["signature"])
print("calibration signature:", json.loads((out / first / "gold-evidence.calibration.json").read_text())["signature"])
for cfg in sys.argv[2:]:
    for n, _ in names:
        rf = out / cfg / f"{n}.run.json"
        if rf.exists() and rf.stat().st_size:
            r = json.loads(rf.read_text())
            print(f"{cfg}/{n}: s/claim {r['seconds_per_claim']}; cached {r['cached_stages']}; fallbacks {r['fallbacks']}")
PY
