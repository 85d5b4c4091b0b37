#!/usr/bin/env bash
# Runs every fuzz target on its seed corpus for a fixed budget (CI's smoke run).
# Usage: fuzz/smoke.sh BUILD_DIR [SECONDS] [RUNS], BUILD_DIR being the sanitizer tree `make fuzz` built.
# Each target runs RUNS inputs from a fixed seed (-seed=1), SECONDS being only a cap: the same commit
# fuzzes the same inputs on every CI run, so a smoke failure is reproducible and never a coin toss.
# New random ground is covered by the long runs (fuzz/README.md), not by CI.
# Fails on the first crash, leak, sanitizer report or timeout; the input is left in
# BUILD_DIR/fuzz/findings/.
set -euo pipefail
fuzz=$1/fuzz
seconds=${2:-60}
runs=${3:-4000}
mkdir -p "$fuzz/findings"
for target in fuzz_model_load fuzz_model_save fuzz_npy fuzz_npz fuzz_polygraphy_json fuzz_args fuzz_plan_bytes \
  fuzz_plan_graph fuzz_nav_package; do
  corpus="$fuzz/corpus/$target"
  work="$fuzz/run/$target"  # new inputs found in this run; the seed corpus stays as seeded
  mkdir -p "$work"
  dict=()
  [ -f "fuzz/dicts/$target.dict" ] && dict=(-dict="fuzz/dicts/$target.dict")
  echo "[fuzz] $target: ${runs} runs from seed 1 (cap ${seconds}s)"
  "$fuzz/$target" "$work" "$corpus" "${dict[@]}" -seed=1 -runs="$runs" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -timeout=20 -print_final_stats=1 -artifact_prefix="$fuzz/findings/$target-" 2>&1 |
    grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss|INFO: Loaded|==[0-9]+==ERROR|SUMMARY|Test unit written)" || true
  if ls "$fuzz/findings/$target-"* >/dev/null 2>&1; then
    echo "[fuzz] $target: finding(s) in $fuzz/findings/" >&2
    exit 1
  fi
done
