#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Verifies the course on a GPU machine in one go: builds the starters and the solutions, runs
# every solution's harness (correctness, then its perf tables) with its results JSON kept, the
# starter checks, the host tests, and the solutions' correctness tests under compute-sanitizer.
# Logs and results go to ${OUT:-gpu-logs}/ (results/NN-name.json, one per lab).
# Usage: [LABS=04-matmul-tiled,05-transpose] [SANITIZERS="memcheck"] [SEED=N] tools/maintainers/gpu-verify.sh [GPU_ARCH]
# (GPU_ARCH: default the course's, coursemodel/build.py: LAB_GPU_ARCH, else auto)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-logs}
mkdir -p "$out/results"
arch=${1:-}
seed=${SEED:-20261122}
jobs=$(nproc)
for flavour in starter solution; do
  [ -f "/tmp/verify-$flavour/build.ninja" ] && continue
  python3 -m coursemodel.build "/tmp/verify-$flavour" --labs-from "$flavour" ${arch:+--gpu-arch "$arch"} ${LABS:+--labs "$LABS"} || exit 1
done
start=$(date +%s)
# -k 0: one lab that does not build leaves the others to be verified (and the failure is reported).
ninja -k 0 -j "$jobs" -C /tmp/verify-solution >"$out/build.log" 2>&1 || echo "BUILD FAILED (solutions): see build.log"
ninja -k 0 -j "$jobs" -C /tmp/verify-starter >>"$out/build.log" 2>&1 || echo "BUILD FAILED (starters): see build.log"
grep -E "error" "$out/build.log" | head -20
echo "build: $(( $(date +%s) - start )) s, warnings: $(grep -ci 'warning' "$out/build.log")"

# Each solution's harness directly: its tables as printed, its results JSON, its time.
labs=${LABS:-$(python3 -m coursemodel.labs names | tr '\n' ',')}
total=0
: >"$out/solutions.log"
for lab in ${labs//,/ }; do
  harness=$(python3 -m coursemodel.labs get . "$lab" harness) || continue
  t0=$(date +%s.%N)
  timeout 120 "/tmp/verify-solution/labs/$lab/$harness" --seed="$seed" --results="$out/results/$lab.json" \
    >>"$out/solutions.log" 2>&1
  rc=$?
  t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  total=$(awk -v a="$total" -v b="$t" 'BEGIN { printf "%.1f", a + b }')
  printf 'solution %-24s exit %-3s %6.1f s\n' "$lab" "$rc" "$t"
done
printf 'solutions: %.1f s in all\n' "$total"

meson test -C /tmp/verify-starter --suite starter-check --num-processes 1 >"$out/starters.log" 2>&1
echo "starter checks: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/starters.log" | tr -s ' ' | tr '\n' ' ')"
meson test -C /tmp/verify-solution --suite unit >"$out/unit.log" 2>&1
echo "host tests: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/unit.log" | tr -s ' ' | tr '\n' ' ')"
: >"$out/sanitizer.log"
for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
  log=$(meson test -C /tmp/verify-solution --setup="$tool" --suite correctness --num-processes 4 2>&1)
  printf '%s\n' "$log" >>"$out/sanitizer.log"
  echo "$tool: $(printf '%s\n' "$log" | grep -E '^(Ok|Fail|Timeout|Skipped):' | tr -s ' ' | tr '\n' ' ')"
  printf '%s\n' "$log" | grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT)' | head
done
# One file for the results (the JSON files the docs' plots read).
tar -C "$out" -cf "$out/results.tar" results && rm -rf "$out/results"
