#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the Inspect commands of the chapters of labs 01 to 07 (and of the divergence demo) on the
# reference solutions, on a GPU: each solution compiled again with the build's own nvcc command plus
# -Xptxas -v (registers, spills, shared and constant memory per kernel), then each chapter's ncu
# command, one launch per step. Everything
# goes to ${OUT:-inspect-logs}/inspect.log, in chapter order, for pasting into the chapters.
# Usage: [OUT=dir] [BUILD=dir] [LABS=03-matmul-naive,05-transpose] tools/maintainers/inspect.sh [GPU_ARCH]
# (default: python3 -m coursemodel.build --print-gpu-arch, the H100's; needs ncu). LABS: only these
# labs, and no demo.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-inspect-logs}
arch=${1:-$(python3 -m coursemodel.build --print-gpu-arch)}
build=${BUILD:-build-inspect}
labs=(01-matadd 02-coalescing 03-matmul-naive 04-matmul-tiled 05-transpose 06-reduction 07-atomics)
only=${LABS:-}
selected() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
chosen=()
for lab in "${labs[@]}"; do selected "$lab" && chosen+=("$lab"); done
labs=("${chosen[@]}")
mkdir -p "$out" && out=$(cd "$out" && pwd)  # absolute: the compiles below run in the build folder
log="$out/inspect.log"
: >"$log"
say() { printf '%s\n' "$*" | tee -a "$log"; }

command -v ncu >/dev/null || PATH="$PATH:/usr/local/cuda/bin"
command -v ncu >/dev/null || { echo "inspect: ncu (Nsight Compute) not found" >&2; exit 2; }
command -v nvcc >/dev/null || { echo "inspect: nvcc not found" >&2; exit 2; }

# The solutions of these labs and the demo, in a build of their own (reused when it exists).
start=$SECONDS
if [ ! -f "$build/build.ninja" ]; then
  python3 -m coursemodel.build "$build" --labs-from solution --gpu-arch "$arch" 2>"$out/build.log" \
    || { tail -20 "$out/build.log"; exit 1; }
fi
targets=()
for lab in "${labs[@]}"; do
  targets+=("labs/$lab/$(python3 -m coursemodel.labs get . "$lab" harness)")
done
[ -z "$only" ] && targets+=(demos/divergence/test_divergence)
ninja -C "$build" "${targets[@]}" >>"$out/build.log" 2>&1 || { tail -20 "$out/build.log"; exit 1; }
say "inspect: solutions built in $build ($((SECONDS - start)) s); nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(ncu --version | tail -1)"
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"

# --- -Xptxas -v: every solution file, compiled in parallel, printed in order -------------------
# The command is the build's own (coursemodel.build --compile-command: its flags, includes and
# architectures), with -Xptxas -v and the object written under $out.
source_of() { python3 -m coursemodel.labs get . "$1" student_files | head -n 1; }
start=$SECONDS
for lab in "${labs[@]}"; do
  src=$(source_of "$lab")
  command=$(python3 -m coursemodel.build "$build" --compile-command "solutions/$lab/$src" \
    --output "$out/$lab.o") || exit 1
  ( cd "$build" && eval "$command -Xptxas -v" 2>&1 | c++filt | grep -E "Compiling|Used|spill" \
      >"$out/ptxas-$lab.txt" ) &
done
wait
for lab in "${labs[@]}"; do
  say ""
  say "=== $lab: nvcc (the build's flags, gpu_arch $arch) -Xptxas -v solutions/$lab/$(source_of "$lab")"
  tee -a "$log" <"$out/ptxas-$lab.txt"
  rm -f "$out/$lab.o"
done
say ""
say "inspect: ptxas reports in $((SECONDS - start)) s"

# --- ncu: one launch of each step, the metrics of the chapter's Inspect section ----------------
ncu_total=0
# profile LAB HARNESS REGEX METRICS STEP...: the chapter's loop, on the solution build
profile() {
  local lab=$1 harness=$2 regex=$3 metrics=$4
  shift 4
  selected "$lab" || return 0
  local step t0
  for step in "$@"; do
    say ""
    say "=== $lab, step $step: ncu --kernel-name regex:\"$regex\" --launch-count 1 --metrics $metrics"
    t0=$SECONDS
    timeout 180 ncu --kernel-name "regex:$regex" --launch-count 1 --metrics "$metrics" \
      "$build/$harness" -ts=perf --step="$step" >>"$log" 2>&1
    local rc=$?
    ncu_total=$((ncu_total + SECONDS - t0))
    say "(exit $rc, $((SECONDS - t0)) s)"
  done
}

profile 01-matadd labs/01-matadd/test_matadd "add_" \
  dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed 1 3 4
profile 02-coalescing labs/02-coalescing/test_coalescing "copy_|advance_" \
  l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio,l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio 1 2 3 4
profile 03-matmul-naive labs/03-matmul-naive/test_matmul_naive "matmul_row_from" \
  l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio,l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_st.ratio 2 3
profile 04-matmul-tiled labs/04-matmul-tiled/test_matmul_tiled "tiled_kernel|tiled_unrolled_kernel|register_tiled" \
  sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum 2 3 4 5 6
profile 05-transpose labs/05-transpose/test_transpose "transpose_shared" \
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum 3 4
profile 06-reduction labs/06-reduction/test_reduction "reduce_interleaved_strided|reduce_sequential" \
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum 2 3
profile 07-atomics labs/07-atomics/test_atomics "histogram_(global|shared)_kernel" \
  lts__t_sectors_op_red.sum.per_second,smsp__inst_executed_op_shared_atom.sum 1 2

# The divergence demo (docs/demos/divergence.md): one path against 32 per warp.
[ -z "$only" ] && for paths in 1 32; do
  say ""
  say "=== divergence demo, $paths path(s) per warp"
  t0=$SECONDS
  timeout 180 ncu --kernel-name-base demangled --kernel-name "regex:paths_by_lane_kernel<$paths>" --launch-count 1 \
    --metrics smsp__thread_inst_executed_per_inst_executed.ratio,smsp__sass_average_branch_targets_threads_uniform.pct \
    "$build/demos/divergence/test_divergence" -ts=perf >>"$log" 2>&1
  rc=$?
  ncu_total=$((ncu_total + SECONDS - t0))
  say "(exit $rc, $((SECONDS - t0)) s)"
done

say ""
say "inspect: ncu runs took $ncu_total s in all; the log is $log"
