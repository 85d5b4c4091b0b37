#!/usr/bin/env bash
# Seeds each fuzz target's corpus from parity's test data (copied at build time; the corpus is
# never committed). Usage: make_corpus.sh SOURCE_DIR CORPUS_DIR PARITY_BINARY
# (the binary converts a few models to plans for the plan targets).
set -euo pipefail
src=$1
out=$2
parity=$3
polygraphy_files="$src/tests/data/polygraphy_files"
testdata=/usr/share/libonnx-testdata/data
mkdir -p "$out"/{fuzz_model_load,fuzz_model_save,fuzz_npy,fuzz_npz,fuzz_polygraphy_json,fuzz_args,fuzz_plan_bytes,fuzz_plan_graph,fuzz_nav_package}

# Models: the bundled demo, the torch fixture pairs, the fixtures, and every backend-test model
# under 32 KB (one per operator test: ~1,000 small, diverse graphs incl. subgraphs).
models=("$src"/models/demo.onnx "$src"/tests/data/torch/*.onnx)
models+=("$polygraphy_files"/*.onnx)
for m in "${models[@]}"; do cp -f "$m" "$out/fuzz_model_load/$(basename "$m")"; done
if [ -d "$testdata" ]; then
  find "$testdata" -name model.onnx -size -32k | while read -r m; do
    cp -f "$m" "$out/fuzz_model_load/$(basename "$(dirname "$m")").onnx"
  done
fi
# The save round trip starts from models with initializers (they exercise external data).
cp -f "$src"/models/demo.onnx "$src"/tests/data/torch/*.onnx "$out/fuzz_model_save/"

# .npz archives, and their .npy members for the .npy target.
npz=("$src"/tests/data/formats/*.npz)
npz+=("$polygraphy_files"/*.npz)
for f in "${npz[@]}"; do cp -f "$f" "$out/fuzz_npz/"; done
python3 - "$out/fuzz_npy" "${npz[@]}" "$src/tests/data/formats/npy_by_dtype.zip" <<'PY'
import sys, zipfile, os
dest = sys.argv[1]
for archive in sys.argv[2:]:
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if name.endswith(".npy"):
                data = z.read(name)
                if len(data) <= 65536:
                    tag = os.path.basename(archive).replace(".", "_") + "_" + name.replace("/", "_")
                    open(os.path.join(dest, tag), "wb").write(data)
PY

# Polygraphy JSON: RunResults and input lists.
cp -f "$polygraphy_files"/*.json "$out/fuzz_polygraphy_json/"

# Argument lists: the first byte picks the command, NUL separates tokens.
seed() {
  local name=$1 command=$2
  shift 2
  { printf "\\$(printf %03o "$command")"; printf '%s\0' "$@"; } > "$out/fuzz_args/$name"
}
for c in $(seq 0 15); do
  seed "run_$c" "$c" model.onnx --ref --ort --seed 42 --input-shapes 'x:[1,3,224,224]' 'y:[2]' --atol 1e-3 \
    --val-range 'x:[0,1]' --save-outputs out.json --load-inputs a.json b.json
  seed "opts_$c" "$c" m.onnx -o out.onnx --iterations=3 -v --onnx-outputs mark all --check-error-stat max -- x
done

# Plans: the bundled demo, the torch fixtures and every 20th backend-test node model (about 50 small
# graphs over different kernels), converted once by this build's parity; a model it cannot plan is
# skipped. Both plan targets start from the same files.
plan_sources=("$src"/models/demo.onnx "$src"/tests/data/torch/*.onnx)
if [ -d "$testdata/node" ]; then
  while read -r m; do plan_sources+=("$m"); done < <(find "$testdata/node" -name model.onnx | sort | awk 'NR % 20 == 1')
fi
for m in "${plan_sources[@]}"; do
  name=$(basename "$m" .onnx)
  [ "$name" = model ] && name=$(basename "$(dirname "$m")")
  plan="$out/fuzz_plan_bytes/$name.plan"
  [ -f "$plan" ] || "$parity" convert "$m" -o "$plan" >/dev/null 2>&1 || rm -f "$plan"
done
cp -f "$out"/fuzz_plan_bytes/*.plan "$out/fuzz_plan_graph/"

# .nav packages: one small navigator workspace (ReLU, four formats on the ref runner, short
# profiling windows; a few seconds), saved with and without its data and with one cell verified.
# The same packages also go in as entry lists (name NUL content ...; see fuzz_nav_package.cpp) so
# mutations reach status.yaml and the entry names past the zip's CRCs, beside crafted hostile lists.
nav="$out/fuzz_nav_package"
relu="$testdata/node/test_relu/model.onnx"
[ -f "$relu" ] || relu="$src/models/demo.onnx"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$nav/relu.nav" ] &&
  "$parity" optimize "$relu" --workspace "$work/ws" --runners ref --target-formats onnx onnx-sanitized onnx-fp16 \
    plan-fp32 --sample-count 1 --window-ms 5 --max-trials 3 -q >/dev/null 2>&1; then
  "$parity" package save "$work/ws" -o "$nav/relu.nav" -q
  "$parity" package save "$work/ws" -o "$nav/relu-no-data.nav" --no-data -q
  "$parity" package verify "$work/ws" --format onnx --runtime ref -q >/dev/null
  "$parity" package save "$work/ws" -o "$nav/relu-verified.nav" --no-data -q
fi
python3 - "$nav" <<'PY'
import os, sys, zipfile
dest = sys.argv[1]

def entry_list(entries):
    # Contents holding NUL cannot be list fields: they go in empty.
    out = b""
    for name, data in entries:
        out += name.encode() + b"\0" + (b"" if b"\0" in data else data) + b"\0"
    return out

for package in sorted(f for f in os.listdir(dest) if f.endswith(".nav")):
    with zipfile.ZipFile(os.path.join(dest, package)) as z:
        entries = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    open(os.path.join(dest, package[:-4] + ".list"), "wb").write(entry_list(entries))

status = (b"format_version: 1\nformats:\n  onnx:\n    model_path: onnx/model.onnx\n    export: {status: OK}\n"
          b"    runtimes: {ref: {conversion: {status: OK}, correctness: {status: OK}}}\n")
hostile = {
    "dotdot": [("status.yaml", status), ("../escaped", b"x")],
    "absolute": [("status.yaml", status), ("/tmp/parity-fuzz-absolute", b"x")],
    "symlink": [("status.yaml", status), ("@onnx", b"/tmp")],
    "duplicate": [("status.yaml", status), ("a/b", b"1"), ("a/./b", b"2")],
    "file-then-folder": [("status.yaml", status), ("onnx", b"x"), ("onnx/model.onnx", b"y")],
    "folder-entry": [("status.yaml", status), ("onnx/", b""), ("onnx/model.onnx", b"y")],
    "model-path-escape": [("status.yaml", status.replace(b"onnx/model.onnx", b"../../etc/passwd"))],
    "no-status": [("onnx/model.onnx", b"y")],
}
for name, entries in hostile.items():
    open(os.path.join(dest, name + ".list"), "wb").write(entry_list(entries))
PY
