#!/usr/bin/env bash
# Plans of every precision side by side (docs/int8.md): for each model, `parity convert` builds an
# fp32, fp16, bf16 and int8 plan (int8 calibrated on 8 seeded random batches), then one
# `parity bench` run times all of them, alternating, at 1 thread, and the table ends with each
# plan's median latency over its model's fp32 plan. Models: ResNet-50, MobileNetV2,
# EfficientNet-B0, bert_mini, kv_decoder (scripts/make_bench_models.py exports them into
# MODELS_DIR when missing; needs torch) and PP-OCRv4 rec (scripts/setup.sh).
#
# Environment: BUILD_DIR (build), MODELS_DIR (.cache/bench-models), MODELS (a subset of the
# names, space-separated), PRECISIONS ("fp32 fp16 bf16 int8"), MIN_TIME (2 s per plan),
# ONEDNN_MAX_CPU_ISA (e.g. AVX2, for CPUs without VNNI: plans are built and run under the same cap),
# ISA (`--isa` of convert and bench: avx2 caps parity's kernels and oneDNN's JIT together, the
# capped AVX2 figures of docs/kernels.md).
# Extra arguments go to `parity bench` (e.g. --threads 1,2).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
MODELS_DIR=${MODELS_DIR:-.cache/bench-models}
PRECISIONS=${PRECISIONS:-fp32 fp16 bf16 int8}
MODELS=${MODELS:-resnet50 mobilenet_v2 efficientnet_b0 bert_mini kv_decoder ch_PP-OCRv4_rec_infer}
PARITY=$(realpath "$BUILD_DIR/bin/parity")
ISA_FLAGS=()
[[ -n "${ISA:-}" ]] && ISA_FLAGS=(--isa "$ISA")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# PP-OCRv4 rec comes from scripts/setup.sh's npm package unless MODELS_DIR holds a copy.
model_path() {
  if [[ "$1" == ch_PP-OCRv4_rec_infer && ! -f "$MODELS_DIR/$1.onnx" ]]; then
    echo ".cache/npm/ocr-models/assets/$1.onnx"
  else
    echo "$MODELS_DIR/$1.onnx"
  fi
}
shape_options() {
  case "$1" in
    ch_PP-OCRv4_rec_infer) echo "--input-shapes x:[1,3,48,320]" ;;
  esac
}

PLANS=()
for name in $MODELS; do
  model=$(model_path "$name")
  if [[ ! -f "$model" ]]; then
    [[ "$name" == ch_PP-OCRv4_rec_infer ]] && { echo "[bench] $model is missing: run scripts/setup.sh" >&2; exit 1; }
    /usr/bin/python3 scripts/make_bench_models.py "$MODELS_DIR" "$name"
  fi
  for precision in $PRECISIONS; do
    flags=()
    case "$precision" in
      fp16) flags=(--fp16) ;;
      bf16) flags=(--bf16) ;;
      int8) flags=(--int8 --iterations 8 --calibration-cache "$OUT/$name.cache") ;;
    esac
    # shellcheck disable=SC2046 # shape_options is a word list
    "$PARITY" convert "$model" "${flags[@]}" "${ISA_FLAGS[@]}" $(shape_options "$name") -o "$OUT/$name.$precision.plan" | grep -v '^\[I\]' || true
    PLANS+=("$OUT/$name.$precision.plan")
  done
done

echo "[bench] $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); oneDNN ISA cap: ${ONEDNN_MAX_CPU_ISA:-none}; --isa ${ISA:-native}"
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PARITY" bench "${PLANS[@]}" "${ISA_FLAGS[@]}" --runners ref --threads 1 --min-time "${MIN_TIME:-2}" --no-ceiling \
  --json "$OUT/bench.json" "$@" | grep -v '^\[I\] Benchmarking'
echo "[bench] load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Median latency per plan, and over the fp32 plan's (1 thread):"
python3 - "$OUT/bench.json" <<'EOF'
import json, sys
models = {}
for row in json.load(open(sys.argv[1]))["results"]:
    ref = row["runners"].get("ref") or {}
    if ref.get("median_ms") is None:
        continue
    name, precision = row["label"].rsplit(".", 1)
    models.setdefault(name, {})[precision] = (ref["median_ms"], ref["min_ms"])
for name, by in models.items():
    base = by.get("fp32")
    cells = []
    for precision, (median, fastest) in by.items():
        ratio = f" = {median / base[0]:.2f}x (fastest runs {fastest / base[1]:.2f}x)" if base and precision != "fp32" else ""
        cells.append(f"{precision} {median:.2f} ms{ratio}")
    print(f"  {name}: " + "; ".join(cells))
EOF
