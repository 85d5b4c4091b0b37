#!/usr/bin/env bash
# CPU time per inference of fp32 and int8 plans (docs/plans.md, Reduced precision: int8): for each
# model, `parity convert` builds an fp32 plan and an int8 plan (calibrated on 8 seeded random
# batches, cache kept beside it), then ROUNDS rounds run each plan alternately with
# `parity run X.plan --ref --threads 1 --iterations N+1` and `--iterations 1`; the difference over N
# is the CPU time of one inference (user + system), which stays meaningful on a loaded machine
# where wall-clock medians scatter. PARITY_BASELINE=path/to/another/parity adds an int8 plan built
# and run by that binary (e.g. main's, to compare before and after).
#
# Environment: BUILD_DIR (build), ROUNDS (2), ITERATIONS (40). Run after building `parity` and
# `scripts/setup.sh`; about a minute on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ROUNDS=${ROUNDS:-2}
N=${ITERATIONS:-40}
PARITY=$(realpath "$BUILD_DIR/bin/parity")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
# label|model|shape options
MODELS=(
  "PP-OCRv4 rec 1x3x48x320|.cache/npm/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx|--input-shapes x:[1,3,48,320]"
  "MobileNetV2|.cache/bench-models/mobilenet_v2.onnx|"
)
cpu_seconds() { /usr/bin/time -f "%U %S" "$@" >/dev/null 2>"$OUT/time"; tail -1 "$OUT/time" | awk '{print $1 + $2}'; }
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for entry in "${MODELS[@]}"; do
  IFS='|' read -r label model shapes <<<"$entry"
  # shellcheck disable=SC2086 # shapes is a word list
  "$PARITY" convert "$model" -o "$OUT/fp32.plan" $shapes >/dev/null
  # shellcheck disable=SC2086
  "$PARITY" convert "$model" -o "$OUT/int8.plan" --int8 --calibration-cache "$OUT/cal.cache" --iterations 8 $shapes >/dev/null
  runs=("$PARITY|$OUT/fp32.plan|fp32" "$PARITY|$OUT/int8.plan|int8")
  if [[ -n "${PARITY_BASELINE:-}" ]]; then
    # shellcheck disable=SC2086
    "$PARITY_BASELINE" convert "$model" -o "$OUT/base.plan" --int8 --calibration-cache "$OUT/cal.cache" $shapes >/dev/null
    runs+=("$PARITY_BASELINE|$OUT/base.plan|int8 (baseline)")
  fi
  for round in $(seq "$ROUNDS"); do
    for run in "${runs[@]}"; do
      IFS='|' read -r binary plan name <<<"$run"
      many=$(cpu_seconds "$binary" run "$plan" --ref --threads 1 --iterations $((N + 1)))
      one=$(cpu_seconds "$binary" run "$plan" --ref --threads 1 --iterations 1)
      echo "$label | $name | round $round | $(awk -v a="$many" -v b="$one" -v n="$N" 'BEGIN {printf "%.1f", (a - b) / n * 1000}') ms CPU/inference"
    done
  done
  rm -f "$OUT/cal.cache"
done
echo "[bench] load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
