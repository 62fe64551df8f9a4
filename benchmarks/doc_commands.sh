#!/usr/bin/env bash
# Runs the README's and docs' deterministic commands (scores, calibration, compare, stats,
# audit, meta-eval reproduction, fever8 dry run, data list) in the checkout REPO and writes
# each command's stdout (--json) to OUT/NAME.out, so two checkouts can be compared byte for
# byte after a restructuring:
#   bash benchmarks/doc_commands.sh OLD_CHECKOUT before/ && bash benchmarks/doc_commands.sh . after/
#   for f in before/*.out; do cmp -s "$f" "after/${f#before/}" || echo "differs: ${f#before/}"; done
# Needs REPO/.venv and the shared data (AVERITEC_DATA_DIR, default ../shared/data). Wall-clock
# fields are masked; nothing else is.
set -u
REPO=$(cd "$1" && pwd); OUT=$(mkdir -p "$2" && cd "$2" && pwd); cd "$REPO"
export PYTHONPATH=$PWD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
D=${AVERITEC_DATA_DIR:-$(cd .. && pwd)/shared/data}; export AVERITEC_DATA_DIR=$D
export NLTK_DATA=${NLTK_DATA:-$(dirname "$D")/nltk_data}
A=".venv/bin/averitec"
run() { local name=$1; shift; "$A" "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"; echo "rc=$?" >> "$OUT/$name.out"; }
run demo score examples/demo_predictions.json examples/demo_gold.json --json
run demo_table score examples/demo_predictions.json examples/demo_gold.json
run s2024 score "$D/averitec/baseline_dev_predictions.json" "$D/averitec/dev.json" --json
run s2023 score "$D/averitec/baseline_dev_predictions_2023format.json" "$D/averitec/dev.json" --profile averitec2023 --json
run evalai score "$D/averitec/evalai/baseline_submission_dev.jsonl" "$D/averitec/evalai/averitec_dev_gold.jsonl" --profile evalai --json
run fever score "$D/fever/paper_dev_sample_predictions.jsonl" "$D/fever/paper_dev.jsonl" --profile fever --max-evidence 5 --json
run lenient score "$D/averitec/baseline_dev_predictions.json" "$D/averitec/dev.json" --lenient --json
run calib calibration examples/demo_predictions_confidence.json examples/demo_gold.json --json
run stats stats averitec --split dev --data-dir "$D" --json
run audit audit "$D/averitec/dev.json" --json
run compare compare examples/demo_predictions.json examples/demo_predictions_confidence.json examples/demo_gold.json --json
run metaeval meta-eval --json --scorer hu-meteor --scorer bleu --scorer meteor --scorer rouge
run fever8dry score "$D/averitec/baseline_dev_predictions.json" "$D/averitec/dev.json" --profile fever8 --dry-run --json
run datalist data list --json
for f in "$OUT"/*.out; do sed -i -E 's/"(seconds|elapsed|wall_s|cpu_s|wall|time_s|duration_s)": [0-9.e+-]+/"\1": X/g' "$f"; done
