#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Verifies the course on a GPU machine in one go: builds the starters and the solutions,
# runs every solution test (correctness and the perf tables), the starter checks, and the
# solutions' correctness tests under compute-sanitizer. Logs go to ${OUT:-gpu-logs}/.
# Usage: [LABS=04-matmul-tiled,05-transpose] [SANITIZERS="memcheck"] tools/gpu-verify.sh [GPU_ARCH]   (default 90)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
arch=${1:-90}
for flavour in starter solution; do
  meson setup "/tmp/verify-$flavour" -Dgpu_arch="$arch" -Dlabs_from="$flavour" ${LABS:+-Dlabs=$LABS} >/dev/null || exit 1
done
ninja -C /tmp/verify-starter >"$out/build.log" 2>&1 && ninja -C /tmp/verify-solution >>"$out/build.log" 2>&1 \
  || { tail -40 "$out/build.log"; exit 1; }
grep -ci warning "$out/build.log" | sed 's/^/build warnings: /'
meson test -C /tmp/verify-solution --no-suite unit -v >"$out/solutions.log" 2>&1
echo "solutions: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/solutions.log" | tr -s ' ' | tr '\n' ' ')"
meson test -C /tmp/verify-starter --suite starter-check >"$out/starters.log" 2>&1
echo "starter checks: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/starters.log" | tr -s ' ' | tr '\n' ' ')"
: >"$out/sanitizer.log"
for tool in ${SANITIZERS:-memcheck racecheck synccheck}; do
  log=$(meson test -C /tmp/verify-solution --setup="$tool" --suite correctness ${SANITIZER_SUITES:-} 2>&1)
  printf '%s\n' "$log" >>"$out/sanitizer.log"
  echo "$tool: $(printf '%s\n' "$log" | grep -E '^(Ok|Fail|Timeout):' | tr -s ' ' | tr '\n' ' ')"
done
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard" /tmp/verify-solution/meson-logs/testlog-*.txt 2>/dev/null | sort | uniq -c | head -20
