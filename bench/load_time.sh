#!/usr/bin/env bash
# `make bench-load`: time-to-first-result and peak memory of a big model, parity's ref runner
# against ONNX Runtime in one session. Each round runs `parity run MODEL --ref` and then
# `parity run MODEL --ort` as fresh processes (alternating, so machine load hits both alike) under
# /usr/bin/time: wall seconds from process start to the first output compared and written out
# (load, plan/session creation, one inference) and the peak resident set (VmHWM: anonymous memory
# plus the mapped file pages the process touched). The model file is read once first, so every
# round starts from a warm page cache. Prints a Markdown table of the medians, with the model's
# weight bytes for the peak-memory ratio.
#
# Usage: bench/load_time.sh [MODEL.onnx|MODEL.plan ...]   (default: the 531 MB VGG-11-BN, exported
#        by scripts/make_bench_models.py on first use; a .plan runs on ref only)
# Environment: BUILD_DIR (build), ROUNDS (5), RUNNERS ("ref ort"), EXTRA (more `parity run` options).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ROUNDS=${ROUNDS:-5}
RUNNERS=${RUNNERS:-ref ort}
PARITY="$BUILD_DIR/bin/parity"
[ -x "$PARITY" ] || { echo "load_time.sh: $PARITY is not built (make build)" >&2; exit 1; }
MODELS=("$@")
if [ ${#MODELS[@]} -eq 0 ]; then
  /usr/bin/python3 scripts/make_bench_models.py .cache/bench-models vgg11_bn >/dev/null
  MODELS=(.cache/bench-models/vgg11_bn.onnx)
fi

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "[bench-load] $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds"
echo
echo "| model | weights | runner | time to first result (s) | peak RSS (MB) | peak / weights |"
echo "|---|---:|---|---:|---:|---:|"
for model in "${MODELS[@]}"; do
  cat "$model" >/dev/null  # warm page cache for every runner alike
  weights=$("$PARITY" inspect model "$model" --format json 2>/dev/null |
    /usr/bin/python3 -c 'import json, sys; w = json.load(sys.stdin).get("weights", {}); print(w.get("initializer_bytes", 0) + w.get("constant_node_bytes", 0))' 2>/dev/null || echo 0)
  [ "$weights" -gt 0 ] 2>/dev/null || weights=$(stat -c %s "$model")
  runners=$RUNNERS
  case "$model" in *.plan) runners=ref ;; esac  # a plan is parity's engine: ref only
  for ((round = 0; round < ROUNDS; ++round)); do
    for runner in $runners; do
      # shellcheck disable=SC2086 # EXTRA is a word list
      /usr/bin/time -f "%e %M" -o "$tmp/t" "$PARITY" run "$model" "--$runner" --silent ${EXTRA:-} ||
        { echo "load_time.sh: parity run $model --$runner failed" >&2; exit 1; }
      read -r seconds kb <"$tmp/t"
      echo "$seconds" >>"$tmp/$runner.s"
      echo "$kb" >>"$tmp/$runner.kb"
    done
  done
  for runner in $runners; do
    s=$(median <"$tmp/$runner.s")
    kb=$(median <"$tmp/$runner.kb")
    awk -v m="$(basename "$model")" -v w="$weights" -v r="$runner" -v s="$s" -v kb="$kb" 'BEGIN {
      printf "| %s | %.0f MB | %s | %.2f | %.0f | %.2fx |\n", m, w / 1e6, r, s, kb * 1024 / 1e6, kb * 1024 / w }'
    rm -f "$tmp/$runner.s" "$tmp/$runner.kb"
  done
done
