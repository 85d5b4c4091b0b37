#!/usr/bin/env bash
# `make package` as a user on another machine would meet it: builds the Debian packages from the
# build tree (CPack), checks their contents and dependencies, unpacks them into a scratch root
# (dpkg-deb -x, no root needed), runs the demo with the packaged parity, reads its man pages and
# completion, and builds the reshape_destroyer example against the packaged CMake config.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
# expect CODE PATTERN COMMAND...: runs COMMAND, checks its exit code and that its output has PATTERN.
expect() {
  local code=$1 pattern=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [[ $rc != "$code" || $out != *"$pattern"* ]]; then
    fail "$* -> exit $rc (wanted $code), wanted output containing: $pattern"
    echo "$out" | tail -20
  else
    echo "ok: $*"
  fi
}

cpack --config "$build_dir/CPackConfig.cmake" -B "$work/out" > "$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; echo "FAIL: cpack"; exit 1; }
main_deb=$(ls "$work"/out/parity_*.deb 2>/dev/null | head -n 1)
[[ -f $main_deb ]] || { ls -l "$work/out"; echo "FAIL: no parity_*.deb"; exit 1; }
echo "ok: $(cd "$work/out" && ls ./*.deb | tr '\n' ' ')"

# Dependencies from dpkg-shlibdeps: the system libraries libparity links, not the peers' runtimes.
depends=$(dpkg-deb -f "$main_deb" Depends)
for package in libprotobuf32 libdnnl2 libzip4 libyaml-cpp0.7 libc6 libstdc++6; do
  [[ $depends == *"$package"* ]] || fail "parity's Depends lacks $package: $depends"
done
for package in libopencv libtorch; do
  [[ $depends != *"$package"* ]] || fail "parity depends on $package (a peer runner's runtime): $depends"
done
echo "ok: parity Depends: $depends"
for module in "$build_dir"/src/libparity_runner_*.so; do
  [[ -e $module ]] || continue
  name=$(basename "$module" .so)
  name=${name#libparity_runner_}
  deb=$(ls "$work"/out/parity-runner-"${name}"_*.deb 2>/dev/null | head -n 1)
  [[ -f $deb ]] || { fail "no parity-runner-$name package"; continue; }
  runner_depends=$(dpkg-deb -f "$deb" Depends)
  [[ $runner_depends == *"parity (= "* ]] || fail "parity-runner-$name does not depend on parity: $runner_depends"
  case $name in
    opencv) [[ $runner_depends == *libopencv-dnn* ]] || fail "parity-runner-opencv lacks libopencv-dnn: $runner_depends" ;;
    torch) [[ $runner_depends == *libtorch* ]] || fail "parity-runner-torch lacks libtorch: $runner_depends" ;;
  esac
  echo "ok: parity-runner-$name Depends: $runner_depends"
done

# ONNX Runtime in its own package, recommended by parity's.
ort_deb=$(ls "$work"/out/parity-onnxruntime_*.deb 2>/dev/null | head -n 1)
[[ -f $ort_deb ]] || fail "no parity-onnxruntime package"
[[ $(dpkg-deb -f "$main_deb" Recommends) == *parity-onnxruntime* ]] || fail "parity does not recommend parity-onnxruntime"

root="$work/root"
for deb in "$work"/out/*.deb; do dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x $deb"; done
libdir=$(dirname "$(find "$root/usr" -name 'libparity.so.*' | head -n 1)")
for path in usr/bin/parity usr/share/man/man1/parity.1.gz usr/share/man/man1/parity-run.1.gz \
            usr/share/man/man1/parity-inspect-model.1.gz usr/share/bash-completion/completions/parity \
            usr/share/doc/parity-onnxruntime/copyright \
            usr/include/parity/runners/extension.h usr/include/parity/core/version.h usr/include/parity/parity.h; do
  [[ -e $root/$path ]] || fail "the packages lack /$path"
done
# Internal headers (the executor's subgraph, the kernels' helpers) are not part of the public API.
[[ ! -e $root/usr/include/parity/runtime/subgraph.h ]] || fail "the packages install internal headers"
[[ -f $libdir/parity/onnxruntime/libonnxruntime.so.1 ]] || fail "the packages lack ${libdir#"$root"}/parity/onnxruntime/libonnxruntime.so.1"
if find "$root/usr/share/man" -name '*.1' | grep -q .; then fail "the packages install uncompressed man pages"; fi
[[ -d $libdir/parity/extensions ]] || fail "the packages lack the extension folder ${libdir#"$root"}/parity/extensions"
[[ -f $libdir/cmake/parity/parityConfig.cmake ]] || fail "the packages lack ${libdir#"$root"}/cmake/parity/parityConfig.cmake"
# Nothing in the packages points back into the build or source tree.
if grep -rlF "$build_dir" "$root/usr/lib" "$root/usr/share" --include='*.cmake' 2>/dev/null | grep -q .; then
  fail "packaged CMake files name the build tree"
fi
if readelf -d "$root/usr/bin/parity" "$libdir"/libparity*.so* | grep -E 'R(UN)?PATH' | grep -qF "$build_dir"; then
  fail "a packaged binary's RUNPATH names the build tree"
fi

parity="$root/usr/bin/parity"
expect 0 "| Path: ['$parity']" "$parity" --version
# The demo with the packaged binary and the packaged ONNX Runtime (parity dlopens it from its own
# library folder: no $PARITY_ORT_LIBRARY).
unset PARITY_ORT_LIBRARY
expect 0 "$libdir/parity/onnxruntime/libonnxruntime.so.1" "$parity" --version
expect 0 "PASSED" "$source_dir/scripts/demo.sh" "$root/usr"
expect 0 "PASSED | All outputs matched" "$parity" run "$source_dir/models/demo.onnx" --ref --ort --atol 1e-5 --rtol 1e-4
# The peer runners come from their packages' modules, next to the packaged libparity.
for module in "$libdir"/libparity_runner_*.so; do
  [[ -e $module ]] || continue
  name=$(basename "$module" .so)
  name=${name#libparity_runner_}
  version_line=$(env -u PARITY_RUNNER_MODULE_DIR "$parity" --version | grep -E "^    $name ")
  if [[ -n $version_line && $version_line != *unavailable* ]]; then echo "ok: packaged runner:$version_line"; else fail "packaged runner $name: '$version_line'"; fi
done
# `import parity` from the packaged dist-packages (the module finds the packaged libparity by its RUNPATH).
if [[ -d $build_dir/python/parity ]]; then
  expect 0 "probs (1, 10)" env PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
    "import numpy as np; from parity.backend.ref import RefRunner
r = RefRunner('$source_dir/models/demo.onnx'); r.activate()
o = r.infer({'input': np.zeros((1, 3, 32, 32), np.float32)}); print('probs', o['probs'].shape)
import parity._parity as m; assert m.__file__.startswith('$root/usr/lib/python3/dist-packages/parity/'), m.__file__"
fi
# `man parity-run` and the completion, as installed.
expect 0 "parity-run - " env MANPATH="$root/usr/share/man" MANWIDTH=100 man -P cat parity-run
expect 0 "complete -F _parity parity" bash --norc -c "source '$root/usr/share/bash-completion/completions/parity' && complete -p parity"

# The reshape_destroyer example against the packaged CMake config, then run by the packaged parity.
example="$source_dir/examples/extensions/reshape_destroyer"
if cmake -S "$example" -B "$work/res_des" -G Ninja -DCMAKE_PREFIX_PATH="$root/usr" -DCMAKE_CXX_FLAGS=-Werror \
     > "$work/res_des.configure.log" 2>&1 && cmake --build "$work/res_des" -j 1 > "$work/res_des.build.log" 2>&1; then
  echo "ok: reshape_destroyer built against $root/usr"
  grep -q "$root/usr/include/parity" "$work/res_des/build.ninja" ||
    fail "the example did not compile against the packaged headers"
  expect 0 "PASSED | All outputs matched" "$parity" --extension "$work/res_des/libparity_reshape_destroyer.so" \
    run "$example/no_op_reshape.onnx" --res-des --ort
else
  cat "$work/res_des.configure.log" "$work/res_des.build.log" | tail -30
  fail "building reshape_destroyer against the packaged parity"
fi

echo "$failures failure(s)"
[[ $failures == 0 ]]
