#!/usr/bin/env bash
# `parity template onnx-graph|data-loader`: the generated programs (with and without a model) build
# against the installed parity (fixture: install_prefix.sh) with -Wall -Wextra -Werror and run: the
# edit program saves a model parity runs, the data loader writes inputs parity runs the model on.
set -uo pipefail
work=$1
source_dir=$2
parity="$work/prefix/bin/parity"
models="$source_dir/tests/data/polygraphy_cli"
dir="$work/templates"
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir" || exit 1

fail() { echo "FAIL: $*"; exit 1; }
"$parity" template onnx-graph "$models/attr_order.onnx" -o edit.cpp > gen.log 2>&1 || fail "template onnx-graph"
"$parity" template onnx-graph -o edit_any.cpp >> gen.log 2>&1 || fail "template onnx-graph without a model"
"$parity" template data-loader "$models/unbounded_dds.onnx" -o loader.cpp --iterations 3 >> gen.log 2>&1 ||
  fail "template data-loader"
"$parity" template data-loader -o loader_any.cpp >> gen.log 2>&1 || fail "template data-loader without a model"
{
  echo "cmake_minimum_required(VERSION 3.25)"
  echo "project(templates LANGUAGES CXX)"
  for name in edit edit_any loader loader_any; do echo "include(\${CMAKE_CURRENT_SOURCE_DIR}/$name.cmake)"; done
} > CMakeLists.txt
if ! cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
    > configure.log 2>&1 || ! cmake --build build -j 1 > build.log 2>&1; then
  tail -n 40 configure.log build.log
  fail "the generated programs do not build cleanly"
fi
export LD_LIBRARY_PATH="$work/prefix/lib"

# The edit program as generated: prints the nodes, saves a model that runs like the original.
./build/edit "$models/attr_order.onnx" edited.onnx > edit.log 2>&1 || { cat edit.log; fail "edit program"; }
grep -q 'gemm (Gemm): 3 input(s), 1 output(s)' edit.log || { cat edit.log; fail "edit program output"; }
"$parity" run "$models/attr_order.onnx" --ref --save-outputs original.json > run1.log 2>&1 || fail "run original"
"$parity" run edited.onnx --ref --load-outputs original.json > run2.log 2>&1 || { tail run2.log; fail "edited model"; }
./build/edit_any > usage.log 2>&1 && fail "edit_any without a model should print its usage and fail"
grep -q 'usage:' usage.log || fail "edit_any usage"

# The data loader: three feeds for every input of the model, which parity then runs on.
./build/loader feeds.json > loader.log 2>&1 || { cat loader.log; fail "loader program"; }
"$parity" inspect data feeds.json > feeds.log 2>&1 || { cat feeds.log; fail "inspect the loader's feeds"; }
for name in x t counts; do grep -q "$name" feeds.log || { cat feeds.log; fail "feed $name missing"; }; done
"$parity" run "$models/unbounded_dds.onnx" --ref --load-inputs feeds.json > run3.log 2>&1 ||
  { tail run3.log; fail "run on the loader's feeds"; }
grep -q 'iteration 2\|Iteration 2\|3 iteration' run3.log || grep -q 'PASSED' run3.log || fail "run3 verdict"
./build/loader_any > any.log 2>&1 && [[ -f inputs.json ]] || { cat any.log; fail "loader_any"; }
echo "ok: templates build and run"
