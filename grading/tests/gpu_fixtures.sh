#!/bin/bash
# SPDX-License-Identifier: MIT
# Grades the GPU fixture submissions (grading/fixtures.py: each a reference solution with one
# defect, or an attack on the grader) on a machine with a GPU and bubblewrap, as root, the way an
# instructor would, and checks each grade against what it must be (the check CI cannot make):
#   bash grading/tests/gpu_fixtures.sh OUTDIR
# Writes OUTDIR/gradebook.csv, OUTDIR/reports.md (every report), OUTDIR/grade.log and
# OUTDIR/checks.txt; prints one line per check, then the gradebook. Exit status 0: every check held.
# SUBS: the fixtures (default: the solution, the attacks on the grader and the defects the
# sanitizers must find); ALL=1 adds starter, wrong-result, out-of-bounds, hang, nan and
# planted-link. LABS (default 01-matadd,06-reduction): the labs graded; a fixture of another lab is
# left out. TOOLS: the sanitizers (default the course's configuration's), GPU_ARCH (default 90),
# SANITIZER_TIMEOUT (s, default 240). The references and starters are built once, first; the
# fixtures are graded in groups of the same labs and configuration (the references run once per
# group).
set -u
out=${1:?usage: gpu_fixtures.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
subs=${SUBS:-solution honest-printf forged-by-interposition verdict-spoofing memoize one-past-end warp-race missing-barrier forged-results}
[ "${ALL:-0}" = 1 ] && subs="$subs starter wrong-result out-of-bounds hang nan planted-link"
labs=${LABS:-01-matadd,06-reduction}
# Graded with object_check "review": their code must run for the grader's own checks to be tested.
review="forged-by-interposition planted-link"
work=$(mktemp -d)
chmod 711 "$work"  # the sandbox's unprivileged users pass through to their own folders
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
# The grader builds a submission from the files git tracks (Course.staging_files), so a file that
# this tree has but its git index lacks (a given header not committed yet, or a copy of the course
# whose index is stale) would be missing from every build. Grade a copy instead: this tree's files
# (git's tracked and untracked-not-ignored ones, as they are now), all staged in the copy's index.
course="$work/course"
mkdir -m 700 "$course"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$course" || exit 2
else
  tar --exclude='./build*' --exclude='./.git' -cf - . | tar -xf - -C "$course" || exit 2
fi
if command -v git >/dev/null; then
  { git -C "$course" init -q && git -C "$course" add -A; } || exit 2
fi
cd "$course"
python3 -m grading make-fixtures --out "$work/fx" --gpu >/dev/null || exit 2
# The course's configuration with short limits (the hanging kernel costs 45 s); the review one for
# the fixtures whose code must run.
python3 - "$work" "${SANITIZER_TIMEOUT:-240}" "${TOOLS-default}" <<'PY'
import json, sys
work, sanitizer_timeout, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3]
config = json.load(open("grading/grading.json"))
config["limits"].update({"run_timeout_s": 45, "sanitizer_timeout_s": sanitizer_timeout})
if tools != "default":
    config["sanitizers"]["tools"] = tools.split()
json.dump(config, open(f"{work}/config.json", "w"))
config["object_check"]["on_violation"] = "review"
config["sanitizers"]["tools"] = []
json.dump(config, open(f"{work}/config-review.json", "w"))
PY
common=(--gpu-arch "${GPU_ARCH:-90}" --reference-dir "$work/ref" --scratch "$work")
echo "building the references and starters of $labs" | tee "$out/grade.log"
PYTHONUNBUFFERED=1 python3 -m grading build-reference --labs "$labs" --gpu-arch "${GPU_ARCH:-90}" \
  --reference-dir "$work/ref" >>"$out/grade.log" 2>&1 || { cat "$out/grade.log"; exit 2; }
echo "references built at $(( $(date +%s) - start )) s" | tee -a "$out/grade.log"
for name in $subs; do
  [ -d "$work/fx/$name" ] || continue
  lab_list=$(cd "$work/fx/$name/labs" && ls | tr '\n' ',' | sed 's/,$//')
  wanted=$(python3 -c "import sys; a = set(sys.argv[1].split(',')); print(','.join(l for l in sys.argv[2].split(',') if l in a))" \
    "$labs" "$lab_list")
  [ -n "$wanted" ] || continue
  kind=config
  [[ " $review " == *" $name "* ]] && kind=config-review
  mkdir -p "$work/subs/$kind@$wanted"
  cp -r "$work/fx/$name" "$work/subs/$kind@$wanted/$name"
done
planted_rc=0
planted_seconds=0
for dir in "$work"/subs/*/; do
  group=$(basename "$dir")
  kind=${group%@*}
  wanted=${group#*@}
  begin=$(date +%s)
  PYTHONUNBUFFERED=1 timeout 900 python3 -m grading grade --submissions "$dir" --out "$work/graded/$group" \
    --labs "$wanted" --config "$work/$kind.json" "${common[@]}" >>"$out/grade.log" 2>&1
  rc=$?
  seconds=$(( $(date +%s) - begin ))
  echo "graded $(ls "$dir" | tr '\n' ' ')($wanted, $kind): exit $rc in $seconds s" | tee -a "$out/grade.log"
  [ -d "$dir/planted-link" ] && { planted_rc=$rc; planted_seconds=$seconds; }
done
python3 -m grading gradebook "$work"/graded/* --csv "$out/gradebook.csv" 2>/dev/null
for dir in "$work"/graded/*/*/; do
  [ -f "$dir/report.md" ] && { cat "$dir/report.md"; echo; echo "---"; echo; }
done > "$out/reports.md"

python3 - "$work" "$planted_rc" "$planted_seconds" > "$out/checks.txt" <<'PY'
import json, pathlib, sys
work, planted_rc, planted_seconds = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
grades = {p.parent.name: json.loads(p.read_text()) for p in (work / "graded").glob("*/*/summary.json")}
results = []

def check(name, what, ok, got):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {what}  [{got}]")

def lab(name, lab_name):
    return grades.get(name, {}).get("labs", {}).get(lab_name)

def step(entry, step_id):
    return next((s for s in (entry or {}).get("steps", []) if s["id"] == step_id), None)

def shown(entry, ids=None):
    return "; ".join(f"step {s['id']}: {s['correctness']} {s['correctness_points']}+{s['performance_points']}"
                     f"/{s['correctness_max']}+{s['performance_max']} {' | '.join(s['reasons'])[:160]}"
                     for s in (entry or {}).get("steps", []) if ids is None or s["id"] in ids) \
        or (entry or {}).get("reason", "missing")

def full_marks(name, lab_name, what):
    e = lab(name, lab_name)
    if e:
        check(name, f"{lab_name} {what}", e["state"] == "graded" and e["score"] == e["max_score"] and not e["review_flags"],
              f"{e['state']} {e['score']}/{e['max_score']} {e['review_flags'][:2]} "
              f"{shown(e) if e['score'] < e['max_score'] else ''}")

for lab_name in grades.get("solution", {}).get("labs", {}):  # every lab graded (LABS)
    full_marks("solution", lab_name, "full marks, no review flags")
full_marks("honest-printf", "01-matadd", "full marks, no review flags: a kernel's debugging printf changes nothing")
e = lab("forged-by-interposition", "01-matadd")
if e:
    check("forged-by-interposition", "01: every step 0 (its results file said every step passed in 1 us), each flagged",
          e["score"] == 0 and all(s["correctness_points"] == 0 and s["performance_points"] == 0 for s in e["steps"])
          and sum("reported as passed" in f for f in e["review_flags"]) >= 4
          and any("defines `rename`" in f for f in e["review_flags"]), shown(e))
e = lab("verdict-spoofing", "06-reduction")
if e:
    lost = [step(e, i) for i in ("5", "6", "7")]
    kept = [step(e, i) for i in ("1", "2", "3", "4")]
    check("verdict-spoofing", "06 steps 5, 6, 7 lose their correctness points though a kernel prints the tool's "
          "failure messages; steps 1-4 keep theirs",
          # The race may also show in the outputs on a given run (then the harness's own check takes
          # the points first); what must never happen is a printed tool message saving them.
          all(s and s["correctness_points"] == 0 and s["correctness"] in ("sanitizer", "wrong") for s in lost)
          and all(s and s["correctness_points"] > 0 for s in kept)
          and not any("could not check" in f for f in e["review_flags"]), shown(e, {"4", "5", "6", "7"}))
e = lab("memoize", "01-matadd")
if e:
    s = step(e, "1")
    check("memoize", "01 step 1 gets no performance points (its timed runs did no work)",
          bool(s) and s["performance_max"] > 0 and s["performance_points"] == 0, shown(e, {"1"}))
e = lab("one-past-end", "01-matadd")
if e:
    s = step(e, "1")
    check("one-past-end", "01 step 1 loses its correctness points (guard band or memcheck)",
          bool(s) and s["correctness_points"] == 0, shown(e, {"1"}))
e = lab("warp-race", "06-reduction")
if e:
    lost = [step(e, i) for i in ("5", "6", "7")]
    kept = [step(e, i) for i in ("1", "2", "3", "4")]
    check("warp-race", "06 steps 5, 6, 7 lose their correctness points; steps 1-4 keep theirs",
          all(s and s["correctness_points"] == 0 for s in lost) and all(s and s["correctness_points"] > 0 for s in kept),
          shown(e, {"4", "5", "6", "7"}))
e = lab("missing-barrier", "06-reduction")
if e:
    s, other = step(e, "3"), step(e, "2")
    check("missing-barrier", "06 step 3 loses its correctness points; step 2 keeps them",
          bool(s) and s["correctness_points"] == 0 and bool(other) and other["correctness_points"] > 0,
          shown(e, {"2", "3"}))
e = lab("forged-results", "01-matadd")
if e:
    check("forged-results", "01 scores 0 before running: the integrity check names getenv and the initializer",
          e["state"] == "failed" and e["score"] == 0 and "matadd.cu calls `" in e["reason"]
          and any("calls `getenv`" in f for f in e["review_flags"])
          and any("static initializer" in f for f in e["review_flags"]), e["reason"][:200])
e = lab("planted-link", "01-matadd")
if e:
    check("planted-link", "01 scores 0 (results through a link refused) and the grader did not hang",
          e["state"] in ("failed", "graded") and e["score"] == 0 and planted_seconds < 600 and planted_rc in (0, 1, 3),
          f"{e['reason'][:200]} in {planted_seconds} s, exit {planted_rc}")
    secret = b""
    try:
        secret = pathlib.Path("/etc/shadow").read_bytes().split(b"\n")[0][:40]
    except OSError:
        pass
    leaked = [str(p) for p in (work / "graded").rglob("*")
              if secret and p.is_file() and not p.is_symlink() and secret in p.read_bytes()]
    check("planted-link", "no output of the grader holds the root-only file the links point to",
          bool(secret) and not leaked, "checked /etc/shadow" if secret else "no /etc/shadow to check")
for name, lab_name, what, test in (
        ("starter", "01-matadd", "0 points", lambda e: e["score"] == 0),
        ("wrong-result", "01-matadd", "step 1 loses correctness", lambda e: step(e, "1")["correctness_points"] == 0),
        ("out-of-bounds", "01-matadd", "below full marks (sticky error)", lambda e: e["score"] < e["max_score"]),
        ("hang", "01-matadd", "0 points (time limit)", lambda e: e["state"] == "failed" and "time limit" in e["reason"]),
        ("nan", "01-matadd", "step 4 loses correctness", lambda e: step(e, "4")["correctness_points"] == 0)):
    e = lab(name, lab_name)
    if e:
        check(name, what, test(e), f"{e['state']} {e['score']}/{e['max_score']} {e['reason'][:120]}")
for name, g in sorted(grades.items()):
    print(f"time   {name}: {g['seconds']:.0f} s; warnings: {'; '.join(g['warnings'])[:300] or 'none'}")
print(f"{sum(results)} of {len(results)} checks held")
sys.exit(0 if results and all(results) else 1)
PY
checks=$?
cat "$out/checks.txt"
echo "whole run: $(( $(date +%s) - start )) s"
echo "--- gradebook ---"
cat "$out/gradebook.csv"
exit "$checks"
