# SPDX-License-Identifier: MIT
"""python3 -m grading {grade,gradebook,ids,collect,similarity,verify-course,export-student,build-reference,
make-fixtures,progress,review,slurm-submit,slurm-job}

See docs/grading.md. Exit status of `grade`: 0 graded (and at or above --pass-at), 1 graded but
below --pass-at, 2 the grader could not work (bad arguments, course, configuration, sandbox),
3 incomplete: some lab could not be graded (no GPU, the reference failed); no points for it;
128 + N: stopped by signal N (143: SIGTERM, as Slurm sends at a time limit or scancel; 130: Ctrl-C),
after the cleanup a finished grading does (runs killed, tmpfs unmounted, scratch removed), with
the submissions graded so far kept (a folder run: in its gradebook).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from coursemodel import sanitizers, submission_ids
from coursemodel.build import DEFAULT_GPU_ARCH

from . import collect, outputs, slurm_submit, workers
from .config import Config, ConfigError
from .course import Course, CourseError
from .export import ExportError, export
from .sandbox import Sandbox, SandboxError, Stopped, restore_signals, stop_on_signals
from .seeds import Seeds

EXIT_OK, EXIT_BELOW, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3
DEFAULT_COURSE = Path(__file__).resolve().parent.parent
RESERVED_OUTPUTS = collect.RUN_OUTPUTS  # names the grader writes next to the submissions' folders


def submission_id(path: Path) -> str:
    """A submission's id on its own (coursemodel.submission_ids: the one definition)."""
    return submission_ids.plain_id(path)


def plan_batch(entries: list[Path], out: Path) -> list[tuple[str, Path, Path, str]]:
    """(id, submission, output folder, note) for each entry of a submissions folder. Entries whose
    ids collide (alice/ and alice.zip, names that differ in case only) or that would take a name the
    grader's own outputs use are all graded, under ids made unique (alice, alice-2), and the note
    says so (it goes into the report, the gradebook and the log)."""
    return [(item.id, item.path, out / item.id, item.note) for item in submission_ids.assign(entries, RESERVED_OUTPUTS)]


def forget_earlier_grade(out_dir: Path) -> None:
    """Removes the summary.json an earlier run left in a submission's output folder, before this
    run grades it: a run that then fails leaves no summary, never an old one."""
    try:
        (out_dir / "summary.json").unlink()
    except FileNotFoundError:
        pass


def format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def progress_line(done: int, total: int, labs_graded: int, elapsed: float) -> str:
    """'3 / 40 submissions, 21 labs graded, about 2 h 05 min left'."""
    left = f"about {format_duration(elapsed / done * (total - done))} left" if done else "time left not known yet"
    return f"{done} / {total} submissions, {labs_graded} labs graded, {left}"


class Progress:
    """The grader's progress on standard error: on a terminal, a line after every lab; elsewhere (a
    log file, a cluster job) one line per submission only."""

    def __init__(self, total: int, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.total, self.done, self.labs, self.start = total, 0, 0, time.monotonic()

    def lab_done(self, lab=None) -> None:
        self.labs += 1
        if self.tty:
            self._say(progress_line(self.done, self.total, self.labs, time.monotonic() - self.start))

    def submission_done(self, sid: str, score: float, max_score: float) -> None:
        self.done += 1
        line = progress_line(self.done, self.total, self.labs, time.monotonic() - self.start)
        self._say(f"{sid}: {score:g} / {max_score:g}; {line}")

    def _say(self, text: str) -> None:
        print(f"[grading] {text}", file=self.stream, flush=True)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--course", type=Path, default=DEFAULT_COURSE,
                        help="the instructor's course tree, with solutions/ (default: this checkout)")
    parser.add_argument("--config", type=Path, help="grading configuration (default: COURSE/grading/grading.json)")
    parser.add_argument("--labs", help="comma-separated lab names (default: every lab with a lab.json)")
    parser.add_argument("--gpu-arch", default=DEFAULT_GPU_ARCH,
                        help=f"meson's gpu_arch (default {DEFAULT_GPU_ARCH}: the GPU present)")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m grading", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission, or every submission in a folder")
    _common(g)
    what = g.add_mutually_exclusive_group(required=True)
    what.add_argument("--submission", type=Path, help="a folder or a .zip/.tar.gz archive")
    what.add_argument("--submissions", type=Path, help="a folder of submissions (one per entry)")
    what.add_argument("--from-manifest", type=Path, metavar="SUBMISSIONS_TSV",
                      help="the submission of --index in a run's submissions.tsv, under its id (a Slurm array task)")
    g.add_argument("--index", type=int, help="with --from-manifest: the submission's index")
    g.add_argument("--claim", action="store_true", help=argparse.SUPPRESS)  # a --gpus worker: --from-manifest's
    # entries that no other worker has taken, one at a time
    g.add_argument("--gpus", metavar="LIST|all",
                   help="with --submissions: grade across these GPUs of this host (e.g. 0,1; all: every GPU), one "
                        "worker each; the reference is built once and timed on each GPU")
    g.add_argument("--out", type=Path, required=True, help="output folder")
    g.add_argument("--id", help="the submission's id (default: its file name)")
    g.add_argument("--seed", type=int, help="a fixed seed (debugging a regrade only)")
    g.add_argument("--seed-key", type=Path, help="instructor key file: seeds = HMAC(key, id, lab, files)")
    g.add_argument("--reference-dir", type=Path, help="where the reference builds are kept and reused")
    g.add_argument("--scratch", type=Path, help="where submissions are built (default: the temp folder)")
    g.add_argument("--gradescope-results", type=Path, help="also write Gradescope's results.json here")
    g.add_argument("--pass-at", type=float, default=0.0, help="exit 1 below this fraction of the points")
    g.add_argument("--no-sandbox", action="store_true",
                   help="run without bubblewrap: for testing with trusted input only (the default refuses to grade "
                        "without a working sandbox)")
    g.add_argument("--require-sandbox", action="store_true", help=argparse.SUPPRESS)  # the default now
    g.add_argument("--keep-scratch", action="store_true", help="keep the build and run folders, on disk (debugging)")
    g.add_argument("--verbose", action="store_true", help="every stage of every lab on standard error (the default "
                                                          "on a terminal)")
    g.add_argument("--no-similarity", action="store_true",
                   help="with --submissions: leave out the copy-detection stage (similarity.md)")

    b = sub.add_parser("gradebook", help="the CSV gradebook from grade outputs")
    b.add_argument("dirs", type=Path, nargs="+", help="grade --out folders, or folders of them")
    b.add_argument("--csv", type=Path, help="write here (default: standard output)")
    b.add_argument("--manifest", type=Path,
                   help="a run's submissions.tsv: only the submissions it lists, each from DIR/<id>/summary.json")

    i = sub.add_parser("ids", help="each submission of a folder: index, id and path, tab-separated (the ids the "
                                   "folder grader gives; the Slurm scripts use them)")
    i.add_argument("submissions", type=Path, help="a folder of submissions (one per entry)")

    c = sub.add_parser("collect", help="a run's gradebook.csv, hours.csv and summary.md from its submissions.tsv "
                                       "(the Slurm collect job)")
    c.add_argument("out", type=Path, help="the run's output folder (slurm-submit's OUT_DIR, or grade's --out)")

    m = sub.add_parser("similarity", help="copy detection across a run's submissions (Dolos): similarity.md and "
                                          "similarity.json beside the gradebook, for the instructors (exit status "
                                          "3 where it could not run: Node.js or Dolos missing)")
    _common(m)
    m.add_argument("out", type=Path, help="the run's output folder, with its submissions.tsv")

    v = sub.add_parser("verify-course", help="every solution passes, every starter says 'not implemented'")
    _common(v)
    v.add_argument("--allow-no-gpu", action="store_true", help="exit 0 when everything builds but no GPU is present")

    e = sub.add_parser("export-student", help="the student edition: a folder, .zip or .tar.gz")
    e.add_argument("--course", type=Path, default=DEFAULT_COURSE)
    e.add_argument("--config", type=Path)
    e.add_argument("--out", type=Path, required=True)
    e.add_argument("--edition", choices=("standard", "guided"), default="standard",
                   help="standard: the starters without their // HINT(step N): lines (the default); guided: with them")

    r = sub.add_parser("build-reference",
                       help="build the reference solutions and the starters once (for a cluster run)")
    _common(r)
    r.add_argument("--reference-dir", type=Path, required=True)

    pr = sub.add_parser("progress", help="a Slurm run's progress from its output folder (slurm-submit's OUT_DIR)")
    pr.add_argument("out", type=Path, help="the OUT_DIR given to slurm-submit")
    pr.add_argument("--watch", type=float, metavar="SECONDS",
                    help="print a line every SECONDS until every submission has its grade")

    f = sub.add_parser("make-fixtures", help="write the test submissions (from the course's solutions)")
    f.add_argument("--course", type=Path, default=DEFAULT_COURSE)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--gpu", action="store_true", help="also the lab 01 GPU cases (wrong, out of bounds, hang, NaN)")
    from . import review
    review.add_parser(sub)  # the written answers' review page for the TAs, and its marks read back
    slurm_submit.add_parsers(sub)  # a class graded on a Slurm cluster, and its jobs' steps
    return parser.parse_args(argv)


def load(args) -> tuple[Course, Config, list]:
    course = Course(args.course)
    config = Config.load(args.config or course.root / "grading" / "grading.json", course.root)
    labs = course.select([n.strip() for n in args.labs.split(",") if n.strip()] if getattr(args, "labs", None) else None)
    return course, config, labs


def cmd_grade(args) -> int:
    from . import grade as grade_module
    from .grade import Grader, Reference, log
    grade_module.VERBOSE = args.verbose or sys.stderr.isatty()
    if args.from_manifest is not None and (args.index is None) == (not args.claim):
        raise ValueError("--from-manifest takes --index N (one submission) or --claim (a --gpus worker)")
    if args.from_manifest is None and (args.index is not None or args.claim):
        raise ValueError("--index and --claim go with --from-manifest")
    gpus = workers.parse_gpus(args.gpus) if args.gpus else []
    if gpus and args.submissions is None:
        raise ValueError("--gpus grades a folder across GPUs: give --submissions")
    entry = collect.entry_of(args.from_manifest, args.index) if args.index is not None else None
    course, config, labs = load(args)
    if not labs:
        raise CourseError("no labs to grade")
    without = [lab.name for lab in labs if not course.has_solutions(lab)]
    if without:
        raise CourseError(f"{course.root} has no solutions/ for {', '.join(without)}: the grader times and checks "
                          "every submission against the reference solutions; give --course the instructors' course "
                          "tree, not the student edition")
    seeds = Seeds(fixed=args.seed) if args.seed is not None else Seeds(
        key=args.seed_key.read_bytes().strip() if args.seed_key else None)
    sandbox = Sandbox.from_config(config, use_bwrap=not args.no_sandbox).prepare()
    out = args.out.resolve()
    if args.submissions is not None and (out == args.submissions.resolve()
                                         or args.submissions.resolve() in out.parents):
        raise ValueError(f"--out {out} lies inside --submissions: it would be graded as a submission")
    reference_dir = args.reference_dir.resolve() if args.reference_dir else None
    scratch_root = Path(args.scratch or tempfile.gettempdir()).resolve()
    sandbox.refuse_exposed({"the course": course.root, "the solutions": course.root / "solutions",
                            "the seed key": args.seed_key.resolve() if args.seed_key else None,
                            "the reference builds": reference_dir, "the output folder": out,
                            "the scratch folder": scratch_root})
    sandbox.check_toolchain()
    if sandbox.uid is not None:  # the unprivileged user must reach its own folders under the scratch folder
        for folder in [scratch_root, *scratch_root.parents]:
            if folder.exists() and not os.stat(folder).st_mode & 0o001:
                raise ValueError(f"the scratch folder {scratch_root} is not reachable by the sandbox's user ({folder} "
                                 "has no x permission for others): use --scratch on a path every user can traverse")
    if config.sanitizers["tools"] and sanitizers.find_sanitizer() is None:
        raise ValueError("compute-sanitizer (CUDA toolkit) is not installed: install it, or set sanitizers.tools to "
                         "[] in the configuration to grade without it")
    for warning in sandbox.warnings:
        log(f"WARNING: {warning}")
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="grading-", dir=args.scratch))
    handlers = stop_on_signals()  # from here on, SIGTERM and SIGINT end the grading the way a finished one ends
    grades, refused, stopped = [], [], None
    try:
        os.chmod(scratch, 0o711)  # the unprivileged user may pass through, not list
        reference_dir = reference_dir or scratch / "reference"
        reference_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(reference_dir, 0o700)
        reference = Reference(course, reference_dir, sandbox, config, args.gpu_arch)
        listed = []
        if entry is not None:
            items = [(args.id or entry.id, entry.path, out, entry.note)]
        elif args.from_manifest is not None:  # a worker of --gpus: the entries no other worker has claimed
            manifest = collect.read_manifest(args.from_manifest)
            items = workers.claimed(manifest, out)
        elif args.submission is not None:
            items = [(args.id or submission_id(args.submission), args.submission, out, "")]
        else:
            # This run's submissions, recorded before any is graded: the gradebook holds these only.
            listed = submission_ids.of_folder(args.submissions, RESERVED_OUTPUTS)
            collect.write_manifest(out / collect.MANIFEST, listed)
            items = [(item.id, item.path, out / item.id, item.note) for item in listed]
        try:
            if gpus:
                outcome = workers.grade_on_gpus(gpus, out, listed, reference, labs, worker_argv(args, reference_dir),
                                                log)
                refused += outcome.refused
                stopped = outcome.stopped
                if stopped is not None:
                    log(f"stopped by {stopped.name}: each worker stopped the way a finished grading ends; the "
                        f"submissions they finished are kept in {out / collect.GRADEBOOK}")
            else:
                grader = Grader(course, config, sandbox, reference, seeds, args.gpu_arch, scratch, args.keep_scratch)
                gradescope = args.gradescope_results if args.submission else None
                progress = Progress(len(manifest) if args.claim else len(items))
                for sid, path, out_dir, note in items:
                    grade = grade_one(grader, sandbox, config, labs, sid, path, out_dir, note, gradescope, progress,
                                      log)
                    if grade is None:
                        refused.append((sid, "not graded: grader error (see the log)"))
                    else:
                        grades.append(grade)
        except Stopped as stop:
            stopped = stop
            where = grader_position(locals().get("grader"))
            log(f"stopped by {stop.name}{where}: {len(grades)} submission(s) graded before it, kept"
                + (f" in {out / collect.GRADEBOOK}" if args.submissions is not None else ""))
        for name, why in refused:
            log(f"{name}: {why}")
        if args.submissions is not None:
            reasons = dict(refused)
            if stopped is not None:
                graded = {g.submission_id for g in grades}
                reasons.update({item.id: f"not graded: the grading was stopped ({stopped.name}) before it ended"
                                for item in listed if item.id not in graded and item.id not in reasons})
            elif not args.no_similarity:
                similarity_stage(out, listed, course, labs, config, sandbox.reader_identity, log)
            gathered = collect.collect(out, listed, out, reasons, out / collect.MANIFEST)
            if gpus:  # the workers' grades, from their summaries
                refused += gathered.missing
                grades = [SummaryGrade(data) for data in gathered.summaries]
    finally:
        if args.keep_scratch:
            log(f"--keep-scratch: the build and run folders are kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
        restore_signals(handlers)
    for grade in grades:
        if not isinstance(grade, SummaryGrade):  # a worker printed its own
            print(outputs.one_line(grade), flush=True)
    if stopped is not None:
        return stopped.exit_status
    if refused or not all(g.complete for g in grades):
        return EXIT_INCOMPLETE
    if any(g.score < args.pass_at * g.max_score - 1e-9 for g in grades):
        return EXIT_BELOW
    return EXIT_OK


class SummaryGrade:
    """A grade read back from its summary.json (a --gpus worker's): what the exit status reads."""

    def __init__(self, data: dict):
        self.submission_id = str(data.get("submission", ""))
        self.score, self.max_score = float(data.get("score") or 0), float(data.get("max_score") or 0)
        self.complete = bool(data.get("complete"))


def grader_position(grader) -> str:
    """' while grading alice (lab 01-vector-add)', where the grader was when it stopped."""
    current = getattr(grader, "current", None)
    return f" while grading {current[0]} (lab {current[1]})" if current else ""


def grade_one(grader, sandbox, config, labs, sid, path, out_dir, note, gradescope, progress, log):
    """One submission, graded and written (report, summary, cost record): its grade, or None where
    even its error could not be written. A Stopped keeps what was graded of it (the labs finished)."""
    from .grade import SubmissionGrade
    from .scoring import NOT_GRADED, LabGrade
    if note:
        log(f"WARNING: {note}")
    forget_earlier_grade(out_dir)
    start, gpu_start, build_start = time.monotonic(), sandbox.gpu_seconds, sandbox.build_seconds

    def cost(grade) -> None:
        workers.write_cost(out_dir, sid, time.monotonic() - start, sandbox.gpu_seconds - gpu_start,
                           sandbox.build_seconds - build_start, grade)

    try:  # one submission never stops the batch
        grade = grader.grade(path, sid, labs, out_dir / "logs", progress=progress.lab_done)
        if note:
            grade.warnings.insert(0, note)
        outputs.write_all(grade, out_dir, config, gradescope)
    except Stopped as stop:
        if stop.grade is not None:  # the labs graded before the stop, the others 'not graded'
            if note:
                stop.grade.warnings.insert(0, note)
            outputs.write_all(stop.grade, out_dir, config, gradescope)
            cost(stop.grade)
        raise
    except Exception as error:
        log(f"grader error on {sid}: {error!r}")
        grade = SubmissionGrade(sid, str(path), sandbox=sandbox.describe(), warnings=[note] if note else [],
                                labs=[LabGrade(lab.name, lab.title, NOT_GRADED, f"grader error: {error!r}")
                                      for lab in labs])
        try:
            outputs.write_all(grade, out_dir, config, gradescope)
        except Exception as again:
            log(f"{sid}: not graded: grader error {again!r}")
            return None
    cost(grade)
    progress.submission_done(sid, grade.score, grade.max_score)
    return grade


def worker_argv(args, reference_dir: Path) -> list[str]:
    """The `grade` arguments of a --gpus worker: this run's, with the shared reference builds."""
    argv = ["--course", str(args.course), "--gpu-arch", args.gpu_arch, "--reference-dir", str(reference_dir)]
    for option, value in (("--config", args.config), ("--labs", args.labs), ("--seed", args.seed),
                          ("--seed-key", args.seed_key), ("--scratch", args.scratch), ("--pass-at", args.pass_at)):
        if value is not None:
            argv += [option, str(Path(value).resolve()) if isinstance(value, Path) else str(value)]
    for flag in ("no_sandbox", "keep_scratch", "verbose"):
        if getattr(args, flag):
            argv.append("--" + flag.replace("_", "-"))
    return argv


def similarity_stage(out: Path, items, course, labs, config, reader_of, log) -> None:
    """Copy detection at the end of a folder run: similarity.md beside the gradebook. Never fails
    the run (and never changes a grade): a problem is a line in the log."""
    from . import similarity
    try:
        data = similarity.run(out, items, course, labs, config, out / collect.MANIFEST, reader_of)
    except Exception as error:
        log(f"WARNING: copy detection failed: {error!r} (the grades are not affected)")
        return
    if data["status"] != "ran":
        log(f"copy detection not run: {data['reason']}")
    else:
        flagged = sum(len(lab["pairs"]) for lab in data["labs"])
        log(f"copy detection: {flagged} pair(s) at or above {data['threshold']:g}: {out / collect.SIMILARITY_MD}")


def graded_folder(out: Path) -> Path:
    """Where a run's submission folders are: OUT/graded/<id> (a Slurm run), else OUT/<id>."""
    return out / "graded" if (out / "graded").is_dir() else out


def run_manifest(out: Path) -> list:
    path = out / collect.MANIFEST
    if not path.is_file():
        raise ValueError(f"{out} has no {collect.MANIFEST}: not the output folder of a grading run (grade "
                         "--submissions, or slurm-submit)")
    return collect.read_manifest(path)


def cmd_ids(args) -> int:
    listed = submission_ids.of_folder(args.submissions.resolve(), RESERVED_OUTPUTS)
    if not listed:
        raise ValueError(f"no submissions in {args.submissions}")
    text = collect.manifest_bytes(listed)
    sys.stdout.flush()
    if hasattr(sys.stdout, "buffer"):  # the names' bytes as they are (not UTF-8 ones included)
        sys.stdout.buffer.write(text)
    else:
        sys.stdout.write(os.fsdecode(text))
    sys.stdout.flush()
    for item in listed:
        if item.note:
            print(f"note: {item.note}", file=sys.stderr)
    return EXIT_OK


def cmd_collect(args) -> int:
    out = args.out.resolve()
    listed = run_manifest(out)
    gathered = collect.collect(out, listed, graded_folder(out), manifest=out / collect.MANIFEST)
    print(f"gradebook: {out / collect.GRADEBOOK} ({len(gathered.summaries)} of {len(listed)} submission(s) with a "
          f"grade); {out / collect.HOURS}; {out / collect.SUMMARY}", file=sys.stderr)
    return EXIT_OK


def cmd_similarity(args) -> int:
    from . import similarity
    out = args.out.resolve()
    listed = run_manifest(out)
    course, config, labs = load(args)
    if not args.labs:  # the labs this run graded
        graded = collect.gather(listed, graded_folder(out)).summaries
        names = {str(lab) for summary in graded for lab in (summary.get("labs") or {})}
        labs = [lab for lab in labs if lab.name in names] or labs
    data = similarity.run(out, listed, course, labs, config, out / collect.MANIFEST)
    if data["status"] != "ran":  # a failure to the caller (a script, the Slurm collect job), never to a grade
        print(f"copy detection not run: {data['reason']} (nothing else is affected)", file=sys.stderr)
        return EXIT_INCOMPLETE
    flagged = sum(len(lab["pairs"]) for lab in data["labs"])
    failed = [lab["lab"] for lab in data["labs"] if lab["error"]]
    print(f"{out / collect.SIMILARITY_MD}: {flagged} pair(s) at or above {data['threshold']:g}"
          + (f"; not compared: {', '.join(failed)}" if failed else ""), file=sys.stderr)
    return EXIT_OK


def cmd_gradebook(args) -> int:
    if args.manifest is not None:
        if len(args.dirs) != 1:
            raise ValueError("with --manifest, name the one folder that holds the submissions' folders")
        listed = collect.read_manifest(args.manifest)
        gathered = collect.gather(listed, args.dirs[0])
        text = outputs.gradebook(gathered.summaries, gathered.missing)
        if args.csv:
            args.csv.write_text(text, encoding="utf-8")
            print(f"wrote {args.csv}: {len(gathered.summaries)} of {len(listed)} submission(s) with a grade",
                  file=sys.stderr)
        else:
            sys.stdout.write(text)
        return EXIT_OK
    summaries = []
    for path in outputs.find_summaries(args.dirs):
        try:
            summaries.append(outputs.read_summary(path))
        except (OSError, outputs.SummaryError) as error:
            print(f"skipping {path}: {error}", file=sys.stderr)
    if not summaries:
        print("no grade summaries (summary.json) found", file=sys.stderr)
        return EXIT_ERROR
    text = outputs.gradebook(summaries)
    if args.csv:
        args.csv.write_text(text, encoding="utf-8")
        print(f"wrote {args.csv}: {len(summaries)} student(s)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def slurm_progress(out: Path, now: float | None = None) -> tuple[str, bool]:
    """The progress line of a Slurm run (slurm-submit) from what its array tasks have
    written so far: submissions.tsv lists the tasks, graded/<id>/summary.json appears as each task
    ends (only the ids listed count: a folder of an earlier run does not), and the time left is
    extrapolated from the time since submissions.tsv was written. Returns the line and whether
    every submission has its grade."""
    listing = out / collect.MANIFEST
    listed = collect.read_manifest(listing)
    total = len(listed)
    done = labs = 0
    for data in collect.gather(listed, out / "graded").summaries:
        done += 1
        labs += sum(1 for entry in (data.get("labs") or {}).values()
                    if isinstance(entry, dict) and entry.get("state") not in (None, "not_graded"))
    elapsed = (time.time() if now is None else now) - listing.stat().st_mtime
    return progress_line(min(done, total), total, labs, max(elapsed, 0.0)), done >= total


def cmd_progress(args) -> int:
    while True:
        line, finished = slurm_progress(args.out)
        print(line, flush=True)
        if finished or not args.watch:
            return EXIT_OK
        time.sleep(max(args.watch, 1.0))


def cmd_verify(args) -> int:
    from .verify import verify
    course, config, labs = load(args)
    checks = verify(course, labs, args.gpu_arch, config.limits["build_timeout_s"], config.limits["run_timeout_s"])
    for check in checks:
        state = "FAILED" if not check.ok else "builds; not run: no GPU" if check.no_gpu else "verified"
        print(f"{check.lab}: {state}")
        for line in check.lines:
            print("  " + line.replace("\n", "\n    "))
    if not all(c.ok for c in checks):
        return 1
    if any(c.no_gpu for c in checks) and not args.allow_no_gpu:
        return EXIT_INCOMPLETE
    return EXIT_OK


def cmd_export(args) -> int:
    course = Course(args.course)
    config = Config.load(args.config or course.root / "grading" / "grading.json", course.root)
    files = export(course, config.student_edition_exclude, args.out, edition=args.edition)
    print(f"wrote the {args.edition} student edition ({len(files)} files) to {args.out}")
    return EXIT_OK


def cmd_build_reference(args) -> int:
    from .grade import Reference
    from .objcheck import ObjectCheckError
    course, config, labs = load(args)
    args.reference_dir.mkdir(parents=True, exist_ok=True)
    reference = Reference(course, args.reference_dir.resolve(), Sandbox(use_bwrap=False, require=False), config,
                          args.gpu_arch)
    failed = 0
    for lab in labs:
        built = reference.build(lab)
        print(f"{lab.name}: {'built' if built.ok else 'FAILED: ' + built.reason}")
        failed += not built.ok
        try:  # the starter too: the integrity check's baseline
            reference.starter(lab)
            print(f"{lab.name}: starter built")
        except ObjectCheckError as error:
            print(f"{lab.name}: starter FAILED: {error}")
            failed += 1
    return 1 if failed else EXIT_OK


def cmd_fixtures(args) -> int:
    from .tests.fixture_cases import make_basic, make_gpu
    course = Course(args.course)
    made = make_basic(course, args.out, course.labs())
    if args.gpu:
        made.update(make_gpu(course, args.out))
    for name, path in made.items():
        print(f"{name}: {path}")
    return EXIT_OK


def cmd_review(args) -> int:
    from . import review
    return review.main(args)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    commands = {"grade": cmd_grade, "gradebook": cmd_gradebook, "ids": cmd_ids, "collect": cmd_collect,
                "similarity": cmd_similarity, "verify-course": cmd_verify,
                "export-student": cmd_export, "build-reference": cmd_build_reference, "make-fixtures": cmd_fixtures,
                "progress": cmd_progress, "review": cmd_review, "slurm-submit": slurm_submit.cmd_submit,
                "slurm-job": slurm_submit.cmd_job}
    try:
        return commands[args.command](args)
    except Stopped as stop:  # before anything was graded (a grading in progress says where it stopped)
        print(f"grading: stopped by {stop.name}", file=sys.stderr)
        return stop.exit_status
    except (ConfigError, CourseError, ExportError, SandboxError, OSError, ValueError) as error:
        print(f"grading: error: {error}", file=sys.stderr)
        print(json.dumps({"error": str(error)}), flush=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
