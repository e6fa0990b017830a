#!/bin/bash
# SPDX-License-Identifier: MIT
# Grades the lab 01 fixture submissions on a machine with a GPU (the check CI cannot make):
#   bash grading/tests/gpu_fixtures.sh OUTDIR
# Writes OUTDIR/gradebook.csv, OUTDIR/reports.md (every report) and OUTDIR/grade.log.
# Expected: solution full marks; starter 0 (not implemented); wrong-result loses step 1;
# out-of-bounds loses step 1 and the steps after it (sticky error); hang scores 0 (time limit);
# nan loses step 4.
set -u
out=${1:?usage: gpu_fixtures.sh OUTDIR}
subs=${SUBS:-solution starter wrong-result out-of-bounds hang nan}
mkdir -p "$out"
work=$(mktemp -d)
python3 -m grading make-fixtures --out "$work/fx" --gpu >/dev/null || exit 2
mkdir "$work/subs"
for name in $subs; do cp -r "$work/fx/$name" "$work/subs/$name"; done
# The course's configuration with a short time limit, so that the hanging kernel costs 30 s.
python3 - "$work/config.json" "${MEMORY_METHOD:-auto}" <<'PY'
import json, sys
config = json.load(open("grading/grading.json"))
config["limits"]["run_timeout_s"] = 30
config["limits"]["memory_method"] = sys.argv[2]
json.dump(config, open(sys.argv[1], "w"))
PY
PYTHONUNBUFFERED=1 python3 -m grading grade --submissions "$work/subs" --out "$work/graded" --labs 01-matadd \
  --config "$work/config.json" --gpu-arch "${GPU_ARCH:-90}" 2>&1 | tee "$out/grade.log"
rc=${PIPESTATUS[0]}
cp "$work/graded/gradebook.csv" "$out/gradebook.csv"
first=${subs%% *}
cp "$work/graded/$first/logs/01-matadd-build.log" "$out/build-$first.log" 2>/dev/null
for name in $subs; do cat "$work/graded/$name/report.md"; echo; echo "---"; echo; done > "$out/reports.md"
echo "grade exit status: $rc" | tee -a "$out/grade.log"
cat "$out/gradebook.csv"
rm -rf "$work"
exit "$rc"
