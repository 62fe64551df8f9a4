#!/usr/bin/env bash
# The AVeriTeC offline baseline in the honest setting on all 500 dev claims and the 497 scored
# pseudo-test claims, beside its trivial references (issue 37; docs/averitec_baseline.md).
#   benchmarks/averitec_honest.sh OUT_DIR [CONFIG]        (CONFIG default: offline-minilm)
# The two claim sets run as one claims file (dev, then the pseudo-test): one build — the
# training claims are train.json minus the pseudo-test and minus the dev claims' normalised
# twins for both — and one honest store (--exclude-own-evidence --distractors-from train.json:
# every distractor a training claim's answer, the pseudo-test held out). Each claim's
# prediction depends on that claim alone; the output is split back and each part scored
# against its own gold. Needs AVERITEC_DATA_DIR; AVERITEC=path/to/averitec (default: on PATH).
set -euo pipefail
OUT=${1:?usage: $0 OUT_DIR [CONFIG]}
CFG=${2:-offline-minilm}
AV=${AVERITEC:-averitec}
PY=${PYTHON:-python}
HERE=$(cd "$(dirname "$0")" && pwd)
DEV="$AVERITEC_DATA_DIR/averitec/dev.json"
TRAIN="$AVERITEC_DATA_DIR/averitec/train.json"
mkdir -p "$OUT"
cat <<EOF
plan (2 quiet CPU cores, measured for docs/averitec_baseline.md):
  store for 997 claims, 200 training-claim distractors each     ~20 s, 0.8 GB disk
  first build: verdict model on gold + retrieved training pairs, the slice, the probe,
    the claim head (cached under the cache root afterwards)     ~8 min, ~4 GiB RAM
  997 claims: BM25 top 100, retrieval-fallback questions, verdict, head   ~0.5 s/claim
  the claim-only probe on both sets                              ~2 min
EOF
[ -f "$OUT/pseudo_test.json" ] || $PY "$HERE/pseudo_test_claims.py" --out "$OUT/pseudo_test.json" > "$OUT/pseudo_test.info.json"
[ -f "$OUT/devpt.json" ] || $PY - "$DEV" "$OUT/pseudo_test.json" "$OUT/devpt.json" <<'PY'
import json, sys
dev, pt, out = sys.argv[1:]
json.dump(json.load(open(dev)) + json.load(open(pt)), open(out, "w"))
PY
[ -d "$OUT/store" ] || $AV baseline averitec build-store --claims "$OUT/devpt.json" --out "$OUT/store" \
    --exclude-own-evidence --distractors-from "$TRAIN" --json > "$OUT/store.json"
t0=$SECONDS
$AV baseline averitec --config "$CFG" --claims "$OUT/devpt.json" --store "$OUT/store" --out "$OUT/devpt.pred.json" \
    --resume --json --no-progress > "$OUT/devpt.run.json"
echo "baseline: $((SECONDS - t0)) s wall, load $(cut -d' ' -f1-3 /proc/loadavg)"
$PY - "$OUT/devpt.pred.json" "$DEV" "$OUT/dev.pred.json" "$OUT/pt.pred.json" <<'PY'
import json, sys
preds, dev, out_dev, out_pt = sys.argv[1:]
rows, n = json.load(open(preds)), len(json.load(open(dev)))
for part, path in ((rows[:n], out_dev), (rows[n:], out_pt)):
    json.dump([{**r, "claim_id": i} for i, r in enumerate(part)], open(path, "w"))
PY
for set_ in dev pt; do
  gold=$DEV; [ $set_ = pt ] && gold=$OUT/pseudo_test.json
  [ -f "$OUT/probe_$set_.json" ] || $AV baseline claim-only --claims "$gold" --out "$OUT/probe_$set_.json" --json \
      > "$OUT/probe_$set_.run.json"
  $AV score "$OUT/$set_.pred.json" "$gold" --json > "$OUT/$set_.score.json"
  echo "== $set_"
  $PY "$HERE/trivial_references.py" --gold "$gold" claim-only="$OUT/probe_$set_.json" "$CFG=$OUT/$set_.pred.json"
done
