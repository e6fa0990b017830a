#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds every harness fixture (tools/harness-fixtures/fixtures.py) in place of the student file,
# in a temporary copy of the course, runs the lab's harness on the GPU and checks the verdict.
#   tools/harness-fixtures/run.sh [--build-only] [GPU_ARCH]
# (GPU_ARCH default: python3 -m coursemodel.build --print-gpu-arch, the H100's)
# Prints PASS/FAIL per fixture with the harness's message; exits 1 if any fixture was accepted.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
arch=${1:-$(cd "$root" && python3 -m coursemodel.build --print-gpu-arch)}
seed=${LAB_SEED:-12345}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The course as it is in the working tree (tracked and new files, no build folders).
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$work"

failed=0
while read -r name lab file suite; do
  build="$work/build-$lab"
  if [ ! -d "$build" ]; then
    (cd "$work" && python3 -m coursemodel.build "$build" --labs "$lab" --labs-from starter --gpu-arch "$arch") 2>"$work/setup-$lab.log" \
      || { echo "FAIL $name: meson setup failed (see below)"; tail -20 "$work/setup-$lab.log"; failed=1; continue; }
  fi
  python3 "$here/fixtures.py" write "$name" "$root" "$work/labs/$lab/$file" || { failed=1; continue; }
  if ! ninja -C "$build" >"$work/build-$name.log" 2>&1; then
    echo "FAIL $name: does not build"; tail -20 "$work/build-$name.log"; failed=1; continue
  fi
  if [ "$build_only" = 1 ]; then echo "built $name"; continue; fi
  harness=$(find "$build/labs/$lab" -maxdepth 1 -type f -name 'test_*' -perm -u+x | head -1)
  results="$work/$name.json"
  # The correctness suite for every fixture (the memoizing kernel must pass it: only timing
  # every run catches it), then the suite that must reject it.
  "$harness" -ts=correctness --seed="$seed" --results="$results" >"$work/$name-correctness.log" 2>&1
  if [ "$suite" != correctness ]; then
    "$harness" -ts="$suite" --seed="$seed" --results="$work/$name-$suite.json" >"$work/$name-$suite.log" 2>&1
  fi
  runs=("$results")
  [ "$suite" != correctness ] && runs+=("$work/$name-$suite.json")
  python3 "$here/fixtures.py" check "$name" "${runs[@]}" || { failed=1; tail -30 "$work/$name-$suite.log"; }
  # Back to the student's starter file for the next fixture of this lab.
  cp "$root/labs/$lab/$file" "$work/labs/$lab/$file"
done < <(python3 "$here/fixtures.py" list)
exit "$failed"
