#!/usr/bin/env bash
# `make bench`: sets up, builds, exports the torchvision models, then times parity's ref runner,
# ONNX Runtime and OpenCV DNN on every benchmark model at 1 and 2 threads (`parity bench`,
# runners alternating iteration by iteration) and writes bench/results.md (README-ready table,
# with the date, CPU and load average) and $BUILD_DIR/bench-results.json (every sample).
#
# Environment: BUILD_DIR (build), JOBS (nproc), ITERATIONS (minimum timed runs per runner and row,
# default 20), MIN_TIME (seconds per row, default 5), THREADS (1,2). Extra arguments go to
# `parity bench` (e.g. --runners ref,ort). About 3 minutes on 2 cores after the build, most of it
# PP-OCRv4 det and ResNet-50.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja ${CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target parity
/usr/bin/python3 scripts/make_bench_models.py

OCR=.cache/npm/ocr-models/assets
WAKE=.cache/npm/openwakeword/models
TORCHVISION=.cache/bench-models
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD_DIR/bin/parity" bench \
  models/demo.onnx \
  "$OCR/ch_PP-OCRv4_det_infer.onnx" "$OCR/ch_PP-OCRv4_rec_infer.onnx" \
  "$WAKE/hello_deepa.onnx" \
  "$TORCHVISION/mobilenet_v2.onnx" "$TORCHVISION/resnet50.onnx" "$TORCHVISION/vit_tiny.onnx" \
  --input-shapes 'ch_PP-OCRv4_det_infer=x:[1,3,640,640]' 'ch_PP-OCRv4_rec_infer=x:[1,3,48,320]' \
  --runners ref,ort,opencv --threads "${THREADS:-1,2}" \
  --iterations "${ITERATIONS:-20}" --min-time "${MIN_TIME:-5}" --warm-up 2 \
  --profile --profile-top 6 \
  --markdown bench/results.md --json "$BUILD_DIR/bench-results.json" "$@"
echo "[bench] wrote bench/results.md and $BUILD_DIR/bench-results.json"
