#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `./lab 01-matadd --slurm` (labcli/slurm.py) against a real Slurm: the one-node cluster that
# grading/slurm/ci-slurm-test.sh starts, which runs this script at its end (SLURM_CONF set, the node
# idle, as root). In a copy of the course, as a student has it, with a lab-slurm.conf for that
# cluster (partition ci, gres none: the node has no GPU):
#   1. the run: the job submitted to Slurm (it knows job N as lab-01-matadd, completed on the node),
#      its output back in the terminal (the build lines, the skipped verdict line), exit status 0,
#      and `./lab status` updated (built, GPU part skipped) where it said "not run yet" before;
#   2. a partition that does not exist: sbatch's own message, exit status 1;
#   3. Ctrl-C while the job waits (the node drained): exit status 130 and the job cancelled.
#
#   .ci/lab-slurm-test.sh [GPU_ARCH]      (default: python3 -m coursemodel.build --print-gpu-arch;
#                                         without a GPU it only compiles)
#
# Exit status: 0 passed, 1 failed, 77 skipped (no cluster to run on).
set -uo pipefail
course=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-$(cd "$course" && python3 -m coursemodel.build --print-gpu-arch)}
export LAB_GPU_ARCH=$arch  # the job gets the submitter's environment (sbatch --export ALL)
unset LAB_BUILD_DIR LAB_SEED

say() { printf '[lab-slurm-test] %s\n' "$*"; }
host=$(hostname -s)
[ -n "${SLURM_CONF:-}" ] && [ "$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1)" = idle ] \
  || { say "SKIP: no idle one-node Slurm (grading/slurm/ci-slurm-test.sh starts one, then runs this)"; exit 77; }

# A folder per checkout, the same from run to run: the compiler cache then serves its builds (meson
# names common/ by absolute path), as in .ci/run.
work=${TMPDIR:-/tmp}/lab-slurm-$(printf '%s' "$(pwd)" | sha256sum | cut -c1-12)
rm -rf "$work" && mkdir -p "$work"
chmod 755 "$work"
drained=0
cleanup() {
  [ "$drained" -eq 1 ] && scontrol update NodeName="$host" State=RESUME >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  say "FAIL: $*"
  local log
  for log in "$work"/*.log "$copy"/build-slurm/*.out; do
    [ -f "$log" ] || continue
    echo "----- $log (last 30 lines)"
    tail -n 30 "$log"
  done
  exit 1
}

# --- a student's copy of the course and its lab-slurm.conf -------------------------------------
copy="$work/course"
mkdir -p "$copy"
(cd "$course" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp -p --parents -t "$copy" 2>/dev/null)
[ -x "$copy/lab" ] || fail "could not copy the course into $copy"
cat >"$copy/lab-slurm.conf" <<'EOF'
# the CI cluster: its one partition, whose node has no GPU
partition = ci
time = 00:30:00
gres = none
EOF
(cd "$copy" && ./lab status) >"$work/status-before.log" 2>&1
grep -A 2 "^01-matadd" "$work/status-before.log" | grep -q "not run yet: ./lab 01-matadd" \
  || fail "./lab status before the run does not say lab 01 was not run yet"

# --- 1. the run -----------------------------------------------------------------------------
say "./lab 01-matadd --slurm (it builds lab 01 on the node)"
(cd "$copy" && ./lab 01-matadd --slurm) >"$work/run.log" 2>&1
code=$?
sed 's/^/    /' "$work/run.log"
job=$(sed -nE 's/^==> submitted job ([0-9]+):.*/\1/p' "$work/run.log")
[ -n "$job" ] || fail "no 'submitted job N' line"
[ "$code" -eq 0 ] || fail "exit status $code, not 0"
record=$(scontrol show job "$job" 2>&1)
for expected in "JobName=lab-01-matadd" "JobState=COMPLETED" "NodeList=$host" "Partition=ci"; do
  grep -q "$expected" <<<"$record" || fail "Slurm's record of job $job lacks $expected: $record"
done
output="$copy/build-slurm/01-matadd-$job.out"
[ -s "$output" ] || fail "the job wrote no $output"
for line in "==> configuring build" "==> building 01-matadd" \
    "==> no GPU here: 01-matadd was built, and its GPU part was skipped"; do
  grep -q "^$line" "$output" || fail "the job's output lacks '$line'"
  grep -q "^$line" "$work/run.log" || fail "the terminal did not show the job's '$line'"
done
grep -q "^SKIP: no usable CUDA device" "$work/run.log" || fail "the terminal did not show the harness's SKIP line"
(cd "$copy" && ./lab status) >"$work/status-after.log" 2>&1
grep -A 2 "^01-matadd" "$work/status-after.log" \
  | grep -qE "not run yet: built [0-9-]+ [0-9:]+, but no usable CUDA device" \
  || fail "./lab status was not updated: $(grep -A 2 '^01-matadd' "$work/status-after.log")"

# --- 2. Slurm refuses the job -------------------------------------------------------------------
say "./lab 01-matadd --slurm --partition no-such-partition"
(cd "$copy" && ./lab 01-matadd --slurm --partition no-such-partition) >"$work/refused.log" 2>&1
code=$?
sed 's/^/    /' "$work/refused.log"
[ "$code" -eq 1 ] || fail "a refused job: exit status $code, not 1"
grep -q "Slurm refused the job" "$work/refused.log" && grep -qi "invalid partition" "$work/refused.log" \
  || fail "a refused job: sbatch's message is not shown"

# --- 3. Ctrl-C while the job waits ----------------------------------------------------------------
say "Ctrl-C while the job waits (the node drained)"
scontrol update NodeName="$host" State=DRAIN Reason=lab-slurm-test || fail "cannot drain $host"
drained=1
# A background job of a script starts with SIGINT ignored: the command gets it back first.
restore_sigint='import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])'
(cd "$copy" && exec python3 -c "$restore_sigint" ./lab 01-matadd --slurm) >"$work/cancelled.log" 2>&1 &
waiting=$!
for _ in $(seq 120); do grep -q "^==> job [0-9]*: pending" "$work/cancelled.log" && break; sleep 0.5; done
grep -q "^==> job [0-9]*: pending" "$work/cancelled.log" || { kill "$waiting"; fail "no 'job N: pending' line"; }
kill -INT "$waiting"
wait "$waiting"
code=$?
sed 's/^/    /' "$work/cancelled.log"
job=$(sed -nE 's/^==> submitted job ([0-9]+):.*/\1/p' "$work/cancelled.log")
[ "$code" -eq 130 ] || fail "Ctrl-C: exit status $code, not 130"
state=$(scontrol show job "$job" 2>&1 | grep -o "JobState=[A-Z]*")
[ "$state" = JobState=CANCELLED ] || fail "Ctrl-C: job $job is $state, not cancelled"
scontrol update NodeName="$host" State=RESUME >/dev/null && drained=0

say "PASS: the job submitted and completed on the node, its output in the terminal, ./lab status updated; \
sbatch's refusal shown; Ctrl-C cancelled a waiting job"
exit 0
