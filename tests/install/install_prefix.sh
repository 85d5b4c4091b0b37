#!/usr/bin/env bash
# CTest fixture (install.prefix): installs the built parity into WORK/prefix and builds the
# reshape_destroyer example against it, twice: as it is (WORK/res_des) and with a deliberately wrong
# extension ABI number (WORK/res_des_wrong_abi). The example and --gen-script tests share it, so
# parity is installed and the example compiled once per test run.
set -euo pipefail
build_dir=$1
work=$2
source_dir=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
# Only the public API's headers are installed: include/parity's, and the generated version header.
installed=$(cd "$work/prefix/include" && find . -name '*.h' | sort)
public=$( (cd "$source_dir/include" && find . -name '*.h'; echo ./parity/core/version.h) | sort)
[[ $installed == "$public" ]] || { diff <(echo "$public") <(echo "$installed"); echo "installed headers differ from include/"; exit 1; }
example="$source_dir/examples/extensions/reshape_destroyer"
for variant in res_des res_des_wrong_abi; do
  flags=()
  [[ $variant == res_des_wrong_abi ]] && flags=(-DRESHAPE_DESTROYER_WRONG_ABI=ON)
  cmake -S "$example" -B "$work/$variant" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
    -DCMAKE_CXX_FLAGS="-Werror" "${flags[@]}" > "$work/$variant.configure.log"
  cmake --build "$work/$variant" -j 1 > "$work/$variant.build.log" || { cat "$work/$variant.build.log"; exit 1; }
done
ls "$work/prefix/bin/parity" "$work/res_des/libparity_reshape_destroyer.so" \
  "$work/res_des_wrong_abi/libparity_reshape_destroyer.so"
