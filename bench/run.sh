#!/usr/bin/env bash
# `make bench`: sets up, builds, exports the torchvision / torch.nn models
# (scripts/make_bench_models.py), then times parity's ref runner, ONNX Runtime and OpenCV DNN on
# every benchmark model at 1 and 2 threads (`parity bench`, runners alternating iteration by
# iteration) and writes bench/results.md (README-ready table, with the date, CPU, load average,
# ref's GFLOP/s beside the measured sgemm ceiling) and $BUILD_DIR/bench-results.json (every sample).
#
# Environment: BUILD_DIR (build), JOBS (nproc), ITERATIONS (minimum timed runs per runner and row,
# default 20), MIN_TIME (seconds per row, default 5), THREADS (1,2), MODELS (names from
# make_bench_models.py --list, space-separated; default all). Extra arguments go to `parity bench`
# (e.g. --runners ref,ort). About 15 minutes on 2 cores after the build, most of it R3D-18,
# ResNet-50 and PP-OCRv4 det.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

scripts/setup.sh
cmake -S . -B "$BUILD_DIR" -G Ninja ${CMAKE_FLAGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target parity
TORCHVISION=.cache/bench-models
MODELS=${MODELS:-$(/usr/bin/python3 scripts/make_bench_models.py --list)}
# shellcheck disable=SC2086 # MODELS is a word list
/usr/bin/python3 scripts/make_bench_models.py "$TORCHVISION" $MODELS
EXPORTED=()
for name in $MODELS; do EXPORTED+=("$TORCHVISION/$name.onnx"); done

OCR=.cache/npm/ocr-models/assets
WAKE=.cache/npm/openwakeword/models
echo "[bench] load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BUILD_DIR/bin/parity" bench \
  models/demo.onnx \
  "$OCR/ch_PP-OCRv4_det_infer.onnx" "$OCR/ch_PP-OCRv4_rec_infer.onnx" \
  "$WAKE/hello_deepa.onnx" \
  "${EXPORTED[@]}" \
  --input-shapes 'ch_PP-OCRv4_det_infer=x:[1,3,640,640]' 'ch_PP-OCRv4_rec_infer=x:[1,3,48,320]' \
  --runners ref,ort,opencv --threads "${THREADS:-1,2}" \
  --iterations "${ITERATIONS:-20}" --min-time "${MIN_TIME:-5}" --warm-up 2 \
  --profile --profile-top 6 \
  --percentile 90,99 --markdown bench/results.md --json "$BUILD_DIR/bench-results.json" "$@"
echo "[bench] wrote bench/results.md and $BUILD_DIR/bench-results.json"
