#!/bin/bash
# SPDX-License-Identifier: MIT
# Grades a folder of submissions on a Slurm cluster: one array task per submission (one GPU each),
# then one collect job that writes the gradebook once every task has ended (afterany: a task
# that failed still leaves its row). With GPU_ARCH set (not auto), a CPU job first builds the
# reference solutions once for the whole run (build-reference.sbatch). Documentation:
# docs/grading.md, "On a cluster".
#
#   grading/slurm/submit.sh SUBMISSIONS_DIR OUT_DIR [extra `grade` arguments...]
#
# Environment: COURSE (default: this checkout), GRES (default gpu:1; empty: no --gres, for a
# test on a Slurm without GPUs), PARTITION, ACCOUNT, TIME_LIMIT (default 01:00:00),
# MAX_PARALLEL (array tasks at once, default 16), GPU_ARCH (default: the course's, coursemodel/build.py), PYTHON (default python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
submissions=$(realpath "${1:?usage: submit.sh SUBMISSIONS_DIR OUT_DIR [grade args...]}")
out=$(realpath -m "${2:?usage: submit.sh SUBMISSIONS_DIR OUT_DIR [grade args...]}")
shift 2
course=$(realpath "${COURSE:-$here/../..}")
mkdir -p "$out/slurm-logs"

# The task list, fixed before the array starts: one submission per line, `index<TAB>id<TAB>path`,
# with the grader's own ids (alice/ and alice.zip are graded as alice and alice-2, as by the
# folder grader). It is also the run's manifest: the gradebook holds these submissions only.
if ! (cd "$course" && "${PYTHON:-python3}" -m grading ids "$submissions") > "$out/submissions.tsv.new"; then
  rm -f "$out/submissions.tsv.new"
  echo "cannot list the submissions in $submissions (above)" >&2
  exit 2
fi
mv "$out/submissions.tsv.new" "$out/submissions.tsv"
count=$(wc -l < "$out/submissions.tsv")
# A summary an earlier run left for one of these ids is not this run's grade.
while IFS=$'\t' read -r index id submission; do
  rm -f "$out/graded/$id/summary.json"
done < "$out/submissions.tsv"
printf '%s\n' "$@" > "$out/grade-args.txt"
# The reference builds need no GPU: with a known GPU_ARCH (not auto, which reads the GPU present)
# and no --reference-dir of the caller's, one CPU job builds them for the whole run before the
# array starts, and every task reuses them.
# The architecture: GPU_ARCH, else the course's default (coursemodel/build.py; auto unless LAB_GPU_ARCH).
GPU_ARCH=${GPU_ARCH:-$(cd "$course" && "${PYTHON:-python3}" -m coursemodel.build --print-default-gpu-arch)} || exit 1
prebuild=1
[ "$GPU_ARCH" = auto ] && prebuild=0
for argument in "$@"; do
  case $argument in --reference-dir | --reference-dir=*) prebuild=0 ;; esac
done
[ "$prebuild" = 1 ] && printf '%s\n' --reference-dir "$out/reference-build" >> "$out/grade-args.txt"

common=(--chdir "$course" --output "$out/slurm-logs/%x-%A_%a.out")
[ -n "${PARTITION:-}" ] && common+=(--partition "$PARTITION")
[ -n "${ACCOUNT:-}" ] && common+=(--account "$ACCOUNT")
gres=(--gres "${GRES-gpu:1}")
[ -z "${GRES-gpu:1}" ] && gres=()

export COURSE="$course" OUT="$out" GPU_ARCH="$GPU_ARCH" PYTHON="${PYTHON:-python3}"
after=()
if [ "$prebuild" = 1 ]; then
  reference=$(sbatch --parsable "${common[@]}" --job-name grade-reference --time 01:00:00 --export ALL \
    "$here/build-reference.sbatch")
  # afterany: where a reference does not build, each task says so in its grade
  after=(--dependency "afterany:${reference%%;*}")
  echo "reference builds (no GPU): job $reference, into $out/reference-build"
fi
array=$(sbatch --parsable "${common[@]}" "${gres[@]}" "${after[@]}" --job-name grade --time "${TIME_LIMIT:-01:00:00}" \
  --array "0-$((count - 1))%${MAX_PARALLEL:-16}" --export ALL "$here/grade-array.sbatch")
collect=$(sbatch --parsable "${common[@]}" --job-name grade-collect --time 00:30:00 \
  --dependency "afterany:${array%%;*}" --export ALL "$here/collect.sbatch")
echo "submitted $count submission(s): array job $array, collect job $collect"
echo "gradebook when done: $out/gradebook.csv"
echo "progress as the tasks end (k / N submissions, labs graded, time left): ${PYTHON:-python3} -m grading progress $out --watch 60"
