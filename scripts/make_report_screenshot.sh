#!/usr/bin/env bash
# Makes docs/debugging.md's screenshot (docs/mark_all_report.png): a `mark all` report of PaddleOCR's
# PP-OCRv4 text detector, parity's runtime against ONNX Runtime, rendered by headless Chromium.
# Needs a built parity (build/bin/parity, or $PARITY), scripts/setup.sh's models and chromium; the
# report itself stays in build/ppocr_det_mark_all.html.
set -euo pipefail
cd "$(dirname "$0")/.."
PARITY=${PARITY:-build/bin/parity}
MODEL=.cache/npm/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx
OUT=${1:-docs/mark_all_report.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Exit 1 means some layer exceeds the tolerance: the report shows where, which is the point.
set +e
"$PARITY" run "$MODEL" --ref --ort --input-shapes 'x:[1,3,320,320]' --onnx-outputs mark all \
  --atol 1e-4 --rtol 1e-3 --report build/ppocr_det_mark_all.html
status=$?
set -e
if [ "$status" -gt 1 ]; then
  echo "make_report_screenshot: parity run failed (exit $status)" >&2
  exit "$status"
fi

mkdir -p "$(dirname "$OUT")"
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$work/profile" --hide-scrollbars \
  --force-device-scale-factor=1 --window-size=1000,700 --screenshot="$OUT" "file://$PWD/build/ppocr_det_mark_all.html" 2>/dev/null
echo "Wrote $OUT ($(stat -c %s "$OUT") bytes)"
