#!/bin/bash
# SPDX-License-Identifier: MIT
# What grading costs, per submission and lab, on this machine's GPU: grades COPIES copies of the
# reference solution of each lab of LABS (each lab on its own, each copy with its own seed, every
# check on: the course's configuration, sanitizers included) with the real grader and sandbox, checks
# that every copy got full marks, and prints per lab the GPU seconds (the harness runs: the
# copy's, the reference's for it, under the tools) and the wall seconds of a submission, median and
# max, from each copy's cost.json. The first copy of a lab also pays the reference's own runs (once
# per lab and run), as the first submission of a class does. For docs/grading.md's cost table.
#   bash tools/maintainers/grading-cost.sh OUTDIR [LABS [COPIES]]
# LABS: comma-separated (default 01-matadd,06-reduction,14-tensor-cores); COPIES default 5. Needs a
# GPU, bubblewrap and root, as grading/tests/gpu_fixtures.sh (which does the work: SET=cost). GPU_ARCH,
# REFERENCE_DIR and SANITIZER_TIMEOUT pass through; GPUS=all grades each lab's copies across every GPU
# of the host, a worker per GPU (each copy's GPU seconds stay its own; the group's wall time divides).
set -u
out=${1:?usage: grading-cost.sh OUTDIR [LABS [COPIES]]}
labs=${2:-01-matadd,06-reduction,14-tensor-cores}
copies=${3:-5}
cd "$(dirname "$0")/../.."
SET=cost LABS="$labs" REPEAT="$copies" exec bash grading/tests/gpu_fixtures.sh "$out"
