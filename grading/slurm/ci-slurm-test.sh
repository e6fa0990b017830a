#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Slurm scripts against a real Slurm: a one-node cluster on localhost (Debian's slurm-wlm:
# slurmctld and slurmd, authenticated by munge), configured in a temporary folder. submit.sh grades
# four fixture submissions with GRES empty (no GPU asked for, so every task ends "not graded: no
# GPU"), two of them with names that give one plain id (alice/ and alice.zip: graded as alice and
# alice-2, as by the folder grader); then the collect job's gradebook (both alices in it),
# ungraded.txt and copy-detection report are checked, and every daemon this script started is
# stopped and its folder removed. Needs root (the daemons run as root here).
#
#   grading/slurm/ci-slurm-test.sh [GPU_ARCH]     (default: python3 -m coursemodel.build --print-gpu-arch;
#                                                 without a GPU it only compiles)
#
# Exit status: 0 passed, 1 failed, 77 skipped (with the reason: no Slurm or munge, not root, or the
# daemons would not start). The recipe is in docs/grading.md, "On a cluster (Slurm)".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
course=$(cd "$here/../.." && pwd)
arch=${1:-$(cd "$course" && python3 -m coursemodel.build --print-gpu-arch)}
work=""
pids=()
our_cluster=0

say() { printf '[slurm-test] %s\n' "$*"; }
skip() { say "SKIP: $*"; exit 77; }
fail() {
  say "FAIL: $*"
  local log
  for log in "$work"/*.log "$work"/out/slurm-logs/*; do
    [ -f "$log" ] || continue
    echo "----- $log (last 25 lines)"
    tail -n 25 "$log"
  done
  exit 1
}

cleanup() {
  if [ "$our_cluster" -eq 1 ]; then
    scancel --quiet --user="$(id -un)" 2>/dev/null || true  # only on the cluster this script made
  fi
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT

# --- what this needs --------------------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || skip "needs root (slurmd starts jobs as their user; here the daemons run as root)"
for program in slurmctld slurmd sbatch squeue sinfo scontrol scancel munged munge unmunge; do
  command -v "$program" >/dev/null || skip "$program is missing (Debian: apt-get install slurm-wlm)"
done

# A folder per checkout, the same from run to run: the compiler cache then serves its builds (meson
# names common/ by absolute path), as in .ci/run.
work=${TMPDIR:-/tmp}/slurm-ci-$(printf '%s' "$(pwd)" | sha256sum | cut -c1-12)
rm -rf "$work" && mkdir -p "$work"
chmod 755 "$work"
host=$(hostname -s)
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ports = []
sockets = [socket.socket() for _ in range(2)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
    ports.append(s.getsockname()[1])
print(*ports)')

# --- munge: its own key and socket --------------------------------------------------------------
mkdir -m 711 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
socket="$work/munge/munge.socket"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$socket" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" >"$work/munged.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.2; done
munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 \
  || skip "munged would not start: $(tail -n 3 "$work/munged.log" 2>/dev/null | tr '\n' ' ')"

# --- slurm: one node, 8 CPUs and 32 GB as grade-array.sbatch asks (config_overrides: the
# --- node's real size is not checked), no accounting, no cgroups ------------------------------------
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF="$work/slurm.conf"
our_cluster=1
cat >"$SLURM_CONF" <<EOF
ClusterName=labci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
SlurmdParameters=config_overrides
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=32768 State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -n 1)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || skip "slurmctld and slurmd would not start (node state '${state:-none}'): $(tail -n 3 "$work/slurmctld.log" "$work/slurmd.log" 2>/dev/null | tr '\n' ' ')"
say "Slurm $(sinfo --version | awk '{print $2}') is up: node $host idle, partition ci"

# --- four submissions (alice/ and alice.zip collide), the reference built once -------------------
python3 -m grading make-fixtures --course "$course" --out "$work/fixtures" >/dev/null || fail "make-fixtures failed"
mkdir -p "$work/subs"
cp -r "$work/fixtures/solution" "$work/subs/alice"
cp "$work/fixtures/student-repo-main.zip" "$work/subs/alice.zip"
cp -r "$work/fixtures/starter" "$work/subs/bob"
cp "$work/fixtures/student-repo-main.zip" "$work/subs/carol.zip"
# The course's configuration, minus what a test machine without a GPU cannot offer: no
# compute-sanitizer runs (nothing runs on a GPU here anyway), and bubblewrap only where it works.
python3 - "$course/grading/grading.json" "$work/grading.json" <<'PY' || fail "cannot write the test configuration"
import json, sys
config = json.load(open(sys.argv[1]))
config.setdefault("sanitizers", {})["tools"] = []
config.setdefault("sandbox", {})["require"] = False
json.dump(config, open(sys.argv[2], "w"), indent=1)
PY
say "building the reference of 01-matadd once (gpu_arch $arch)"
python3 -m grading build-reference --course "$course" --config "$work/grading.json" --reference-dir "$work/ref" \
  --labs 01-matadd --gpu-arch "$arch" >"$work/build-reference.log" 2>&1 || fail "build-reference failed"

say "submit.sh: an array of 4 tasks and the collect job"
GRES="" GPU_ARCH="$arch" COURSE="$course" TIME_LIMIT=00:30:00 \
  bash "$here/submit.sh" "$work/subs" "$work/out" --labs 01-matadd --config "$work/grading.json" \
  --reference-dir "$work/ref" >"$work/submit.log" 2>&1 || fail "submit.sh failed: $(cat "$work/submit.log")"
cat "$work/submit.log"
collect=$(sed -nE 's/.*collect job ([0-9]+).*/\1/p' "$work/submit.log")
[ -n "$collect" ] || fail "submit.sh did not name the collect job"

# --- wait for every job to end ----------------------------------------------------------------
for _ in $(seq 1500); do
  [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
  sleep 1
done
[ -z "$(squeue -h -o %i)" ] && [ -f "$work/out/gradebook.csv" ] || fail "the jobs did not end within 25 minutes: $(squeue -h)"

# --- what the cluster left ---------------------------------------------------------------------
problems=()
for pair in alice:alice alice.zip:alice-2 bob:bob carol.zip:carol; do
  name=${pair%%:*} id=${pair#*:}
  summary="$work/out/graded/$id/summary.json"
  if ! python3 - "$summary" <<'PY'
import json, sys
lab = json.load(open(sys.argv[1]))["labs"]["01-matadd"]
sys.exit(0 if lab["state"] == "not_graded" and "no GPU" in lab["reason"] else 1)
PY
  then problems+=("$id: not 'not graded: no GPU' ($summary)"); fi
  grep -qs "grade exit status 3 for $work/subs/$name\$" "$work"/out/slurm-logs/grade-*.out \
    || problems+=("$id: no task log says 'grade exit status 3' (incomplete)")
done
python3 - "$work/out/gradebook.csv" <<'PY' || problems+=("gradebook.csv: $(cat "$work/out/gradebook.csv")")
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(r["student"] for r in rows) == ["alice", "alice-2", "bob", "carol"], rows
for r in rows:
    assert r["01-matadd"] == "" and r["complete"] == "no" and "no GPU" in r["notes"], r
PY
if [ -s "$work/out/ungraded.txt" ]; then problems+=("ungraded.txt lists: $(tr '\n' ' ' <"$work/out/ungraded.txt")"); fi
grep -qs "submissions without a grade: 0" "$work"/out/slurm-logs/grade-collect-*.out \
  || problems+=("the collect job's log does not say 'submissions without a grade: 0'")
grep -qsE "^4 / 4 submissions, [0-9]+ labs graded, about .+ left$" "$work"/out/slurm-logs/grade-collect-*.out \
  || problems+=("the collect job's log has no progress line '4 / 4 submissions, ...'")
[ -s "$work/out/hours.csv" ] && [ -s "$work/out/summary.md" ] || problems+=("the collect job wrote no hours.csv or summary.md")
python3 - "$work/out/similarity.json" <<'PY' || problems+=("similarity.json: not this run's copy-detection report")
import json, sys
report = json.load(open(sys.argv[1]))
assert report["status"] in ("ran", "unavailable"), report
if report["status"] == "ran":  # the solution copy and two copies of one zip: 01-matadd compared
    assert report["labs"][0]["lab"] == "01-matadd", report
PY
if [ ${#problems[@]} -gt 0 ]; then
  fail "$(printf '%s; ' "${problems[@]}")"
fi
say "gradebook.csv:"
sed 's/^/    /' "$work/out/gradebook.csv"
say "PASS: 4 array tasks each 'not graded: no GPU' (alice/ and alice.zip as alice and alice-2), the collect job's gradebook complete, ungraded.txt empty"

# --- ./lab 01-matadd --slurm (labcli/slurm.py) on this cluster: a test of its own --------------------
"$course/.ci/lab-slurm-test.sh" "$arch" || fail "./lab 01-matadd --slurm (.ci/lab-slurm-test.sh, above)"
exit 0
