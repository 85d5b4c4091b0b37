#!/usr/bin/env bash
# The main job on the bundled model: run it with parity's own executor (--ref) and ONNX Runtime
# (--ort) on identical inputs, compare the outputs, then compare every layer with bounded memory.
# Falls back to --ref alone (saying so) when ONNX Runtime is unavailable.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
PARITY="$BUILD_DIR/bin/parity"
MODEL=models/demo.onnx   # built by scripts/make_demo_model.py
"$PARITY" --version
if "$PARITY" runners 2>/dev/null | awk '$1 == "ort" { getline; print; exit }' | grep -q '^ *available'; then
  "$PARITY" run "$MODEL" --ref --ort --iterations 2 --atol 1e-5 --rtol 1e-4
  "$PARITY" run "$MODEL" --ref --ort --onnx-outputs mark all --atol 1e-5 --rtol 1e-4
else
  echo "ONNX Runtime is unavailable ('$PARITY runners' says why): running the ref runner alone"
  "$PARITY" run "$MODEL" --ref --iterations 2 --validate
fi
