#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A one-node Slurm on localhost (Debian's slurm-wlm: slurmctld and slurmd, authenticated by munge),
# configured in a temporary folder, for the course's tests against a real Slurm: this script only
# starts the services, runs the Python tests with LAB_SLURM_CLUSTER=1, then cancels what is left,
# stops every daemon it started and removes its folder. The tests:
#   grading/tests/test_slurm_cluster.py   `python3 -m grading slurm-submit`: a class graded as an array
#   labcli/tests/test_slurm_cluster.py    `./lab 01-matadd --slurm`
# The node offers its GPUs as GRES "gpu" (gres.conf names each one's device file, so Slurm sets a task's
# CUDA_VISIBLE_DEVICES) and the tests submit with the scripts' own --gres=gpu:1. Without a GPU the node
# still declares one GRES "gpu" (a link to /dev/null): the request is scheduled as on a cluster and
# every task ends "not graded: no GPU". On a host with GPUs the class test runs too: 20 submissions of
# lab 01 (colliding names, a broken archive, one that holds a path twice, a name with a control
# character) graded with every check on, one task per GPU; it prints the gradebook and the cost, and
# copies them to LAB_SLURM_REPORT_DIR when that is set.
# Needs root (the daemons run as root here).
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
  for log in "$work"/*.log; do
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

# --- the GPUs: a GRES each, named by its device file; none here: one stand-in -----------------------
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
gpus=${gpus:-0}
if [ "$gpus" -gt 0 ]; then
  : >"$work/gres.conf"
  for index in $(seq 0 $((gpus - 1))); do
    [ -e "/dev/nvidia$index" ] || skip "nvidia-smi lists $gpus GPU(s) but there is no /dev/nvidia$index for gres.conf"
    echo "Name=gpu File=/dev/nvidia$index" >>"$work/gres.conf"
  done
  gres_count=$gpus
else  # Slurm wants a character device per GRES "gpu" (a link to /dev/null stands in for one), and
  # one stand-in keeps the tasks one at a time, as on a one-GPU node (this machine has few cores)
  mkdir "$work/no-gpu"
  ln -s /dev/null "$work/no-gpu/gpu0"
  echo "Name=gpu File=$work/no-gpu/gpu0" >"$work/gres.conf"
  gres_count=1
fi
# 8 CPUs and 32 GB per task, as grade-array.sbatch asks, for as many tasks at once as there are GPUs
cpus=$((8 * gres_count))
memory=$((32768 * gres_count))

# --- slurm: one node of that size (config_overrides: the node's real size is not checked), no
# --- accounting, no cgroups -------------------------------------------------------------------------
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
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory Gres=gpu:$gres_count State=UNKNOWN
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

# --- the tests -------------------------------------------------------------------------------
cd "$course" || fail "no course at $course"
say "GRES: gpu:$gres_count ($([ "$gpus" -gt 0 ] && echo "$gpus GPU(s): $(tr '\n' ' ' <"$work/gres.conf")" || echo "no GPU here: a stand-in for the scripts' request"))"
LAB_SLURM_CLUSTER=1 LAB_SLURM_GPUS=$gpus LAB_SLURM_GRES=gpu:1 LAB_GPU_ARCH=$arch python3 -m unittest -v \
  grading.tests.test_slurm_cluster labcli.tests.test_slurm_cluster || fail "the tests against Slurm (above)"
if [ "$gpus" -gt 0 ]; then
  say "PASS: a class of 20 graded on $gpus GPU(s) with --gres=gpu:1; ./lab 01-matadd --slurm"
else
  say "PASS: slurm-submit's array (--gres=gpu:1) and collect job; ./lab 01-matadd --slurm"
fi
exit 0
