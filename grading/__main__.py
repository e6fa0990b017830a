# SPDX-License-Identifier: MIT
"""python3 -m grading {grade,gradebook,ids,collect,similarity,verify-course,export-student,build-reference,
make-fixtures,progress}

See docs/grading.md. Exit status of `grade`: 0 graded (and at or above --pass-at), 1 graded but
below --pass-at, 2 the grader could not work (bad arguments, course, configuration, sandbox),
3 incomplete: some lab could not be graded (no GPU, the reference failed); no points for it.
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

from coursemodel import submission_ids

from . import collect, outputs
from .config import Config, ConfigError
from .course import Course, CourseError
from .export import ExportError, export
from .sandbox import Sandbox, SandboxError
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
    parser.add_argument("--gpu-arch", default="auto", help="meson's gpu_arch (default auto: the GPU present)")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 -m grading", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade one submission, or every submission in a folder")
    _common(g)
    what = g.add_mutually_exclusive_group(required=True)
    what.add_argument("--submission", type=Path, help="a folder or a .zip/.tar.gz archive")
    what.add_argument("--submissions", type=Path, help="a folder of submissions (one per entry)")
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
    c.add_argument("out", type=Path, help="the run's output folder (submit.sh's OUT_DIR, or grade's --out)")

    m = sub.add_parser("similarity", help="copy detection across a run's submissions (Dolos): similarity.md and "
                                          "similarity.json beside the gradebook, for the instructors")
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

    pr = sub.add_parser("progress", help="a Slurm run's progress from its output folder (submit.sh's OUT_DIR)")
    pr.add_argument("out", type=Path, help="the OUT_DIR given to grading/slurm/submit.sh")
    pr.add_argument("--watch", type=float, metavar="SECONDS",
                    help="print a line every SECONDS until every submission has its grade")

    f = sub.add_parser("make-fixtures", help="write the test submissions (from the course's solutions)")
    f.add_argument("--course", type=Path, default=DEFAULT_COURSE)
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--gpu", action="store_true", help="also the lab 01 GPU cases (wrong, out of bounds, hang, NaN)")
    return parser.parse_args(argv)


def load(args) -> tuple[Course, Config, list]:
    course = Course(args.course)
    config = Config.load(args.config or course.root / "grading" / "grading.json")
    labs = course.select([n.strip() for n in args.labs.split(",") if n.strip()] if getattr(args, "labs", None) else None)
    return course, config, labs


def cmd_grade(args) -> int:
    from . import grade as grade_module
    from .grade import Grader, Reference, SubmissionGrade, log
    from .sandbox import Sandbox as _Sandbox
    from .scoring import NOT_GRADED, LabGrade
    grade_module.VERBOSE = args.verbose or sys.stderr.isatty()
    course, config, labs = load(args)
    if not labs:
        raise CourseError("no labs to grade")
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
    if config.sanitizers["tools"] and _Sandbox._which("compute-sanitizer") is None:
        raise ValueError("compute-sanitizer (CUDA toolkit) is not installed: install it, or set sanitizers.tools to "
                         "[] in the configuration to grade without it")
    for warning in sandbox.warnings:
        log(f"WARNING: {warning}")
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="grading-", dir=args.scratch))
    try:
        os.chmod(scratch, 0o711)  # the unprivileged user may pass through, not list
        reference_dir = reference_dir or scratch / "reference"
        reference_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(reference_dir, 0o700)
        reference = Reference(course, reference_dir, sandbox, config, args.gpu_arch)
        grader = Grader(course, config, sandbox, reference, seeds, args.gpu_arch, scratch, args.keep_scratch)
        refused: list[tuple[str, str]] = []
        if args.submission is not None:
            items = [(args.id or submission_id(args.submission), args.submission, out, "")]
        else:
            # This run's submissions, recorded before any is graded: the gradebook holds these only.
            listed = submission_ids.of_folder(args.submissions, RESERVED_OUTPUTS)
            collect.write_manifest(out / collect.MANIFEST, listed, strict=False)
            items = [(item.id, item.path, out / item.id, item.note) for item in listed]
        progress = Progress(len(items))
        grades = []
        for sid, path, out_dir, note in items:
            if note:
                log(f"WARNING: {note}")
            forget_earlier_grade(out_dir)
            try:  # one submission never stops the batch
                grade = grader.grade(path, sid, labs, out_dir / "logs", progress=progress.lab_done)
                if note:
                    grade.warnings.insert(0, note)
                outputs.write_all(grade, out_dir, config, args.gradescope_results if args.submission else None)
            except Exception as error:
                log(f"grader error on {sid}: {error!r}")
                grade = SubmissionGrade(sid, str(path), sandbox=sandbox.describe(), warnings=[note] if note else [],
                                        labs=[LabGrade(lab.name, lab.title, NOT_GRADED, f"grader error: {error!r}")
                                              for lab in labs])
                try:
                    outputs.write_all(grade, out_dir, config, args.gradescope_results if args.submission else None)
                except Exception as again:
                    refused.append((sid, f"not graded: grader error {again!r}"))
                    continue
            grades.append(grade)
            progress.submission_done(sid, grade.score, grade.max_score)
        for name, why in refused:
            log(f"{name}: {why}")
        if args.submissions is not None:
            if not args.no_similarity:
                similarity_stage(out, listed, course, labs, config, sandbox.reader_identity, log)
            collect.collect(out, listed, out, dict(refused), out / collect.MANIFEST)
    finally:
        if args.keep_scratch:
            log(f"--keep-scratch: the build and run folders are kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    for grade in grades:
        print(outputs.one_line(grade), flush=True)
    if refused or not all(g.complete for g in grades):
        return EXIT_INCOMPLETE
    if any(g.score < args.pass_at * g.max_score - 1e-9 for g in grades):
        return EXIT_BELOW
    return EXIT_OK


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
                         "--submissions, or grading/slurm/submit.sh)")
    return collect.read_manifest(path)


def cmd_ids(args) -> int:
    listed = submission_ids.of_folder(args.submissions.resolve(), RESERVED_OUTPUTS)
    if not listed:
        raise ValueError(f"no submissions in {args.submissions}")
    text = collect.manifest_bytes(listed, strict=True)
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
    if data["status"] != "ran":
        print(f"copy detection not run: {data['reason']} (nothing else is affected)", file=sys.stderr)
        return EXIT_OK
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
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            print(f"skipping {path}: {error}", file=sys.stderr)
            continue
        if data.get("schema") == outputs.SUMMARY_SCHEMA:
            summaries.append(data)
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
    """The progress line of a Slurm run (grading/slurm/submit.sh) from what its array tasks have
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
    config = Config.load(args.config or course.root / "grading" / "grading.json")
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
    from .fixtures import make_basic, make_gpu
    course = Course(args.course)
    made = make_basic(course, args.out, course.labs())
    if args.gpu:
        made.update(make_gpu(course, args.out))
    for name, path in made.items():
        print(f"{name}: {path}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    commands = {"grade": cmd_grade, "gradebook": cmd_gradebook, "ids": cmd_ids, "collect": cmd_collect,
                "similarity": cmd_similarity, "verify-course": cmd_verify,
                "export-student": cmd_export, "build-reference": cmd_build_reference, "make-fixtures": cmd_fixtures,
                "progress": cmd_progress}
    try:
        return commands[args.command](args)
    except (ConfigError, CourseError, ExportError, SandboxError, OSError, ValueError) as error:
        print(f"grading: error: {error}", file=sys.stderr)
        print(json.dumps({"error": str(error)}), flush=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
