#!/usr/bin/env bash
# The seed's command sequence (extending `polygraphy run`) with the reshape_destroyer example built
# out of tree against an installed parity (fixture: install_prefix.sh), then the ways an extension
# can be unavailable: a build for another extension ABI, and a missing library.
set -uo pipefail
work=$1
source_dir=$2
parity="$work/prefix/bin/parity"
ext="$work/res_des/libparity_reshape_destroyer.so"
wrong="$work/res_des_wrong_abi/libparity_reshape_destroyer.so"
model="$source_dir/examples/extensions/reshape_destroyer/no_op_reshape.onnx"
installed_dir=$(dirname "$(find "$work/prefix" -name 'libparity.so*' | head -1)")/parity/extensions
failures=0

# expect CODE PATTERN COMMAND...: runs COMMAND, checks its exit code and that its output has PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 2
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc != "$code" || $out != *"$pattern"* ]]; then
    echo "FAIL: $* -> exit $rc (wanted $code), wanted output containing: $pattern"
    echo "$out" | tail -20
    failures=$((failures + 1))
  else
    echo "ok: $*"
  fi
}

# 2. help shows the extension's options, in their own groups
expect 0 "Reshape Destroyer runner (--res-des)" "$parity" --extension "$ext" run --help
expect 0 "--res-des-speed SPEED" "$parity" --extension "$ext" run --help
expect 0 "--res-des-rename-nodes" "$parity" run --help --extension "$ext"
# 3. the runner on a model with a no-op Reshape
expect 0 "Replacing no-op reshape: no_op_reshape with an Identity node" "$parity" --extension "$ext" run "$model" --res-des
expect 0 "PASSED" "$parity" run "$model" --res-des --extension "$ext"
# 4. the other options
expect 0 "Renamed Identity node to: no_op_reshape_destroyed" "$parity" --extension "$ext" run "$model" --res-des --res-des-rename-nodes
for speed in slow medium fast; do
  start=$(date +%s%N)
  expect 0 "PASSED" "$parity" --extension "$ext" run "$model" --res-des --res-des-speed="$speed"
  elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  want=$([[ $speed == slow ]] && echo 1000 || { [[ $speed == medium ]] && echo 500 || echo 0; })
  if (( elapsed_ms < want )); then echo "FAIL: --res-des-speed=$speed took ${elapsed_ms} ms, expected at least ${want}"; failures=$((failures + 1)); fi
done
expect 1 "invalid choice" "$parity" --extension "$ext" run "$model" --res-des --res-des-speed=ludicrous
# 5. against ONNX Runtime
expect 0 "PASSED | All outputs matched" "$parity" --extension "$ext" run "$model" --res-des --ort
# Found through $PARITY_EXTENSION_PATH (a folder) and the installation's extension folder.
expect 0 "available, version 0.0.1" env PARITY_EXTENSION_PATH="$work/res_des" "$parity" runners
mkdir -p "$installed_dir" && cp "$ext" "$installed_dir/"
expect 0 "PASSED" "$parity" run "$model" --res-des --ort
rm -f "$installed_dir/libparity_reshape_destroyer.so"

# An extension built for another ABI: listed as unavailable (exit 0); only asking for it fails.
expect 0 "unavailable: extension reshape_destroyer (" "$parity" --extension "$wrong" runners
expect 0 "was built for extension ABI 2; this parity implements ABI 1" "$parity" --extension "$wrong" runners
expect 1 "[E] runner 'res-des' (--res-des) is unavailable: extension reshape_destroyer" "$parity" --extension "$wrong" run "$model" --res-des
expect 0 "PASSED" "$parity" --extension "$wrong" run "$model" --ort
# A library that is not there.
expect 0 "extension file /nonexistent/libx.so does not exist" "$parity" --extension /nonexistent/libx.so runners

echo "$failures failure(s)"
[[ $failures == 0 ]]
