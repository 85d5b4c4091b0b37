#!/usr/bin/env bash
# "Adding a runner is one folder, no central edit": configures (no build) a copy of the source tree
# with two throwaway runner folders added under src/runners/ and nothing else changed:
# - throwaway/ has a CMakeLists.txt calling parity_add_peer_module: its module target must exist,
#   its registration must join libparity, and its runner source must stay out of libparity;
# - plain/ has only a .cpp: it must be compiled into libparity.
# Also checks that src/CMakeLists.txt names no runner folder.
set -euo pipefail
source_dir=$1
cmake_command=${2:-cmake}
onnx_root=${3:-$source_dir/.cache/onnx-1.17.0}  # the copy has no .cache: the build's libonnx
fail() { echo "FAIL: $*" >&2; exit 1; }

if grep -nE '\b(ort|opencv|torch)\b' "$source_dir/src/CMakeLists.txt"; then
  fail "src/CMakeLists.txt names a runner folder (above); runner folders must be picked up by the glob"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree"
cp -r "$source_dir/CMakeLists.txt" "$source_dir/cmake" "$source_dir/src" "$source_dir/include" "$work/tree/"
runners="$work/tree/src/runners"
mkdir -p "$runners/throwaway" "$runners/plain"
cat > "$runners/throwaway/CMakeLists.txt" <<'CMAKE'
parity_add_peer_module(NAME throwaway
  OPTION PARITY_WITH_THROWAWAY DOC "A throwaway runner (configure test)" HINT "nothing to install"
  REQUIRED_VARS CMAKE_COMMAND
  REGISTRATION throwaway_registration.cpp
  SOURCES throwaway_runner.cpp)
CMAKE
echo '// registers the throwaway runner' > "$runners/throwaway/throwaway_registration.cpp"
echo '// the throwaway runner' > "$runners/throwaway/throwaway_runner.cpp"
echo '// a runner without its own CMakeLists.txt' > "$runners/plain/plain_runner.cpp"

# Unity builds off: the checks below name each source's own object in build.ninja.
"$cmake_command" -S "$work/tree" -B "$work/build" -G Ninja -DPARITY_BUILD_TESTS=OFF -DPARITY_BUILD_EXAMPLES=OFF -DPARITY_WITH_PYTHON=OFF \
  -DPARITY_UNITY_BUILD=OFF -DPARITY_ONNX_ROOT="$onnx_root" \
  > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure failed"; }
ninja_file="$work/build/build.ninja"
grep -q 'parity_runner_throwaway.dir/.*throwaway_runner.cpp.o' "$ninja_file" ||
  fail "no module target parity_runner_throwaway built from runners/throwaway/throwaway_runner.cpp"
grep -q 'parity_lib.dir/runners/throwaway/throwaway_registration.cpp.o' "$ninja_file" ||
  fail "the throwaway runner's registration is not compiled into libparity"
if grep -q 'parity_lib.dir/runners/throwaway/throwaway_runner.cpp.o' "$ninja_file"; then
  fail "runners/throwaway/throwaway_runner.cpp (a folder with its own CMakeLists.txt) was globbed into libparity"
fi
grep -q 'parity_lib.dir/runners/plain/plain_runner.cpp.o' "$ninja_file" ||
  fail "runners/plain/plain_runner.cpp (a folder without a CMakeLists.txt) is not compiled into libparity"
echo "runner folders picked up by the glob: throwaway (peer module), plain (in libparity)"
