#!/usr/bin/env bash
# Installs the built parity into a temporary prefix, then configures, builds and runs a downstream
# project that finds it with find_package(parity).
set -euo pipefail
build_dir=$1
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source_dir/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
out=$(LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib/x86_64-linux-gnu" "$work/build/consumer")
echo "$out"
[[ "$out" == *"{x [dtype=float32, shape=(2, 2)]} 4.0"* ]]
