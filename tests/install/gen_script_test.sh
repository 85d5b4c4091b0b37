#!/usr/bin/env bash
# `parity run ... --gen-script`: for several command lines (two runners, saved inputs, tolerances,
# a failing comparison, `mark all`, an extension runner, a real model), generates the program,
# builds them all in one project against the installed parity (fixture: install_prefix.sh) with
# -Wall -Wextra -Werror, runs each, and checks that its verdict (exit code) is the command's.
set -uo pipefail
work=$1
source_dir=$2
parity="$work/prefix/bin/parity"
ext="$work/res_des/libparity_reshape_destroyer.so"
demo="$source_dir/models/demo.onnx"
reshape="$source_dir/examples/extensions/reshape_destroyer/no_op_reshape.onnx"
wakeword=$(find "$source_dir/.cache/npm/openwakeword" -name 'hello_deepa.onnx' 2>/dev/null | head -1)
dir="$work/gen_script"
rm -rf "$dir" && mkdir -p "$dir"
cd "$dir" || exit 1

# The command lines, by name (two runners, saved inputs, tolerances, a failing comparison, a user
# error, post-processing with another compare function, selected outputs, saved results only, mark
# all, an extension runner). inputs.json and outputs_seed1.json are written by earlier ones.
names=(two_runners save_inputs load_inputs_tolerances failing bad_output_name top_k_indices distance_first
  selected_outputs loaded_only mark_all extension)
declare -A cmd
cmd[two_runners]="run $demo --ref --ort --ort-threads 1"
cmd[save_inputs]="run $demo --ref --ort --seed 7 --val-range input:[0,2] --iterations 2 --save-inputs $dir/inputs.json --save-outputs $dir/outputs_seed7.json"
cmd[load_inputs_tolerances]="run $demo --ref --ort --load-inputs $dir/inputs.json --atol 1e-4 --rtol probs:1e-3 --check-error-stat max"
cmd[failing]="run $demo --ref --load-outputs $dir/outputs_seed7.json --seed 3 --iterations 2"
cmd[bad_output_name]="run $demo --ref --ort --atol nosuchoutput:1e-3"
cmd[top_k_indices]="run $demo --ref --ort --postprocess probs:top-3 --compare indices --index-tolerance 1"
cmd[distance_first]="run $demo --ref --ort --ref --compare-to first --compare distance_metrics --l2-tolerance 1e-4 --validate --iterations 2"
cmd[selected_outputs]="run $demo --ref --ort --onnx-outputs relu1 probs --atol 1e-4"
cmd[loaded_only]="run --load-outputs $dir/outputs_seed7.json"
cmd[mark_all]="run $demo --ref --ort --onnx-outputs mark all --atol 1e-4 --rtol 1e-4"
cmd[extension]="--extension $ext run $reshape --res-des --ort --res-des-rename-nodes"
if [[ -n $wakeword ]]; then
  names+=(real_model)
  cmd[real_model]="run $wakeword --ref --ort --atol 1e-4 --rtol 1e-3"
elif [[ ${CI:-} == true ]]; then
  echo "FAIL: the openWakeWord model is missing (run scripts/setup.sh)"; exit 1
fi

failures=0
declare -A verdict
for name in "${names[@]}"; do
  # shellcheck disable=SC2086  # the command lines are word lists
  "$parity" ${cmd[$name]} > "$name.cli.log" 2>&1
  verdict[$name]=$?
  # shellcheck disable=SC2086
  "$parity" ${cmd[$name]} --gen-script "$dir/$name.cpp" > "$name.gen.log" 2>&1 || {
    echo "FAIL: --gen-script for $name"; cat "$name.gen.log"; failures=$((failures + 1)); }
  # Generating must not run anything.
  if grep -q "runner-N" "$name.gen.log"; then echo "FAIL: --gen-script ran $name"; failures=$((failures + 1)); fi
done
if [[ ${verdict[failing]} != 1 || ${verdict[two_runners]} != 0 ]]; then
  echo "FAIL: unexpected CLI verdicts (failing: ${verdict[failing]}, two_runners: ${verdict[two_runners]})"
  cat failing.cli.log two_runners.cli.log | tail -30
  failures=$((failures + 1))
fi

{
  echo "cmake_minimum_required(VERSION 3.25)"
  echo "project(generated_scripts LANGUAGES CXX)"
  for name in "${names[@]}"; do echo "include(\${CMAKE_CURRENT_SOURCE_DIR}/$name.cmake)"; done
} > CMakeLists.txt
if ! cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
    > configure.log 2>&1 || ! cmake --build build -j 1 > build.log 2>&1; then
  echo "FAIL: the generated programs do not build cleanly"; tail -n 40 configure.log build.log; exit 1
fi

# save_inputs again through its program rewrites inputs.json with the same values; run in order.
for name in "${names[@]}"; do
  LD_LIBRARY_PATH="$work/prefix/lib" "./build/$name" > "$name.program.log" 2>&1
  rc=$?
  if [[ $rc != "${verdict[$name]}" ]]; then
    echo "FAIL: $name: program exit $rc, command exit ${verdict[$name]}"
    tail -15 "$name.program.log"; tail -5 "$name.cli.log"
    failures=$((failures + 1))
  else
    echo "ok: $name (verdict $rc)"
  fi
done
echo "$failures failure(s)"
[[ $failures == 0 ]]
