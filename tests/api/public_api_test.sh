#!/usr/bin/env bash
# The public C++ API is include/parity and nothing else: every parity/*.h compiles on its own
# against an include path holding only include/ (no src/, no libonnx, protobuf, oneDNN or
# nlohmann-json headers reachable from it), and the C++ examples, the extension example, the
# `parity template` programs and the `run --gen-script` program include only standard headers,
# <parity/...> and their own files, and compile against that path alone.
# Usage: public_api_test.sh SOURCE_DIR CXX [PARITY]   (without PARITY: headers and examples only)
set -uo pipefail
source_dir=$(cd "$1" && pwd)
cxx=$2
parity=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
include="$source_dir/include"
# Only the public folder is on the include path; the compiler still sees /usr/include, so the check
# below also looks at what each compile read.
flags=(-std=c++20 -fsyntax-only -Wall -Wextra -Werror -I "$include" -I "$include/parity")
status=0
fail() { echo "FAIL: $*"; status=1; }

# What a compile read, as dependency lines; FILE must read nothing of parity outside include/ and
# no dependency's headers.
check_reads() {
  local what=$1; shift
  local deps
  deps=$("$cxx" "${flags[@]/-fsyntax-only/-M}" "$@" 2>&1) || { echo "$deps" | head -20; fail "$what does not compile"; return; }
  local bad
  bad=$(echo "$deps" | tr ' \\' '\n\n' | grep -E '/(onnx|google/protobuf|nlohmann|oneapi)/|/dnnl[^/]*$' | sort -u)
  bad+=$(echo "$deps" | tr ' \\' '\n\n' | grep -F "$source_dir/" | grep -vF -e "$source_dir/include/" -e "$source_dir/examples/" | sort -u)
  [[ -z $bad ]] || fail "$what reads headers outside the public API:"$'\n'"$bad"
}

# Every include of FILE: a standard header (<name> or <name.h> of the C library), <parity/...>, or a
# quoted file beside it or in its own project folder (ROOT).
check_includes() {
  local file=$1 root=$2 line target
  while IFS= read -r line; do
    target=$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]([^>"]+)[>"].*/\1/' <<< "$line")
    case $line in
      *'<parity/'*) [[ -f $include/$target ]] || fail "$file: $target is not a public header" ;;
      *'"'*) [[ -f $(dirname "$file")/$target || -f $root/$target ]] || fail "$file: $line is neither public nor its own" ;;
      *'<'*'/'*) fail "$file: $line is not a standard or public header" ;;
    esac
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include' "$file")
}

for header in "$include"/parity/*.h; do
  printf '#include <parity/%s>\n#include <parity/%s>\n' "${header##*/}" "${header##*/}" > "$work/one.cpp"
  check_reads "parity/${header##*/}" "$work/one.cpp"
done

for file in "$source_dir"/examples/api/*.cpp "$source_dir"/examples/api/*.h; do
  check_includes "$file" "$source_dir/examples/api"
done
for file in "$source_dir"/examples/api/*.cpp; do check_reads "${file#"$source_dir"/}" "$file"; done
destroyer="$source_dir/examples/extensions/reshape_destroyer"
while IFS= read -r file; do
  check_includes "$file" "$destroyer"
  [[ $file == *.cpp ]] && check_reads "${file#"$source_dir"/}" -Wno-missing-field-initializers -I "$destroyer" "$file"
done < <(find "$destroyer" -name '*.cpp' -o -name '*.h')

if [[ -n $parity ]]; then
  model="$source_dir/models/demo.onnx"
  (cd "$work" && "$parity" template onnx-graph "$model" -o edit.cpp && "$parity" template data-loader "$model" -o feeds.cpp &&
    "$parity" run "$model" --ref --gen-script script.cpp) > "$work/gen.log" 2>&1 || { cat "$work/gen.log"; fail "generating the programs"; }
  for file in "$work"/edit.cpp "$work"/feeds.cpp "$work"/script.cpp; do
    [[ -f $file ]] || continue
    check_includes "$file" "$work"
    check_reads "generated ${file##*/}" "$file"
  done
fi
[[ $status == 0 ]] && echo "ok: the public API is include/parity alone"
exit $status
