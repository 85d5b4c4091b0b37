#!/usr/bin/env bash
# Times the optimized transformer kernels (Attention, RMSNormalization, RotaryEmbedding,
# GroupNormalization, Gelu) against their reference kernels, side by side: for each model and
# input, `parity bench --profile` runs ROUNDS times alternating --kernels optimized and
# --kernels reference, and the table gives each operator's median time per run in both tiers and
# their ratio (from the per-node profile, a mean of 3 runs: noisy for ops of a few microseconds on
# a loaded machine; the single-node models' rows use bench's median latency instead). The models come from scripts/make_transformer_bench_models.py (opset 23, random
# weights) into .cache/bench-models/transformer.
#
# Environment: BUILD_DIR (build), ROUNDS (3), MIN_TIME (seconds per bench run, 2). Run after
# building `parity`; a few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
ROUNDS=${ROUNDS:-3}
OUT=.cache/bench-models/transformer
/usr/bin/python3 scripts/make_transformer_bench_models.py "$OUT"

LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
# label|model|parity bench arguments
CASES=(
  "llama_block prefill (128 tokens, 384 cached)|$OUT/llama_block.onnx|--input-shapes x:[1,128,256] position_ids:[1,128] past_key:[1,2,384,32] past_value:[1,2,384,32] --val-range position_ids:[0,511]"
  "llama_block decode (1 token, 2047 cached)|$OUT/llama_block.onnx|--input-shapes x:[1,1,256] position_ids:[1,1] past_key:[1,2,2047,32] past_value:[1,2,2047,32] --val-range position_ids:[0,2047]"
  "groupnorm_block (1x64x32x32)|$OUT/groupnorm_block.onnx|"
  "RMSNormalization alone (1x512x2048)|$OUT/rms_norm.onnx|"
  "Gelu none alone (1x512x2048)|$OUT/gelu.onnx|"
  "Gelu tanh alone (1x512x2048)|$OUT/gelu_tanh.onnx|"
)
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for case in "${CASES[@]}"; do
  IFS='|' read -r label model args <<<"$case"
  for round in $(seq "$ROUNDS"); do
    for tier in optimized reference; do
      echo "@@ $label|$tier" >>"$LOG"
      # shellcheck disable=SC2086 # args is a word list
      "$BUILD_DIR/bin/parity" bench "$model" --runners ref --threads 1 --kernels "$tier" --no-ceiling \
        --min-time "${MIN_TIME:-2}" --profile --profile-top 12 $args >>"$LOG" 2>&1
    done
  done
done
echo "[bench] load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

/usr/bin/python3 - "$LOG" <<'EOF'
import re, statistics, sys
OPS = ("Attention", "RMSNormalization", "RotaryEmbedding", "GroupNormalization", "Gelu")
times = {}  # (label, op) -> tier -> [ms]
label = tier = None
for line in open(sys.argv[1]):
    if line.startswith("@@ "):
        label, tier = line[3:].strip().rsplit("|", 1)
        continue
    if "alone" in label:
        m = re.match(r"  \S+\s+x \S+\s+1\s+([0-9.e+-]+) \(", line)  # the latency row: model, input, threads, median
        if m:
            times.setdefault((label, label.split(" ")[0] + " (1)"), {}).setdefault(tier, []).append(float(m.group(1)))
        continue
    m = re.match(r"\s+(\w+)\s+(\d+) nodes?\s+([0-9.e+-]+) ms", line)
    if m and m.group(1) in OPS:
        times.setdefault((label, f"{m.group(1)} ({m.group(2)})"), {}).setdefault(tier, []).append(float(m.group(3)))
print("| model (input) | op (nodes) | optimized ms | reference ms | ratio |")
print("|---|---|--:|--:|--:|")
for (label, op), tiers in times.items():
    if "optimized" not in tiers or "reference" not in tiers:
        continue  # fused into another kernel in one of the tiers
    opt, ref = statistics.median(tiers["optimized"]), statistics.median(tiers["reference"])
    print(f"| {label} | {op} | {opt:.3g} | {ref:.3g} | {ref / opt:.1f}x |")
EOF
