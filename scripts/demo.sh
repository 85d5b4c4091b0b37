#!/usr/bin/env bash
# The main job on the bundled model: run it on every available runner and compare.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
PARITY="$BUILD_DIR/bin/parity"
"$PARITY" --version
"$PARITY" inspect data ../shared/fixtures/polygraphy/run_results.json 2>/dev/null || \
  "$PARITY" inspect data examples/data/run_results.json
