#!/usr/bin/env bash
# parity validate throughput: 1 process x 1 thread against 2 MPI ranks x 1 thread each, on the same
# seeded dataset of models/demo.onnx samples (ref and ort), measured one after the other in one run.
# Usage: bench/validate_mpi.sh [BUILD_DIR] [SAMPLES]   (default build, 6000)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SAMPLES=${2:-6000}
PARITY="$BUILD/bin/parity"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/data" "$SAMPLES" <<'PY'
import os, random, struct, sys
out, count = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
random.seed(44)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }"
header += " " * (118 - len(header)) + "\n"
prefix = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()
for i in range(count):
    with open(os.path.join(out, "s%05d.npy" % i), "wb") as f:
        f.write(prefix + struct.pack("<3072f", *[random.random() for _ in range(3072)]))
PY
common=(validate models/demo.onnx --dataset "$work/data" --runners ref,ort --threads 1 --ort-threads 1 --checkpoint-every 0 -q)
rate() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['samples']['done'] / s['run']['wall_seconds'])" "$1"; }
lscpu | grep -E "^Model name|^CPU\(s\)" | sed 's/  */ /g'
"$PARITY" "${common[@]}" --save-summary "$work/one.json"
mpirun --oversubscribe --allow-run-as-root -np 2 "$PARITY" "${common[@]}" --save-summary "$work/two.json"
one=$(rate "$work/one.json")
two=$(rate "$work/two.json")
echo "samples: $SAMPLES"
echo "1 rank x 1 thread:  $one samples/s"
echo "2 ranks x 1 thread: $two samples/s"
python3 -c "print('speed-up: %.2fx' % ($two / $one))"
