#!/bin/bash
# SPDX-License-Identifier: MIT
# Grades the GPU fixture submissions (grading/tests/fixture_cases.py: each a reference solution with one
# defect, or an attack on the grader) on a machine with a GPU and bubblewrap, as root, the way an
# instructor would, and checks each grade against what it must be (the check CI cannot make):
#   bash grading/tests/gpu_fixtures.sh OUTDIR
# Writes OUTDIR/gradebook.csv, OUTDIR/reports.md (every report), OUTDIR/grade.log, OUTDIR/logs/
# (the grader's logs of every run) and OUTDIR/checks.txt; prints one line per check, then the
# gradebook. Exit status 0: every check held.
# SUBS: the fixtures (default: the solution, the attacks on the grader and the defects the
# sanitizers must find); ALL=1 adds starter, wrong-result, out-of-bounds, hang, nan and
# planted-link. LABS (default 01-matadd,06-reduction): the labs graded; a fixture of another lab is
# left out. SET picks other defaults for SUBS and LABS:
#   SET=issue28  the attacks that behave only where nobody looks, and their baselines, on labs 01,
#                04, 06 and 08: memoize-matmul against naive-matmul, memoize-nbody against
#                naive-nbody (speed points), aligned-race (racecheck), aligned-overread (memcheck),
#                clock-reader (a review flag for reading the GPU's clock, full marks);
#   SET=repeat   the solution graded 5 times (REPEAT=5) on labs 01, 04, 06 and 09;
#   SET=issue39  the matched-record attack (matched-matmul against naive-matmul on lab 04,
#                matched-tensor-cores on lab 14: no speed points for a step whose timed runs it
#                faked) and host code that looks for the grader's tell of a tool run
#                (env-overread on lab 01: step 4 lost; env-race on lab 06: refused before it runs);
#   SET=cost     the solution graded 5 times (REPEAT) on labs 01, 06 and 14, each lab on its own
#                (PER_LAB=1), so that each copy's cost.json is one lab's: with full marks every
#                time, prints GPU seconds and wall seconds per submission per lab (median, max).
#                tools/maintainers/grading-cost.sh runs it.
# REPEAT=N grades N copies of every fixture (NAME-1 ... NAME-N, each with its own seed) in one
# run, checks every copy as NAME, and prints each lab's scores, lab by copy. TOOLS: the sanitizers
# (default the course's configuration's), GPU_ARCH (default: python3 -m coursemodel.build --print-gpu-arch), SANITIZER_TIMEOUT (s, default
# 240). The references and starters are built once, first; the fixtures are graded in groups of the
# same labs and configuration (the references run once per group); PER_LAB=1 grades each lab in a
# group of its own. REFERENCE_DIR (default: a temporary folder) keeps the reference builds for the
# next run. GPUS (all, or a list such as 0,1) grades each group across those GPUs, a worker per GPU
# (grade --gpus). Every submission's cost.json is copied to OUTDIR/cost/GROUP/NAME.json, and the costs are
# printed per group (a lab, or the labs of a group): GPU seconds and wall seconds per submission.
set -u
out=${1:?usage: gpu_fixtures.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.."
case "${SET:-}" in
  "")
    default_subs="solution honest-printf forged-by-interposition verdict-spoofing memoize one-past-end warp-race missing-barrier forged-results"
    default_labs=01-matadd,06-reduction
    default_repeat=1 ;;
  issue28)
    default_subs="naive-matmul memoize-matmul naive-nbody memoize-nbody aligned-race aligned-overread clock-reader"
    default_labs=01-matadd,04-matmul-tiled,06-reduction,08-nbody
    default_repeat=1 ;;
  repeat)
    default_subs=solution
    default_labs=01-matadd,04-matmul-tiled,06-reduction,09-streams
    default_repeat=5 ;;
  issue39)
    default_subs="naive-matmul matched-matmul matched-tensor-cores env-overread env-race"
    default_labs=01-matadd,04-matmul-tiled,06-reduction,14-tensor-cores
    default_repeat=1 ;;
  cost)
    default_subs=solution
    default_labs=01-matadd,06-reduction,14-tensor-cores
    default_repeat=5
    PER_LAB=${PER_LAB:-1} ;;
  *) echo "SET must be issue28, repeat, issue39 or cost (or unset), not ${SET}" >&2; exit 2 ;;
esac
per_lab=${PER_LAB:-0}
subs=${SUBS:-$default_subs}
[ "${ALL:-0}" = 1 ] && subs="$subs starter wrong-result out-of-bounds hang nan planted-link"
labs=${LABS:-$default_labs}
repeat=${REPEAT:-$default_repeat}
case "$repeat" in ''|*[!0-9]*|0) echo "REPEAT must be a whole number from 1, not ${repeat}" >&2; exit 2 ;; esac
# Graded with object_check "review" (and no sanitizers): their code must run for the grader's own
# checks to be tested. The memo fixtures and their baselines read as one pair: only their speed
# points are compared.
review="forged-by-interposition planted-link naive-matmul memoize-matmul naive-nbody memoize-nbody"
review+=" matched-matmul matched-tensor-cores"
work=$(mktemp -d)
chmod 711 "$work"  # the sandbox's unprivileged users pass through to their own folders
trap 'rm -rf "$work"' EXIT
# Stopped from outside (a time limit's SIGTERM, Ctrl-C): the grading in progress is stopped the way
# the grader stops (its own handler: sandboxes killed, tmpfs unmounted) before the copy it runs from
# is removed.
grader_pid=
stop() {
  [ -n "$grader_pid" ] && kill -TERM "$grader_pid" 2>/dev/null && wait "$grader_pid"
  exit 143
}
trap stop TERM INT
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
# The course's configuration, with a short run limit where the hanging kernel is graded (it costs
# that limit); the review one for the fixtures whose code must run.
run_timeout=300
[[ " $subs " == *" hang "* ]] && run_timeout=45
python3 - "$work" "${SANITIZER_TIMEOUT:-240}" "${TOOLS-default}" "$run_timeout" <<'PY'
import json, sys
work, sanitizer_timeout, tools, run_timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
config = json.load(open("grading/grading.json"))
config["limits"].update({"run_timeout_s": run_timeout, "sanitizer_timeout_s": sanitizer_timeout})
if tools != "default":
    config["sanitizers"]["tools"] = tools.split()
json.dump(config, open(f"{work}/config.json", "w"))
config["object_check"]["on_violation"] = "review"
config["sanitizers"]["tools"] = []
json.dump(config, open(f"{work}/config-review.json", "w"))
PY
GPU_ARCH=${GPU_ARCH:-$(python3 -m coursemodel.build --print-gpu-arch)}
ref=${REFERENCE_DIR:-$work/ref}
mkdir -p "$ref"
common=(--gpu-arch "$GPU_ARCH" --reference-dir "$ref" --scratch "$work")
[ -n "${GPUS:-}" ] && common+=(--gpus "$GPUS")  # a worker per GPU (all, or 0,1): each group across them
echo "building the references and starters of $labs" | tee "$out/grade.log"
PYTHONUNBUFFERED=1 python3 -m grading build-reference --labs "$labs" --gpu-arch "$GPU_ARCH" \
  --reference-dir "$ref" >>"$out/grade.log" 2>&1 || { cat "$out/grade.log"; exit 2; }
echo "references built at $(( $(date +%s) - start )) s" | tee -a "$out/grade.log"
for name in $subs; do
  [ -d "$work/fx/$name" ] || continue
  lab_list=$(cd "$work/fx/$name/labs" && ls | tr '\n' ',' | sed 's/,$//')
  wanted=$(python3 -c "import sys; a = set(sys.argv[1].split(',')); print(','.join(l for l in sys.argv[2].split(',') if l in a))" \
    "$labs" "$lab_list")
  [ -n "$wanted" ] || continue
  kind=config
  [[ " $review " == *" $name "* ]] && kind=config-review
  groups=$wanted
  [ "$per_lab" = 1 ] && groups=$(echo "$wanted" | tr ',' ' ')
  for group_labs in $groups; do
    mkdir -p "$work/subs/$kind@$group_labs"
    if [ "$repeat" -gt 1 ]; then
      for copy in $(seq 1 "$repeat"); do cp -r "$work/fx/$name" "$work/subs/$kind@$group_labs/$name-$copy"; done
    else
      cp -r "$work/fx/$name" "$work/subs/$kind@$group_labs/$name"
    fi
  done
done
planted_rc=0
planted_seconds=0
for dir in "$work"/subs/*/; do
  group=$(basename "$dir")
  kind=${group%@*}
  wanted=${group#*@}
  begin=$(date +%s)
  PYTHONUNBUFFERED=1 timeout $(( 900 * $(ls "$dir" | wc -l) )) python3 -m grading grade --submissions "$dir" --out "$work/graded/$group" \
    --labs "$wanted" --config "$work/$kind.json" "${common[@]}" >>"$out/grade.log" 2>&1 &
  grader_pid=$!
  wait "$grader_pid"
  rc=$?
  grader_pid=
  seconds=$(( $(date +%s) - begin ))
  echo "graded $(ls "$dir" | tr '\n' ' ')($wanted, $kind): exit $rc in $seconds s" | tee -a "$out/grade.log"
  [ -d "$dir/planted-link" ] && { planted_rc=$rc; planted_seconds=$seconds; }
done
python3 -m grading gradebook "$work"/graded/* --csv "$out/gradebook.csv" 2>/dev/null
for cost in "$work"/graded/*/*/cost.json; do
  [ -f "$cost" ] || continue
  group=$(basename "$(dirname "$(dirname "$cost")")")
  mkdir -p "$out/cost/$group"
  cp "$cost" "$out/cost/$group/$(basename "$(dirname "$cost")").json"
done
for dir in "$work"/graded/*/*/; do
  [ -f "$dir/report.md" ] && { cat "$dir/report.md"; echo; echo "---"; echo; }
done > "$out/reports.md"
# The logs the grader kept of every run (the pointer-dependent fixtures are judged from them), those
# under 8 MiB, in OUTDIR/logs/NAME/.
for dir in "$work"/graded/*/*/logs/; do
  [ -d "$dir" ] || continue
  name=$(basename "$(dirname "$dir")")
  mkdir -p "$out/logs/$name"
  find "$dir" -maxdepth 1 -type f -size -8M -exec cp {} "$out/logs/$name/" \;
done

python3 - "$work" "$planted_rc" "$planted_seconds" "$repeat" > "$out/checks.txt" <<'PY'
import json, pathlib, re, sys
work, planted_rc, planted_seconds = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
repeat = int(sys.argv[4])
summaries = {p.parent.name: p for p in (work / "graded").glob("*/*/summary.json")}
grades = {}  # a fixture's grade; with PER_LAB, its labs gathered from every group
for path in sorted((work / "graded").glob("*/*/summary.json")):
    data = json.loads(path.read_text())
    if path.parent.name in grades:
        merged = grades[path.parent.name]
        merged["labs"].update(data.get("labs", {}))
        merged["seconds"] += data.get("seconds", 0)
        merged["warnings"] += data.get("warnings", [])
    else:
        grades[path.parent.name] = data
results = []
copy = ""  # with REPEAT, the copy being checked: "-1", "-2" ...

def check(name, what, ok, got):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'}  {name}{copy}: {what}  [{got}]")

def lab(name, lab_name):
    return grades.get(name + copy, {}).get("labs", {}).get(lab_name)

def markers(name, logs, pattern):
    """The values the fixture's marker lines carry in the logs `logs` names (a glob); None: no such log."""
    summary = summaries.get(name + copy)
    paths = sorted((summary.parent / "logs").glob(logs)) if summary else []
    if not paths:
        return None
    return {value for path in paths if path.is_file() for value in re.findall(pattern, path.read_text(errors="replace"))}

def clock_flags(entry):
    return [f for f in (entry or {}).get("review_flags", []) if re.search(r"clock|globaltimer", f, re.I)]

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

def fixture_checks():
    """Every check of a fixture that was graded (with REPEAT, on the copy `copy`)."""
    for lab_name in grades.get("solution" + copy, {}).get("labs", {}):  # every lab graded (LABS)
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
    issue28_checks()
    issue39_checks()


def ratio_text(s):
    return f"{s['ratio']:.2f}x" if s and s.get("ratio") else "-"

def total(entry, key):
    return round(sum(s[key] for s in entry["steps"]), 4)

def issue28_checks():
    """Issue 28's fixtures (fixture_cases.py): attacks that behave honestly only where a run is looked at,
    judged against their honest baselines and, for the pointer-dependent ones, against the logs of
    the runs the grader kept (each fixture prints a line when it takes its dishonest path)."""
    for memo, naive, lab_name in (("memoize-matmul", "naive-matmul", "04-matmul-tiled"),
                                  ("memoize-nbody", "naive-nbody", "08-nbody")):
        m, n = lab(memo, lab_name), lab(naive, lab_name)
        if n:
            correct = n["state"] == "graded" and total(n, "correctness_points") == total(n, "correctness_max")
            check(naive, f"{lab_name}: every step correct (the baseline's work is honest), no review flag for a clock",
                  correct and not clock_flags(n),
                  f"{n['state']} correctness {total(n, 'correctness_points'):g}/{total(n, 'correctness_max'):g}, speed "
                  f"{total(n, 'performance_points'):g}/{total(n, 'performance_max'):g} {clock_flags(n)[:1]} "
                  f"{'' if correct else shown(n)}")
        if m and n:
            pairs = [(s, step(n, s["id"])) for s in m["steps"]]
            # Full speed points on a step where the honest work earns none: the memo paid.
            unearned = [s["id"] for s, b in pairs if b and s["performance_max"] > 0 and b["performance_points"] == 0
                        and s["performance_points"] >= s["performance_max"]]
            faked = [s["id"] for s in m["steps"] if any("not trusted" in r or "faster than" in r for r in s["reasons"])]
            per_step = "; ".join(f"step {s['id']}: {s['performance_points']:g} ({ratio_text(s)}) against "
                                 f"{b['performance_points']:g} ({ratio_text(b)})" for s, b in pairs if b)
            check(memo, f"{lab_name}: {naive}'s correctness points, at most its speed points + 0.25, no full speed "
                        "points on a step where it has none, no step faster than real",
                  m["state"] == "graded" and total(m, "correctness_points") == total(n, "correctness_points")
                  and total(m, "performance_points") <= total(n, "performance_points") + 0.25
                  and not unearned and not faked,
                  f"{m['state']}; speed {total(m, 'performance_points'):g} against {total(n, 'performance_points'):g}; "
                  f"full without the work: {unearned or 'none'}; faster than real: {faked or 'none'}; {per_step}")
        if m:
            check(memo, f"{lab_name}: a review flag for reading the GPU's clock", bool(clock_flags(m)),
                  (clock_flags(m) or m["review_flags"] or ["no review flag"])[0][:200])

    # The race runs where the input pointer is 256 mod 512: about half the seeds' allocations. Each
    # step of 5 to 7 that took it in the graded correctness run must lose its correctness points,
    # each that did not must keep them, and racecheck's run (same seed, same bands) must have taken
    # exactly the same paths.
    e = lab("aligned-race", "06-reduction")
    if e:
        pattern = r"aligned-race: step (\d+) took the racy last warp"
        racy = {"5", "6", "7"}
        graded = markers("aligned-race", "06-reduction-correctness.log", pattern)
        tool = markers("aligned-race", "06-reduction-racecheck*.log", pattern)
        taken = (graded or set()) & racy
        lost = all((s := step(e, i)) and s["correctness_points"] == 0 for i in taken)
        kept = all((s := step(e, i)) and s["correctness_points"] == s["correctness_max"] for i in racy - taken)
        others = all(s["correctness_points"] == s["correctness_max"] for s in e["steps"] if s["id"] not in racy)
        said = (f"racy in the graded run: steps {', '.join(sorted(taken)) or 'none'}; under racecheck: "
                + (", ".join(sorted(tool & racy)) or "none" if tool is not None else "no racecheck log"))
        check("aligned-race", "06: a step of 5-7 that took the racy last warp in the graded run loses its correctness "
                              "points, one that did not keeps them, steps 1-4 and 8 keep theirs",
              e["state"] == "graded" and graded is not None and lost and kept and others,
              f"{said}; {shown(e, racy)}")
        check("aligned-race", "06: racecheck's run took the paths the graded run took (the same seed, the same pointers)",
              graded is not None and tool is not None and tool & racy == taken, said)

    # The read past the end runs where a's pointer is 256 mod 512 and a's count is not a multiple of
    # 4. Memcheck stops the run at its first finding, so its log may show fewer of them, never others.
    e = lab("aligned-overread", "01-matadd")
    if e:
        pattern = r"aligned-overread: step 4 read past the end of a and b \(count (\d+)\)"
        graded = markers("aligned-overread", "01-matadd-correctness.log", pattern)
        tool = markers("aligned-overread", "01-matadd-memcheck*.log", pattern)
        # The case above 2^31 elements is left out under compute-sanitizer: no tool sees what runs there.
        checked = {c for c in (graded or set()) if int(c) < 1 << 31}
        unseen = (graded or set()) - checked
        s4 = step(e, "4")
        said = (f"read past the end in the graded run at counts {', '.join(sorted(checked, key=int)) or 'none'}"
                + (f" (and {', '.join(sorted(unseen))} above 2^31, left out under the tools)" if unseen else "")
                + "; under memcheck: " + (", ".join(sorted(tool, key=int)) or "none" if tool is not None
                                          else "no memcheck log"))
        if checked:
            ok = bool(s4) and s4["correctness_points"] == 0
        else:
            ok = bool(s4) and s4["correctness_points"] == s4["correctness_max"]
        others = all(s["correctness_points"] == s["correctness_max"] for s in e["steps"] if s["id"] != "4")
        check("aligned-overread", "01: step 4 loses its correctness points if its graded run read past the end (where "
                                  "memcheck runs too), keeps them if not; the other steps keep theirs",
              e["state"] == "graded" and graded is not None and ok and others, f"{said}; {shown(e, {'4'})}")
        check("aligned-overread", "01: memcheck's run read past the end where the graded run did, and nowhere else",
              graded is not None and tool is not None and tool <= checked and (bool(tool) == bool(checked)), said)

    e = lab("clock-reader", "06-reduction")
    if e:
        check("clock-reader", "06: full marks (a clock read is honest), and a review flag for reading the GPU's clock",
              e["state"] == "graded" and e["score"] == e["max_score"] and bool(clock_flags(e)),
              f"{e['state']} {e['score']}/{e['max_score']} "
              f"{(clock_flags(e) or e['review_flags'] or ['no review flag'])[0][:200]}")


def timed_runs_refused(entry, step_id):
    """The grader's flag that the step's timed runs did not compute what the reference's did."""
    return any(f.startswith(f"step {step_id}: its timed runs did not all compute") for f in entry["review_flags"])

def issue39_checks():
    """Issue 39's fixtures (fixture_cases.py): the matched-record attack, judged against its honest
    baseline, and host code that looks for the grader's tell of a run under the tools."""
    m, n = lab("matched-matmul", "04-matmul-tiled"), lab("naive-matmul", "04-matmul-tiled")
    if m:
        faked = [s for s in m["steps"] if s["performance_max"] > 0]
        paid = [s["id"] for s in faked if s["performance_points"] > 0 or not timed_runs_refused(m, s["id"])]
        same = n is not None and total(m, "correctness_points") == total(n, "correctness_points")
        check("matched-matmul", "04: naive-matmul's correctness points; every timed step refused (a review flag that "
                                "its timed runs did not all compute) with no speed points; at most naive-matmul's "
                                "speed points",
              m["state"] == "graded" and same and bool(faked) and not paid
              and (n is None or total(m, "performance_points") <= total(n, "performance_points")),
              f"{m['state']}; correctness {total(m, 'correctness_points'):g}, speed "
              f"{total(m, 'performance_points'):g}; naive-matmul: "
              + (f"{total(n, 'correctness_points'):g}, {total(n, 'performance_points'):g}" if n else "not graded")
              + f"; paid or not refused: {paid or 'none'}; {shown(m)[:400]}")
    e = lab("matched-tensor-cores", "14-tensor-cores")
    if e:
        faked = [step(e, i) for i in ("1", "5")]
        others = [s for s in e["steps"] if s["id"] not in ("1", "5")]
        check("matched-tensor-cores", "14: steps 1 and 5 keep their correctness points, get no speed points and a "
                                      "review flag each (timed runs refused); the other steps full marks",
              e["state"] == "graded"
              and all(s and s["correctness_points"] == s["correctness_max"] and s["performance_points"] == 0
                      and timed_runs_refused(e, s["id"]) for s in faked)
              and all(s["correctness_points"] == s["correctness_max"]
                      and s["performance_points"] == s["performance_max"] for s in others),
              f"{e['state']}; {shown(e)[:600]}")
    e = lab("env-overread", "01-matadd")
    if e:
        pattern = r"env-overread: step 4 read past the end of a and b \(count (\d+)\)"
        graded = markers("env-overread", "01-matadd-correctness.log", pattern)
        tool = markers("env-overread", "01-matadd-memcheck*.log", pattern)
        s4 = step(e, "4")
        others = all(s["correctness_points"] == s["correctness_max"] for s in e["steps"] if s["id"] != "4")
        said = (f"read past the end in the graded run at counts {', '.join(sorted(graded or [], key=int)) or 'none'}; "
                f"under memcheck: {', '.join(sorted(tool, key=int)) or 'none' if tool is not None else 'no memcheck log'}")
        check("env-overread", "01: the host code found no tell of a tool run: memcheck's run read past the end as the "
                              "graded run did, and step 4 loses its correctness points; the other steps keep theirs",
              e["state"] == "graded" and bool(graded) and bool(tool) and bool(s4) and s4["correctness_points"] == 0
              and others, f"{said}; {shown(e, {'4'})}")
        for logs in ("01-matadd-correctness.log", "01-matadd-memcheck*.log", "01-matadd-racecheck*.log"):
            seen = markers("env-overread", logs, r"env-probe: ([^\n]*)")
            print(f"INFO  env-overread{copy}: what its host code saw in {logs}: {sorted(seen) if seen else 'no line'}")
    e = lab("env-race", "06-reduction")
    if e:
        check("env-race", "06 scores 0 before it runs: the integrity check names the host functions of a lab that "
                          "declares none",
              e["state"] == "failed" and e["score"] == 0
              and ("defines the host function" in e["reason"]
                   or any("defines the host function" in f for f in e["review_flags"])),
              e["reason"][:300])


def cost_table():
    """Each group's cost: per submission (its cost.json), GPU seconds and wall seconds, median and max."""
    import statistics
    groups = {}
    for path in sorted((work / "graded").glob("*/*/cost.json")):
        cost = json.loads(path.read_text())
        groups.setdefault(path.parent.parent.name.split("@", 1)[-1], []).append(cost)
    if not groups:
        return
    print("cost per submission (cost.json; the first of a group also pays the reference's runs once per lab):")
    print(f"  {'labs':<40}{'n':>3}{'GPU s median':>14}{'GPU s max':>11}{'wall s median':>15}{'wall s max':>12}  device")
    for labs, costs in sorted(groups.items()):
        gpu = [float(c.get("gpu_seconds") or 0) for c in costs]
        wall = [float(c.get("wall_seconds") or 0) for c in costs]
        device = sorted({c.get("device") or "?" for c in costs})
        print(f"  {labs:<40}{len(costs):>3}{statistics.median(gpu):>14.1f}{max(gpu):>11.1f}"
              f"{statistics.median(wall):>15.1f}{max(wall):>12.1f}  {'; '.join(device)}")


def repeat_table():
    """With REPEAT: each lab's score in every copy of a fixture, a line per lab."""
    if repeat < 2:
        return
    bases = sorted({m.group(1) for name in grades if (m := re.fullmatch(r"(.+)-(\d+)", name))})
    for base in bases:
        names = [f"{base}-{i}" for i in range(1, repeat + 1)]
        lab_names = sorted({l for name in names for l in grades.get(name, {}).get("labs", {})})
        print(f"scores of {base} in {repeat} gradings (lab by copy; seeds differ):")
        print(f"  {'lab':<24}" + "".join(f"{name:>14}" for name in names))
        for lab_name in lab_names:
            cells = []
            for name in names:
                e = grades.get(name, {}).get("labs", {}).get(lab_name)
                cells.append(f"{e['score']:g}/{e['max_score']:g}" if e else "-")
            print(f"  {lab_name:<24}" + "".join(f"{c:>14}" for c in cells))

copies = [f"-{i}" for i in range(1, repeat + 1)] if repeat > 1 else [""]
for copy in copies:
    fixture_checks()
repeat_table()
cost_table()
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
