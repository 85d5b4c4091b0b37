#!/usr/bin/env bash
# parity validate throughput: 1 process x 1 thread against 2 MPI ranks x 1 thread each, on the same
# seeded image dataset (PPM files, decoded and normalized by validate), ref and ort on MobileNetV2
# (.cache/bench-models, made by scripts/setup.sh), measured alternately in one run; the best of
# REPEATS runs of each is reported. The rate counts validation only (process start-up aside).
# Usage: bench/validate_mpi.sh [BUILD_DIR] [SAMPLES]   (default build, 480)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
SAMPLES=${2:-480}
REPEATS=${REPEATS:-3}
MODEL=${MODEL:-.cache/bench-models/mobilenet_v2.onnx}
PARITY="$BUILD/bin/parity"
[ -f "$MODEL" ] || { echo "missing $MODEL: run scripts/setup.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/images" "$SAMPLES" <<'PY'
import os, random, sys
out, count = sys.argv[1], int(sys.argv[2])
os.makedirs(out)
rng = random.Random(44)
for i in range(count):
    with open(os.path.join(out, "img%05d.ppm" % i), "wb") as f:
        f.write(b"P6\n224 224\n255\n" + rng.randbytes(224 * 224 * 3))
PY
common=(validate "$MODEL" --dataset "$work/images" --mean 0.485,0.456,0.406 --std 0.229,0.224,0.225
        --runners ref,ort --threads 1 --ort-threads 1 --ort-inter-threads 1 --checkpoint-every 0 -q)
# With the kernel's autogroup scheduling, every process of one session shares one session's share of
# the CPUs: on a machine other sessions keep busy, a second rank of the same session gets no CPU
# time of its own. Each rank (and the single process) therefore runs in a session of its own.
session=()
[ "$(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo 0)" = 1 ] && session=(setsid -w)
rate() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s['samples']['done'] / s['run']['wall_seconds'])" "$1"; }
isa=$(for f in avx512f avx512_vnni avx512_fp16 amx_tile avx2; do grep -m1 -q -w "$f" /proc/cpuinfo && printf '%s ' "$f"; done)
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs; ISA: $isa"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
one_rates=() two_rates=()
for ((i = 0; i < REPEATS; ++i)); do
  "${session[@]}" "$PARITY" "${common[@]}" --save-summary "$work/one.json"
  one_rates+=("$(rate "$work/one.json")")
  mpirun --oversubscribe --allow-run-as-root -np 2 "${session[@]}" "$PARITY" "${common[@]}" --save-summary "$work/two.json"
  two_rates+=("$(rate "$work/two.json")")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$SAMPLES" "${one_rates[*]}" "${two_rates[*]}" <<'PY'
import sys
samples, one, two = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
print("samples: %s, runs: %d each" % (samples, len(one)))
print("1 rank x 1 thread:  best %.2f samples/s (all: %s)" % (max(one), ", ".join("%.2f" % x for x in one)))
print("2 ranks x 1 thread: best %.2f samples/s (all: %s)" % (max(two), ", ".join("%.2f" % x for x in two)))
print("speed-up: %.2fx" % (max(two) / max(one)))
PY
